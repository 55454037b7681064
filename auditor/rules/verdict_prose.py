"""V406: numbers quoted in the answer's prose that contradict its report.

Split from :mod:`.verdict` only to keep files short; :mod:`.verdict` imports
this module, so loading the verdict family registers the rule.
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Iterator

from ..context import AuditContext
from ..findings import Finding, Severity, check, finding
from ..model import join_pointer
from ..prose import Reported, extract_claims

# Nested metrics deeper than this are not prose anyone reads.
MAX_METRICS_DEPTH = 8
# What reading one field or value costs out of the prose budget (max_prose_chars)
# on top of its characters: a million empty strings or numbers under `metrics`
# must not take longer to read than the budget's worth of text.
PER_VALUE_CHARS = 64


def _prose_fields(ctx: AuditContext) -> Iterator[tuple[str, str]]:
    """(pointer, text) of the answer's verdict sentence and every string under ``metrics``.

    At most ``max_prose_chars // PER_VALUE_CHARS`` values under ``metrics`` are visited.
    """
    a = ctx.answer
    if a is None:
        return
    if isinstance(a.verdict, str):
        yield join_pointer("", "verdict"), a.verdict
    if a.metrics is not None:
        yield from _strings_under(a.metrics, join_pointer("", "metrics"), ctx.options.max_prose_chars // PER_VALUE_CHARS)


def _strings_under(value: Any, pointer: str, max_visits: int) -> Iterator[tuple[str, str]]:
    """Strings in ``value`` in document order, depth-first, visiting at most ``max_visits`` values."""
    stack: list[tuple[Any, str, int]] = [(value, pointer, 0)]
    visits = 0
    while stack and visits < max_visits:
        item, where, depth = stack.pop()
        visits += 1
        if isinstance(item, str):
            yield where, item
        elif depth >= MAX_METRICS_DEPTH:
            continue
        elif isinstance(item, (dict, list)):
            entries = item.items() if isinstance(item, dict) else enumerate(item)
            children = [(v, join_pointer(where, k), depth + 1) for k, v in islice(entries, max_visits - visits)]
            stack.extend(reversed(children))


def _matches_any(reported: Reported, *values: float | None) -> bool:
    return any(v is not None and reported.consistent_with(v) for v in values)


def _contradictions(ctx: AuditContext, text: str, budget: int) -> Iterator[tuple[str, Any, Any]]:
    """(message, quoted text, report value) for each claim in ``text`` the report contradicts.

    A prose number is accepted when it matches the report's claimed value or
    the recomputed one: prose quoting the true value is not what is wrong
    when the report disagrees (the A3xx rules say so).
    """
    c, r = ctx.report.comparison, ctx.recomputed
    claims = extract_claims(text, budget)
    for p in claims.p_values:
        if not (p.consistent_with(c.p_value) or (r is not None and p.consistent_with(r.p_value))):
            yield f'the prose says "{p.text}" but comparison.p_value is {c.p_value:.10g}', p.text, c.p_value
    for w in claims.wins:
        if w.wins not in (c.idea_wins, r.idea_wins if r is not None else None):
            yield f'the prose says "{w.text}" but comparison.idea_wins is {c.idea_wins}', w.text, c.idea_wins
        elif w.total is not None and w.total not in (c.n_pairs, r.n_pairs if r is not None else None):
            yield f'the prose says "{w.text}" but comparison.n_pairs is {c.n_pairs}', w.text, c.n_pairs
    for d in claims.deltas:
        if not _matches_any(d.reported, c.delta_mean, r.delta_mean if r is not None else None):
            yield (
                f'the prose says "{d.text}" but comparison.delta_mean is {c.delta_mean:.10g}',
                d.text,
                c.delta_mean,
            )
    base, idea = ctx.baseline.stats.mean, ctx.idea.stats.mean
    for ft in claims.from_to:
        ok_start = _matches_any(ft.start, base, r.baseline.mean if r is not None else None)
        ok_end = _matches_any(ft.end, idea, r.idea.mean if r is not None else None)
        if not (ok_start and ok_end):
            yield (
                f'the prose says "{ft.text}" but the baseline mean is {base:.10g} and the idea mean is {idea:.10g}',
                ft.text,
                [base, idea],
            )


@check("V406", "prose-number-contradicts-report", Severity.ERROR)
def prose_number_contradicts_report(ctx: AuditContext) -> Iterator[Finding]:
    """A number quoted in the answer's prose contradicts the report.

    ## What it does
    Reads the answer's `verdict` sentence and every string under `metrics`
    for p-values ("p=0.01475", "p < 0.05"), win fractions ("7/8 wins"),
    the mean paired difference ("delta_mean=-0.0087") and "from A to B"
    baseline-to-idea means, and compares each with the report. Comparison
    is rounding-aware: "0.0156" is consistent with 0.015625. Numbers the
    prose does not quote are never flagged.

    ## Why is this bad?
    Readers quote the sentence, not the JSON. A summary that says "p=0.001"
    over a report with p=0.016 overstates the result even when the report
    itself is right.

    ## Example
    ```json
    {"verdict": "MSE improved with p=0.001 and 8/8 wins.",
     "bench_report": {"comparison": {"p_value": 0.01475, "idea_wins": 7, "n_pairs": 8}}}
    ```
    """
    budget = ctx.options.max_prose_chars
    for pointer, text in _prose_fields(ctx):
        if budget <= 0:
            return
        for message, quoted, value in _contradictions(ctx, text, budget):
            yield finding(
                "V406",
                f"{message}; make the prose quote the report",
                pointer=pointer,
                claimed=quoted,
                recomputed=value,
            )
        budget -= len(text) + PER_VALUE_CHARS
