"""Output formats: each module renders the same list of results.

A format is a function ``write(run, stream)`` registered in ``FORMATS``;
``run`` is a :class:`Run` (the results plus the totals every format shows),
whose strings are already cleaned of terminal controls (:mod:`.safe`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from .. import __version__
from ..findings import Finding
from ..paths import portable
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
    # Ordinary files (no answer in them) that were skipped, not audited.
    skipped: int = 0
    # The AuditOptions the run used (alpha, fail-on, selection), for reports that show them.
    options: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", tuple(clean_result(r) for r in self.results))
        if self.config is not None:
            object.__setattr__(self, "config", clean(self.config))

    @property
    def summary(self) -> dict[str, int]:
        statuses = [r.status for r in self.results]
        counts = {status.value: statuses.count(status) for status in Status if status is not Status.SKIPPED}
        # "skipped" only when files were: a run of answers alone keeps its summary as it was.
        return {"files": len(statuses), **counts, **({"skipped": self.skipped} if self.skipped else {})}

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


def place(source: str, finding: Finding) -> str | None:
    """``path:line:col`` where a finding was located in its transcript (editors and
    terminals link it), or None when it has no place in the text."""
    if finding.line is None:
        return None
    return f"{portable(source)}:{finding.line}:{finding.column or 1}"


# A batch shows the detailed panels of at most this many failing transcripts above its
# table, so the table and totals stay on the last screen (--details; text format).
DETAILED_FAILURES = 5

# Findings that say a claimed number or verdict is not what the data give: the arithmetic
# family and the verdict contradiction.  Others that point at the same field (E701
# "negligible", D505 "too few seeds") comment on it without disputing it.
_DISPUTING = re.compile(r"^(A\d{3}|V401)$")
_COMPARISON_FIELD = re.compile(r"/comparison/([A-Za-z_]+)$")


def disputed(result: AuditResult) -> dict[str, list[Finding]]:
    """Comparison field (``p_value``, ``verdict`` ...) -> the findings disputing its claimed value;
    every format marks a claim from this one answer."""
    out: dict[str, list[Finding]] = {}
    for f in result.findings:
        match = _COMPARISON_FIELD.search(f.pointer or "")
        if match and _DISPUTING.match(f.rule):
            out.setdefault(match.group(1), []).append(f)
    return out


def short_verdict(text: Any) -> str:
    """A verdict in one word for tables: better, worse, none; ``?`` for words no verdict reads as."""
    from ..verdicts import Verdict, classify_verdict

    if text is None:
        return "—"
    verdict = classify_verdict(text)
    if verdict is not None:
        return {Verdict.BETTER: "better", Verdict.WORSE: "worse", Verdict.NONE: "none"}[verdict]
    return "?" if isinstance(text, str) else str(text)


Writer = Callable[[Run, TextIO], None]

# name -> module holding ``write``; imported only when that format is used.
FORMATS: dict[str, str] = {
    "text": "auditor.formats.text",
    "concise": "auditor.formats.concise",
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
