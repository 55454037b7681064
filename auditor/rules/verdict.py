"""V4xx: verdict fields and prose that contradict the numbers or each other.

Claimed verdict strings are classified by their words
(:func:`auditor.stats.verdicts.classify_verdict`), never compared letter by letter.
Answer-level fields (``worked``, ``practical_verdict``, ``mechanism_ok``, the
prose) exist only when the input is a whole answer (``ctx.answer``); the
answer is then the document root, so their pointers start at ``/``.
The prose check V406 lives in :mod:`.verdict_prose`, the mechanism checks
V405 and V407 in :mod:`.verdict_mechanism`; which verdicts the statistics
support, in :mod:`.verdict_support`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.parse.pointers import join_pointer
from auditor.rules.verdict_support import (
    acceptable_verdicts,
    allowed_by_printing,
    borderline,
    field_correction,
    quoted,
    reference_verdict,
    verdict_of_claimed_p,
)
from auditor.stats.summary import Recomputed
from auditor.stats.verdicts import Verdict, classify_practical

_SYSTEM_VERDICTS = {"worked": True, "failed": False}


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
            r,
            f'the verdict "{quoted(text)}" is not recognised as better, worse or no effect; the recomputed '
            f'verdict is "{r.verdict.value}" (p={r.p_value:.6g}, delta_mean={r.delta_mean:.6g})',
        )
    elif claimed in acceptable_verdicts(ctx):
        own = verdict_of_claimed_p(ctx)
        if own is not None and own is not claimed and own not in acceptable_verdicts(ctx):
            yield _own_p_contradicts(ctx, r, own)
    elif borderline(ctx, claimed):
        claimed_p, agreed = ctx.report.comparison.p_value, ctx.p_agreement
        assert agreed is not None  # borderline() judged it
        yield _against_recomputed(
            ctx,
            r,
            f'the verdict "{quoted(text)}" is borderline: it follows from the claimed p {claimed_p:.6g}, a '
            f"plausible Monte-Carlo estimate ({agreed.how}), but the exact two-sided p is {r.p_value:.6g} "
            f'(alpha {alpha:g}), which gives "{r.verdict.value}"; rerun the test exactly or with more resamples '
            "before relying on it",
            severity=Severity.WARNING,
        )
    elif allowed_by_printing(ctx, claimed):
        return  # the rounding of the per-seed values decides the verdict: A312 says so
    else:
        yield _against_recomputed(
            ctx,
            r,
            f'the verdict says "{quoted(text)}" but the recomputed two-sided p is {r.p_value:.6g} (alpha {alpha:g}) '
            f"with delta_mean {r.delta_mean:.6g} ({ctx.report.metric_direction}); "
            f'the verdict should be "{r.verdict.value}"',
        )


def _against_recomputed(ctx: AuditContext, r: Recomputed, message: str, severity: Severity | None = None) -> Finding:
    """A V401 finding on the comparison verdict, set against the recomputed one."""
    return V401.finding(
        message,
        pointer=ctx.pointer("comparison", "verdict"),
        claimed=quoted(ctx.report.comparison.verdict),
        recomputed=r.verdict.value,
        severity=severity,
    )


def _own_p_contradicts(ctx: AuditContext, r: Recomputed, own: Verdict) -> Finding:
    """V401 on a supported verdict beside a claimed p that gives ``own``: the p_value is what is wrong."""
    claimed_p, recomputed_p = ctx.report.comparison.p_value, r.p_value
    return V401.finding(
        f'the verdict says "{quoted(ctx.report.comparison.verdict)}" but the answer\'s own p_value {claimed_p:.6g} '
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
    correction = None if claimed is None else field_correction(ctx, claimed, _is_improvement)
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
    system_text = a.system_verdict or ""  # (none reads as no known word)
    system = _SYSTEM_VERDICTS.get(system_text.strip().lower())
    reference, source = reference_verdict(ctx)
    if reference is None:  # nothing to judge by: the two fields must at least agree
        if a.worked is not None and system is not None and a.worked != system:
            yield V403.finding(
                f'worked is {str(a.worked).lower()} but system_verdict is "{quoted(system_text)}"; '
                "make the two state the same outcome",
                pointer=join_pointer("", "worked"),
                claimed=a.worked,
                recomputed=system,
            )
        return
    if a.worked is not None:
        correction = field_correction(ctx, a.worked, _is_improvement)
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
        correction = field_correction(ctx, system, _is_improvement)
        if correction is not None:
            expected_word = "worked" if _is_improvement(correction[0]) else "failed"
            yield V403.correction(
                f'system_verdict is "{quoted(system_text)}" but {correction[1]} is "{correction[0].value}" '
                '(system_verdict is "worked" exactly for a significant improvement)',
                expected_word,
                shown=f'"{expected_word}"',
                pointer=join_pointer("", "system_verdict"),
                claimed=quoted(system_text),
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
    practical_text = a.practical_verdict or ""  # (none reads as no known word)
    practical = classify_practical(practical_text)
    correction = None if practical is None else field_correction(ctx, practical, lambda verdict: verdict)
    if correction is None:
        return
    reference, source = correction
    message = f'practical_verdict is "{quoted(practical_text)}" but {source} is "{reference.value}"'
    pointer = join_pointer("", "practical_verdict")
    shown = f'"{reference.practical}"'
    yield V404.correction(message, reference.practical, shown=shown, pointer=pointer, claimed=quoted(practical_text))
