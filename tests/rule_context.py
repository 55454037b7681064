"""Run one check rule on a JSON document without the parse and schema stages.

Rule tests build the :class:`AuditContext` straight from a seed-based dict, so
they test the rule alone: a planted defect reaches the rule even when another
stage would also complain about it.
"""

from __future__ import annotations

from typing import Any

from auditor.audit import build_context
from auditor.context import AuditContext
from auditor.findings import Finding, get_rule
from auditor.model import Answer, BenchReport, arm_view
from auditor.options import AuditOptions
from auditor.stats import recompute


def _models(document: dict[str, Any]) -> tuple[Answer | None, BenchReport, str]:
    if "bench_report" in document:
        answer = Answer.model_validate(document)
        return answer, answer.bench_report, "/bench_report"
    return None, BenchReport.model_validate(document), ""


def context_for(document: dict[str, Any], **overrides: Any) -> AuditContext:
    """The context every check gets for ``document`` (an answer or a bare report)."""
    options = AuditOptions(**overrides)
    try:
        import auditor.schema  # noqa: F401
    except ImportError:  # until the schema stage exists, mirror build_context here
        return _context_without_schema(document, options)
    ctx, _ = build_context(document, options)
    return ctx


def _context_without_schema(document: dict[str, Any], options: AuditOptions) -> AuditContext:
    answer, report, report_pointer = _models(document)
    baseline = arm_view(report, "baseline", report_pointer)
    idea = arm_view(report, "idea", report_pointer)
    recomputed = None
    if baseline.per_seed.size == idea.per_seed.size and 0 < baseline.per_seed.size <= options.max_seeds:
        recomputed = recompute(
            baseline.per_seed,
            idea.per_seed,
            lower_is_better=report.lower_is_better,
            alpha=options.alpha,
            exact_max_n=options.exact_max_n,
            resamples=options.mc_resamples,
            seed=options.random_seed,
        )
    return AuditContext(document, answer, report, report_pointer, baseline, idea, recomputed, options)


def run_rule(code: str, document: dict[str, Any], **overrides: Any) -> list[Finding]:
    """Findings of rule ``code`` alone on ``document``."""
    rule = get_rule(code)
    return list(rule.check(context_for(document, **overrides)))  # type: ignore[misc]
