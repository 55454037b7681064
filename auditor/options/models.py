"""Options that change what an audit checks and how strictly, and how ``--rerun`` runs.

:class:`AuditOptions` and :class:`RerunOptions` are frozen pydantic models: the
command line, ``[tool.auditor]`` (:mod:`auditor.options.keys`, whose keys share
the value types below) and a library caller all build them, and every value is
checked on the way in.  A rule code that selects nothing is an error with a
suggestion, ``alpha`` lies in (0, 1), counts are positive, ``fail_on`` takes
``"never"``.  Built once per run (or per file with per-file ignores) and read as
plain attributes by every rule; a worker process gets them pickled.

A value type converts a string only when the command line gave it
(``context={"cli": True}``): ``alpha = "0.05"`` in a TOML file or a Python call
is a type error, not a silent conversion.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo

from auditor.findings import Severity

MiB = 1024 * 1024
# Where --rerun runs the experiment: a GPU when torch sees one, or the one named.
RerunDevice = Literal["auto", "cpu", "cuda"]
DEVICES = get_args(RerunDevice)
# The false-discovery rate of the cross-answer check X902 (--fdr).
DEFAULT_FDR = 0.05
FAIL_ON = ("error", "warning", "info", "never")
EXACT_MAX_N_CAP = 40  # auditor.stats.signflip's cap, not imported: it would load the statistics on every import


# -- value rules: each returns the value or raises ValueError with the message for the user ---------


def _from_cli(info: ValidationInfo | None) -> bool:
    return bool(info is not None and info.context and info.context.get("cli"))


def _number(raw: Any, info: ValidationInfo) -> float:
    if isinstance(raw, str) and _from_cli(info):
        try:
            raw = float(raw)
        except ValueError:
            raise ValueError(f"expected a number, got {raw!r}") from None
    # Finite and within a float's range: NaN fails the comparison, and an int too large for float() is refused.
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not abs(raw) <= sys.float_info.max:
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


def _integer(raw: Any, info: ValidationInfo, least: int, what: str) -> int:
    if isinstance(raw, str) and _from_cli(info):
        try:
            raw = int(raw.replace("_", ""))
        except ValueError:
            raise ValueError(f"expected {what}, got {raw!r}") from None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < least:
        raise ValueError(f"expected {what}, got {raw!r}")
    return raw


def _positive_int(raw: Any, info: ValidationInfo) -> int:
    return _integer(raw, info, 1, "a positive integer")


def _non_negative_int(raw: Any, info: ValidationInfo) -> int:
    return _integer(raw, info, 0, "a non-negative integer")


def _exact_max_n(raw: Any, info: ValidationInfo) -> int:
    value = _integer(raw, info, 0, f"an integer from 0 to {EXACT_MAX_N_CAP}")
    if value > EXACT_MAX_N_CAP:
        raise ValueError(f"expected an integer from 0 to {EXACT_MAX_N_CAP}, got {value}")
    return value


def _string_list(raw: Any, what: str) -> tuple[str, ...]:
    """A list of strings or one string; every item splits on commas (``"A3,V4"``)."""
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, (list, tuple, set, frozenset)) or not all(isinstance(item, str) for item in items):
        raise ValueError(f"expected a list of {what}")
    return tuple(part.strip() for item in items for part in item.split(",") if part.strip())


def _globs(raw: Any) -> tuple[str, ...]:
    return _string_list(raw, "glob patterns")


def suggest(word: str, known: list[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest known word, or nothing."""
    import difflib

    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_codes(codes: tuple[str, ...]) -> tuple[str, ...]:
    """Codes or prefixes that each select at least one registered rule ("ALL" selects every rule)."""
    from auditor.findings import all_rules, matches

    registered = [rule.code for rule in all_rules()]
    for code in codes:
        if not any(matches(known, [code]) for known in registered):
            raise ValueError(
                f"unknown rule code or prefix {code!r}{suggest(code, registered)}; `auditor rules` lists them"
            )
    return codes


def _codes(raw: Any) -> tuple[str, ...]:
    return check_codes(tuple(code.upper() for code in _string_list(raw, "rule codes or prefixes")))


def fail_on_text(raw: Any) -> str:
    """``fail-on`` as written (any case, or a Severity): error, warning, info or never."""
    text = raw.strip().lower() if isinstance(raw, str) else raw  # a Severity is a str: its value
    if text not in FAIL_ON:
        raise ValueError(f"expected one of {', '.join(FAIL_ON)}, got {raw!r}")
    return text


def fail_on_severity(raw: Any) -> Severity | None:
    """``fail-on`` to the lowest failing severity; None ("never", or None itself) never fails."""
    if raw is None:
        return None
    text = fail_on_text(raw)
    return None if text == "never" else Severity(text)


def _severity_table(raw: Any) -> dict[str, Severity]:
    from auditor.findings import REGISTRY, load_rules

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
    if not isinstance(raw, dict) or not all(isinstance(glob, str) for glob in raw):
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
    if text == "all" or (text.isdecimal() and int(text) >= 0):  # isdecimal: exactly what int() reads
        return text
    raise ValueError(f"expected a number or 'all', got {raw!r}")


def _output_targets(raw: Any) -> tuple[tuple[str, str], ...]:
    """``FORMAT:PATH`` items (repeatable; a path may hold commas and colons: only the first colon splits)."""
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, (list, tuple)):
        raise ValueError("expected FORMAT:PATH")
    out = []
    for item in items:
        if isinstance(item, (list, tuple)) and len(item) == 2:  # already split (an API caller)
            item = f"{item[0]}:{item[1]}"
        name, colon, path = str(item).partition(":")
        if not colon or not name.strip() or not path:
            raise ValueError(f"expected FORMAT:PATH (for example sarif:auditor.sarif), got {item!r}")
        out.append((name.strip().lower(), path))
    return tuple(out)


Probability = Annotated[float, BeforeValidator(_probability)]
Positive = Annotated[float, BeforeValidator(_positive)]
NonNegative = Annotated[float, BeforeValidator(_non_negative)]
PositiveInt = Annotated[int, BeforeValidator(_positive_int)]
NonNegativeInt = Annotated[int, BeforeValidator(_non_negative_int)]
Codes = Annotated[tuple[str, ...], BeforeValidator(_codes)]
Globs = Annotated[tuple[str, ...], BeforeValidator(_globs)]
FailOnText = Annotated[str, BeforeValidator(fail_on_text)]
FailOn = Annotated[Severity | None, BeforeValidator(fail_on_severity)]
SeverityTable = Annotated[dict[str, Severity], BeforeValidator(_severity_table)]
PerFileIgnores = Annotated[dict[str, tuple[str, ...]], BeforeValidator(_per_file_ignores)]
Encoding = Annotated[str, BeforeValidator(_encoding)]
Details = Annotated[str, BeforeValidator(_details)]
OutputTargets = Annotated[tuple[tuple[str, str], ...], BeforeValidator(_output_targets)]

# Schemas are built when a model is first validated, not at import (a cold --help needs none).
_FROZEN = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class AuditOptions(BaseModel):
    """What an audit checks and how strictly; every value validated.

    >>> AuditOptions(alpha=0.01, select="A3,V4", fail_on="never").fail_on is None
    True
    """

    model_config = _FROZEN
    alpha: Probability = Field(0.05, description="significance level of the recomputed verdict")
    mc_resamples: PositiveInt = Field(
        10_000,
        description=(
            "resamples B assumed for a claimed Monte-Carlo p-value when the answer states none, tried beside the "
            "counts agents commonly use (auditor.stats.pvalues)"
        ),
    )
    resamples: PositiveInt = Field(100_000, description="resamples of the auditor's own randomized sign-flip test")
    # 30 keeps any answer's audit within 20x of an 8-seed one's (bench/run.py); above it the randomized
    # test's stated interval costs a few milliseconds at any n.
    exact_max_n: Annotated[int, BeforeValidator(_exact_max_n)] = Field(
        30, description=(f"largest n for which the sign-flip test is enumerated exactly (at most {EXACT_MAX_N_CAP})")
    )
    random_seed: NonNegativeInt = Field(0, description="seed of the randomized sign-flip test above exact_max_n")
    negligible_rel: Positive = Field(0.01, description="E701: negligible below this fraction of |baseline mean|")
    negligible_std: Positive = Field(0.1, description="E701: ... or below this many baseline standard deviations")
    inconclusive_mde_rel: Positive = Field(0.05, description="E703: 'no effect' is inconclusive above this MDE/|mean|")
    mechanism_factor: Positive = Field(2.0, description="V407: an observed mechanism value this far from its target")
    # Input limits (hardening).
    max_bytes: PositiveInt = Field(16 * MiB, description="largest input read, in bytes")
    max_depth: PositiveInt = Field(64, description="deepest JSON nesting accepted")
    max_seeds: PositiveInt = Field(10_000, description="most per-seed values recomputed")
    max_prose_chars: PositiveInt = Field(100_000, description="characters of prose scanned for numbers")
    encoding: Encoding | None = Field(
        None, description="text encoding of transcripts given as bytes (None: UTF-8; a BOM always wins)"
    )
    # Off for every format but html, so a batch holds only what its output needs.
    figure_data: bool = Field(False, description="keep what the HTML report's charts draw on each result")
    select: Codes = Field((), description="rule codes or prefixes to check (empty: every rule)")
    ignore: Codes = Field((), description="rule codes or prefixes not to check")
    fail_on: FailOn = Field(
        Severity.ERROR, description=("findings at or above this severity fail a result; 'never' (None) never fails")
    )
    severity_overrides: SeverityTable = Field(default_factory=dict, description="per-rule severities, e.g. T601: error")
    # Set by auditor.options.config when fail-on came from a discovered configuration (the rerun's integrity rules).
    always_fail: Annotated[frozenset[str], BeforeValidator(lambda raw: frozenset(_codes(raw)))] = Field(
        frozenset(), description="rules whose errors fail a result whatever fail_on says"
    )


class RerunOptions(BaseModel):
    """How ``--rerun`` re-executes the experiment an answer references."""

    model_config = _FROZEN
    device: RerunDevice = Field("auto", description="where the experiment trains (auto: cuda when claimed and here)")
    workspace: str | None = Field(None, description="folder holding the answer's files (None: the transcript's)")
    timeout: Positive = Field(600.0, description="wall-clock seconds for the whole process tree")
    python: str | None = Field(None, description="interpreter for the experiment (None: the one running the auditor)")
    rtol: NonNegative | None = Field(None, description="relative tolerance per seed (None: 1e-5, 1e-2 across devices)")
    memory_bytes: PositiveInt = Field(8 * 1024 * MiB, description="memory cap")
    output_tail_bytes: PositiveInt = Field(1 * MiB, description="the last bytes of stdout and stderr kept for findings")
    output_limit_bytes: PositiveInt = Field(1024 * MiB, description="output printed in all before the run is killed")
    disk_bytes: NonNegativeInt = Field(2 * 1024 * MiB, description="what the run's copy may grow by (a tmpfs: RAM)")
    max_processes: PositiveInt = Field(1024, description="processes and threads of the experiment")
    unsafe_no_sandbox: bool = Field(False, description="run without bubblewrap (trusted code only)")
    cache_dir: str | None = Field(None, description="where rerun results are cached (None: ~/.cache/auditor)")
    use_cache: bool = Field(True, description="False: always run again")
    replicate: bool = Field(False, description="run a second time with every seed shifted (auditor.rerun.probe)")
    replicate_offset: int | None = Field(None, description="the replication's seed offset (None: drawn at random)")
    # Only set when auditing in this process: a callable does not pickle (auditor.batch.executors drops it).
    progress: Callable[[str], None] | None = Field(
        None, exclude=True, repr=False, description="called with a status line as the rerun proceeds"
    )
