"""What every check rule receives: the validated answer, its normalised arms,
the recomputed statistics and the options."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from .model import Answer, ArmView, BenchReport, join_pointer
from .options import AuditOptions
from .stats import Recomputed
from .verdicts import Verdict, classify_verdict


@dataclass(frozen=True)
class AuditContext:
    """Read-only input of a check rule.

    ``document`` is the JSON object as written (after NaN/Infinity were
    rejected); ``answer`` is None when the input was a bare bench report.
    ``report_pointer`` is ``"/bench_report"`` or ``""`` for a bare report.
    ``recomputed`` is None when the arms cannot be paired (A301 explains why).
    """

    document: dict[str, Any]
    answer: Answer | None
    report: BenchReport
    report_pointer: str
    baseline: ArmView
    idea: ArmView
    recomputed: Recomputed | None
    options: AuditOptions

    def pointer(self, *tokens: str | int) -> str:
        """Pointer into the bench report: ``ctx.pointer("comparison", "p_value")``."""
        return join_pointer(self.report_pointer, *tokens)

    @property
    def lower_is_better(self) -> bool:
        return self.report.lower_is_better

    @functools.cached_property
    def claimed_verdict(self) -> Verdict | None:
        """The comparison verdict classified by its words (its first ``max_prose_chars`` characters)."""
        return classify_verdict(self.report.comparison.verdict[: self.options.max_prose_chars])

    def arms(self) -> tuple[ArmView, ArmView]:
        return (self.baseline, self.idea)
