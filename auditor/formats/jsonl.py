"""``--format jsonl``: one JSON result per line, written as each transcript finishes.

Each line is one result of the JSON contract (``source``, ``status``,
``findings``, ``recomputed``, ...) plus ``cross``, the facts the cross-answer
checks compare, so that ``--resume`` can run them over the whole batch.
Lines come in completion order (``--jobs`` > 1 finishes out of order); every
line names its ``source``.  When the run completes, one last line holds the
summary: ``{"summary": {...}, "cross": {...}, "late_findings": [...]}``, where
``late_findings`` are the cross-answer findings (X9xx) that could only be
known after every line above was written, each with its ``source``, and
``config``, the configuration file the run read (null when none).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, TextIO

from ..audit import AuditResult
from ..batch import record
from ..findings import Finding
from . import Run
from .safe import clean, clean_finding, clean_result


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def result_line(result: AuditResult) -> str:
    # Lines are written before the Run exists, so they are cleaned here (see .safe).
    return _dumps(record(clean_result(result))) + "\n"


def summary_line(run: Run, late_findings: Iterable[tuple[str, Finding]] = ()) -> str:
    data: dict[str, Any] = {"summary": run.summary}
    if run.cross is not None:
        data["cross"] = run.cross.to_dict()
    data["late_findings"] = [{"source": clean(source), **clean_finding(f).to_dict()} for source, f in late_findings]
    data["config"] = run.config
    return _dumps(data) + "\n"


class Stream:
    """Writes result lines as they arrive, flushing each so an interrupt loses nothing finished."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write_result(self, result: AuditResult) -> None:
        self.stream.write(result_line(result))
        self.stream.flush()

    def write_summary(self, run: Run, late_findings: Iterable[tuple[str, Finding]] = ()) -> None:
        self.stream.write(summary_line(run, late_findings))
        self.stream.flush()


def write(run: Run, stream: TextIO) -> None:
    """The whole run at once (every result already carries its cross-answer findings)."""
    for result in run.results:
        stream.write(result_line(result))
    stream.write(summary_line(run))
