"""``[tool.auditor]`` in ``pyproject.toml``: project-wide defaults for ``auditor audit``.

The configuration is discovered from the working directory upward: the first
``pyproject.toml`` holding a ``[tool.auditor]`` table wins (as ruff does with
``[tool.ruff]``); ``--config FILE`` names one explicitly and ``--isolated``
ignores every file.  The command line overrides the file key by key.

Keys (kebab-case)::

    [tool.auditor]
    select = ["A", "V"]            # codes or prefixes
    ignore = ["T601"]
    fail-on = "warning"            # error | warning | info | never
    alpha = 0.05
    mc-resamples = 20000           # B assumed for claimed Monte-Carlo p-values
    resamples = 100000             # the auditor's own randomized test (n > 40)
    fdr = 0.05                     # X902 false-discovery rate
    include = ["*.txt", "*.md", "*.json"]
    exclude = ["drafts"]

    [tool.auditor.thresholds]
    negligible-rel = 0.01          # E701
    negligible-std = 0.1           # E701
    inconclusive-mde-rel = 0.05    # E703
    mechanism-factor = 2.0         # V407

    [tool.auditor.per-file-ignores]
    "legacy/*" = ["D5", "T603"]

    [tool.auditor.severity]
    T601 = "error"

Every problem (unknown key, wrong type, unreadable or invalid TOML) raises
:class:`~auditor.errors.UsageError` naming the file and the key.

A *discovered* file may lie in the folder under audit, written by the agent
itself, so it cannot silence the rerun's integrity findings (the "rerun"
family, R801-R807): its select, ignore and per-file-ignores never drop them,
its severity table never lowers them, and its ``fail-on = "never"`` never lets
one of them pass (``AuditOptions.always_fail``).  The command line and a file named
with ``--config`` are the user's own choice and may.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from .discovery import DEFAULT_INCLUDE, options_for
from .errors import UsageError
from .findings import Severity, matches
from .options import AuditOptions

PYPROJECT = "pyproject.toml"

# thresholds key -> AuditOptions field
THRESHOLDS = {
    "negligible-rel": "negligible_rel",
    "negligible-std": "negligible_std",
    "inconclusive-mde-rel": "inconclusive_mde_rel",
    "mechanism-factor": "mechanism_factor",
}


@dataclass(frozen=True)
class Config:
    """The validated ``[tool.auditor]`` table; ``None`` means "not set here"."""

    path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    fail_on: str | None = None  # "error" | "warning" | "info" | "never"
    alpha: float | None = None
    mc_resamples: int | None = None
    resamples: int | None = None
    fdr: float | None = None
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    thresholds: dict[str, float] = field(default_factory=dict)  # AuditOptions field -> value
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    severity: dict[str, Severity] = field(default_factory=dict)
    # Found by looking upward from the working directory, not named with --config:
    # it may be the audited agent's own file (see the module docstring).
    discovered: bool = False

    @property
    def root(self) -> Path | None:
        """The folder that per-file-ignores globs are relative to."""
        return self.path.parent if self.path is not None else None


def discover(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` with a ``[tool.auditor]`` table."""
    for folder in (start, *start.parents):
        candidate = folder / PYPROJECT
        if candidate.is_file() and "auditor" in _read_toml(candidate).get("tool", {}):
            return candidate
    return None


def load(path: Path | None = None, *, start: Path | None = None) -> Config:
    """Read ``path`` (or discover one upward from ``start``); an empty Config when none exists."""
    discovered = path is None
    if path is None:
        path = discover((start or Path.cwd()).resolve())
        if path is None:
            return Config()
    elif not path.is_file():
        raise UsageError(f"config file not found: {path}")
    table = _read_toml(path).get("tool", {}).get("auditor")
    if table is None:
        raise UsageError(f"{path}: no [tool.auditor] table")
    return replace(parse(table, path), discovered=discovered)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read config {path}: {exc}") from None


def parse(table: dict[str, Any], path: Path) -> Config:
    """Validate a ``[tool.auditor]`` table; every key is checked, unknown keys are errors."""
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise UsageError(f"{path}: unknown key {unknown[0]!r} in [tool.auditor] (known: {', '.join(_KEYS)})")
    values: dict[str, Any] = {"path": path}
    for key, raw in table.items():
        attr, convert = _KEYS[key]
        try:
            values[attr] = convert(raw)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"{path}: [tool.auditor] {key}: {exc}") from None
    return Config(**values)


def parse_codes(raw: Any) -> tuple[str, ...]:
    """Rule codes or prefixes: a list, or one comma-separated string (as on the command line)."""
    if isinstance(raw, str):
        raw = raw.split(",")
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise TypeError("expected a list of rule codes or prefixes")
    return tuple(c.strip().upper() for c in raw if c.strip())


def parse_globs(raw: Any) -> tuple[str, ...]:
    """Glob patterns: a list, or one comma-separated string (as on the command line)."""
    if isinstance(raw, str):
        raw = raw.split(",")
    if not isinstance(raw, list) or not all(isinstance(g, str) for g in raw):
        raise TypeError("expected a list of glob patterns")
    return tuple(g.strip() for g in raw if g.strip())


def parse_fail_on(raw: Any) -> str:
    if not isinstance(raw, str):
        raise TypeError("expected error, warning, info or never")
    text = raw.strip().lower()
    fail_on_severity(text)  # validates
    return text


def fail_on_severity(text: str) -> Severity | None:
    """``--fail-on`` text to the lowest failing severity; None for "never"."""
    return None if text == "never" else Severity.parse(text)


def _number(raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise TypeError(f"expected a number, got {raw!r}")
    return float(raw)


def parse_probability(raw: Any) -> float:
    value = _number(raw)
    if not 0 < value < 1:
        raise ValueError(f"expected a number between 0 and 1, got {raw!r}")
    return value


def parse_positive_int(raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw <= 0:
        raise TypeError(f"expected a positive integer, got {raw!r}")
    return raw


def _table(raw: Any, what: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise TypeError(f"expected a table of {what}")
    return raw


def _thresholds(raw: Any) -> dict[str, float]:
    out = {}
    for key, value in _table(raw, "thresholds").items():
        if key not in THRESHOLDS:
            raise ValueError(f"unknown key {key!r} (known: {', '.join(THRESHOLDS)})")
        number = _number(value)
        if number <= 0:
            raise ValueError(f"{key}: expected a positive number, got {value!r}")
        out[THRESHOLDS[key]] = number
    return out


def _per_file_ignores(raw: Any) -> dict[str, tuple[str, ...]]:
    return {glob: parse_codes(codes) for glob, codes in _table(raw, "glob = [codes]").items()}


def _severity(raw: Any) -> dict[str, Severity]:
    from .findings import REGISTRY, load_rules

    load_rules()
    out = {}
    for code, level in _table(raw, "CODE = severity").items():
        if code.upper() not in REGISTRY:
            raise ValueError(f"unknown rule {code!r}")
        if not isinstance(level, str):
            raise TypeError(f"{code}: expected error, warning or info")
        out[code.upper()] = Severity.parse(level)
    return out


_KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "select": ("select", parse_codes),
    "ignore": ("ignore", parse_codes),
    "fail-on": ("fail_on", parse_fail_on),
    "alpha": ("alpha", parse_probability),
    "mc-resamples": ("mc_resamples", parse_positive_int),
    "resamples": ("resamples", parse_positive_int),
    "fdr": ("fdr", parse_probability),
    "include": ("include", parse_globs),
    "exclude": ("exclude", parse_globs),
    "thresholds": ("thresholds", _thresholds),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "severity": ("severity", _severity),
}


def protected_rules() -> tuple[str, ...]:
    """The rerun's integrity rules (R801-R807), which a discovered config cannot silence."""
    from .findings import all_rules

    return tuple(rule.code for rule in all_rules() if rule.family == "rerun")


def _unprotected(patterns: Sequence[str], protected: Sequence[str]) -> tuple[str, ...]:
    """Patterns matching exactly the rules ``patterns`` match, less the ``protected`` ones.

    A pattern that covers a protected rule (``R``, ``R80``, ``ALL``) becomes the
    registered codes it covers but those.
    """
    from .findings import all_rules

    out: list[str] = []
    for pattern in patterns:
        if not any(matches(code, [pattern]) for code in protected):
            out.append(pattern)
            continue
        out.extend(r.code for r in all_rules() if r.code not in protected and matches(r.code, [pattern]))
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class Settings:
    """What one ``auditor audit`` run does: the command line over the config over the defaults."""

    options: AuditOptions
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    fdr: float
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    root: Path | None = None  # per-file-ignores globs are relative to it
    config: Path | None = None  # the file read, if any
    discovered: bool = False  # ... found upward from the working directory
    # The keys of a discovered file that tried to silence a protected rule and were overridden for it.
    guarded: tuple[str, ...] = ()

    def options_for(self, path: str) -> AuditOptions:
        return options_for(path, self.options, self.per_file_ignores, self.root)


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def resolve(
    config: Config,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    fail_on: str | None = None,
    alpha: float | None = None,
    mc_resamples: int | None = None,
    resamples: int | None = None,
    fdr: float | None = None,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    **limits: Any,
) -> Settings:
    """Merge command-line values (None: not given) over ``config`` over the defaults.

    A list given on the command line replaces the configured one.  ``limits``
    are AuditOptions fields only the command line sets (max_bytes, ...).
    A discovered config cannot silence the protected rules (:func:`_guard`).
    """
    config, guarded, always_fail = _guard(config, select=select, ignore=ignore, fail_on=fail_on)
    defaults = AuditOptions()
    options = replace(
        defaults,
        select=tuple(_first(select, config.select, ())),
        ignore=tuple(_first(ignore, config.ignore, ())),
        fail_on=fail_on_severity(_first(fail_on, config.fail_on, "error")),
        alpha=_first(alpha, config.alpha, defaults.alpha),
        mc_resamples=_first(mc_resamples, config.mc_resamples, defaults.mc_resamples),
        resamples=_first(resamples, config.resamples, defaults.resamples),
        severity_overrides=dict(config.severity),
        **config.thresholds,
        **limits,
    )
    if always_fail:
        options = replace(options, always_fail=always_fail)
    return Settings(
        options=options,
        include=tuple(_first(include, config.include, DEFAULT_INCLUDE)),
        exclude=tuple(_first(exclude, config.exclude, ())),
        fdr=_first(fdr, config.fdr, 0.05),
        per_file_ignores=dict(config.per_file_ignores),
        root=config.root,
        config=config.path,
        discovered=config.discovered,
        guarded=guarded,
    )


def _guard(
    config: Config, *, select: Sequence[str] | None, ignore: Sequence[str] | None, fail_on: str | None
) -> tuple[Config, tuple[str, ...], frozenset[str]]:
    """A discovered ``config`` less what would silence a protected rule.

    Returns the config to apply, the keys that were overridden, and the rules
    whose errors must fail even under its ``fail-on = "never"``.  Values the
    command line gives replace the file's and are not touched.
    """
    if not config.discovered:
        return config, (), frozenset()
    protected = protected_rules()
    changes: dict[str, Any] = {}
    if select is None and config.select:
        missing = tuple(c for c in protected if not matches(c, config.select))
        if missing:
            changes["select"] = (*config.select, *missing)
    if ignore is None and config.ignore:
        kept = _unprotected(config.ignore, protected)
        if kept != config.ignore:
            changes["ignore"] = kept
    per_file = {glob: _unprotected(codes, protected) for glob, codes in config.per_file_ignores.items()}
    if per_file != config.per_file_ignores:
        changes["per_file_ignores"] = {glob: codes for glob, codes in per_file.items() if codes}
    from .findings import get_rule

    severity = {
        code: level for code, level in config.severity.items()
        if code not in protected or level.rank >= get_rule(code).severity.rank
    }
    if severity != config.severity:
        changes["severity"] = severity
    always_fail: frozenset[str] = frozenset()
    if fail_on is None and config.fail_on == "never":
        always_fail = frozenset(protected)
        changes["fail_on"] = config.fail_on  # kept for every other rule
    keys = {"select": "select", "ignore": "ignore", "per_file_ignores": "per-file-ignores",
            "severity": "severity", "fail_on": "fail-on"}
    guarded = tuple(keys[k] for k in keys if k in changes)
    return replace(config, **changes), guarded, always_fail
