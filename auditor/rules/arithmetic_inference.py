"""A307-A310: the p-value and the minimum detectable effect against their recomputation.

Split from :mod:`.arithmetic` only to keep files short; it shares that
module's number formatting.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.rules.arithmetic import _fmt, report_recomputed
from auditor.stats.precision import Noise, agrees, mean_noise, printed, std_noise
from auditor.stats.summary import RTOL_MDE, PBand, Recomputed, min_two_sided_p, t_quantile, values_close

# Normal quantile some agents use instead of Student's t for the MDE.
Z_975 = 1.959963984540054
# How far a t quantile read from a 2-decimal table may be from the exact one.
T_TABLE_ATOL = 0.005
# Alternative methods named in one A307 message.
MAX_METHODS_NAMED = 2


def _test_description(r: Recomputed, seed: int) -> str:
    if r.p_method == "exact":
        return f"the exact two-sided sign-flip p over all {r.p_resamples} sign patterns"
    return f"the randomized two-sided sign-flip p from {r.p_resamples} resamples (seed {seed})"


def _other_methods(ctx: AuditContext, r: Recomputed, claimed: float) -> list[str]:
    """Descriptions of the other tests whose p the claim matches (printed digits and float noise allowed)."""
    from auditor.stats.pmethods import alternative_p_values
    from auditor.stats.pvalues import exact_agreement

    shown = printed(claimed)
    named = []
    # Within printing only: a Monte-Carlo reading fits nearly any short print, so it names no method.
    one_sided = exact_agreement(claimed, r.p_band_one_sided)
    if one_sided is not None and one_sided.consistent:
        named.append(f"the one-sided sign-flip p ({_fmt(r.p_value_one_sided)})")
    for alternative in alternative_p_values(ctx.baseline.per_seed, ctx.idea.per_seed, seed=ctx.options.random_seed):
        if len(named) >= MAX_METHODS_NAMED:
            break
        tolerance = shown.half_unit * (1 + 1e-9) + 1e-9 * alternative.p_value
        if abs(claimed - alternative.p_value) <= tolerance:
            named.append(f"{alternative.description} ({_fmt(alternative.p_value)})")
    return named


@check_rule("A307", "p-value-inconsistent", Severity.ERROR)
def A307(ctx: AuditContext) -> Iterator[Finding]:
    """The reported p_value is not what a paired sign-flip test on the per-seed values gives.

    ## What it does
    Recomputes the two-sided paired sign-flip permutation test on
    mean(idea - baseline): exactly over all 2^n sign patterns for n <= 30
    (meet-in-the-middle), by a seeded randomized test above that. A claim is
    consistent when it is the exact p printed with any rounding (near-ties
    that float32 or float64 arithmetic may break either way are allowed), or
    a Monte-Carlo estimate whose hit count lies in the exact binomial 99.9%
    interval of the exact p, under the conventions hits/B, (hits+1)/(B+1)
    and scipy's 2·min of the one-sided estimates, for:
    - the resample count the answer states ("20,000 sign flips");
    - else, when it says its test was randomized ("Monte-Carlo",
      "resampled"), any count agents use (999 to 1,000,000);
    - else the counts code uses by default at 9,999 draws and up (9,999,
      10,000, 20,000, 50,000, 100,000, 1,000,000, `--mc-resamples`).

    A claim only a smaller unstated count explains, or one printed with a
    single significant digit that only a Monte-Carlo reading explains, fits
    nearly any p near it: it is a warning when it lies within 2x of the
    exact p and on its side of alpha, an error otherwise. When the claim is
    another test's p within its printing (one-sided, paired t, Wilcoxon,
    unpaired permutation, z), the message names it.

    ## Why is this bad?
    The p-value decides the verdict. A value no resampling of these seeds
    can produce was computed on other data, with another test, or typed in.

    ## Example
    ```json
    "comparison": {"per_seed_diffs": [-0.015, -0.009, -0.010, -0.012, 0.004, -0.006, -0.009, -0.012],
                   "p_value": 0.001}
    ```

    ## How to fix
    Report the p of the two-sided paired sign-flip test on the per-seed
    differences (the message gives it): exact over all 2^n sign patterns for
    n <= 30, else a randomized test with its resample count stated ("20,000 sign
    flips"). Replace a p from another test (a t-test, Wilcoxon, a one-sided
    test). An honest Monte-Carlo p with an unstated count passes once the count
    is stated in `protocol_note`, or with `mc-resamples` in `[tool.auditor]`
    (`--mc-resamples`) set to the count that was used.
    """
    r, agreed = ctx.recomputed, ctx.p_agreement
    if r is None or agreed is None or agreed.consistent:
        return
    claimed = ctx.report.comparison.p_value
    methods = _other_methods(ctx, r, claimed)
    severity = None
    band = ctx.printed_p_band or r.p_band
    if methods:
        which = " or ".join(methods)
        hint = f"; {_fmt(claimed)} is {which}, but the bench specifies the two-sided paired sign-flip test"
    else:
        hint = f"; it is {agreed.how}"
        if ctx.printed_p_band is not None:
            hint += f" of any p the printed per-seed values allow ({_fmt(band.low)} to {_fmt(band.high)})"
        if agreed.weak and _near_and_on_the_same_side(claimed, band, ctx.options.alpha):
            severity = Severity.WARNING
            hint += "; state the resample count in protocol_note"
    source = f"{_test_description(r, ctx.options.random_seed)} is"
    pointer = ctx.pointer("comparison", "p_value")
    yield report_recomputed(A307, "p_value", claimed, source, r.p_value, pointer=pointer, hint=hint, severity=severity)


# A claim only an unstated small resample count explains is a warning within this factor of the exact p.
SMALL_COUNT_FACTOR = 2.0


def _near_and_on_the_same_side(claimed: float, band: PBand, alpha: float) -> bool:
    """``claimed`` lies within :data:`SMALL_COUNT_FACTOR` of every p in ``band`` and on the same side of alpha."""
    near = band.high / SMALL_COUNT_FACTOR <= claimed <= band.low * SMALL_COUNT_FACTOR
    return near and ((claimed < alpha) == (band.low < alpha) == (band.high < alpha))


@check_rule("A308", "p-value-below-minimum", Severity.ERROR)
def A308(ctx: AuditContext) -> Iterator[Finding]:
    """The reported p_value is smaller than any sign-flip test on these differences can give.

    ## What it does
    With m non-zero paired differences the most extreme of the sign patterns
    has two-sided probability 2/2^m (0.0078 for m = 8, 0.0625 for m = 5; a
    zero difference flips to itself and adds nothing). Fires when the claimed
    p, even rounded up at its last printed digit, lies below that and is no
    Monte-Carlo estimate an honest test could print either (one that only an
    unstated small resample count explains may fall below the floor: A307
    judges it).

    ## Why is this bad?
    Such a p is impossible for the test the report describes: it came from a
    different test (a t-test, a test over all samples instead of seeds) or
    was made up, and the significance it suggests is not supported.

    ## Example
    ```json
    "n_seeds": 5,
    "comparison": {"n_pairs": 5, "p_value": 0.01}
    ```

    ## How to fix
    Report the p of the sign-flip test (the message gives it). No sign-flip p
    can go below 2/2^m with m non-zero differences: to show a smaller p, run more
    seeds (with 8 non-zero differences the floor is 0.0078).
    """
    r, rounding, agreed = ctx.recomputed, ctx.rounding, ctx.p_agreement
    if r is None or rounding is None or agreed is None or agreed.consistent or agreed.weak:
        return  # (a weak reading, a small-count estimate that may fall below the floor, is A307's to judge)
    claimed = ctx.report.comparison.p_value
    nonzero = rounding.nonzero_max  # a zero difference printed rounded may be none
    floor = min_two_sided_p(nonzero)
    if claimed + printed(claimed).half_unit >= floor:
        return
    zeros = r.n_pairs - nonzero
    pairs = f"{r.n_pairs} pairs" + (f" ({zeros} of them with a zero difference)" if zeros else "")
    yield A308.finding(
        f"p_value {_fmt(claimed)} is impossible with {pairs}: the smallest two-sided sign-flip "
        f"p is 2/2^{nonzero} = {floor:.6g}; report the p of the sign-flip test ({_fmt(r.p_value)})",
        pointer=ctx.pointer("comparison", "p_value"),
        claimed=claimed,
        recomputed=floor,
    )


def _mde_noise(r: Recomputed, mde: float, claimed: float) -> Noise:
    """Float noise of t·sd(d)/sqrt(n) (``mde``, the recomputed one): the differences' spread and their
    operands' rounding."""
    n = r.n_pairs
    sd_sample = r.diff_summary.std_sample
    factor = mde / sd_sample if mde and sd_sample else 0.0  # t / sqrt(n); an mde needs n >= 2, so an sd
    magnitude = r.diff_summary.magnitude
    operands = max(r.baseline.magnitude, r.idea.magnitude)
    sd_claimed = claimed / factor if factor else 0.0
    sd = std_noise(n, magnitude, sd_claimed, mde / factor if factor else 0.0, operand_magnitude=operands)
    return Noise(factor * sd.float64, factor * sd.float32)


def _mde_close(
    r: Recomputed,
    claimed: float,
    recomputed: float,
    noise: Noise,
    *,
    width: float = 0.0,
) -> bool:
    """Printing and float noise, and a t quantile read from a table on top.

    A table gives t to 2 or 3 decimals (2.36 or 2.365 for n = 8): up to
    T_TABLE_ATOL away from the exact quantile, relatively more for large n.
    """
    t = t_quantile(0.975, r.n_pairs - 1)
    return agrees(claimed, recomputed, noise, rtol=max(RTOL_MDE, T_TABLE_ATOL / t), width=width)


@check_rule("A309", "mde-mismatch", Severity.ERROR)
def A309(ctx: AuditContext) -> Iterator[Finding]:
    """The reported mde is not the 95% CI half-width of the mean paired difference.

    ## What it does
    Recomputes t(0.975, n-1)·sd(d, ddof=1)/sqrt(n) over the per-seed
    differences d and compares it with `comparison.mde`, rounding-aware, with
    float32 noise allowed and a t quantile from a 2- or 3-decimal table
    (2.36 or 2.365 for n = 8) accepted on top.

    ## Why is this bad?
    The MDE says how large an effect the experiment could have seen; a wrong
    one makes a null result look conclusive or a tiny effect look resolved.

    ## Example
    ```json
    "comparison": {"per_seed_diffs": [-0.015, -0.009, -0.010, -0.012, 0.004, -0.006, -0.009, -0.012],
                   "mde": 0.0094}
    ```

    ## How to fix
    Compute `mde = t.ppf(0.975, n - 1) * std(diffs, ddof=1) / sqrt(n)` over the
    per-seed differences (Student's t with n - 1 degrees of freedom, the sample
    standard deviation) and report it; the message gives the value and, when it
    can tell, which shortcut (z = 1.96, ddof=0) the claim took.
    """
    r, rounding, claimed = ctx.recomputed, ctx.rounding, ctx.report.comparison.mde
    if r is None or rounding is None or claimed is None or r.mde is None:
        return  # (the rounding exists exactly when r does)
    # The bound is finite: per-seed values within the schema's 1e150 keep every square finite.
    width = rounding.mde_width
    if _mde_close(r, claimed, r.mde, _mde_noise(r, r.mde, claimed), width=width):
        return
    n = r.n_pairs
    hint = ""
    sd = r.diff_summary.std_sample
    assert sd is not None  # an mde needs n >= 2, so an sd
    if sd > 0 and values_close(claimed, Z_975 * sd / math.sqrt(n), rtol=RTOL_MDE):
        hint = " (it matches z = 1.96 instead of Student's t)"
    elif sd > 0 and values_close(claimed, r.mde * r.diff_summary.std_population / sd, rtol=RTOL_MDE):
        hint = " (it matches the population sd, ddof=0, instead of the sample sd)"
    source = f"t(0.975, {n - 1})·sd(d, ddof=1)/sqrt({n}) over the per-seed differences is"
    yield report_recomputed(
        A309, "mde", claimed, source, r.mde, pointer=ctx.pointer("comparison", "mde"), hint=hint, width=width
    )


@check_rule("A310", "mde-rel-pct-mismatch", Severity.ERROR)
def A310(ctx: AuditContext) -> Iterator[Finding]:
    """The reported mde_rel_pct is not 100·mde/|baseline mean|.

    ## What it does
    Computes 100·mde/|baseline mean| from the recomputed MDE and the
    recomputed baseline mean and compares it with `comparison.mde_rel_pct`
    (rounding-aware, float noise allowed, relative tolerance 1e-3).

    ## Why is this bad?
    The relative MDE is what readers use to judge whether the experiment was
    sensitive enough; a fraction reported as a percent (or the reverse) is
    off by a factor of 100.

    ## Example
    ```json
    "baseline": {"full": {"mean": 10.93}},
    "comparison": {"mde": 0.0047, "mde_rel_pct": 0.00043}
    ```

    ## How to fix
    Set `mde_rel_pct = 100 * mde / abs(baseline mean)` from the corrected `mde`:
    a percentage, not a fraction. The message gives the value.
    """
    r, rounding, claimed = ctx.recomputed, ctx.rounding, ctx.report.comparison.mde_rel_pct
    if r is None or rounding is None or claimed is None or r.mde_rel_pct is None or r.mde is None:
        return  # (the rounding exists exactly when r does; an mde_rel_pct only with an mde)
    base = abs(r.baseline.mean)

    mde_noise = _mde_noise(r, r.mde, r.mde)
    mean_drift = mean_noise(r.n_pairs, r.baseline.magnitude, r.baseline.mean)
    noise = Noise(
        100.0 * mde_noise.float64 / base + r.mde_rel_pct * mean_drift.float64 / base,
        100.0 * mde_noise.float32 / base + r.mde_rel_pct * mean_drift.float32 / base,
    )
    width = rounding.mde_rel_width
    if _mde_close(r, claimed, r.mde_rel_pct, noise, width=width):
        return
    hint = ""
    claimed_mde = ctx.report.comparison.mde
    if values_close(claimed, r.mde_rel_pct / 100.0, rtol=RTOL_MDE):
        hint = " (it is the fraction, not the percent)"
    elif claimed_mde is not None and values_close(claimed, 100.0 * claimed_mde / base, rtol=RTOL_MDE):
        hint = f" (it follows from the claimed mde {_fmt(claimed_mde)}, which is itself wrong)"
    source = f"100·mde/|baseline mean| = 100·{_fmt(r.mde)}/{_fmt(base)} ="
    pointer = ctx.pointer("comparison", "mde_rel_pct")
    yield report_recomputed(
        A310, "mde_rel_pct", claimed, source, r.mde_rel_pct, pointer=pointer, hint=hint, width=width
    )
