"""Relative changes of the metric in prose: "a 4.1% reduction in test MSE", "improved by 2%".

Only when the change word sits next to the percentage, the changed quantity
is the metric (or not named), and nothing in the clause says the percentage is
about something else (clip fraction, tail, MDE, confidence, time, ...).
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from auditor.prose.numbers import (
    CLAUSE_WINDOW,
    NARROW_BREAK,
    NUM,
    SENTENCE_BREAK,
    Reported,
    capped,
    first_break,
    last_break,
    parse_number,
)
from auditor.prose.scanning import fold
from auditor.prose.words import (
    APPROXIMATE,
    ARTICLES,
    CHANGE_ADJECTIVES,
    CHANGE_NOUNS,
    CHANGE_VERBS,
    CHANGE_WORDS,
    EXACT_QUALIFIERS,
    GENERIC_WORDS,
    HIGHER_IS_BETTER_NAMES,
    LOWER_IS_BETTER_NAMES,
    MAX_OBJECT_WORDS,
    METRIC_WORDS,
    NEVER_PERCENT_METRICS,
    NOT_A_CHANGE_BEFORE,
    OBJECT_STOPS,
    direction_is_clear,
    is_metric,
    is_other_quantity,
    object_words,
    parts,
    words,
)

# The patterns are in lower case and run on fold(text) (see .scanning).
# A percentage: "4.1%", "4.1 %", "0.08 percent" (not "percentage points").  The
# look-behind keeps a match from starting inside a number or a word, so each
# run of digits is tried once.
_PERCENT = re.compile(rf"(?<![\w.^])(?P<num>{NUM})\s?(?:%|percent\b)")
# Cheap pre-filter: a change word somewhere near the percentage.
_CHANGE_STEM = re.compile(
    r"reduc|decreas|declin|drop|fell|fall|lower|smaller|shr[au]nk|\bcuts?\b|increas|\bris[ei]|\brose\b|higher"
    r"|gr[eo]wn?\b|grows|larger|greater|improv|better|gain|wors|degrad|hurt|deteriorat"
)
# What after a percentage makes it no change: "87.5% of seeds", "4%-5%".
_NOT_A_CHANGE_AFTER = re.compile(r"\s*(?:of\b|[-–—/]\s*\d)")
_RELATIVE_AFTER_WINDOW = 60
# At most this many percentages next to a change word are examined per text.
MAX_RELATIVE_CHANGES = 256


class RelativeChangeClaim(NamedTuple):
    """``a 4.1% reduction in test MSE``: a relative change of the metric and its direction.

    ``reported`` is the percentage as written (its sign kept); ``direction`` is
    ``"decrease"``, ``"increase"``, ``"better"``, ``"worse"`` or None when the
    claim's direction is not clear (a signed number, the baseline as subject).
    ``metric_words`` are the metric names the clause uses; ``approximate`` is
    True after "about", "~" and the like.
    """

    text: str
    span: tuple[int, int]
    reported: Reported
    direction: str | None
    metric_words: frozenset[str]
    approximate: bool

    @property
    def may_be_percentage_points(self) -> bool:
        """False when the clause names a metric never written in percent (MSE, loss, perplexity, ...)."""
        return not self.metric_words & NEVER_PERCENT_METRICS

    @property
    def metric_direction(self) -> str | None:
        """``"lower"``/``"higher"`` when the named metric is known to be better that way, else None."""
        lower = bool(self.metric_words & LOWER_IS_BETTER_NAMES)
        higher = bool(self.metric_words & HIGHER_IS_BETTER_NAMES)
        if lower == higher:
            return None
        return "lower" if lower else "higher"


def _relative_change_at(
    text: str, folded: str, m: re.Match[str], context_words: list[str]
) -> RelativeChangeClaim | None:
    """The relative-change claim around the percentage ``m`` (a match in ``folded``), or None when it is not one."""
    num_start, pct_end = m.start("num"), m.end()
    reported = parse_number(text[num_start : m.end("num")])
    if reported is None:
        return None
    window_start = max(0, num_start - CLAUSE_WINDOW)
    window_end = min(len(text), pct_end + _RELATIVE_AFTER_WINDOW)
    before_char = text[num_start - 1 : num_start]
    if before_char in "-–—" and num_start >= 2 and text[num_start - 2].isdigit():
        return None  # "3-4% lower": a range
    previous = text[max(0, num_start - 3) : num_start].rstrip()
    if previous and previous[-1] in "=:/^*×<>≤≥±":
        return None  # "mde_rel_pct=0.043%", "p<5%"
    if _NOT_A_CHANGE_AFTER.match(folded[pct_end : pct_end + 8]):
        return None  # "87.5% of seeds", "4%-5%"

    narrow_start = last_break(NARROW_BREAK, folded, window_start, num_start)
    wide_start = last_break(SENTENCE_BREAK, folded, window_start, num_start)
    narrow_end = first_break(NARROW_BREAK, folded, pct_end, window_end)
    before = words(text, narrow_start, num_start)
    after = words(text, pct_end, narrow_end)

    approximate = False
    while before and (before[-1][0] in APPROXIMATE or before[-1][0] in EXACT_QUALIFIERS):
        approximate = approximate or before[-1][0] in APPROXIMATE
        before.pop()
    last = before[-1][0] if before else None

    direction: str | None = None
    explicit_object: list[str] | None = None  # None: the change names no object
    phrase: list[tuple[str, int, int]] = []  # the words of the claim (quoted in messages)
    if last == "by":
        # "<verb> [object] by 4%"
        for k in range(len(before) - 2, max(-1, len(before) - 3 - MAX_OBJECT_WORDS), -1):
            word = before[k][0]
            direction = CHANGE_VERBS.get(word) or CHANGE_NOUNS.get(word) or CHANGE_ADJECTIVES.get(word)
            if direction is not None:
                explicit_object = [w for w, _, _ in before[k + 1 : -1] if w not in ARTICLES] or None
                if explicit_object and any(w in OBJECT_STOPS for w in explicit_object):
                    return None  # "improved in 7 of 8 seeds by 2%"
                phrase = before[k:]
                break
        else:
            return None
    elif last == "of" and len(before) >= 2 and before[-2][0] in CHANGE_NOUNS:
        # "a reduction of 4% [in object]"
        direction = CHANGE_NOUNS[before[-2][0]]
        phrase = before[-3:] if len(before) >= 3 and before[-3][0] in ARTICLES else before[-2:]
        if after and after[0][0] in ("in", "of"):
            explicit_object = object_words(after[1:]) or None
    elif last in CHANGE_VERBS:
        # "MSE dropped 4%"
        direction = CHANGE_VERBS[last]
        phrase = before[-1:]
    elif last in NOT_A_CHANGE_BEFORE or last in CHANGE_WORDS:
        return None
    else:
        # "a 4% reduction [in object]", "4% lower [object]"
        rest = after
        if rest and rest[0][0] in ("relative", "relatively"):
            rest = rest[1:]
        if not rest:
            return None
        head = rest[0][0]
        if head in CHANGE_NOUNS:
            direction = CHANGE_NOUNS[head]
            if len(rest) > 1 and rest[1][0] in ("in", "of"):
                explicit_object = object_words(rest[2:]) or None
        elif head in CHANGE_ADJECTIVES:
            direction = CHANGE_ADJECTIVES[head]
            explicit_object = object_words(rest[1:]) or None
        else:
            return None
        phrase = rest[:1]
        if last in ARTICLES:
            phrase = [before[-1], *phrase]

    # A word naming another quantity in the clause itself skips the claim; one elsewhere in the
    # sentence ("the tail averaged 0.00137, a 4.1% reduction in test MSE") only when the claim
    # does not name the metric as what changed.
    if any(is_other_quantity(w) for w, _, _ in before + after) or any(map(is_other_quantity, context_words)):
        return None
    names_metric = explicit_object is not None and any(is_metric(w) for w in explicit_object)
    wide_words = [w for w, _, _ in words(text, wide_start, num_start)]
    if not names_metric and any(is_other_quantity(w) for w in wide_words):
        return None
    phrase_positions = {start for _, start, _ in phrase}
    narrow_words = [w for w, start, _ in before + after if start not in phrase_positions]
    if explicit_object:
        if not any(is_metric(w) for w in explicit_object):
            return None  # "4% lower staleness": a change of something else
    else:
        rest_words = [w for w in narrow_words if w not in CHANGE_WORDS | APPROXIMATE | EXACT_QUALIFIERS]
        if not any(is_metric(w) for w in rest_words) and not all(w in GENERIC_WORDS for w in rest_words):
            return None  # "staleness fell 4%": the subject is neither the metric nor the idea
    subject = [w for w, start, _ in before if start < phrase[0][1]]
    if reported.value < 0 or not direction_is_clear(subject, [w for w, _, _ in after]):
        direction = None  # "a -4% reduction", "the baseline's MSE was 4% higher": direction unclear
    named = narrow_words + (explicit_object or [])
    metric_words = frozenset(x for w in named for x in (w, *parts(w)) if x in METRIC_WORDS)
    start = min([num_start, *(s for _, s, _ in phrase)])
    end = max([pct_end, *(e for _, _, e in phrase)])
    if approximate:
        reported = Reported(reported.text, reported.value, 2 * reported.half_unit)
    return RelativeChangeClaim(text[start:end], (start, end), reported, direction, metric_words, approximate)


def extract_relative_changes(text: str, max_chars: int | None = None, context: str = "") -> list[RelativeChangeClaim]:
    """Relative changes of the metric ("a 4.1% reduction in test MSE", "improved by 2%").

    ``context`` is extra text the claims are about (a metrics key such as
    ``clip_fraction``): a word there that names another quantity skips every
    claim, like the same word in the clause would.
    """
    text = capped(text, max_chars)
    return relative_changes(text, fold(text), context)


def relative_changes(text: str, folded: str, context: str) -> list[RelativeChangeClaim]:
    """:func:`extract_relative_changes` of ``text``, whose fold is ``folded``."""
    if "%" not in text and "percent" not in folded:
        return []  # most prose quotes no percentage: the change-word pass below is the costly one
    context_words = [w for w, _, _ in words(context[:CLAUSE_WINDOW], 0, min(len(context), CLAUSE_WINDOW))]
    # One pass finds the change words; a percentage with none near it is not looked at.
    stems = [m.start() for m in _CHANGE_STEM.finditer(folded)]
    out: list[RelativeChangeClaim] = []
    examined = 0
    for m in _PERCENT.finditer(folded):
        i = bisect.bisect_left(stems, m.start() - CLAUSE_WINDOW)
        if i == len(stems) or stems[i] >= m.end() + _RELATIVE_AFTER_WINDOW:
            continue
        examined += 1
        if examined > MAX_RELATIVE_CHANGES:
            break  # bounded work on hostile text; honest prose quotes a handful
        claim = _relative_change_at(text, folded, m, context_words)
        if claim is not None:
            out.append(claim)
    return out
