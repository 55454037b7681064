"""Output formats: each module renders the same list of results.

A format is a function ``write(run, stream)`` registered in ``FORMATS``;
``run`` is a :class:`Run` (the results plus the totals every format shows).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, TextIO

from .. import __version__
from ..audit import STATUS_ERROR, STATUS_FAIL, STATUS_PASS, AuditResult


@dataclass(frozen=True)
class Run:
    """Results in a deterministic order, and the batch's cross-answer summary
    (a :class:`~auditor.rules.cross.CrossSummary`; None for a single transcript)."""

    results: tuple[AuditResult, ...]
    cross: Any = None

    @property
    def summary(self) -> dict[str, int]:
        statuses = [r.status for r in self.results]
        return {
            "files": len(statuses),
            "pass": statuses.count(STATUS_PASS),
            "fail": statuses.count(STATUS_FAIL),
            "error": statuses.count(STATUS_ERROR),
        }

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "auditor_version": __version__,
            "results": [r.to_dict() for r in self.results],
            "summary": self.summary,
        }
        if self.cross is not None:
            out["cross"] = self.cross.to_dict()
        return out


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
