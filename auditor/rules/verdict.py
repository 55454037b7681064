"""V4xx: verdict fields and prose that contradict the numbers or each other.

Claimed verdict strings are classified by their words
(:func:`auditor.stats.verdicts.classify_verdict`), never compared letter by letter.
Answer-level fields (``worked``, ``practical_verdict``, ``mechanism_ok``, the
prose) exist only when the input is a whole answer (``ctx.answer``); the
answer is then the document root, so their pointers start at ``/``.
The prose check V406 lives in :mod:`.verdict_prose`, the mechanism checks
V405 and V407 in :mod:`.verdict_mechanism`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.parse.pointers import join_pointer
from auditor.stats.precision import printed
from auditor.stats.summary import decide_verdict
from auditor.stats.verdicts import Verdict, classify_practical

_SYSTEM_VERDICTS = {"worked": True, "failed": False}
# A verdict string is quoted in messages up to this many characters.
QUOTED_CHARS = 200


def _quoted(text: str) -> str:
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 3] + "..."


def _claimed_is_supported(ctx: AuditContext) -> bool:
    """The statistics support the claimed verdict, or leave it borderline (V401 says no more than a warning)."""
    claimed = ctx.claimed_verdict
    return claimed is not None and (exactly_supported(ctx, claimed) or allowed_by_printing(ctx, claimed))


def exactly_supported(ctx: AuditContext, claimed: Verdict) -> bool:
    """The per-seed values, taken as printed, support ``claimed`` or leave it borderline (no rounding counted)."""
    return claimed in _acceptable_verdicts(ctx) or _borderline(ctx, claimed)


def _reference_verdict(ctx: AuditContext) -> tuple[Verdict | None, str]:
    """The comparison verdict other fields must be set to, and how a message names it.

    It follows the recomputed statistics, so that no finding of an answer
    advises a value another contradicts: the claimed verdict when the
    statistics support it, else the recomputed one (what V401 says the
    verdict should be).  Only when nothing could be recomputed is the claimed
    verdict taken as it stands.
    """
    if ctx.recomputed is None:
        return ctx.claimed_verdict, "the comparison verdict"
    if _claimed_is_supported(ctx):
        return ctx.claimed_verdict, "the comparison verdict"
    return ctx.recomputed.verdict, "the recomputed verdict"


def _correction(
    ctx: AuditContext, value: object, implied_by: Callable[[Verdict], object]
) -> tuple[Verdict, str] | None:
    """(reference verdict, its name) when a field holding ``value`` must change; None when it may stay.

    ``implied_by`` maps a comparison verdict to the value the field should hold.
    A field that agrees with the claimed comparison verdict while that verdict
    is wrong is left to V401, which reports the decision error once ("everything
    downstream inherits it"); a field that agrees with the statistics is right.
    """
    reference, source = _reference_verdict(ctx)
    if reference is None or value == implied_by(reference):
        return None
    claimed = ctx.claimed_verdict
    if claimed is not None and value == implied_by(claimed):
        return None
    return reference, source


def _acceptable_verdicts(ctx: AuditContext) -> set[Verdict]:
    """Verdicts the recomputed numbers support.

    An exact p decides alone, unless honest arithmetic can put it on either
    side of alpha (a near-tie band, or a randomized p whose 99.9% interval
    straddles alpha): both verdicts are accepted then.
    """
    r = ctx.recomputed
    accepted = {r.verdict}
    if r.p_band.low < ctx.options.alpha <= r.p_band.high and r.delta_mean != 0:
        accepted |= {Verdict.NONE, _direction(ctx)}
    return accepted


def allowed_by_printing(ctx: AuditContext, claimed: Verdict | None) -> bool:
    """``claimed`` is a verdict the printed per-seed values allow once their rounding is counted, when
    that rounding leaves the verdict undecided (A312 reports it; an error for a significant claim)."""
    if claimed is None or not undecided_by_printing(ctx):
        return False
    delta = ctx.recomputed.delta_mean
    if abs(delta) <= ctx.rounding.delta_width:  # the rounding may flip the direction too
        return True
    return claimed in (Verdict.NONE, _direction(ctx))


def undecided_by_printing(ctx: AuditContext) -> bool:
    """The p range the printed per-seed values allow straddles alpha (A312): their rounding decides the verdict.

    Only while A312 is reported as failing: ignoring it or lowering its severity never lets a coarse print
    pass a verdict unreported.
    """
    from auditor.result import reports_failing

    band = ctx.printed_p_band
    undecided = band is not None and band.low < ctx.options.alpha <= band.high
    return undecided and reports_failing("A312", Severity.ERROR, ctx.options)


def _direction(ctx: AuditContext) -> Verdict:
    """The significant verdict in the observed direction (what any p below alpha would give)."""
    return decide_verdict(0.0, ctx.recomputed.delta_mean, lower_is_better=ctx.lower_is_better, alpha=1.0)


def _within_rounding(value: float, target: float) -> bool:
    """``target`` lies strictly inside the rounding of ``value`` as printed (a literal's own digits)."""
    return abs(value - target) < printed(value).half_unit


def _verdict_of_claimed_p(ctx: AuditContext) -> Verdict | None:
    """The verdict the answer's own p gives (None when its p sits on alpha, where either reading is fair)."""
    r, claimed_p = ctx.recomputed, ctx.report.comparison.p_value
    if _within_rounding(claimed_p, ctx.options.alpha):  # alpha strictly inside its rounding
        return None
    return decide_verdict(claimed_p, r.delta_mean, lower_is_better=ctx.lower_is_better, alpha=ctx.options.alpha)


def _borderline(ctx: AuditContext, claimed: Verdict) -> bool:
    """The claimed verdict follows from a claimed p that an honest (Monte-Carlo) test could print.

    Such a p may land on the other side of alpha than the exact one: the
    verdict is then borderline, not wrong.
    """
    agreed = ctx.p_agreement
    if agreed is not None and agreed.consistent and ctx.printed_p_band is not None:
        # Per-seed values printed rounded: the p the values allow as printed, not any their rounding allows.
        agreed = ctx.p_agrees_with(ctx.recomputed.p_band)
    if agreed is None or not agreed.consistent:
        return False
    own = _verdict_of_claimed_p(ctx)
    if own is None:  # the claimed p sits on alpha: "no effect" and the observed direction both follow
        return claimed in (Verdict.NONE, _direction(ctx))
    return claimed is own


@check_rule("V401", "verdict-contradicts-statistics", Severity.ERROR)
def V401(ctx: AuditContext) -> Iterator[Finding]:
    """The comparison verdict contradicts the recomputed p-value and direction.

    ## What it does
    Classifies `comparison.verdict` by its words (better / worse /
    no effect) and compares it with the verdict the recomputed two-sided
    p-value (alpha 0.05, `--alpha`) and the sign of delta_mean give. A
    verdict string whose meaning cannot be recognised also fires. Silent, as
    V402-V404 are, while D501 fires: an idea identical to its baseline has no
    verdict to advise.

    ## Why is this bad?
    This is a decision error: the answer claims a significant improvement
    the data do not show (or hides one they do). Everything downstream
    (system_worked, worked, practical_verdict) inherits it.

    A verdict that follows from a claimed p which an honest Monte-Carlo test
    could print (see A307) but which lands on the other side of alpha than
    the exact p is reported as borderline, a warning. A verdict the data
    support next to a p_value that says the opposite (p = 0.03 beside "no
    measurable effect") is reported too: the answer contradicts itself.

    ## Example
    ```json
    "comparison": {"delta_mean": -0.002, "p_value": 0.31, "verdict": "idea better (significant)"}
    ```

    ## How to fix
    Set `comparison.verdict` to the verdict the message gives, from the
    recomputed two-sided p at alpha and the sign of `delta_mean`, and make
    `system_worked`, `worked`, `system_verdict`, `practical_verdict` and the
    prose agree with it. When the finding points at `p_value` (the verdict is
    supported but the claimed p says otherwise), correct the p_value instead.
    On a borderline warning, rerun the test exactly or with more resamples
    before relying on the verdict. An analysis planned at another alpha is
    audited with `alpha` in `[tool.auditor]` (`--alpha`).
    """
    r, text = ctx.recomputed, ctx.report.comparison.verdict
    if r is None or ctx.no_verdict_to_advise():  # a no-op idea has no verdict to advise (D501)
        return
    claimed, alpha = ctx.claimed_verdict, ctx.options.alpha
    if claimed is None:
        yield _against_recomputed(
            ctx,
            f'the verdict "{_quoted(text)}" is not recognised as better, worse or no effect; the recomputed '
            f'verdict is "{r.verdict.value}" (p={r.p_value:.6g}, delta_mean={r.delta_mean:.6g})',
        )
    elif claimed in _acceptable_verdicts(ctx):
        own = _verdict_of_claimed_p(ctx)
        if own is not None and own is not claimed and own not in _acceptable_verdicts(ctx):
            yield _own_p_contradicts(ctx, own)
    elif _borderline(ctx, claimed):
        claimed_p = ctx.report.comparison.p_value
        yield _against_recomputed(
            ctx,
            f'the verdict "{_quoted(text)}" is borderline: it follows from the claimed p {claimed_p:.6g}, a '
            f"plausible Monte-Carlo estimate ({ctx.p_agreement.how}), but the exact two-sided p is {r.p_value:.6g} "
            f'(alpha {alpha:g}), which gives "{r.verdict.value}"; rerun the test exactly or with more resamples '
            "before relying on it",
            severity=Severity.WARNING,
        )
    elif allowed_by_printing(ctx, claimed):
        return  # the rounding of the per-seed values decides the verdict: A312 says so
    else:
        yield _against_recomputed(
            ctx,
            f'the verdict says "{_quoted(text)}" but the recomputed two-sided p is {r.p_value:.6g} (alpha {alpha:g}) '
            f"with delta_mean {r.delta_mean:.6g} ({ctx.report.metric_direction}); "
            f'the verdict should be "{r.verdict.value}"',
        )


def _against_recomputed(ctx: AuditContext, message: str, severity: Severity | None = None) -> Finding:
    """A V401 finding on the comparison verdict, set against the recomputed one."""
    return V401.finding(
        message,
        pointer=ctx.pointer("comparison", "verdict"),
        claimed=_quoted(ctx.report.comparison.verdict),
        recomputed=ctx.recomputed.verdict.value,
        severity=severity,
    )


def _own_p_contradicts(ctx: AuditContext, own: Verdict) -> Finding:
    """V401 on a supported verdict beside a claimed p that gives ``own``: the p_value is what is wrong."""
    claimed_p, recomputed_p = ctx.report.comparison.p_value, ctx.recomputed.p_value
    return V401.finding(
        f'the verdict says "{_quoted(ctx.report.comparison.verdict)}" but the answer\'s own p_value {claimed_p:.6g} '
        f'gives "{own.value}" (alpha {ctx.options.alpha:g}); the recomputed p {recomputed_p:.6g} supports the '
        "verdict, so the p_value is what to correct",
        pointer=ctx.pointer("comparison", "p_value"),
        claimed=claimed_p,
        recomputed=recomputed_p,
    )


@check_rule("V402", "system-worked-contradicts-verdict", Severity.ERROR)
def V402(ctx: AuditContext) -> Iterator[Finding]:
    """comparison.system_worked contradicts the comparison verdict.

    ## What it does
    `system_worked` must be true exactly when the verdict is "idea better
    (significant)". The reference is the verdict the recomputed statistics
    support: the claimed comparison verdict when they support it, else the
    recomputed one, so the advice never contradicts V401's. A flag that
    agrees with a wrong claimed verdict is left to V401, which reports the
    decision once. Silent while D501 fires: a no-op idea has no verdict to
    advise.

    ## Why is this bad?
    Pipelines read the boolean, people read the sentence; when they disagree
    one of them routes the idea the wrong way.

    ## Example
    ```json
    "comparison": {"verdict": "no measurable effect", "system_worked": true}
    ```

    ## How to fix
    Set `system_worked` to the value the message gives: true exactly when the
    verdict the recomputed statistics support is "idea better (significant)".
    When V401 also fires, correct the verdict first; this advice already
    follows the recomputed one.
    """
    claimed = ctx.report.comparison.system_worked
    if ctx.no_verdict_to_advise():
        return
    correction = None if claimed is None else _correction(ctx, claimed, _is_improvement)
    if correction is None:
        return
    reference, source = correction
    expected = _is_improvement(reference)
    yield V402.correction(
        f'system_worked is {str(claimed).lower()} but {source} is "{reference.value}" (system_worked is true '
        "exactly for a significant improvement)",
        expected,
        shown=str(expected).lower(),
        pointer=ctx.pointer("comparison", "system_worked"),
        claimed=claimed,
    )


def _is_improvement(verdict: Verdict) -> bool:
    return verdict is Verdict.BETTER


@check_rule("V403", "worked-contradicts-verdict", Severity.ERROR)
def V403(ctx: AuditContext) -> Iterator[Finding]:
    """The top-level `worked` flag or `system_verdict` contradicts the comparison.

    ## What it does
    `worked` must be true, and `system_verdict` "worked", exactly when the
    comparison verdict the recomputed statistics support is "idea better
    (significant)"; false and "failed" otherwise. Each field is compared with
    that verdict (the claimed one when the statistics support it, else the
    recomputed one, as for V402), not only with the other field, so an honest
    "hurts" beside `"worked": true, "system_verdict": "worked"` is caught. A
    field that follows a wrong claimed verdict is left to V401. Without a
    comparison to judge by, the two fields must agree with each other. Other
    system_verdict words are not judged. Silent while D501 fires.

    ## Why is this bad?
    Pipelines and people read these two fields first; when they say the idea
    worked and the numbers say it did not, the idea is routed on as a success.

    ## Example
    ```json
    {"worked": true, "system_verdict": "worked", "practical_verdict": "hurts",
     "bench_report": {"comparison": {"verdict": "idea worse (significant)"}}}
    ```

    ## How to fix
    Set `worked` to true and `system_verdict` to "worked" only for a significant
    improvement, else false and "failed": the value the message gives, which
    follows the recomputed statistics as V401's advice does.
    """
    a = ctx.answer
    if a is None or ctx.no_verdict_to_advise():
        return
    system = _SYSTEM_VERDICTS.get(a.system_verdict.strip().lower()) if isinstance(a.system_verdict, str) else None
    reference, source = _reference_verdict(ctx)
    if reference is None:  # nothing to judge by: the two fields must at least agree
        if a.worked is not None and system is not None and a.worked != system:
            yield V403.finding(
                f'worked is {str(a.worked).lower()} but system_verdict is "{_quoted(a.system_verdict)}"; '
                "make the two state the same outcome",
                pointer=join_pointer("", "worked"),
                claimed=a.worked,
                recomputed=system,
            )
        return
    if a.worked is not None:
        correction = _correction(ctx, a.worked, _is_improvement)
        if correction is not None:
            expected = _is_improvement(correction[0])
            yield V403.correction(
                f'worked is {str(a.worked).lower()} but {correction[1]} is "{correction[0].value}" (worked is '
                "true exactly for a significant improvement)",
                expected,
                shown=str(expected).lower(),
                pointer=join_pointer("", "worked"),
                claimed=a.worked,
            )
    if system is not None:
        correction = _correction(ctx, system, _is_improvement)
        if correction is not None:
            expected_word = "worked" if _is_improvement(correction[0]) else "failed"
            yield V403.correction(
                f'system_verdict is "{_quoted(a.system_verdict)}" but {correction[1]} is "{correction[0].value}" '
                '(system_verdict is "worked" exactly for a significant improvement)',
                expected_word,
                shown=f'"{expected_word}"',
                pointer=join_pointer("", "system_verdict"),
                claimed=_quoted(a.system_verdict),
            )


@check_rule("V404", "practical-verdict-contradicts-comparison", Severity.ERROR)
def V404(ctx: AuditContext) -> Iterator[Finding]:
    """practical_verdict (helps / hurts / no_effect) contradicts the comparison verdict.

    ## What it does
    Maps `practical_verdict` to better / worse / no effect and compares it
    with the verdict the recomputed statistics support (the claimed
    comparison verdict when they support it, else the recomputed one, as for
    V402). A practical verdict that agrees with a wrong claimed verdict is
    left to V401. Unrecognised practical words are not judged. Silent while
    D501 fires.

    ## Why is this bad?
    "helps" on top of "no measurable effect" tells a reader skimming the
    answer that the idea works when the statistics say it does not.

    ## Example
    ```json
    {"practical_verdict": "helps", "bench_report": {"comparison": {"verdict": "no measurable effect"}}}
    ```

    ## How to fix
    Set `practical_verdict` to the word the message gives: "helps" for a
    significant improvement, "hurts" for a significant degradation, "no_effect"
    otherwise. It follows the recomputed statistics, as V401's advice does, so
    the two never disagree.
    """
    a = ctx.answer
    if a is None or ctx.no_verdict_to_advise():
        return
    practical = classify_practical(a.practical_verdict)
    correction = None if practical is None else _correction(ctx, practical, lambda verdict: verdict)
    if correction is None:
        return
    reference, source = correction
    message = f'practical_verdict is "{_quoted(a.practical_verdict)}" but {source} is "{reference.value}"'
    pointer = join_pointer("", "practical_verdict")
    shown = f'"{reference.practical}"'
    yield V404.correction(
        message, reference.practical, shown=shown, pointer=pointer, claimed=_quoted(a.practical_verdict)
    )
