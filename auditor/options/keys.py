"""Every option of ``auditor audit`` and every ``[tool.auditor]`` key, defined once.

:class:`FileOptions` holds the keys a ``[tool.auditor]`` table may set (its
``[tool.auditor.thresholds]`` table is :class:`Thresholds`); :class:`CommandLine`
adds those only the command line may set (output, parallelism, the rerun's
sandbox: a discovered file may be the audited agent's own, so it must never
loosen the sandbox).  They are pydantic models with kebab-case aliases and
``extra="forbid"``, their fields typed with the value types of
:mod:`auditor.options.models` (an option of :class:`~auditor.options.models.AuditOptions` or
:class:`~auditor.options.models.RerunOptions` has the same type here), and argparse is
built from their fields (:func:`add_arguments`): a flag, its help, its config key
and its validation are written once.  An option not given is None.

A :class:`~pydantic.ValidationError` becomes a one-line
:class:`~auditor.errors.UsageError` naming the flag, or the key and the file;
an unknown key gets a suggestion.  Of several bad values the first option in
definition order is reported, else the first unknown key in the table's order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from auditor.errors import UsageError
from auditor.options.models import (
    DEVICES,
    Codes,
    Details,
    Encoding,
    FailOnText,
    Globs,
    MiB,
    NonNegative,
    OutputTargets,
    PerFileIgnores,
    Positive,
    PositiveInt,
    Probability,
    RerunDevice,
    RerunOptions,
    SeverityTable,
    suggest,
)

if TYPE_CHECKING:
    import argparse


def kebab(name: str) -> str:
    return name.replace("_", "-")


def _opt(
    help: str,
    *,
    group: str | None = "audit",
    flags: tuple[str, ...] = (),
    metavar: str | None = None,
    choices: tuple[str, ...] = (),
) -> Any:
    """A field that is "not given" (None) by default, with where argparse offers it (flags: default --key)."""
    extra: dict[str, Any] = {"group": group, "flags": list(flags), "metavar": metavar, "choices": list(choices)}
    return Field(None, description=help, json_schema_extra=extra)


class _Given(BaseModel):
    """Options as given: kebab-case keys, none unknown, immutable."""

    model_config = ConfigDict(extra="forbid", alias_generator=kebab, frozen=True, defer_build=True)

    def given(self) -> dict[str, Any]:
        """The options given (not None), by field name."""
        return {name: value for name, value in self.__dict__.items() if value is not None}


class Thresholds(_Given):
    """``[tool.auditor.thresholds]``: when an effect counts as negligible or inconclusive."""

    negligible_rel: Positive | None = _opt("E701: negligible below this fraction of |baseline mean|")
    negligible_std: Positive | None = _opt("E701: ... or below this many baseline standard deviations")
    inconclusive_mde_rel: Positive | None = _opt("E703: 'no effect' is inconclusive above this MDE/|mean|")
    mechanism_factor: Positive | None = _opt("V407: an observed mechanism value this far from its target")


class FileOptions(_Given):
    """The keys of ``[tool.auditor]``; each is also a command-line flag unless its group is None."""

    select: Codes | None = _opt("only these codes or prefixes (comma-separated; default: all)", metavar="CODES")
    ignore: Codes | None = _opt("skip these codes or prefixes (replaces the configured list)", metavar="CODES")
    extend_select: Codes | None = _opt("add these to the selection", metavar="CODES")
    extend_ignore: Codes | None = _opt("skip these as well as the configured ones", metavar="CODES")
    fail_on: FailOnText | None = _opt("lowest severity that fails (default: error)", metavar="error|warning|info|never")
    alpha: Probability | None = _opt("significance level (default 0.05)")
    mc_resamples: PositiveInt | None = _opt(
        "B assumed for a claimed Monte-Carlo p when the answer states none (default 10,000), "
        "tried beside the usual counts",
        metavar="B",
    )
    resamples: PositiveInt | None = _opt(
        "resamples of the auditor's own randomized test above 30 seeds (default 100,000)", metavar="B"
    )
    fdr: Probability | None = _opt("X902 false-discovery rate (default 0.05)", group="batch")
    include: Globs | None = _opt("file globs (default *.txt,*.md,*.json)", group="batch", metavar="GLOBS")
    exclude: Globs | None = _opt("globs of files or folders to skip", group="batch", metavar="GLOBS")
    force_exclude: bool | None = _opt(
        "apply include/exclude to files named on the command line too (pre-commit)", group="batch"
    )
    # Tables: configuration file only.
    thresholds: Thresholds | None = _opt("[tool.auditor.thresholds]", group=None)
    per_file_ignores: PerFileIgnores | None = _opt("[tool.auditor.per-file-ignores]: glob = [codes]", group=None)
    severity: SeverityTable | None = _opt("[tool.auditor.severity]: CODE = error|warning|info", group=None)


class CommandLine(FileOptions):
    """``auditor audit``'s flags: the configuration keys and what only the command line may set."""

    format: str | None = _opt("output format (default text)", flags=("--format",), metavar="FORMAT")
    output: str | None = _opt(
        "write there (atomically; jsonl appends per line)", flags=("--output", "-o"), metavar="FILE"
    )
    # Several reports from one audit (CI: annotations on stdout, SARIF and a job summary in files).
    output_format: OutputTargets | None = _opt(
        "also write FORMAT to PATH from the same run (repeatable), e.g. sarif:auditor.sarif", metavar="FORMAT:PATH"
    )
    exit_zero: bool | None = _opt("exit 0 even when transcripts fail")
    details: Details | None = _opt(
        "failures explained in full below a batch table: a number or 'all' (default 5)", metavar="N|all"
    )
    encoding: Encoding | None = _opt("text encoding of the transcripts (default utf-8)", metavar="CODEC")
    max_bytes: PositiveInt | None = _opt("largest input read, in bytes (default 16 MiB)", metavar="BYTES")
    max_depth: PositiveInt | None = _opt("deepest JSON nesting accepted (default 64)", metavar="N")
    max_seeds: PositiveInt | None = _opt("most per-seed values recomputed (default 10,000)", metavar="N")
    jobs: PositiveInt | None = _opt(
        "parallel processes (default: cores; 1 with --rerun)", group="batch", flags=("--jobs", "-j"), metavar="N"
    )
    dask: str | None = _opt(
        "audit (and rerun) on a dask.distributed cluster: a scheduler address, or local",
        group="batch",
        metavar="ADDRESS|local",
    )
    quiet: bool | None = _opt(
        "no progress bar; a batch prints its failures only", group="batch", flags=("--quiet", "-q")
    )
    statistics: bool | None = _opt("count findings per rule (text format)", group="batch")
    resume: bool | None = _opt("skip sources already in the --output jsonl file", group="batch")
    config: str | None = _opt("pyproject.toml to read [tool.auditor] from", group="gate", metavar="FILE")
    isolated: bool | None = _opt("ignore every configuration file", group="gate")
    baseline: str | None = _opt("report only findings not recorded in FILE", group="gate", metavar="FILE")
    write_baseline: str | None = _opt("record every current finding in FILE, exit 0", group="gate", metavar="FILE")
    attest: str | None = _opt(
        "sign each verdict with this Ed25519 private key (PEM; `auditor keygen` writes one)",
        group="gate",
        metavar="KEY",
    )
    attest_output: str | None = _opt(
        "where the signed statements go: one DSSE envelope per line (docs/attestations.md)",
        group="gate",
        metavar="FILE.intoto.jsonl",
    )
    rerun: bool | None = _opt("run the answer's how_to_run again in a sandbox and compare its numbers", group="rerun")
    device: RerunDevice | None = _opt(
        "where the rerun trains (default auto: cuda when torch in the chosen interpreter sees a GPU, else cpu)",
        group="rerun",
        choices=DEVICES,
    )
    workspace: str | None = _opt(
        "folder holding the answer's files (default: the transcript's folder)", group="rerun", metavar="DIR"
    )
    timeout: Positive | None = _opt(
        "wall-clock seconds for the whole rerun (default 600)", group="rerun", metavar="SECONDS"
    )
    python: str | None = _opt("interpreter for the experiment (default: this one)", group="rerun", metavar="PATH")
    rtol: NonNegative | None = _opt("relative tolerance per seed (default 1e-5, 1e-2 across devices)", group="rerun")
    memory: Positive | None = _opt("memory cap in GiB (default 8)", group="rerun", metavar="GIB")
    disk: NonNegative | None = _opt("GiB the run's copy may grow by, in RAM (default 2)", group="rerun", metavar="GIB")
    max_processes: PositiveInt | None = _opt(
        "processes and threads the experiment may have (default 1024)", group="rerun", metavar="N"
    )
    max_output: Positive | None = _opt(
        "MiB the experiment may print before it is killed (default 1024)", group="rerun", metavar="MIB"
    )
    cache_dir: str | None = _opt(
        "where rerun results are cached (default ~/.cache/auditor)", group="rerun", metavar="DIR"
    )
    no_cache: bool | None = _opt("rerun even when a cached result matches", group="rerun")
    unsafe_no_sandbox: bool | None = _opt("run without bubblewrap (trusted code only)", group="rerun")
    replicate: bool | None = _opt(
        "with --rerun: run again with every seed the script sets shifted, and test that the effect replicates",
        group="rerun",
    )
    replicate_offset: int | None = _opt(
        "the replication's seed offset (default: drawn at random; always recorded)", group="rerun", metavar="N"
    )

    def rerun_options(self) -> RerunOptions | None:
        """The :class:`RerunOptions` of ``--rerun`` (None without it); sizes from GiB and MiB to bytes."""
        if not self.rerun:
            return None
        same = ("device", "workspace", "timeout", "python", "rtol", "max_processes", "cache_dir", "replicate_offset")
        values: dict[str, Any] = {name: getattr(self, name) for name in same if getattr(self, name) is not None}
        sizes = {
            "memory": ("memory_bytes", 1024 * MiB),
            "disk": ("disk_bytes", 1024 * MiB),
            "max_output": ("output_limit_bytes", MiB),
        }
        for flag, (name, unit) in sizes.items():
            given = getattr(self, flag)
            if given is None:
                continue
            values[name] = int(given * unit)
            if given and not values[name]:  # positive, yet no whole byte: a cap nothing could run under
                raise UsageError(f"--{kebab(flag)}: {given:g} is less than one byte")
        return RerunOptions(
            unsafe_no_sandbox=bool(self.unsafe_no_sandbox),
            use_cache=not self.no_cache,
            replicate=bool(self.replicate),
            **values,
        )


# -- validation with usable messages -------------------------------------------------------------


def _message(error: Any) -> str:
    message = str(error["msg"]).removeprefix("Value error, ")  # a value rule's own words
    if error["type"] == "literal_error":
        message = f"{message}, got {error['input']!r}"
    return message


def _keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys of the table at ``loc`` (the outer table, or a nested one such as thresholds), dotted."""
    prefix = ""
    for part in loc:
        field = next((f for name, f in model.model_fields.items() if (f.alias or name) == part), None)
        args = get_args(field.annotation) if field is not None else ()
        inner = [arg for arg in args if isinstance(arg, type) and issubclass(arg, BaseModel)]
        if not inner:
            return []
        model, prefix = inner[0], f"{prefix}{part}."
    return [prefix + (field.alias or name) for name, field in model.model_fields.items()]


def _explain(exc: ValidationError, model: type[BaseModel] | None) -> str:
    """The first error of ``exc`` in one line: ``key: why`` (nested keys joined by dots); an unknown
    key with the closest known one and, for a file (``model``), every key its table knows."""
    error = exc.errors()[0]
    key = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        known = _keys(model, error["loc"][:-1]) if model is not None else []
        listed = f" (known: {', '.join(known)})" if known else ""
        return f"unknown key {key!r}{suggest(key, known)}{listed}"
    return f"{key}: {_message(error)}"


def validate_file(table: Mapping[str, Any], where: str) -> FileOptions:
    """A ``[tool.auditor]`` table, every key checked; ``where`` prefixes the message (the file)."""
    try:
        return FileOptions.model_validate(dict(table))
    except ValidationError as exc:
        raise UsageError(f"{where}: [tool.auditor] {_explain(exc, FileOptions)}") from None


def validate_command_line(given: Mapping[str, Any]) -> CommandLine:
    """The flags given (field name or key -> raw value; absent or None: not given); strings convert."""
    values = {kebab(name): value for name, value in given.items() if value is not None}
    try:
        return CommandLine.model_validate(values, context={"cli": True})
    except ValidationError as exc:
        message = _explain(exc, None)  # argparse has refused unknown flags: an unknown key is a caller's
        raise UsageError(message if message.startswith("unknown key") else f"--{message}") from None


# -- argparse, from the fields -------------------------------------------------------------------


def flag_fields() -> dict[str, Any]:
    """The :class:`CommandLine` fields offered as flags (not the tables), by name."""
    return {
        name: field
        for name, field in CommandLine.model_fields.items()
        if isinstance(field.json_schema_extra, dict) and field.json_schema_extra["group"] is not None
    }


def _value_type(field: Any) -> Any:
    """The type a field holds when given: its annotation less None, less its validators."""
    kind = next(arg for arg in get_args(field.annotation) if arg is not type(None))
    return getattr(kind, "__origin__", kind)  # Annotated[X, ...] -> X


def add_arguments(parser: argparse.ArgumentParser, formats: list[str]) -> None:
    """Every :class:`CommandLine` flag on ``parser`` (strings: the model converts and checks them)."""
    groups = {
        "audit": parser,
        "batch": parser.add_argument_group("batch", "directories, parallelism, cross-answer checks"),
        "gate": parser.add_argument_group("gate", "configuration and baselines"),
        "rerun": parser.add_argument_group("rerun", "run the referenced experiment again in a sandbox"),
    }
    for name, field in flag_fields().items():
        extra = field.json_schema_extra
        kwargs: dict[str, Any] = {"dest": name, "default": None, "help": field.description}
        kind = _value_type(field)
        if kind is bool:
            kwargs["action"] = "store_true"
        else:
            if extra["metavar"]:
                kwargs["metavar"] = extra["metavar"]
            if name == "format":
                kwargs["choices"] = formats
                kwargs["help"] = f"{field.description}: {', '.join(formats)}"
            elif extra["choices"]:
                kwargs["choices"] = extra["choices"]
            if get_origin(kind) is tuple:
                kwargs["action"] = "append"  # repeatable; each value may hold commas
        groups[extra["group"]].add_argument(*(extra["flags"] or [f"--{kebab(name)}"]), **kwargs)
