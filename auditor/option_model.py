"""Every option of ``auditor audit``, defined once.

:class:`FileOptions` holds the keys a ``[tool.auditor]`` table may set (its
``[tool.auditor.thresholds]`` table is :class:`Thresholds`); :class:`CommandLine`
adds those only the command line may set (output, parallelism, the rerun's
sandbox: a discovered file may be the audited agent's own, so it must never
loosen the sandbox).  Each option is declared once, with :func:`option`: its
help text, where argparse shows the flag, and the value rule that checks and
converts a raw value.  The configuration file is validated against
:class:`FileOptions` (:func:`validate_file`) and argparse is built from
:class:`CommandLine`'s options (:func:`add_arguments`), so a flag, its help, its
config key and its validation are written once.  An option not given is None.

Keys are the option names in kebab-case (``extend-select``); an unknown key is
an error.  Values from the command line arrive as strings; the number rules
convert them only then, so ``alpha = "0.05"`` in a TOML file is still a type
error.  Rule codes are checked against the registry: a typo is a usage error
with a suggestion, never a silently empty selection.  The messages are those
the options' former pydantic models gave ("Input should be a valid string"),
and when several values are wrong the one reported is the first option in
definition order, else the first unknown key in the table's order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from .errors import UsageError
from .findings import Severity
from .option_values import (
    DEVICES,
    as_codes,
    as_details,
    as_device,
    as_encoding,
    as_fail_on,
    as_globs,
    as_non_negative,
    as_per_file_ignores,
    as_positive,
    as_positive_int,
    as_probability,
    as_severity_table,
    as_switch,
    as_text,
    suggest,
)

if TYPE_CHECKING:
    import argparse

def kebab(name: str) -> str:
    return name.replace("_", "-")


def _thresholds(raw: Any, from_cli: bool) -> Thresholds:
    if isinstance(raw, Thresholds):
        return raw
    if not isinstance(raw, Mapping):
        raise ValueError("Input should be a valid dictionary or instance of Thresholds")
    return _validate(Thresholds, raw, from_cli)


# -- the options ---------------------------------------------------------------------------------


Rule = Callable[[Any, bool], Any]


class Option:
    """One option, declared in an :class:`Options` class body with :func:`option`.

    It takes its attribute's name (``key``: the kebab-case config key); read on an instance, it is that value.
    """

    def __init__(self, help: str, rule: Rule, *, group: str | None = "audit", flags: tuple[str, ...] = (),
                 metavar: str | None = None, choices: tuple[str, ...] = ()) -> None:
        self.help, self.rule, self.group = help, rule, group  # group: argparse's; None: a table, file only
        self.flags, self.metavar, self.choices = flags, metavar, choices  # flags: default --key
        self.name = self.key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.key = name, kebab(name)

    def __get__(self, options: Options | None, owner: type | None = None) -> Any:
        return self if options is None else options._values.get(self.name)


def option(help: str, rule: Rule, **where: Any) -> Any:
    """An option, None ("not given") by default: its help, its value rule, where argparse offers it (Option's keywords)."""
    return Option(help, rule, **where)


class Options:
    """Validated options, read as attributes (None: not given); immutable.

    A plain class, not a dataclass: building ~60 fields' dataclass methods cost ~10 ms of each cold start.
    """

    __slots__ = ("_values",)
    options: ClassVar[dict[str, Option]] = {}  # by name, in definition order (a subclass's after its base's)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.options = {**cls.options, **{name: value for name, value in vars(cls).items() if isinstance(value, Option)}}

    def __init__(self, **values: Any) -> None:
        if unknown := values.keys() - self.options.keys():
            raise TypeError(f"{type(self).__name__} has no option {min(unknown)!r}")
        object.__setattr__(self, "_values", {name: value for name, value in values.items() if value is not None})

    def given(self) -> dict[str, Any]:
        """The options given (not None), by name."""
        return dict(self._values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._values == self._values  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), *self._values.items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={value!r}' for name, value in self._values.items())})"


class Thresholds(Options):
    """``[tool.auditor.thresholds]``: when an effect counts as negligible or inconclusive."""

    negligible_rel: float | None = option("E701: negligible below this fraction of |baseline mean|", as_positive)
    negligible_std: float | None = option("E701: ... or below this many baseline standard deviations", as_positive)
    inconclusive_mde_rel: float | None = option("E703: 'no effect' is inconclusive above this MDE/|mean|", as_positive)
    mechanism_factor: float | None = option("V407: an observed mechanism value this far from its target", as_positive)


class FileOptions(Options):
    """The keys of ``[tool.auditor]``; each is also a command-line flag unless its group is None."""

    select: tuple[str, ...] | None = option("only these codes or prefixes (comma-separated; default: all)", as_codes,
                                            metavar="CODES")
    ignore: tuple[str, ...] | None = option("skip these codes or prefixes (replaces the configured list)", as_codes,
                                            metavar="CODES")
    extend_select: tuple[str, ...] | None = option("add these to the selection", as_codes, metavar="CODES")
    extend_ignore: tuple[str, ...] | None = option("skip these as well as the configured ones", as_codes,
                                                   metavar="CODES")
    fail_on: str | None = option("lowest severity that fails (default: error)", as_fail_on,
                                 metavar="error|warning|info|never")
    alpha: float | None = option("significance level (default 0.05)", as_probability)
    mc_resamples: int | None = option(
        "B assumed for a claimed Monte-Carlo p when the answer states none (default 10,000), "
        "tried beside the usual counts", as_positive_int, metavar="B")
    resamples: int | None = option(
        "resamples of the auditor's own randomized test above 30 seeds (default 100,000)", as_positive_int,
        metavar="B")
    fdr: float | None = option("X902 false-discovery rate (default 0.05)", as_probability, group="batch")
    include: tuple[str, ...] | None = option("file globs (default *.txt,*.md,*.json)", as_globs, group="batch",
                                             metavar="GLOBS")
    exclude: tuple[str, ...] | None = option("globs of files or folders to skip", as_globs, group="batch",
                                             metavar="GLOBS")
    force_exclude: bool | None = option("apply include/exclude to files named on the command line too "
                                        "(pre-commit)", as_switch, group="batch")
    # Tables: configuration file only.
    thresholds: Thresholds | None = option("[tool.auditor.thresholds]", _thresholds, group=None)
    per_file_ignores: dict[str, tuple[str, ...]] | None = option(
        "[tool.auditor.per-file-ignores]: glob = [codes]", as_per_file_ignores, group=None)
    severity: dict[str, Severity] | None = option("[tool.auditor.severity]: CODE = error|warning|info",
                                                  as_severity_table, group=None)


class CommandLine(FileOptions):
    """``auditor audit``'s flags: the configuration keys and what only the command line may set."""

    format: str | None = option("output format (default text)", as_text, flags=("--format",), metavar="FORMAT")
    output: str | None = option("write there (atomically; jsonl appends per line)", as_text,
                                flags=("--output", "-o"), metavar="FILE")
    exit_zero: bool | None = option("exit 0 even when transcripts fail", as_switch)
    details: str | None = option("failures explained in full below a batch table: a number or 'all' (default 5)",
                                 as_details, metavar="N|all")
    encoding: str | None = option("text encoding of the transcripts (default utf-8)", as_encoding, metavar="CODEC")
    max_bytes: int | None = option("largest input read, in bytes (default 16 MiB)", as_positive_int,
                                   metavar="BYTES")
    max_depth: int | None = option("deepest JSON nesting accepted (default 64)", as_positive_int, metavar="N")
    max_seeds: int | None = option("most per-seed values recomputed (default 10,000)", as_positive_int, metavar="N")
    jobs: int | None = option("parallel processes (default: cores; 1 with --rerun)", as_positive_int, group="batch",
                              flags=("--jobs", "-j"), metavar="N")
    dask: str | None = option("audit (and rerun) on a dask.distributed cluster: a scheduler address, or local",
                              as_text, group="batch", metavar="ADDRESS|local")
    quiet: bool | None = option("no progress bar; a batch prints its failures only", as_switch, group="batch",
                                flags=("--quiet", "-q"))
    statistics: bool | None = option("count findings per rule (text format)", as_switch, group="batch")
    resume: bool | None = option("skip sources already in the --output jsonl file", as_switch, group="batch")
    config: str | None = option("pyproject.toml to read [tool.auditor] from", as_text, group="gate", metavar="FILE")
    isolated: bool | None = option("ignore every configuration file", as_switch, group="gate")
    baseline: str | None = option("report only findings not recorded in FILE", as_text, group="gate",
                                  metavar="FILE")
    write_baseline: str | None = option("record every current finding in FILE, exit 0", as_text, group="gate",
                                        metavar="FILE")
    rerun: bool | None = option("run the answer's how_to_run again in a sandbox and compare its numbers", as_switch,
                                group="rerun")
    device: str | None = option(
        "where the rerun trains (default auto: cuda when the answer claims it and one is here)", as_device,
        group="rerun", choices=DEVICES)
    workspace: str | None = option("folder holding the answer's files (default: the transcript's folder)", as_text,
                                   group="rerun", metavar="DIR")
    timeout: float | None = option("wall-clock seconds for the whole rerun (default 600)", as_positive,
                                   group="rerun", metavar="SECONDS")
    python: str | None = option("interpreter for the experiment (default: this one)", as_text, group="rerun",
                                metavar="PATH")
    rtol: float | None = option("relative tolerance per seed (default 1e-5, 1e-2 across devices)", as_non_negative,
                                group="rerun")
    memory: float | None = option("memory cap in GiB (default 8)", as_positive, group="rerun", metavar="GIB")
    disk: float | None = option("GiB the run's copy may grow by, in RAM (default 2)", as_non_negative,
                                group="rerun", metavar="GIB")
    max_processes: int | None = option("processes and threads the experiment may have (default 1024)",
                                       as_positive_int, group="rerun", metavar="N")
    max_output: float | None = option("MiB the experiment may print before it is killed (default 1024)",
                                      as_positive, group="rerun", metavar="MIB")
    cache_dir: str | None = option("where rerun results are cached (default ~/.cache/auditor)", as_text,
                                   group="rerun", metavar="DIR")
    no_cache: bool | None = option("rerun even when a cached result matches", as_switch, group="rerun")
    unsafe_no_sandbox: bool | None = option("run without bubblewrap (trusted code only)", as_switch, group="rerun")


# -- validation with usable messages -------------------------------------------------------------


class _Invalid(Exception):
    """The first bad entry of a table: its keys from the outer table down, and why (None: unknown key)."""

    def __init__(self, keys: tuple[str, ...], reason: str | None) -> None:
        super().__init__(keys, reason)
        self.keys, self.reason = keys, reason

    def explain(self, known: list[str]) -> str:
        key = ".".join(self.keys)
        if self.reason is None:
            return f"unknown key {key!r}{suggest(key, known)} (known: {', '.join(known)})"
        return f"{key}: {self.reason}"


def _validate(cls: type[Options], table: Mapping[Any, Any], from_cli: bool) -> Any:
    """A ``cls`` from a table of kebab-case keys, or :class:`_Invalid` for its first bad entry.

    The options are checked in definition order, then the keys no option has in the table's order.
    """
    specs = {spec.key: spec for spec in cls.options.values()}
    values = {}
    for key, spec in specs.items():
        raw = table.get(key)
        if raw is None:
            continue
        try:
            values[spec.name] = spec.rule(raw, from_cli)
        except _Invalid as inner:  # in a nested table
            raise _Invalid((key, *inner.keys), inner.reason) from None
        except ValueError as exc:
            raise _Invalid((key,), str(exc)) from None
    for key in table:
        if not isinstance(key, str):
            raise _Invalid((str(key),), "Keys should be strings")
        if key not in specs:
            raise _Invalid((key,), None)
    return cls(**values)


def validate_file(table: Mapping[str, Any], where: str) -> FileOptions:
    """A ``[tool.auditor]`` table, every key checked; ``where`` prefixes the message (the file)."""
    try:
        return _validate(FileOptions, dict(table), from_cli=False)
    except _Invalid as invalid:
        known = [spec.key for spec in FileOptions.options.values()]
        raise UsageError(f"{where}: [tool.auditor] {invalid.explain(known)}") from None


def validate_command_line(given: Mapping[str, Any]) -> CommandLine:
    """The flags given (field name -> raw value; absent or None: not given)."""
    values = {kebab(name): value for name, value in given.items() if value is not None}
    try:
        return _validate(CommandLine, values, from_cli=True)
    except _Invalid as invalid:
        raise UsageError(invalid.explain([]) if invalid.reason is None else f"--{invalid.explain([])}") from None


# -- argparse, from the options ------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, formats: list[str]) -> None:
    """Every :class:`CommandLine` flag on ``parser`` (strings: the value rules convert and check them)."""
    groups = {
        "audit": parser,
        "batch": parser.add_argument_group("batch", "directories, parallelism, cross-answer checks"),
        "gate": parser.add_argument_group("gate", "configuration and baselines"),
        "rerun": parser.add_argument_group("rerun", "run the referenced experiment again in a sandbox"),
    }
    for name, spec in CommandLine.options.items():
        if spec.group is None:
            continue
        kwargs: dict[str, Any] = {"dest": name, "default": None, "help": spec.help}
        if spec.rule is as_switch:
            kwargs["action"] = "store_true"
        else:
            if spec.metavar:
                kwargs["metavar"] = spec.metavar
            if name == "format":
                kwargs["choices"] = formats
                kwargs["help"] = f"{spec.help}: {', '.join(formats)}"
            elif spec.choices:
                kwargs["choices"] = spec.choices
            if spec.rule in (as_codes, as_globs):
                kwargs["action"] = "append"  # repeatable; each value may hold commas
        groups[spec.group].add_argument(*(spec.flags or [f"--{spec.key}"]), **kwargs)
