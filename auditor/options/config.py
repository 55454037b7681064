"""``[tool.auditor]`` in ``pyproject.toml``: project-wide defaults for ``auditor audit``.

The configuration is discovered from the working directory upward: the first
trusted ``pyproject.toml`` holding a ``[tool.auditor]`` table wins (as ruff does
with ``[tool.ruff]``); ``--config FILE`` names one explicitly and ``--isolated``
ignores every file.  The command line overrides the file key by key.

Keys (kebab-case)::

    [tool.auditor]
    select = ["A", "V"]            # codes or prefixes (default: every rule)
    ignore = ["T601"]
    extend-select = ["X"]          # added to select (also --extend-select)
    extend-ignore = ["D5"]         # added to ignore (also --extend-ignore)
    fail-on = "warning"            # error | warning | info | never
    alpha = 0.05
    mc-resamples = 20000           # B assumed for claimed Monte-Carlo p-values
    resamples = 100000             # the auditor's own randomized test (n > 30)
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

Every problem (unknown key or rule code, wrong type, unreadable or invalid
TOML) raises :class:`~auditor.errors.UsageError` naming the file and the key,
with a suggestion for a near miss.  The keys and their validation are defined
once, with the command line's flags, in :mod:`auditor.options.keys`.

A *discovered* file may be the audited agent's own.  One beside a transcript
under audit, owned by another user or writable by others is not read at all
(:mod:`auditor.options.trust`): discovery goes on upward as if it were not
there, and the run names it (``Config.ignored``).  A trusted discovered file
may still come with the agent's pull request, so it cannot silence the rerun's
integrity findings (the "rerun" family, R801-R807) either: its select, ignore
and per-file-ignores never drop them, its severity table never lowers them, and
its ``fail-on = "never"`` never lets one of them pass (``AuditOptions.always_fail``).
The command line and a file named with ``--config`` are the user's own choice and may.

Every run records its policy: each effective value and where it came from
(``Settings.policy``, :meth:`Settings.report`), so a reviewer sees ``alpha = 0.5 (pyproject.toml)``.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from auditor.errors import UsageError
from auditor.files.discovery import DEFAULT_INCLUDE
from auditor.files.paths import STDIN, posix
from auditor.files.paths import relative as relative_path
from auditor.findings import Severity, matches
from auditor.options.keys import CommandLine, FileOptions, validate_file
from auditor.options.models import DEFAULT_FDR, AuditOptions
from auditor.options.trust import Audited, untrusted

PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class Config:
    """A validated ``[tool.auditor]`` table and where it came from (empty: no file)."""

    options: FileOptions = field(default_factory=FileOptions)
    path: Path | None = None
    # Found by looking upward from the working directory, not named with --config:
    # it may be the audited agent's own file (see the module docstring).
    discovered: bool = False
    # Discovered files left unread as untrusted, nearest first: (path, why).
    ignored: tuple[tuple[Path, str], ...] = ()

    @property
    def root(self) -> Path | None:
        """The folder that per-file-ignores globs are relative to."""
        return self.path.parent if self.path is not None else None


# Larger than any real pyproject.toml; an untrusted one is not read past it.
MAX_CONFIG_BYTES = 1024 * 1024


def discover(start: Path, audited: Audited | None = None) -> Path | None:
    """The nearest trusted ``pyproject.toml`` at or above ``start`` with a ``[tool.auditor]`` table."""
    return _find(start, audited)[0]


def _find(start: Path, audited: Audited | None) -> tuple[Path | None, list[tuple[Path, str]]]:
    """The nearest trusted file with the table, and the untrusted ones with it passed on the way."""
    ignored: list[tuple[Path, str]] = []
    for folder in (start, *start.parents):
        candidate = folder / PYPROJECT
        if not candidate.is_file():
            continue
        try:
            if "auditor" not in _read_toml(candidate).get("tool", {}):
                continue
            problem = None
        except UsageError as exc:  # unreadable: a config or not, it is an error only if trusted
            problem = exc
        reason = untrusted(candidate, audited)
        if reason is not None:
            ignored.append((candidate, reason))
            continue
        if problem is not None:
            raise problem
        return candidate, ignored
    return None, ignored


def load(path: Path | None = None, *, start: Path | None = None, audited: Audited | None = None) -> Config:
    """Read ``path``, or discover a trusted one upward from ``start`` (``audited``: the run's
    transcripts, which an untrusted file sits beside); an empty Config when none is found."""
    discovered = path is None
    ignored: list[tuple[Path, str]] = []
    if path is None:
        path, ignored = _find((start or Path.cwd()).resolve(), audited)
        if path is None:
            return Config(ignored=tuple(ignored))
    elif not path.is_file():
        raise UsageError(f"config file not found: {path}")
    table = _read_toml(path).get("tool", {}).get("auditor")
    if table is None:
        raise UsageError(f"{path}: no [tool.auditor] table")
    return Config(parse(table, path), path=path, discovered=discovered, ignored=tuple(ignored))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise UsageError(f"cannot read config {path}: larger than {MAX_CONFIG_BYTES // 1024} KiB")
        return tomllib.loads(data.decode("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read config {path}: {exc}") from None


def parse(table: Any, path: Path) -> FileOptions:
    """Validate a ``[tool.auditor]`` table (:mod:`auditor.options.keys`): unknown keys are errors."""
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.auditor] must be a table")
    return validate_file(table, str(path))


def protected_rules() -> tuple[str, ...]:
    """The rerun's integrity rules (R801-R807), which a discovered config cannot silence."""
    from auditor.findings import all_rules

    return tuple(rule.code for rule in all_rules() if rule.family == "rerun")


def _unprotected(patterns: Sequence[str], protected: Sequence[str]) -> tuple[str, ...]:
    """Patterns matching exactly the rules ``patterns`` match, less the ``protected`` ones.

    A pattern that covers a protected rule (``R``, ``R80``, ``ALL``) becomes the
    registered codes it covers but those.
    """
    from auditor.findings import all_rules

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
    # include/exclude apply to files named on the command line too (the pre-commit hook).
    force_exclude: bool = False
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    root: Path | None = None  # per-file-ignores globs are relative to it
    config: Path | None = None  # the file read, if any
    discovered: bool = False  # ... found upward from the working directory
    # The keys of a discovered file that tried to silence a protected rule and were overridden for it.
    guarded: tuple[str, ...] = ()
    # Discovered files left unread as untrusted, nearest first: (path, why).
    ignored: tuple[tuple[Path, str], ...] = ()
    # Every policy value and where it came from (:func:`auditor.options.policy.build`).
    policy: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False)

    def report(self) -> dict[str, Any]:
        """The ``config`` object of the JSON formats (:func:`auditor.options.policy.report`)."""
        from auditor.options.policy import report

        return report(self)

    def options_for(self, path: str) -> AuditOptions:
        return options_for(path, self.options, self.per_file_ignores, self.root)


@dataclass(frozen=True)
class _FileRules:
    """What the configuration file says about rules, once a discovered file is guarded."""

    select: tuple[str, ...] | None
    ignore: tuple[str, ...] | None
    per_file_ignores: dict[str, tuple[str, ...]]
    severity: dict[str, Severity]
    fail_on: str | None
    always_fail: frozenset[str] = frozenset()
    guarded: tuple[str, ...] = ()


def _file_rules(config: Config) -> _FileRules:
    """The file's selection with its extend- lists folded in (empty select: every rule)."""
    file = config.options
    select = file.select
    if select and file.extend_select:
        select = (*select, *file.extend_select)
    ignore = file.ignore
    if file.extend_ignore:
        ignore = (*(ignore or ()), *file.extend_ignore)
    return _FileRules(select, ignore, dict(file.per_file_ignores or {}), dict(file.severity or {}), file.fail_on)


def resolve(config: Config, cli: CommandLine | None = None) -> Settings:
    """Merge the command line (fields it was given) over ``config`` over the defaults.

    ``--select``/``--ignore`` replace the configured lists; ``--extend-select``
    and ``--extend-ignore`` add to them.  A discovered config cannot silence
    the protected rules (:func:`_guard`).
    """
    cli = cli or CommandLine()
    given = cli.given()
    rules = _file_rules(config)
    if config.discovered:
        rules = _guard(
            rules, cli_select="select" in given, cli_ignore="ignore" in given, cli_fail_on="fail_on" in given
        )
    select = (cli.select if "select" in given else rules.select) or ()
    if select and cli.extend_select:
        select = (*select, *cli.extend_select)
    ignore = (*((cli.ignore if "ignore" in given else rules.ignore) or ()), *(cli.extend_ignore or ()))
    file = config.options
    thresholds = file.thresholds.given() if file.thresholds else {}
    limits = {name: getattr(cli, name) for name in ("max_bytes", "max_depth", "max_seeds", "encoding") if name in given}
    numbers = {
        name: value
        for name in ("alpha", "mc_resamples", "resamples")
        if (value := _first(getattr(cli, name), getattr(file, name))) is not None
    }
    options = AuditOptions(  # validated once more as a whole: the Python API's contract
        select=tuple(dict.fromkeys(select)),
        ignore=tuple(dict.fromkeys(ignore)),
        fail_on=_first(cli.fail_on, rules.fail_on, "error"),
        severity_overrides=rules.severity,
        always_fail=rules.always_fail,
        **numbers,
        **thresholds,
        **limits,
    )
    settings = Settings(
        options=options,
        include=tuple(_first(cli.include, file.include, DEFAULT_INCLUDE)),
        exclude=tuple(_first(cli.exclude, file.exclude, ())),
        # A discovered file cannot make named files go unaudited (a planted force-exclude plus exclude
        # would turn `auditor audit answer.txt` into "nothing to audit", exit 0).
        force_exclude=bool(_first(cli.force_exclude, None if config.discovered else file.force_exclude, False)),
        fdr=_first(cli.fdr, file.fdr, DEFAULT_FDR),
        per_file_ignores=rules.per_file_ignores,
        root=config.root,
        config=config.path,
        discovered=config.discovered,
        guarded=(*rules.guarded, *(("force-exclude",) if config.discovered and file.force_exclude else ())),
        ignored=config.ignored,
    )
    from auditor.options.policy import build

    from_file = {
        key
        for key, value in (
            ("select", rules.select),
            ("ignore", rules.ignore),
            ("fail-on", rules.fail_on),
            ("per-file-ignores", rules.per_file_ignores),
            ("severity", rules.severity),
        )
        if value
    }
    return replace(settings, policy=build(settings, file, config.path, set(given), from_file))


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _guard(rules: _FileRules, *, cli_select: bool, cli_ignore: bool, cli_fail_on: bool) -> _FileRules:
    """A discovered file's rules less what would silence a protected rule.

    Also returns the keys that were overridden and the rules whose errors must
    fail even under its ``fail-on = "never"``.  Lists the command line gives
    replace the file's and are not touched.
    """
    from auditor.findings import get_rule

    protected = protected_rules()
    changes: dict[str, Any] = {}
    guarded: list[str] = []
    if not cli_select and rules.select:
        missing = tuple(c for c in protected if not matches(c, rules.select))
        if missing:
            changes["select"] = (*rules.select, *missing)
            guarded.append("select")
    if not cli_ignore and rules.ignore:
        kept = _unprotected(rules.ignore, protected)
        if kept != rules.ignore:
            changes["ignore"] = kept
            guarded.append("ignore")
    per_file = {glob: _unprotected(codes, protected) for glob, codes in rules.per_file_ignores.items()}
    if per_file != rules.per_file_ignores:
        changes["per_file_ignores"] = {glob: codes for glob, codes in per_file.items() if codes}
        guarded.append("per-file-ignores")
    severity = {
        code: level
        for code, level in rules.severity.items()
        if code not in protected or level.rank >= get_rule(code).severity.rank
    }
    if severity != rules.severity:
        changes["severity"] = severity
        guarded.append("severity")
    if not cli_fail_on and rules.fail_on == "never":
        changes["always_fail"] = frozenset(protected)  # fail-on is kept for every other rule
        guarded.append("fail-on")
    return replace(rules, **changes, guarded=tuple(guarded))


def options_for(
    path: str, options: AuditOptions, per_file_ignores: dict[str, tuple[str, ...]], root: Path | None
) -> AuditOptions:
    """``options`` plus the per-file ignores whose glob matches ``path``.

    Globs are matched against the path relative to ``root`` (the configuration
    file's folder) and, when they hold no ``/``, against the file name too.
    """
    if not per_file_ignores or path == STDIN:
        return options
    relative = relative_path(path, root) if root is not None else posix(path)
    extra: list[str] = []
    for glob, codes in per_file_ignores.items():
        if fnmatch.fnmatchcase(relative, glob) or (
            "/" not in glob and fnmatch.fnmatchcase(os.path.basename(path), glob)
        ):
            extra.extend(codes)
    # model_copy: the configured codes were validated when the file was read, not again per file.
    return options.model_copy(update={"ignore": (*options.ignore, *extra)}) if extra else options
