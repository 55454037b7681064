"""E7xx: whether a (non-)effect means what the answer says it means."""

from __future__ import annotations

from collections.abc import Iterator

from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.stats.summary import (
    EXACT_MAX_N_CAP,
    leave_one_out_p_bound,
    leave_one_out_p_values,
    leave_one_out_within_twice_p,
)
from auditor.stats.verdicts import Verdict, classify_practical

# E702 runs n leave-one-out exact tests; above this n they cost more than 20
# audits of an 8-seed answer (meet-in-the-middle over 2^(n-1) patterns each) and,
# as the rule's docs say, one seed can no longer carry a result unless it is a far outlier.
FRAGILITY_MAX_N = 24


@check_rule("E701", "negligible-effect", Severity.WARNING)
def E701(ctx: AuditContext) -> Iterator[Finding]:
    """Statistically significant, but practically negligible.

    ## What it does
    Fires when the recomputed comparison is significant while |delta_mean| is
    below 1% of |baseline mean| or below 0.1 baseline standard deviations
    (both configurable: `negligible-rel` and `negligible-std` in
    `[tool.auditor.thresholds]`).

    ## Why is this bad?
    With paired seeds a tiny, consistent shift becomes significant. A 0.08%
    MSE change is real but rarely worth a new training rule; reporting it as
    "worked" overstates it.

    ## Example
    ```json
    "baseline": {"full": {"mean": 10.93, "std": 1.40}},
    "comparison": {"delta_mean": -0.0087, "p_value": 0.0156, "verdict": "idea better (significant)"}
    ```

    ## How to fix
    Keep the statistics, but state the effect's size where readers look (the
    verdict sentence, `limitations`): "significant but negligible: 0.08% of the
    baseline mean". Do not present it as a practical improvement. A project
    where smaller effects matter sets `negligible-rel` and `negligible-std` in
    `[tool.auditor.thresholds]`.
    """
    r = ctx.recomputed
    if r is None or not r.verdict.significant:
        return
    o = ctx.options
    size = abs(r.delta_mean)
    rel_limit = o.negligible_rel * abs(r.baseline.mean)
    std_limit = o.negligible_std * r.baseline.std_population
    reasons = []
    if size < rel_limit:
        pct = 100 * size / abs(r.baseline.mean)
        reasons.append(f"{pct:.3g}% of the baseline mean (threshold {100 * o.negligible_rel:g}%)")
    if size < std_limit:
        reasons.append(f"{size / r.baseline.std_population:.3g} baseline stds (threshold {o.negligible_std:g})")
    if reasons:
        yield E701.finding(
            f"the effect is significant (p={r.p_value:.6g}) but negligible: |delta_mean|={size:.4g} is "
            + " and ".join(reasons),
            pointer=ctx.pointer("comparison", "delta_mean"),
            claimed=ctx.report.comparison.delta_mean,
            recomputed=r.delta_mean,
        )


@check_rule("E702", "fragile-significance", Severity.WARNING)
def E702(ctx: AuditContext) -> Iterator[Finding]:
    """Significance disappears when a single seed is dropped.

    ## What it does
    For a significant recomputed result, reruns the exact sign-flip test with
    each seed left out in turn and fires when any leave-one-out p reaches
    alpha. Only n <= 24 is checked: for larger n a single
    seed cannot carry the result unless it is an outlier far beyond the others,
    and the exact test keeps the check cheap and deterministic.

    ## Why is this bad?
    A result that hangs on one seed is one unlucky (or lucky) run away from
    "no effect". It should be reported with that caveat or rerun with more
    seeds.

    ## Example
    ```json
    "per_seed_diffs": [-0.9, -0.01, -0.01, -0.01, -0.01, -0.01, 0.02, -0.01]
    ```

    ## How to fix
    Run more seeds and report the comparison over all of them. Until then, say
    in `limitations` that the result rests on one seed (the message names it)
    and that dropping it removes significance.
    """
    r, o = ctx.recomputed, ctx.options
    # n exact tests of 2^(n-1) sums each: bounded by the exact test's own cap.
    limit = min(o.exact_max_n, EXACT_MAX_N_CAP, FRAGILITY_MAX_N)
    if r is None or not r.verdict.significant or r.n_pairs > limit or r.n_pairs < 2:
        return
    # No seed can carry a result whose every leave-one-out p is at most twice its p (the cheap test first).
    if 2.0 * r.p_value < o.alpha and leave_one_out_within_twice_p(r.diffs, exact_max_n=o.exact_max_n):
        return
    # Where sums are not exact, one count of all n bounds every leave-one-out p (not n tests).
    if leave_one_out_p_bound(r.diffs, exact_max_n=o.exact_max_n) < o.alpha:
        return
    worst_p, worst_seed = 0.0, -1
    # One enumeration of the signed sums gives every leave-one-out p (each equal to its own test's).
    for k, p in enumerate(leave_one_out_p_values(r.diffs, exact_max_n=o.exact_max_n)):
        if p > worst_p:
            worst_p, worst_seed = p, k
    if worst_p >= o.alpha:
        yield E702.finding(
            f"significance is fragile: dropping seed {worst_seed} alone raises p to {worst_p:.4g} >= alpha {o.alpha:g}",
            pointer=ctx.pointer("comparison", "per_seed_diffs", worst_seed),
            claimed=ctx.report.comparison.p_value,
            recomputed=worst_p,
        )


@check_rule("E703", "inconclusive-null", Severity.WARNING)
def E703(ctx: AuditContext) -> Iterator[Finding]:
    """ "No effect" claimed although the experiment could not have seen a sizeable one.

    ## What it does
    Fires when the answer claims no effect (comparison verdict or
    ``practical_verdict: no_effect``) while the recomputed minimum detectable
    effect exceeds 5% of |baseline mean| (`inconclusive-mde-rel` in
    `[tool.auditor.thresholds]`).

    ## Why is this bad?
    Absence of evidence is not evidence of absence: with a wide confidence
    interval an effect of several percent would have gone unnoticed. The
    honest verdict is "inconclusive", not "the idea does not help".

    ## Example
    ```json
    "baseline": {"full": {"mean": 10.0}},
    "comparison": {"mde": 0.9, "verdict": "no measurable effect"}
    ```

    ## How to fix
    Call the result inconclusive, not negative: say in the verdict sentence and
    `limitations` that effects up to the MDE (the message gives it as a share of
    the baseline mean) could not be excluded, or run more seeds to shrink the
    MDE. The threshold is `inconclusive-mde-rel` in `[tool.auditor.thresholds]`
    (default 0.05).
    """
    r = ctx.recomputed
    if r is None or r.mde is None or r.baseline.mean == 0:
        return
    practical = classify_practical(ctx.answer.practical_verdict) if ctx.answer else None
    if Verdict.NONE not in (ctx.claimed_verdict, practical):
        return
    limit = ctx.options.inconclusive_mde_rel * abs(r.baseline.mean)
    if r.mde > limit:
        share = f"{r.mde_rel_pct:.3g}%" if r.mde_rel_pct is not None else "far more than 100%"
        yield E703.finding(
            f"'no effect' is inconclusive, not negative: the minimum detectable effect {r.mde:.4g} is "
            f"{share} of the baseline mean "
            f"(threshold {100 * ctx.options.inconclusive_mde_rel:g}%)",
            pointer=ctx.pointer("comparison", "verdict"),
            claimed=ctx.report.comparison.verdict,
            recomputed=r.mde,
        )
