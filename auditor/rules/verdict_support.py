"""Which comparison verdicts the recomputed statistics support, for the verdict rules (V401-V404) and A312.

A verdict is supported when the recomputed p decides it, when honest arithmetic (a near-tie, a
Monte-Carlo estimate) could print a p that gives it, or when the rounding of the printed per-seed
values leaves it undecided (A312 reports that).  The reference verdict the other fields are
advised to follow is the claimed one when supported, else the recomputed one.
"""

from __future__ import annotations

from collections.abc import Callable

from auditor.context import AuditContext
from auditor.findings import Severity
from auditor.stats.precision import printed
from auditor.stats.summary import Recomputed, decide_verdict
from auditor.stats.verdicts import Verdict

# A verdict string is quoted in messages up to this many characters.
QUOTED_CHARS = 200


def quoted(text: str) -> str:
    """``text`` shortened to :data:`QUOTED_CHARS` characters for a message."""
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 3] + "..."


def _stats(ctx: AuditContext) -> Recomputed:
    """The recomputed statistics, which every caller here judges only once they exist."""
    r = ctx.recomputed
    assert r is not None, "the verdict checks run on recomputed statistics only"
    return r


def claimed_is_supported(ctx: AuditContext) -> bool:
    """The statistics support the claimed verdict, or leave it borderline (V401 says no more than a warning)."""
    claimed = ctx.claimed_verdict
    return claimed is not None and (exactly_supported(ctx, claimed) or allowed_by_printing(ctx, claimed))


def exactly_supported(ctx: AuditContext, claimed: Verdict) -> bool:
    """The per-seed values, taken as printed, support ``claimed`` or leave it borderline (no rounding counted)."""
    return claimed in acceptable_verdicts(ctx) or borderline(ctx, claimed)


def reference_verdict(ctx: AuditContext) -> tuple[Verdict | None, str]:
    """The comparison verdict other fields must be set to, and how a message names it.

    It follows the recomputed statistics, so that no finding of an answer
    advises a value another contradicts: the claimed verdict when the
    statistics support it, else the recomputed one (what V401 says the
    verdict should be).  Only when nothing could be recomputed is the claimed
    verdict taken as it stands.
    """
    if ctx.recomputed is None:
        return ctx.claimed_verdict, "the comparison verdict"
    if claimed_is_supported(ctx):
        return ctx.claimed_verdict, "the comparison verdict"
    return ctx.recomputed.verdict, "the recomputed verdict"


def field_correction(
    ctx: AuditContext, value: object, implied_by: Callable[[Verdict], object]
) -> tuple[Verdict, str] | None:
    """(reference verdict, its name) when a field holding ``value`` must change; None when it may stay.

    ``implied_by`` maps a comparison verdict to the value the field should hold.
    A field that agrees with the claimed comparison verdict while that verdict
    is wrong is left to V401, which reports the decision error once ("everything
    downstream inherits it"); a field that agrees with the statistics is right.
    """
    reference, source = reference_verdict(ctx)
    if reference is None or value == implied_by(reference):
        return None
    claimed = ctx.claimed_verdict
    if claimed is not None and value == implied_by(claimed):
        return None
    return reference, source


def acceptable_verdicts(ctx: AuditContext) -> set[Verdict]:
    """Verdicts the recomputed numbers support.

    An exact p decides alone, unless honest arithmetic can put it on either
    side of alpha (a near-tie band, or a randomized p whose 99.9% interval
    straddles alpha): both verdicts are accepted then.
    """
    r = _stats(ctx)
    accepted = {r.verdict}
    if r.p_band.low < ctx.options.alpha <= r.p_band.high and r.delta_mean != 0:
        accepted |= {Verdict.NONE, direction(ctx)}
    return accepted


def allowed_by_printing(ctx: AuditContext, claimed: Verdict | None) -> bool:
    """``claimed`` is a verdict the printed per-seed values allow once their rounding is counted, when
    that rounding leaves the verdict undecided (A312 reports it; an error for a significant claim)."""
    if claimed is None or not undecided_by_printing(ctx):
        return False
    rounding = ctx.rounding
    assert rounding is not None  # undecided_by_printing read the p band of this rounding
    delta = _stats(ctx).delta_mean
    if abs(delta) <= rounding.delta_width:  # the rounding may flip the direction too
        return True
    return claimed in (Verdict.NONE, direction(ctx))


def undecided_by_printing(ctx: AuditContext) -> bool:
    """The p range the printed per-seed values allow straddles alpha (A312): their rounding decides the verdict.

    Only while A312 is reported as failing: ignoring it or lowering its severity never lets a coarse print
    pass a verdict unreported.
    """
    from auditor.result import reports_failing

    band = ctx.printed_p_band
    undecided = band is not None and band.low < ctx.options.alpha <= band.high
    return undecided and reports_failing("A312", Severity.ERROR, ctx.options)


def direction(ctx: AuditContext) -> Verdict:
    """The significant verdict in the observed direction (what any p below alpha would give)."""
    return decide_verdict(0.0, _stats(ctx).delta_mean, lower_is_better=ctx.lower_is_better, alpha=1.0)


def _within_rounding(value: float, target: float) -> bool:
    """``target`` lies strictly inside the rounding of ``value`` as printed (a literal's own digits)."""
    return abs(value - target) < printed(value).half_unit


def verdict_of_claimed_p(ctx: AuditContext) -> Verdict | None:
    """The verdict the answer's own p gives (None when its p sits on alpha, where either reading is fair)."""
    r, claimed_p = _stats(ctx), ctx.report.comparison.p_value
    if _within_rounding(claimed_p, ctx.options.alpha):  # alpha strictly inside its rounding
        return None
    return decide_verdict(claimed_p, r.delta_mean, lower_is_better=ctx.lower_is_better, alpha=ctx.options.alpha)


def borderline(ctx: AuditContext, claimed: Verdict) -> bool:
    """The claimed verdict follows from a claimed p that an honest (Monte-Carlo) test could print.

    Such a p may land on the other side of alpha than the exact one: the
    verdict is then borderline, not wrong.
    """
    agreed = ctx.p_agreement
    if agreed is not None and agreed.consistent and ctx.printed_p_band is not None:
        # Per-seed values printed rounded: the p the values allow as printed, not any their rounding allows.
        agreed = ctx.p_agrees_with(_stats(ctx).p_band)
    if agreed is None or not agreed.consistent:
        return False
    own = verdict_of_claimed_p(ctx)
    if own is None:  # the claimed p sits on alpha: "no effect" and the observed direction both follow
        return claimed in (Verdict.NONE, direction(ctx))
    return claimed is own
