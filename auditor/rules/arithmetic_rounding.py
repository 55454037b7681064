"""A312: per-seed values printed too coarsely for the verdict to be recomputed from them.

Split from :mod:`.arithmetic` only to keep files short.  The intervals are
:mod:`auditor.stats.rounding`'s; the verdict rules accept either verdict while this
rule reports the rounding (:func:`.verdict_support.undecided_by_printing`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.rules.arithmetic import _fmt
from auditor.rules.verdict_support import exactly_supported, undecided_by_printing

if TYPE_CHECKING:
    from auditor.stats.rounding import Rounding


@check_rule("A312", "per-seed-values-too-coarse", Severity.ERROR)
def A312(ctx: AuditContext) -> Iterator[Finding]:
    """The per-seed values are printed too coarsely to recompute the verdict from them.

    ## What it does
    Every per-seed value stands for all values within half a unit of its last
    printed digit (`10.93` for [10.9295, 10.9305]; a value printed with 15 or more
    significant digits, or an integer, is exact). The auditor carries these
    intervals through every statistic: a claimed mean, std, delta, win count,
    p-value or MDE within the interval of its recomputation is accepted. For the
    verdict it computes the range of the exact sign-flip p over every value the
    printed ones stand for, and fires when that range straddles alpha: the
    printed values allow both a significant and a non-significant result.
    When `comparison.per_seed_diffs` has one entry per seed, each within the
    interval of its printed values' difference (A304 stays silent), a
    difference printed finer than the values (-0.008639 beside 10.9 and 10.9)
    stands for its seed, with its own rounding: the differences then decide
    the wins, the p range, the MDE and the verdict, the values the means and
    stds. Differences that disagree with the values are never used.

    The verdict rules then accept either verdict and leave the finding to this
    rule. It is an error when the claimed verdict is significant and the values
    as printed (taken as exact) do not give it: the significance rests on digits
    the answer does not show, and a print at fewer digits would otherwise let any
    significance claim pass. It is a warning when the claimed verdict is "no
    measurable effect" (the cautious reading, which the values allow), and when
    the values as printed give the claimed significance themselves (they are the
    data the gate judges; only `--rerun` checks the data). Silent while D501 fires.

    ## Why is this bad?
    The verdict is the one number the gate must be able to recompute. Values
    rounded to one or two digits make every interval wide: any claim would fit,
    so an answer could claim significance that its data, as printed, do not
    support.

    ## Example
    ```json
    "baseline": {"full": {"per_seed": [10.12, 12.06, 9.61, 10.00, 8.78, 11.80, 12.03, 13.04]}},
    "idea": {"per_seed": [10.11, 12.05, 9.60, 9.99, 8.78, 11.80, 12.03, 13.04]},
    "comparison": {"p_value": 0.0078, "verdict": "idea better (significant)"}
    ```

    ## How to fix
    Print the per-seed values with the precision they were computed with
    (`repr(float(x))`, or `json.dumps` of the floats, never `round(x, 2)`), or
    at least the `per_seed_diffs`; the statistics are then recomputed from the
    values the test used. The message
    gives the range of p the printed values allow.
    """
    r, rounding = ctx.recomputed, ctx.rounding
    if r is None or rounding is None or ctx.no_verdict_to_advise() or not undecided_by_printing(ctx):
        return  # (the rounding exists exactly when r does)
    band, alpha = ctx.printed_p_band, ctx.options.alpha
    assert band is not None  # undecided_by_printing read it
    claimed = ctx.claimed_verdict
    # An error only when the significance rests on the rounding: the values as printed do not support it.
    significant = claimed is not None and claimed.significant and not exactly_supported(ctx, claimed)
    message = (
        f"{_coarsest(rounding)} allow any two-sided sign-flip p from {_fmt(band.low)} to "
        f"{_fmt(band.high)}, on both sides of alpha {alpha:g}: their rounding, not the data, decides the verdict"
    )
    if significant and claimed is not None:  # (significant says claimed is not None)
        message += (
            f'; taken as printed they give "{r.verdict.value}" (p={_fmt(r.p_value)}), so "{claimed.value}" rests on '
            "digits the answer does not show: print the per-seed values with the precision they were computed with"
        )
    else:
        message += "; print them with the precision they were computed with to decide it"
    yield A312.finding(
        message,
        pointer=ctx.baseline.stats_pointer + "/per_seed",
        claimed=ctx.report.comparison.verdict,
        recomputed=[band.low, band.high],
        severity=None if significant else Severity.WARNING,
    )


def _coarsest(rounding: Rounding) -> str:
    """What the p range comes from, with half a unit of its coarsest printed value ("the per-seed values
    (printed to ±0.005)"): the per-seed values, or them and the answer's own finer differences."""
    if rounding.claimed_seeds:
        return f"the per-seed values and per_seed_diffs (differences known to ±{max(rounding.diff_h):.2g})"
    coarsest = max(max(rounding.baseline_h), max(rounding.idea_h))
    return f"the per-seed values (printed to ±{coarsest:.2g})"
