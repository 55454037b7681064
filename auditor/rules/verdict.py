"""V4xx: verdict fields and prose that contradict the numbers or each other.

Claimed verdict strings are classified by their words
(:func:`auditor.verdicts.classify_verdict`), never compared letter by letter.
Answer-level fields (``worked``, ``practical_verdict``, ``mechanism_ok``, the
prose) exist only when the input is a whole answer (``ctx.answer``); the
answer is then the document root, so their pointers start at ``/``.
The prose check V406 lives in :mod:`.verdict_prose`.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..context import AuditContext
from ..findings import Finding, Severity, check_rule
from ..model import is_number, join_pointer
from ..precision import printed
from ..stats import decide_verdict
from ..verdicts import Verdict, classify_practical

_SYSTEM_VERDICTS = {"worked": True, "failed": False}
# A verdict string is quoted in messages up to this many characters.
QUOTED_CHARS = 200


def _quoted(text: str) -> str:
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 3] + "..."


def _reference_verdict(ctx: AuditContext) -> tuple[Verdict | None, str]:
    """The comparison verdict other fields must agree with: the claimed one, else the recomputed one."""
    if ctx.claimed_verdict is not None:
        return ctx.claimed_verdict, "the comparison verdict"
    if ctx.recomputed is not None:
        return ctx.recomputed.verdict, "the recomputed verdict"
    return None, ""


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


def _direction(ctx: AuditContext) -> Verdict:
    """The significant verdict in the observed direction (what any p below alpha would give)."""
    return decide_verdict(0.0, ctx.recomputed.delta_mean, lower_is_better=ctx.lower_is_better, alpha=1.0)


def _verdict_of_claimed_p(ctx: AuditContext) -> Verdict | None:
    """The verdict the answer's own p gives (None when its p sits on alpha, where either reading is fair)."""
    r, claimed_p = ctx.recomputed, ctx.report.comparison.p_value
    if abs(claimed_p - ctx.options.alpha) < printed(claimed_p).half_unit:  # alpha strictly inside its rounding
        return None
    return decide_verdict(claimed_p, r.delta_mean, lower_is_better=ctx.lower_is_better, alpha=ctx.options.alpha)


def _borderline(ctx: AuditContext, claimed: Verdict) -> bool:
    """The claimed verdict follows from a claimed p that an honest (Monte-Carlo) test could print.

    Such a p may land on the other side of alpha than the exact one: the
    verdict is then borderline, not wrong.
    """
    agreed = ctx.p_agreement
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
    verdict string whose meaning cannot be recognised also fires.

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
    """
    r, text = ctx.recomputed, ctx.report.comparison.verdict
    if r is None:
        return
    pointer = ctx.pointer("comparison", "verdict")
    claimed = ctx.claimed_verdict
    if claimed is None:
        yield V401.finding(
            f'the verdict "{_quoted(text)}" is not recognised as better, worse or no effect; the recomputed '
            f'verdict is "{r.verdict.value}" (p={r.p_value:.6g}, delta_mean={r.delta_mean:.6g})',
            pointer=pointer,
            claimed=_quoted(text),
            recomputed=r.verdict.value,
        )
        return
    if claimed in _acceptable_verdicts(ctx):
        own = _verdict_of_claimed_p(ctx)
        if own is not None and own is not claimed and own not in _acceptable_verdicts(ctx):
            yield V401.finding(
                f'the verdict says "{_quoted(text)}" but the answer\'s own p_value '
                f"{ctx.report.comparison.p_value:.6g} gives \"{own.value}\" (alpha {ctx.options.alpha:g}); the "
                f"recomputed p {r.p_value:.6g} supports the verdict, so the p_value is what to correct",
                pointer=ctx.pointer("comparison", "p_value"),
                claimed=ctx.report.comparison.p_value,
                recomputed=r.p_value,
            )
        return
    if _borderline(ctx, claimed):
        yield V401.finding(
            f'the verdict "{_quoted(text)}" is borderline: it follows from the claimed p '
            f"{ctx.report.comparison.p_value:.6g}, a plausible Monte-Carlo estimate ({ctx.p_agreement.how}), but "
            f"the exact two-sided p is {r.p_value:.6g} (alpha {ctx.options.alpha:g}), which gives "
            f'"{r.verdict.value}"; rerun the test exactly or with more resamples before relying on it',
            pointer=pointer,
            claimed=_quoted(text),
            recomputed=r.verdict.value,
            severity=Severity.WARNING,
        )
        return
    yield V401.finding(
        f'the verdict says "{_quoted(text)}" but the recomputed two-sided p is {r.p_value:.6g} (alpha '
        f"{ctx.options.alpha:g}) with delta_mean {r.delta_mean:.6g} ({ctx.report.metric_direction}); "
        f'the verdict should be "{r.verdict.value}"',
        pointer=pointer,
        claimed=_quoted(text),
        recomputed=r.verdict.value,
    )


@check_rule("V402", "system-worked-contradicts-verdict", Severity.ERROR)
def V402(ctx: AuditContext) -> Iterator[Finding]:
    """comparison.system_worked contradicts the comparison verdict.

    ## What it does
    `system_worked` must be true exactly when the verdict is "idea better
    (significant)". The claimed verdict is the reference; when it cannot be
    classified, the recomputed verdict is.

    ## Why is this bad?
    Pipelines read the boolean, people read the sentence; when they disagree
    one of them routes the idea the wrong way.

    ## Example
    ```json
    "comparison": {"verdict": "no measurable effect", "system_worked": true}
    ```
    """
    claimed = ctx.report.comparison.system_worked
    reference, source = _reference_verdict(ctx)
    if claimed is None or reference is None:
        return
    expected = reference is Verdict.BETTER
    if claimed == expected:
        return
    yield V402.finding(
        f'system_worked is {str(claimed).lower()} but {source} is "{reference.value}"; system_worked is true '
        f"exactly for a significant improvement, so set it to {str(expected).lower()}",
        pointer=ctx.pointer("comparison", "system_worked"),
        claimed=claimed,
        recomputed=expected,
    )


@check_rule("V403", "worked-contradicts-system-verdict", Severity.ERROR)
def V403(ctx: AuditContext) -> Iterator[Finding]:
    """The top-level worked flag contradicts system_verdict.

    ## What it does
    Fires when `worked` is true while `system_verdict` is "failed", or false
    while it is "worked". Other system_verdict words are not judged.

    ## Why is this bad?
    The two fields state the same outcome; when they disagree, whichever one
    a reader or a pipeline looks at first decides what they believe.

    ## Example
    ```json
    {"worked": true, "system_verdict": "failed"}
    ```
    """
    a = ctx.answer
    if a is None or a.worked is None or not isinstance(a.system_verdict, str):
        return
    expected = _SYSTEM_VERDICTS.get(a.system_verdict.strip().lower())
    if expected is None or a.worked == expected:
        return
    yield V403.finding(
        f'worked is {str(a.worked).lower()} but system_verdict is "{_quoted(a.system_verdict)}"; '
        "make the two agree with the comparison verdict",
        pointer=join_pointer("", "worked"),
        claimed=a.worked,
        recomputed=expected,
    )


@check_rule("V404", "practical-verdict-contradicts-comparison", Severity.ERROR)
def V404(ctx: AuditContext) -> Iterator[Finding]:
    """practical_verdict (helps / hurts / no_effect) contradicts the comparison verdict.

    ## What it does
    Maps `practical_verdict` to better / worse / no effect and compares it
    with the comparison verdict (the recomputed one when the claimed string
    cannot be classified). Unrecognised practical words are not judged.

    ## Why is this bad?
    "helps" on top of "no measurable effect" tells a reader skimming the
    answer that the idea works when the statistics say it does not.

    ## Example
    ```json
    {"practical_verdict": "helps", "bench_report": {"comparison": {"verdict": "no measurable effect"}}}
    ```
    """
    a = ctx.answer
    if a is None:
        return
    practical = classify_practical(a.practical_verdict)
    reference, source = _reference_verdict(ctx)
    if practical is None or reference is None or practical is reference:
        return
    yield V404.finding(
        f'practical_verdict is "{_quoted(a.practical_verdict)}" but {source} is "{reference.value}"; '
        f'set it to "{reference.practical}"',
        pointer=join_pointer("", "practical_verdict"),
        claimed=_quoted(a.practical_verdict),
        recomputed=reference.practical,
    )


def _as_flag(value: Any) -> bool | None:
    """0/1/false/true as a bool; anything else is not a flag."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def _signature_confirmed(ctx: AuditContext) -> bool | None:
    signature = ctx.report.mechanism_signature or {}
    confirmed = signature.get("confirmed")
    return confirmed if isinstance(confirmed, bool) else None


@check_rule("V405", "mechanism-ok-contradicts-signature", Severity.ERROR)
def V405(ctx: AuditContext) -> Iterator[Finding]:
    """mechanism_ok contradicts mechanism_signature.confirmed.

    ## What it does
    Compares the top-level `mechanism_ok` (0/1 or a boolean) with
    `bench_report.mechanism_signature.confirmed`.

    ## Why is this bad?
    Whether the idea worked *for the stated reason* is reported twice; when
    the two disagree, the answer claims a mechanism its own report denies.

    ## Example
    ```json
    {"mechanism_ok": 1, "bench_report": {"mechanism_signature": {"confirmed": false}}}
    ```
    """
    if ctx.answer is None:
        return
    ok, confirmed = _as_flag(ctx.answer.mechanism_ok), _signature_confirmed(ctx)
    if ok is None or confirmed is None or ok == confirmed:
        return
    yield V405.finding(
        f"mechanism_ok is {ctx.answer.mechanism_ok} but mechanism_signature.confirmed is "
        f"{str(confirmed).lower()}; set mechanism_ok to {int(confirmed)}",
        pointer=join_pointer("", "mechanism_ok"),
        claimed=ctx.answer.mechanism_ok,
        recomputed=int(confirmed),
    )


# --- V407 -------------------------------------------------------------------

_TARGET_WORDS = ("target", "expected", "predicted")
_OBSERVED_WORDS = ("observed", "measured", "actual")


def _stem(key: str, words: tuple[str, ...]) -> str | None:
    """``target_delta`` -> ``delta``; ``tail_observed`` -> ``tail``; None when no word marks the key."""
    k = key.lower()
    for word in words:
        if k.startswith(word + "_") and len(k) > len(word) + 1:
            return k[len(word) + 1 :]
        if k.endswith("_" + word) and len(k) > len(word) + 1:
            return k[: -len(word) - 1]
    return None


def _far_apart(observed: float, target: float, factor: float) -> bool:
    """Ratio beyond ``factor`` either way; opposite signs are far.

    With exactly one of the two at zero no ratio exists and "N times away" is
    undefined, so the pair is not judged.
    """
    if observed == target:
        return False
    if observed == 0 or target == 0:
        return False
    if (observed > 0) != (target > 0):
        return True
    ratio = observed / target
    return ratio > factor or ratio < 1 / factor


# Keys longer than this are not names of mechanism quantities; more pairs than
# this are not a signature anyone wrote.  Both keep V407 bounded for any input.
MAX_MECHANISM_KEY_CHARS = 200
MAX_MECHANISM_PAIRS = 1_000


def _suffixes(stem: str) -> Iterator[str]:
    """The word-boundary suffixes of ``stem``: ``a_b_c`` -> ``b_c``, ``c``."""
    start = stem.find("_")
    while start >= 0:
        yield stem[start + 1 :]
        start = stem.find("_", start + 1)


def mechanism_pairs(signature: dict[str, Any]) -> list[tuple[str, str]]:
    """(target key, observed key) pairs of numeric entries whose name stems match.

    In the signature's key order; indexed by stem (and by the word-boundary
    suffixes of stems), so the cost grows with the signature's size, not its
    square.  Keys over :data:`MAX_MECHANISM_KEY_CHARS` are ignored and at most
    :data:`MAX_MECHANISM_PAIRS` pairs are returned.
    """
    numeric = [k for k, v in signature.items() if is_number(v) and len(k) <= MAX_MECHANISM_KEY_CHARS]
    order = {k: i for i, k in enumerate(numeric)}
    by_stem: dict[str, list[str]] = {}  # observed stem -> observed keys
    by_suffix: dict[str, list[str]] = {}  # word-boundary suffix of an observed stem -> observed keys
    for key in numeric:
        stem = _stem(key, _OBSERVED_WORDS)
        if stem is None:
            continue
        by_stem.setdefault(stem, []).append(key)
        for suffix in _suffixes(stem):
            by_suffix.setdefault(suffix, []).append(key)
    pairs: list[tuple[str, str]] = []
    for key in numeric:
        stem = _stem(key, _TARGET_WORDS)
        if stem is None:
            continue
        matched = set(by_stem.get(stem, ())) | set(by_suffix.get(stem, ()))
        for suffix in _suffixes(stem):
            matched.update(by_stem.get(suffix, ()))
        for observed in sorted(matched, key=order.__getitem__):
            pairs.append((key, observed))
            if len(pairs) >= MAX_MECHANISM_PAIRS:
                return pairs
    return pairs


@check_rule("V407", "mechanism-confirmed-far-from-target", Severity.WARNING)
def V407(ctx: AuditContext) -> Iterator[Finding]:
    """The mechanism is "confirmed" while an observed value is far from its stated target.

    ## What it does
    In `mechanism_signature`, pairs numeric `target_X` / `expected_X` /
    `predicted_X` entries with `observed_X` / `measured_X` / `actual_X`
    (also `observed_mean_X`: the stems are equal or one ends with the
    other) and, when the signature says `confirmed: true`, fires for each
    pair more than 2x apart (`mechanism_factor`) or of opposite sign.

    ## Why is this bad?
    A prediction confirmed by a value off by an order of magnitude was not
    confirmed; the idea may have helped for another reason.

    ## Example
    ```json
    "mechanism_signature": {"target_tail": 0.02, "observed_tail": 0.0014, "confirmed": true}
    ```
    """
    signature = ctx.report.mechanism_signature
    if not signature or _signature_confirmed(ctx) is not True:
        return
    factor = ctx.options.mechanism_factor
    for target_key, observed_key in mechanism_pairs(signature):
        target, observed = float(signature[target_key]), float(signature[observed_key])
        if not _far_apart(observed, target, factor):
            continue
        yield V407.finding(
            f"the mechanism is marked confirmed but {observed_key} = {observed:.6g} is more than {factor:g}x "
            f"away from {target_key} = {target:.6g}; call the mechanism unconfirmed or explain the gap",
            pointer=ctx.pointer("mechanism_signature", observed_key),
            claimed=observed,
            recomputed=target,
        )
