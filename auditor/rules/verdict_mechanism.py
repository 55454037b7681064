"""V405 and V407: the mechanism the answer claims against its own mechanism signature.

Split from :mod:`.verdict` only to keep files short.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from auditor.answer.model import is_number
from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.parse.pointers import join_pointer


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

    ## How to fix
    Set `mechanism_ok` to 1 when `mechanism_signature.confirmed` is true and to 0
    when it is false; if the signature's own values do not confirm the mechanism
    (see V407), correct `confirmed` first.
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


class _Marks(NamedTuple):
    """The words that mark a key, each as the prefix and the suffix it is written as, and a search
    for any of them in a lower-case key: most keys hold none, and are passed in one C call."""

    affixes: tuple[tuple[str, str], ...]
    any_in: Callable[[str], re.Match[str] | None]


def _marks(*words: str) -> _Marks:
    return _Marks(tuple((f"{word}_", f"_{word}") for word in words), re.compile("|".join(words)).search)


_TARGET_WORDS = _marks("target", "expected", "predicted")
_OBSERVED_WORDS = _marks("observed", "measured", "actual")


def _stem(key: str, words: _Marks) -> str | None:
    """``target_delta`` -> ``delta``; ``tail_observed`` -> ``tail``; None when no word marks the key."""
    k = key.lower()
    if words.any_in(k) is None:
        return None
    for prefix, suffix in words.affixes:
        if k.startswith(prefix) and len(k) > len(prefix):
            return k[len(prefix) :]
        if k.endswith(suffix) and len(k) > len(suffix):
            return k[: -len(suffix)]
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
    pair more than 2x apart (`mechanism-factor` in `[tool.auditor.thresholds]`)
    or of opposite sign.

    ## Why is this bad?
    A prediction confirmed by a value off by an order of magnitude was not
    confirmed; the idea may have helped for another reason.

    ## Example
    ```json
    "mechanism_signature": {"target_tail": 0.02, "observed_tail": 0.0014, "confirmed": true}
    ```

    ## How to fix
    Set `confirmed` to false and say in the prose that the mechanism was not
    confirmed, or explain in `limitations` why an observed value that far from
    its target still confirms it. How far counts as far is `mechanism-factor` in
    `[tool.auditor.thresholds]` (default 2).
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
