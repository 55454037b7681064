"""V406: numbers quoted in the answer's prose that contradict its report.

Split from :mod:`.verdict` only to keep files short.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import islice
from typing import Any, NamedTuple

from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.parse.pointers import join_pointer
from auditor.prose import (
    ClaimTest,
    DeltaClaim,
    FromToClaim,
    PValueClaim,
    RelativeChangeClaim,
    Reported,
    extract_claims,
)
from auditor.stats.summary import mean_ratio

# Nested metrics deeper than this are not prose anyone reads.
MAX_METRICS_DEPTH = 8
# What reading one field or value costs out of the prose budget (max_prose_chars)
# on top of its characters: a million empty strings or numbers under `metrics`
# must not take longer to read than the budget's worth of text.
PER_VALUE_CHARS = 64


# The keys from the answer down to a value: ("metrics", "paired_comparison").
_KeyPath = tuple[str | int, ...]


def _prose_fields(ctx: AuditContext) -> Iterator[tuple[_KeyPath, str]]:
    """(path, text) of the answer's verdict sentence and every string under ``metrics``.

    The path is ``("verdict",)`` or ``("metrics", key, ...)``.  At most
    ``max_prose_chars // PER_VALUE_CHARS`` values under ``metrics`` are visited.
    """
    a = ctx.answer
    if a is None:
        return
    if isinstance(a.verdict, str):
        yield ("verdict",), a.verdict
    if a.metrics is not None:
        yield from _strings_under(a.metrics, ("metrics",), ctx.options.max_prose_chars // PER_VALUE_CHARS)


def _strings_under(value: Any, path: _KeyPath, max_visits: int) -> Iterator[tuple[_KeyPath, str]]:
    """(path, string) of the strings in ``value`` (at ``path``) in document order, depth-first, visiting at most
    ``max_visits`` values."""
    stack: list[tuple[Any, _KeyPath, int]] = [(value, path, 0)]
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
            children = [(v, (*where, k), depth + 1) for k, v in islice(entries, max_visits - visits)]
            stack.extend(reversed(children))


def _metrics_key(path: _KeyPath) -> str:
    """The keys below ``metrics`` on ``path``, as words (("metrics", "clip_fraction") -> "clip_fraction")."""
    if path[0] != "metrics":
        return ""
    if len(path) == 2 and type(path[1]) is str:  # a flat metrics dict's key: nearly every path
        return path[1].replace("/", " ")
    return " ".join(map(str, path[1:])).replace("/", " ")


def _matches_any(reported: Reported, *values: float | None) -> bool:
    for value in values:
        if value is not None and reported.consistent_with(value):
            return True
    return False


def _finite(values: list[float]) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def _relative_references(ctx: AuditContext, claim: RelativeChangeClaim) -> list[float]:
    """Every percentage an honest answer could print for the idea's change of the metric.

    ``100*|delta|/|mean|`` with the report's or the recomputed delta (or the
    difference of the claimed means), over the baseline or the idea mean; the
    mean of the per-seed relative changes; and percentage points: ``100*|delta|``
    when all means lie in [0, 1], ``|delta|`` when they lie in [0, 100] (an
    accuracy written in percent) unless the prose names a metric never written
    in percent (MSE, loss, ...).
    """
    c, r = ctx.report.comparison, ctx.recomputed
    base, idea = ctx.baseline.stats.mean, ctx.idea.stats.mean
    deltas = _finite([c.delta_mean, idea - base] + ([r.delta_mean] if r is not None else []))
    means = _finite([base, idea] + ([r.baseline.mean, r.idea.mean] if r is not None else []))
    refs = [100.0 * abs(d) / abs(m) for d in deltas for m in means if m != 0]
    base_values = ctx.baseline.per_seed
    if r is not None and len(base_values) == r.n_pairs and all(base_values):  # all: no zero to divide by
        refs.append(100.0 * abs(mean_ratio(r.diffs, base_values)))  # an overflow is dropped below
    if means and all(0.0 <= m <= 1.0 for m in means):
        refs += [100.0 * abs(d) for d in deltas]
    elif claim.may_be_percentage_points and means and all(0.0 <= m <= 100.0 for m in means):
        refs += [abs(d) for d in deltas]
    return _finite(refs)


def _delta_sign(ctx: AuditContext) -> int:
    """-1 or 1 when delta_mean, the difference of the claimed means and the recomputed
    delta all agree on the sign of the idea's change, else 0."""
    c, r = ctx.report.comparison, ctx.recomputed
    deltas = [c.delta_mean, ctx.idea.stats.mean - ctx.baseline.stats.mean]
    # The sign of each (-1, 0 or 1); never NaN: the means are finite.
    signs = {(d > 0) - (d < 0) for d in deltas + ([r.delta_mean] if r is not None else [])}
    return signs.pop() if len(signs) == 1 and 0 not in signs else 0


_EXPECTED_SIGN = {"decrease": -1, "increase": 1}


def _relative_contradiction(ctx: AuditContext, claim: RelativeChangeClaim) -> str | None:
    """Why ``claim`` contradicts the report, or None when it is consistent (or not judged)."""
    lower = ctx.lower_is_better
    if claim.metric_direction is not None and (claim.metric_direction == "lower") != lower:
        return None  # "error fell" over an accuracy report: perhaps 1 - accuracy, not judged
    r = ctx.recomputed  # the message quotes the recomputed change, never a wrong reported one
    delta, base = (
        (ctx.report.comparison.delta_mean, ctx.baseline.stats.mean) if r is None else (r.delta_mean, r.baseline.mean)
    )
    if base != 0 and math.isfinite(100.0 * delta / base):
        change = f"changes the baseline mean by {100.0 * delta / base:+.3g}%"
    else:
        change = "changes the baseline mean"
    given = f"{change} (delta_mean {delta:.3g} of {base:.4g})"
    sign = _delta_sign(ctx)
    if claim.direction is not None and claim.reported.value != 0 and sign != 0:
        expected = _EXPECTED_SIGN.get(claim.direction)
        if expected is None:  # better / worse
            better = -1 if lower else 1
            expected = better if claim.direction == "better" else -better
        if sign != expected:
            moves = "lowers" if sign < 0 else "raises"
            best = "lower" if lower else "higher"
            return f'the prose says "{claim.text}" but the idea {moves} the metric ({best} is better): it {given}'
    refs = _relative_references(ctx, claim)
    if refs and not any(claim.reported.consistent_with(v) for v in refs):
        return f'the prose says "{claim.text}" but the idea {given}'
    return None


class _ReportValues(NamedTuple):
    """The values a prose claim may quote: the report's claimed one, then the recomputed one when there is one.

    Looked up once per audit: the agreement tests run for nearly every claim.
    """

    p_values: tuple[float, ...]
    deltas: tuple[float, ...]
    baseline_means: tuple[float, ...]
    idea_means: tuple[float, ...]


def _report_values(ctx: AuditContext) -> _ReportValues:
    c, r = ctx.report.comparison, ctx.recomputed
    base, idea = ctx.baseline.stats.mean, ctx.idea.stats.mean
    if r is None:
        return _ReportValues((c.p_value,), (c.delta_mean,), (base,), (idea,))
    return _ReportValues(
        (c.p_value, r.p_value), (c.delta_mean, r.delta_mean), (base, r.baseline.mean), (idea, r.idea.mean)
    )


def _p_value_agrees(values: _ReportValues, p: PValueClaim) -> bool:
    for value in values.p_values:
        if p.consistent_with(value):
            return True
    return False


def _delta_agrees(values: _ReportValues, d: DeltaClaim) -> bool:
    return _matches_any(d.reported, *values.deltas)


def _from_to_agrees(values: _ReportValues, ft: FromToClaim) -> bool:
    return _matches_any(ft.start, *values.baseline_means) and _matches_any(ft.end, *values.idea_means)


def _agrees_with_report(values: _ReportValues) -> ClaimTest:
    """The test a p-value, delta or from-to claim passes by, for extract_claims to leave such claims out early."""

    def agrees(claim: PValueClaim | DeltaClaim | FromToClaim) -> bool:
        if type(claim) is PValueClaim:  # (exact types: a claim is one of the three, never a subclass)
            return _p_value_agrees(values, claim)
        if type(claim) is DeltaClaim:
            return _delta_agrees(values, claim)
        assert type(claim) is FromToClaim
        return _from_to_agrees(values, claim)

    return agrees


def _contradictions(
    ctx: AuditContext, text: str, budget: int, context: str, values: _ReportValues, agrees: ClaimTest
) -> Iterator[tuple[str, Any, Any]]:
    """(message, quoted text, report value) for each claim in ``text`` the report contradicts.

    A prose number is accepted when it matches the report's claimed value or
    the recomputed one: prose quoting the true value is not what is wrong
    when the report disagrees (the A3xx rules say so).  ``values`` and
    ``agrees`` are :func:`_report_values` of ``ctx`` and its
    :func:`_agrees_with_report`, made once per audit.
    """
    c, r = ctx.report.comparison, ctx.recomputed
    claims = extract_claims(text, budget, context=context, omit=agrees)
    # The advice is the recomputed value (a wrong JSON value is never copied into the prose); the
    # report's value is named beside it when the two differ.
    for p in claims.p_values:
        if not _p_value_agrees(values, p):
            yield (
                _says(p.text, "p", c.p_value, r and r.p_value, "comparison.p_value"),
                p.text,
                _true(c.p_value, r and r.p_value),
            )
    for w in claims.wins:
        if w.wins not in (c.idea_wins, r.idea_wins if r is not None else None):
            yield (
                _says(w.text, "idea_wins", c.idea_wins, r and r.idea_wins, "comparison.idea_wins"),
                w.text,
                _true(c.idea_wins, r and r.idea_wins),
            )
        elif w.total is not None and w.total not in (c.n_pairs, r.n_pairs if r is not None else None):
            yield (
                _says(w.text, "n_pairs", c.n_pairs, r and r.n_pairs, "comparison.n_pairs"),
                w.text,
                _true(c.n_pairs, r and r.n_pairs),
            )
    for d in claims.deltas:
        if not _delta_agrees(values, d):
            yield (
                _says(d.text, "delta_mean", c.delta_mean, r and r.delta_mean, "comparison.delta_mean"),
                d.text,
                _true(c.delta_mean, r and r.delta_mean),
            )
    base, idea = (ctx.baseline.stats.mean, ctx.idea.stats.mean) if r is None else (r.baseline.mean, r.idea.mean)
    for ft in claims.from_to:
        if not _from_to_agrees(values, ft):
            yield (
                f'the prose says "{ft.text}" but the baseline mean is {base:.10g} and the idea mean is {idea:.10g}',
                ft.text,
                [base, idea],
            )
    for rc in claims.relative_changes:
        message = _relative_contradiction(ctx, rc)
        if message is not None:
            delta = c.delta_mean if r is None else r.delta_mean
            relative = 100.0 * delta / base if base != 0 else delta
            yield message, rc.text, relative if math.isfinite(relative) else None


def _true(claimed: Any, recomputed: Any) -> Any:
    """The value the prose should quote: the recomputed one when there is one."""
    return claimed if recomputed is None else recomputed


def _says(text: str, name: str, claimed: Any, recomputed: Any, field: str) -> str:
    """'the prose says "<text>" but <the true value>', naming the report's value where it differs."""
    if recomputed is None:
        return f'the prose says "{text}" but {field} is {claimed:.10g}'
    message = f'the prose says "{text}" but the recomputed {name} is {recomputed:.10g}'
    if claimed != recomputed:
        message += f" ({field}: {claimed:.10g})"
    return message


@check_rule("V406", "prose-number-contradicts-report", Severity.ERROR)
def V406(ctx: AuditContext) -> Iterator[Finding]:
    """A number quoted in the answer's prose contradicts the report.

    ## What it does
    Reads the answer's `verdict` sentence and every string under `metrics`
    for p-values ("p=0.01475") and p bounds ("p < 0.05", "p<.001",
    "p ≤ 0.05"), win fractions ("7/8 wins"), the mean paired difference
    ("delta_mean=-0.0087"), "from A to B" baseline-to-idea means, and
    relative changes of the metric ("a 4.1% reduction in test MSE",
    "improved by 2%", "MSE dropped 4.1%", "4.1% lower MSE"), and compares
    each with the report and the recomputed statistics. Comparison is
    rounding-aware: "0.0156" is consistent with 0.015625, and a bound holds
    when the claimed or the recomputed p satisfies it.

    A relative change is consistent when, to the digits printed, it equals
    100·|delta_mean| / |mean| for the claimed or recomputed delta over the
    baseline or the idea mean (or the mean per-seed relative change, or
    percentage points for metrics in [0, 1]); and its direction must match:
    "reduction/lower/dropped" needs the idea's mean below the baseline's,
    "increase/higher/rose" above, "improved/better/gain" better in the
    metric's direction, "worse/degraded/hurt" worse. Percentages of other
    quantities (clip fraction, tail, MDE, confidence, time, a sweep), levels
    without a change word ("accuracy 91.2%"), bounds ("by less than 1%"),
    ranges and "from 90.1% to 91.2%" are not read. Numbers the prose does
    not quote are never flagged.

    ## Why is this bad?
    Readers quote the sentence, not the JSON. A summary that says "p=0.001"
    over a report with p=0.016, or "a 4.1% reduction in MSE" over a change of
    0.08%, overstates the result even when the report itself is right; a
    claimed increase over a measured decrease reverses it.

    ## Example
    ```json
    {"verdict": "MSE improved with p=0.001 and 8/8 wins, a 4.1% reduction in test MSE.",
     "bench_report": {"metric_direction": "lower is better",
                      "baseline": {"full": {"mean": 10.93}}, "idea": {"mean": 10.92},
                      "comparison": {"delta_mean": -0.0087, "p_value": 0.01475, "idea_wins": 7, "n_pairs": 8}}}
    ```

    ## How to fix
    Change the sentence to quote the report's value (copied from the JSON,
    rounded only at its last printed digit), or drop the number from the prose.
    When an A3xx finding says the report's value itself is wrong, correct the
    report first and quote the corrected value.
    """
    budget = ctx.options.max_prose_chars
    values = _report_values(ctx)
    agrees = _agrees_with_report(values)
    for path, text in _prose_fields(ctx):
        if budget <= 0:
            return
        for message, quoted, value in _contradictions(ctx, text, budget, _metrics_key(path), values, agrees):
            yield V406.finding(
                f"{message}; make the prose quote {'the report' if ctx.recomputed is None else 'the recomputed value'}",
                pointer=join_pointer("", *path),
                claimed=quoted,
                recomputed=value,
            )
        budget -= len(text) + PER_VALUE_CHARS
