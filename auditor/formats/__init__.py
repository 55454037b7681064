"""Output formats: each module renders the same list of results.

A format is a function ``write(run, stream)`` registered in ``FORMATS``;
``run`` is a :class:`Run` (the results plus the totals every format shows),
whose strings are already cleaned of terminal controls (:mod:`.safe`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, TextIO

from .. import __version__
from ..result import AuditResult, Status
from .safe import clean, clean_result


@dataclass(frozen=True)
class Run:
    """Results in a deterministic order, the batch's cross-answer summary
    (a :class:`~auditor.rules.cross.CrossSummary`; None for a single transcript)
    and the configuration file the run read (None when it read none).

    Every string a result carries (written by an agent, or a file name) is
    cleaned of terminal controls when the Run is built (:mod:`.safe`), so no
    format can print one raw.
    """

    results: tuple[AuditResult, ...]
    cross: Any = None
    config: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", tuple(clean_result(r) for r in self.results))
        if self.config is not None:
            object.__setattr__(self, "config", clean(self.config))

    @property
    def summary(self) -> dict[str, int]:
        statuses = [r.status for r in self.results]
        return {"files": len(statuses), **{status.value: statuses.count(status) for status in Status}}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "auditor_version": __version__,
            "results": [r.to_dict() for r in self.results],
            "summary": self.summary,
        }
        if self.cross is not None:
            out["cross"] = self.cross.to_dict()
        out["config"] = self.config
        return out


def display(value: Any) -> str:
    """A claimed or recomputed value for a person: floats to 6 significant digits, None as a dash."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


Writer = Callable[[Run, TextIO], None]

# name -> module holding ``write``; imported only when that format is used.
FORMATS: dict[str, str] = {
    "text": "auditor.formats.text",
    "json": "auditor.formats.json",
    "jsonl": "auditor.formats.jsonl",
    "sarif": "auditor.formats.sarif",
    "junit": "auditor.formats.junit",
    "github": "auditor.formats.github",
    "html": "auditor.formats.html",
}


def writer(name: str) -> Writer:
    if name not in FORMATS:
        raise KeyError(f"unknown format {name!r}; choose from {', '.join(FORMATS)}")
    return importlib.import_module(FORMATS[name]).write
