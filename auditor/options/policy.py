"""The policy a run applies, each value with where it came from, for every output format.

A policy is ``{key: {"value": ..., "source": ...}}`` in the configuration file's
spelling (``alpha``, ``fail-on``, ``negligible-rel``), its values JSON-ready;
the source is ``"default"``, ``"command line"``, the configuration file's
absolute path, or both joined by `` + `` (a configured list the command line
extends).  :func:`report` is the ``config`` object of the JSON formats;
:func:`describe` the ``alpha = 0.5 (pyproject.toml)`` items of the headers.
"""

from __future__ import annotations

import os
from typing import Any

DEFAULT, COMMAND_LINE = "default", "command line"
THRESHOLDS = ("negligible_rel", "negligible_std", "inconclusive_mde_rel", "mechanism_factor")


def _json(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    return getattr(value, "value", value)  # a Severity


def build(settings: Any, file: Any, path: Any, given: set[str], from_file: set[str]) -> dict[str, dict[str, Any]]:
    """The policy of ``settings`` (a :class:`~auditor.options.config.Settings`); ``file``: the FileOptions read
    from ``path``; ``given``: the command-line options given; ``from_file``: the rule keys the file's
    (guarded) rules set: select, ignore, fail-on, per-file-ignores, severity."""
    where = os.path.abspath(path) if path is not None else None

    def source(name: str, *, in_file: bool, extended: bool = False) -> str:
        parts = [where] if in_file and where and name not in given else []
        if name in given or extended:
            parts.append(COMMAND_LINE)
        return " + ".join(parts) or DEFAULT

    o = settings.options
    fail_on = o.fail_on.value if o.fail_on is not None else "never"
    thresholds = file.thresholds.given() if file.thresholds else {}
    entries: dict[str, tuple[Any, str]] = {
        "alpha": (o.alpha, source("alpha", in_file=file.alpha is not None)),
        "fdr": (settings.fdr, source("fdr", in_file=file.fdr is not None)),
        "fail-on": (fail_on, source("fail_on", in_file="fail-on" in from_file)),
        "select": (
            o.select,
            source("select", in_file="select" in from_file, extended=bool(o.select) and "extend_select" in given),
        ),
        "ignore": (o.ignore, source("ignore", in_file="ignore" in from_file, extended="extend_ignore" in given)),
        "resamples": (o.resamples, source("resamples", in_file=file.resamples is not None)),
        "mc-resamples": (o.mc_resamples, source("mc_resamples", in_file=file.mc_resamples is not None)),
        **{name.replace("_", "-"): (getattr(o, name), source(name, in_file=name in thresholds)) for name in THRESHOLDS},
        "include": (settings.include, source("include", in_file=file.include is not None)),
        "exclude": (settings.exclude, source("exclude", in_file=file.exclude is not None)),
        "force-exclude": (
            settings.force_exclude,
            source("force_exclude", in_file=file.force_exclude is not None and not settings.discovered),
        ),
        "per-file-ignores": (
            settings.per_file_ignores,
            source("per_file_ignores", in_file="per-file-ignores" in from_file),
        ),
        "severity": (o.severity_overrides, source("severity", in_file="severity" in from_file)),
    }
    return {name: {"value": _json(value), "source": src} for name, (value, src) in entries.items()}


def report(settings: Any) -> dict[str, Any]:
    """The ``config`` object of the JSON formats: the file in effect, the files left unread and why,
    and the policy."""
    return {
        "path": os.path.abspath(settings.config) if settings.config is not None else None,
        "discovered": settings.discovered,
        "trusted": not settings.ignored,
        "ignored": [{"path": os.path.abspath(p), "reason": why} for p, why in settings.ignored],
        "policy": settings.policy,
    }


def shown(source: str) -> str:
    """A source for a person: a file below the working directory by its relative path."""
    parts = []
    for part in source.split(" + "):
        if os.path.isabs(part):
            try:
                relative = os.path.relpath(part)
            except ValueError:  # another drive
                relative = part
            part = part if relative.startswith("..") else relative
        parts.append(part)
    return " + ".join(parts)


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + "}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def describe(config: dict[str, Any] | None) -> list[str]:
    """``alpha = 0.5 (pyproject.toml)`` for each value of the policy that is not the default."""
    if not config:
        return []
    return [
        f"{name} = {_value(entry['value'])} ({shown(entry['source'])})"
        for name, entry in config.get("policy", {}).items()
        if entry.get("source") != DEFAULT
    ]


def ignored_notes(config: dict[str, Any] | None) -> list[str]:
    """``ignoring PATH: REASON; name it with --config to use it`` for each untrusted file left unread."""
    if not config:
        return []
    return [
        f"ignoring {item['path']}: {item['reason']}; name it with --config to use it"
        for item in config.get("ignored", ())
    ]
