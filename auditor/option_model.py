"""Every option of ``auditor audit``, defined once.

:class:`FileOptions` holds the keys a ``[tool.auditor]`` table may set;
:class:`CommandLine` adds those only the command line may set (output,
parallelism, the rerun's sandbox: a discovered file may be the audited agent's
own, so it must never loosen the sandbox).  Both are pydantic models with
kebab-case aliases and ``extra="forbid"``: the configuration file is validated
by :class:`FileOptions`, and ``argparse`` is built from :class:`CommandLine`'s
fields (:func:`add_arguments`), so a flag, its help, its config key and its
validation are written once.

Values from the command line arrive as strings; a validator converts them
only then (``context={"cli": True}``), so ``alpha = "0.05"`` in a TOML file is
still a type error.  Rule codes are checked against the registry: a typo is a
usage error with a suggestion, never a silently empty selection.
"""

from __future__ import annotations

import argparse
import difflib
import math
from typing import Annotated, Any, Literal, Mapping, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo

from .errors import UsageError
from .findings import Severity

MiB = 1024 * 1024


def kebab(name: str) -> str:
    return name.replace("_", "-")


# -- value rules (one per kind of value) -------------------------------------------------------


def _from_cli(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get("cli"))


def _number(raw: Any, info: ValidationInfo) -> float:
    if isinstance(raw, str) and _from_cli(info):
        try:
            raw = float(raw)
        except ValueError:
            raise ValueError(f"expected a number, got {raw!r}") from None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise ValueError(f"expected a number, got {raw!r}")
    return float(raw)


def _probability(raw: Any, info: ValidationInfo) -> float:
    value = _number(raw, info)
    if not 0 < value < 1:
        raise ValueError(f"expected a number between 0 and 1, got {value:g}")
    return value


def _positive(raw: Any, info: ValidationInfo) -> float:
    value = _number(raw, info)
    if value <= 0:
        raise ValueError(f"expected a positive number, got {value:g}")
    return value


def _non_negative(raw: Any, info: ValidationInfo) -> float:
    value = _number(raw, info)
    if value < 0:
        raise ValueError(f"expected a non-negative number, got {value:g}")
    return value


def _positive_int(raw: Any, info: ValidationInfo) -> int:
    if isinstance(raw, str) and _from_cli(info):
        try:
            raw = int(raw.replace("_", ""))
        except ValueError:
            raise ValueError(f"expected a positive integer, got {raw!r}") from None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw <= 0:
        raise ValueError(f"expected a positive integer, got {raw!r}")
    return raw


def _string_list(raw: Any, what: str) -> tuple[str, ...]:
    """A list of strings or one string; every item splits on commas (``"A3,V4"``)."""
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) for item in items):
        raise ValueError(f"expected a list of {what}")
    return tuple(part.strip() for item in items for part in item.split(",") if part.strip())


def _globs(raw: Any) -> tuple[str, ...]:
    return _string_list(raw, "glob patterns")


def suggest(word: str, known: list[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest known word, or nothing."""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_codes(codes: tuple[str, ...]) -> tuple[str, ...]:
    """Codes or prefixes that each select at least one registered rule ("ALL" selects every rule)."""
    from .findings import all_rules, matches

    registered = [rule.code for rule in all_rules()]
    for code in codes:
        if not any(matches(known, [code]) for known in registered):
            raise ValueError(f"unknown rule code or prefix {code!r}{suggest(code, registered)}; "
                             "`auditor rules` lists them")
    return codes


def _codes(raw: Any) -> tuple[str, ...]:
    return check_codes(tuple(code.upper() for code in _string_list(raw, "rule codes or prefixes")))


def _fail_on(raw: Any) -> str:
    choices = ("error", "warning", "info", "never")
    text = raw.strip().lower() if isinstance(raw, str) else raw
    if text not in choices:
        raise ValueError(f"expected one of {', '.join(choices)}, got {raw!r}")
    return text


def fail_on_severity(text: str) -> Severity | None:
    """``fail-on`` text to the lowest failing severity; None for "never"."""
    return None if text == "never" else Severity.parse(text)


def _severity_table(raw: Any) -> dict[str, Severity]:
    from .findings import REGISTRY, load_rules

    if not isinstance(raw, dict):
        raise ValueError("expected a table of CODE = severity")
    load_rules()
    out = {}
    for code, level in raw.items():
        known = str(code).strip().upper()
        if known not in REGISTRY:
            raise ValueError(f"unknown rule {code!r}{suggest(known, sorted(REGISTRY))}")
        if not isinstance(level, str):
            raise ValueError(f"{code}: expected error, warning or info")
        out[known] = Severity.parse(level)
    return out


def _per_file_ignores(raw: Any) -> dict[str, tuple[str, ...]]:
    if not isinstance(raw, dict):
        raise ValueError("expected a table of glob = [codes]")
    return {glob: _codes(codes) for glob, codes in raw.items()}


def _encoding(raw: Any) -> str:
    import codecs

    try:
        return codecs.lookup(str(raw)).name
    except LookupError:
        raise ValueError(f"unknown text encoding {raw!r}") from None


def _details(raw: Any) -> str:
    text = str(raw).strip().lower()
    if text == "all" or (text.isdigit() and int(text) >= 0):
        return text
    raise ValueError(f"expected a number or 'all', got {raw!r}")


Number = Annotated[float, BeforeValidator(_number)]
Probability = Annotated[float, BeforeValidator(_probability)]
Positive = Annotated[float, BeforeValidator(_positive)]
NonNegative = Annotated[float, BeforeValidator(_non_negative)]
PositiveInt = Annotated[int, BeforeValidator(_positive_int)]
Codes = Annotated[tuple[str, ...], BeforeValidator(_codes)]
Globs = Annotated[tuple[str, ...], BeforeValidator(_globs)]
FailOn = Annotated[str, BeforeValidator(_fail_on)]

_STRICT = ConfigDict(extra="forbid", alias_generator=kebab, frozen=True, defer_build=True)


def _opt(help: str, *, group: str = "audit", flags: tuple[str, ...] = (), metavar: str | None = None,
         choices: tuple[str, ...] | None = None) -> Any:
    """A field that is "not given" (None) by default, with what argparse needs to offer it."""
    extra = {"group": group, "flags": list(flags), "metavar": metavar, "choices": list(choices or ())}
    return Field(None, description=help, json_schema_extra=extra)


# -- the options ---------------------------------------------------------------------------------


class Thresholds(BaseModel):
    """``[tool.auditor.thresholds]``: when an effect counts as negligible or inconclusive."""

    model_config = _STRICT
    negligible_rel: Positive | None = _opt("E701: negligible below this fraction of |baseline mean|")
    negligible_std: Positive | None = _opt("E701: ... or below this many baseline standard deviations")
    inconclusive_mde_rel: Positive | None = _opt("E703: 'no effect' is inconclusive above this MDE/|mean|")
    mechanism_factor: Positive | None = _opt("V407: an observed mechanism value this far from its target")


class FileOptions(BaseModel):
    """The keys of ``[tool.auditor]``; each is also a command-line flag unless said otherwise."""

    model_config = _STRICT
    select: Codes | None = _opt("only these codes or prefixes (comma-separated; default: all)", metavar="CODES")
    ignore: Codes | None = _opt("skip these codes or prefixes (replaces the configured list)", metavar="CODES")
    extend_select: Codes | None = _opt("add these to the selection", metavar="CODES")
    extend_ignore: Codes | None = _opt("skip these as well as the configured ones", metavar="CODES")
    fail_on: FailOn | None = _opt("lowest severity that fails (default: error)", metavar="error|warning|info|never")
    alpha: Probability | None = _opt("significance level (default 0.05)")
    mc_resamples: PositiveInt | None = _opt(
        "B assumed for a claimed Monte-Carlo p when the answer states none (default 10,000), "
        "tried beside the usual counts", metavar="B")
    resamples: PositiveInt | None = _opt(
        "resamples of the auditor's own randomized test above 40 seeds (default 100,000)", metavar="B")
    fdr: Probability | None = _opt("X902 false-discovery rate (default 0.05)", group="batch")
    include: Globs | None = _opt("file globs (default *.txt,*.md,*.json)", group="batch", metavar="GLOBS")
    exclude: Globs | None = _opt("globs of files or folders to skip", group="batch", metavar="GLOBS")
    # Tables: configuration file only.
    thresholds: Thresholds | None = Field(None, description="[tool.auditor.thresholds]")
    per_file_ignores: Annotated[dict[str, tuple[str, ...]], BeforeValidator(_per_file_ignores)] | None = Field(
        None, description="[tool.auditor.per-file-ignores]: glob = [codes]")
    severity: Annotated[dict[str, Severity], BeforeValidator(_severity_table)] | None = Field(
        None, description="[tool.auditor.severity]: CODE = error|warning|info")


class CommandLine(FileOptions):
    """``auditor audit``'s flags: the configuration keys and what only the command line may set."""

    format: str | None = _opt("output format (default text)", flags=("--format",), metavar="FORMAT")
    output: str | None = _opt("write there (atomically; jsonl appends per line)", flags=("--output", "-o"),
                              metavar="FILE")
    exit_zero: bool | None = _opt("exit 0 even when transcripts fail")
    details: Annotated[str, BeforeValidator(_details)] | None = _opt(
        "failures explained in full below a batch table: a number or 'all' (default 5)", metavar="N|all")
    encoding: Annotated[str, BeforeValidator(_encoding)] | None = _opt("text encoding of the transcripts (default utf-8)", metavar="CODEC")
    max_bytes: PositiveInt | None = _opt("largest input read, in bytes (default 16 MiB)", metavar="BYTES")
    max_depth: PositiveInt | None = _opt("deepest JSON nesting accepted (default 64)", metavar="N")
    max_seeds: PositiveInt | None = _opt("most per-seed values recomputed (default 10,000)", metavar="N")
    jobs: PositiveInt | None = _opt("parallel processes (default: cores; 1 with --rerun)", group="batch",
                                    flags=("--jobs", "-j"), metavar="N")
    dask: str | None = _opt("audit (and rerun) on a dask.distributed cluster: a scheduler address, or local",
                            group="batch", metavar="ADDRESS|local")
    quiet: bool | None = _opt("no progress bar; a batch prints its failures only", group="batch",
                              flags=("--quiet", "-q"))
    statistics: bool | None = _opt("count findings per rule (text format)", group="batch")
    resume: bool | None = _opt("skip sources already in the --output jsonl file", group="batch")
    config: str | None = _opt("pyproject.toml to read [tool.auditor] from", group="gate", metavar="FILE")
    isolated: bool | None = _opt("ignore every configuration file", group="gate")
    baseline: str | None = _opt("report only findings not recorded in FILE", group="gate", metavar="FILE")
    write_baseline: str | None = _opt("record every current finding in FILE, exit 0", group="gate", metavar="FILE")
    rerun: bool | None = _opt("run the answer's how_to_run again in a sandbox and compare its numbers",
                              group="rerun")
    device: Literal["auto", "cpu", "cuda"] | None = _opt(
        "where the rerun trains (default auto: cuda when the answer claims it and one is here)",
        group="rerun", choices=("auto", "cpu", "cuda"))
    workspace: str | None = _opt("folder holding the answer's files (default: the transcript's folder)",
                                 group="rerun", metavar="DIR")
    timeout: Positive | None = _opt("wall-clock seconds for the whole rerun (default 600)", group="rerun",
                                    metavar="SECONDS")
    python: str | None = _opt("interpreter for the experiment (default: this one)", group="rerun", metavar="PATH")
    rtol: NonNegative | None = _opt("relative tolerance per seed (default 1e-5, 1e-2 across devices)",
                                    group="rerun")
    memory: Positive | None = _opt("memory cap in GiB (default 8)", group="rerun", metavar="GIB")
    disk: NonNegative | None = _opt("GiB the run's copy may grow by, in RAM (default 2)", group="rerun",
                                    metavar="GIB")
    max_processes: PositiveInt | None = _opt("processes and threads the experiment may have (default 1024)",
                                             group="rerun", metavar="N")
    max_output: Positive | None = _opt("MiB the experiment may print before it is killed (default 1024)",
                                       group="rerun", metavar="MIB")
    cache_dir: str | None = _opt("where rerun results are cached (default ~/.cache/auditor)", group="rerun",
                                 metavar="DIR")
    no_cache: bool | None = _opt("rerun even when a cached result matches", group="rerun")
    unsafe_no_sandbox: bool | None = _opt("run without bubblewrap (trusted code only)", group="rerun")


# -- validation with usable messages -------------------------------------------------------------


def _explain(exc: ValidationError, where: str, flag: bool, known: list[str]) -> str:
    error = exc.errors()[0]
    key = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"{where}unknown key {key!r}{suggest(key, known)} (known: {', '.join(known)})"
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "literal_error":
        message = f"{message}, got {error['input']!r}"
    return f"{where}{'--' if flag else ''}{key}: {message}"


def validate_file(table: Mapping[str, Any], where: str) -> FileOptions:
    """A ``[tool.auditor]`` table, every key checked; ``where`` prefixes the message (the file)."""
    known = [field.alias or name for name, field in FileOptions.model_fields.items()]
    try:
        return FileOptions.model_validate(dict(table))
    except ValidationError as exc:
        raise UsageError(_explain(exc, f"{where}: [tool.auditor] ", False, known)) from None


def validate_command_line(given: Mapping[str, Any]) -> CommandLine:
    """The flags given (field name -> raw value; absent: not given)."""
    values = {kebab(name): value for name, value in given.items() if value is not None}
    try:
        return CommandLine.model_validate(values, context={"cli": True})
    except ValidationError as exc:
        raise UsageError(_explain(exc, "", True, [])) from None


# -- argparse, from the fields -------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, formats: list[str]) -> None:
    """Every :class:`CommandLine` flag on ``parser`` (strings: the model converts and checks them)."""
    groups = {
        "audit": parser,
        "batch": parser.add_argument_group("batch", "directories, parallelism, cross-answer checks"),
        "gate": parser.add_argument_group("gate", "configuration and baselines"),
        "rerun": parser.add_argument_group("rerun", "run the referenced experiment again in a sandbox"),
    }
    for name, field in CommandLine.model_fields.items():
        extra = field.json_schema_extra
        if not isinstance(extra, dict) or name in ("thresholds", "per_file_ignores", "severity"):
            continue
        flags = extra["flags"] or [f"--{kebab(name)}"]
        kwargs: dict[str, Any] = {"dest": name, "default": None, "help": field.description}
        if bool in get_args(field.annotation):
            kwargs["action"] = "store_true"
        else:
            if extra["metavar"]:
                kwargs["metavar"] = extra["metavar"]
            if name == "format":
                kwargs["choices"] = formats
                kwargs["help"] = f"{field.description}: {', '.join(formats)}"
            elif extra["choices"]:
                kwargs["choices"] = extra["choices"]
            if name in ("select", "ignore", "extend_select", "extend_ignore", "include", "exclude"):
                kwargs["action"] = "append"  # repeatable; each value may hold commas
        groups[extra["group"]].add_argument(*flags, **kwargs)
