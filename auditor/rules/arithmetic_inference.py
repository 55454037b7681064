"""A307-A310: the p-value and the minimum detectable effect against their recomputation.

Split from :mod:`.arithmetic` only to keep files short; :mod:`.arithmetic`
imports this module, so loading the arithmetic family registers these rules.
"""

from __future__ import annotations

import math
from typing import Iterator

from ..context import AuditContext
from ..findings import Finding, Severity, check, finding
from ..stats import RTOL_MDE, RTOL_VALUES, mc_band, min_two_sided_p, values_close

# A claimed p equal to ours up to float formatting is consistent whatever B was.
P_EXACT_RTOL = 1e-9
P_EXACT_ATOL = 1e-12
# Normal quantile some agents use instead of Student's t for the MDE.
Z_975 = 1.959963984540054


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def _p_band(ctx: AuditContext, p_reference: float) -> float:
    """How far a consistent claim may lie from ``p_reference``.

    A claimed p may be a Monte-Carlo estimate from ``mc_resamples`` draws; when
    our own p is randomized too, its own sampling band is added.
    """
    r = ctx.recomputed
    band = mc_band(p_reference, ctx.options.mc_resamples)
    if r is not None and r.p_method == "randomized":
        band += mc_band(p_reference, r.p_resamples)
    return band


def _p_consistent(claimed: float, p_reference: float, band: float) -> bool:
    exact = math.isclose(claimed, p_reference, rel_tol=P_EXACT_RTOL, abs_tol=P_EXACT_ATOL)
    return exact or abs(claimed - p_reference) <= band


def _test_description(ctx: AuditContext) -> str:
    r = ctx.recomputed
    if r.p_method == "exact":
        return f"the exact two-sided sign-flip p over all {r.p_resamples} sign patterns"
    return (
        f"the randomized two-sided sign-flip p from {r.p_resamples} resamples "
        f"(seed {ctx.options.random_seed})"
    )


@check("A307", "p-value-inconsistent", Severity.ERROR)
def p_value_inconsistent(ctx: AuditContext) -> Iterator[Finding]:
    """The reported p_value is not what a paired sign-flip test on the per-seed values gives.

    ## What it does
    Recomputes the two-sided paired sign-flip permutation test on
    mean(idea - baseline): exactly over all 2^n sign patterns for small n,
    by a seeded randomized test above that. A claim is consistent when it
    equals that p or lies within the Monte-Carlo band
    3.29·sqrt(p(1-p)/B) + 1/B (B = `--mc-resamples`), because agents often
    report an estimate from B resamples. When the claim matches the
    one-sided p instead, the message says so.

    ## Why is this bad?
    The p-value decides the verdict. A value no resampling of these seeds
    can produce was computed on other data, with another test, or typed in.

    ## Example
    ```json
    "comparison": {"per_seed_diffs": [-0.015, -0.009, -0.010, -0.012, 0.004, -0.006, -0.009, -0.012],
                   "p_value": 0.001}
    ```
    """
    r = ctx.recomputed
    if r is None:
        return
    claimed = ctx.report.comparison.p_value
    if _p_consistent(claimed, r.p_value, _p_band(ctx, r.p_value)):
        return
    hint = ""
    if _p_consistent(claimed, r.p_value_one_sided, _p_band(ctx, r.p_value_one_sided)):
        hint = f"; it matches the one-sided p {_fmt(r.p_value_one_sided)} instead, so report the two-sided p"
    band = _p_band(ctx, r.p_value)
    yield finding(
        "A307",
        f"p_value is claimed as {_fmt(claimed)} but {_test_description(ctx)} is {_fmt(r.p_value)} "
        f"(a Monte-Carlo estimate from {ctx.options.mc_resamples} resamples would lie within "
        f"±{band:.2g} of it){hint}; report {_fmt(r.p_value)}",
        pointer=ctx.pointer("comparison", "p_value"),
        claimed=claimed,
        recomputed=r.p_value,
    )


@check("A308", "p-value-below-minimum", Severity.ERROR)
def p_value_below_minimum(ctx: AuditContext) -> Iterator[Finding]:
    """The reported p_value is smaller than any sign-flip test with n pairs can give.

    ## What it does
    With n pairs the most extreme of the 2^n sign patterns has two-sided
    probability 2/2^n (0.0078 for n = 8, 0.0625 for n = 5). Fires when the
    claimed p lies below that by more than the Monte-Carlo band.

    ## Why is this bad?
    Such a p is impossible for the test the report describes: it came from a
    different test (a t-test, a test over all samples instead of seeds) or
    was made up, and the significance it suggests is not supported.

    ## Example
    ```json
    "n_seeds": 5,
    "comparison": {"n_pairs": 5, "p_value": 0.01}
    ```
    """
    r = ctx.recomputed
    if r is None:
        return
    claimed = ctx.report.comparison.p_value
    floor = min_two_sided_p(r.n_pairs)
    if claimed >= floor - mc_band(floor, ctx.options.mc_resamples):
        return
    yield finding(
        "A308",
        f"p_value {_fmt(claimed)} is impossible with {r.n_pairs} pairs: the smallest two-sided sign-flip "
        f"p is 2/2^{r.n_pairs} = {floor:.6g}; report the p of the sign-flip test ({_fmt(r.p_value)})",
        pointer=ctx.pointer("comparison", "p_value"),
        claimed=claimed,
        recomputed=floor,
    )


def _operand_scale(ctx: AuditContext) -> float:
    """Magnitude of the per-seed values the differences were computed from."""
    r = ctx.recomputed
    return max(abs(r.baseline.mean), abs(r.idea.mean))


def _mde_close(claimed: float, recomputed: float, noise_scale: float) -> bool:
    # t from a table (2.365) -> 1e-3 relative; float32 noise of the operands -> absolute.
    return values_close(claimed, recomputed, rtol=RTOL_MDE) or values_close(
        claimed, recomputed, rtol=RTOL_VALUES, scale=noise_scale
    )


@check("A309", "mde-mismatch", Severity.ERROR)
def mde_mismatch(ctx: AuditContext) -> Iterator[Finding]:
    """The reported mde is not the 95% CI half-width of the mean paired difference.

    ## What it does
    Recomputes t(0.975, n-1)·sd(d, ddof=1)/sqrt(n) over the per-seed
    differences d and compares it with `comparison.mde` (relative tolerance
    1e-3, because agents take t from a table: 2.365 for n = 8).

    ## Why is this bad?
    The MDE says how large an effect the experiment could have seen; a wrong
    one makes a null result look conclusive or a tiny effect look resolved.

    ## Example
    ```json
    "comparison": {"per_seed_diffs": [-0.015, -0.009, -0.010, -0.012, 0.004, -0.006, -0.009, -0.012],
                   "mde": 0.0094}
    ```
    """
    r, claimed = ctx.recomputed, ctx.report.comparison.mde
    if r is None or claimed is None or r.mde is None:
        return
    if _mde_close(claimed, r.mde, _operand_scale(ctx)):
        return
    n = r.n_pairs
    hint = ""
    sd = float(r.diffs.std(ddof=1))
    if sd > 0 and values_close(claimed, Z_975 * sd / math.sqrt(n), rtol=RTOL_MDE):
        hint = " (it matches z = 1.96 instead of Student's t)"
    elif sd > 0 and values_close(claimed, r.mde * float(r.diffs.std(ddof=0)) / sd, rtol=RTOL_MDE):
        hint = " (it matches the population sd, ddof=0, instead of the sample sd)"
    yield finding(
        "A309",
        f"mde is claimed as {_fmt(claimed)} but t(0.975, {n - 1})·sd(d, ddof=1)/sqrt({n}) over the per-seed "
        f"differences is {_fmt(r.mde)}{hint}; report {_fmt(r.mde)}",
        pointer=ctx.pointer("comparison", "mde"),
        claimed=claimed,
        recomputed=r.mde,
    )


@check("A310", "mde-rel-pct-mismatch", Severity.ERROR)
def mde_rel_pct_mismatch(ctx: AuditContext) -> Iterator[Finding]:
    """The reported mde_rel_pct is not 100·mde/|baseline mean|.

    ## What it does
    Computes 100·mde/|baseline mean| from the recomputed MDE and the
    recomputed baseline mean and compares it with `comparison.mde_rel_pct`
    (relative tolerance 1e-3).

    ## Why is this bad?
    The relative MDE is what readers use to judge whether the experiment was
    sensitive enough; a fraction reported as a percent (or the reverse) is
    off by a factor of 100.

    ## Example
    ```json
    "baseline": {"full": {"mean": 10.93}},
    "comparison": {"mde": 0.0047, "mde_rel_pct": 0.00043}
    ```
    """
    r, claimed = ctx.recomputed, ctx.report.comparison.mde_rel_pct
    if r is None or claimed is None or r.mde_rel_pct is None:
        return
    base = abs(r.baseline.mean)
    if _mde_close(claimed, r.mde_rel_pct, 100.0 * _operand_scale(ctx) / base):
        return
    hint = ""
    claimed_mde = ctx.report.comparison.mde
    if values_close(claimed, r.mde_rel_pct / 100.0, rtol=RTOL_MDE):
        hint = " (it is the fraction, not the percent)"
    elif claimed_mde is not None and values_close(claimed, 100.0 * claimed_mde / base, rtol=RTOL_MDE):
        hint = f" (it follows from the claimed mde {_fmt(claimed_mde)}, which is itself wrong)"
    yield finding(
        "A310",
        f"mde_rel_pct is claimed as {_fmt(claimed)} but 100·mde/|baseline mean| = 100·{_fmt(r.mde)}/"
        f"{_fmt(base)} = {_fmt(r.mde_rel_pct)}{hint}; report {_fmt(r.mde_rel_pct)}",
        pointer=ctx.pointer("comparison", "mde_rel_pct"),
        claimed=claimed,
        recomputed=r.mde_rel_pct,
    )
