"""What a result keeps of its answer for the stages after the audit.

* :func:`cross_facts`: what the batch's cross-answer checks (X901, X902)
  compare, always kept (``AuditResult.cross``, also in jsonl records so that
  ``--resume`` can still run them).  The single-answer pipeline stores these
  facts and never imports the cross-answer family.
* :func:`figure_data`: what the HTML report's charts draw (both arms'
  per-seed values, the metric direction, sweeps, configs and the agent's
  verdict sentence), kept (``AuditResult.figures``, not part of the JSON
  contract) only when the report will draw them (``AuditOptions.figure_data``),
  so a batch written as jsonl holds no more than it needs; the report never
  reads a transcript again.
"""

from __future__ import annotations

from typing import Any

from .context import AuditContext

# The agent's verdict sentence is quoted, not stored whole (an answer may hold megabytes of prose).
MAX_SENTENCE_CHARS = 2_000


def cross_facts(ctx: AuditContext) -> dict[str, Any]:
    """What the cross-answer checks need from one audited answer (``AuditResult.cross``)."""
    report = ctx.report
    return {
        "track": report.track,
        "model": report.model,
        "baseline_cfg": ctx.baseline.best_cfg,
        "baseline_per_seed": [float(v) for v in ctx.baseline.per_seed],
        "baseline_pointer": ctx.baseline.stats_pointer + "/per_seed",
        "verdict_pointer": ctx.pointer("comparison", "verdict"),
    }


def _sweep(entries: Any) -> list[dict[str, Any]]:
    return [{"cfg": entry.cfg, "mean": entry.mean} for entry in entries or ()]


def figure_data(ctx: AuditContext) -> dict[str, Any]:
    """The per-seed values (two lists of n floats), sweeps, configs and verdict sentence of one answer."""
    verdict = ctx.answer.verdict if ctx.answer is not None else None
    return {
        "baseline_per_seed": [float(v) for v in ctx.baseline.per_seed],
        "idea_per_seed": [float(v) for v in ctx.idea.per_seed],
        "lower_is_better": bool(ctx.lower_is_better),
        "baseline_cfg": ctx.baseline.best_cfg,
        "idea_cfg": ctx.idea.best_cfg,
        "baseline_sweep": _sweep(ctx.baseline.sweep),
        "idea_sweep": _sweep(ctx.idea.sweep),
        "answer_verdict": verdict[:MAX_SENTENCE_CHARS] if isinstance(verdict, str) else None,
    }
