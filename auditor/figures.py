"""What the HTML report draws for one answer, taken while the answer is audited.

The charts need more than a result's headline numbers: both arms' per-seed
values, the metric direction, the sweeps, the chosen configs and the agent's
verdict sentence.  They are kept on the result (``AuditResult.figures``, not
part of the JSON contract) only when the report will draw them
(``AuditOptions.figure_data``), so a batch written as jsonl holds no more than
it needs; the report never reads a transcript again.
"""

from __future__ import annotations

from typing import Any

from .context import AuditContext

# The agent's verdict sentence is quoted, not stored whole (an answer may hold megabytes of prose).
MAX_SENTENCE_CHARS = 2_000


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
