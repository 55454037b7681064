"""The three comparison verdicts and the classification of claimed verdict text.

Agents do not write verdicts letter for letter ("idea better (significant)",
"Idea significantly better", "significant improvement", "no significant
difference"), so a claimed verdict is classified by its words, never compared
as a string.
"""

from __future__ import annotations

import enum
import functools
import re


class Verdict(str, enum.Enum):
    BETTER = "idea better (significant)"
    WORSE = "idea worse (significant)"
    NONE = "no measurable effect"

    @property
    def practical(self) -> str:
        """The matching top-level ``practical_verdict`` word."""
        return {Verdict.BETTER: "helps", Verdict.WORSE: "hurts", Verdict.NONE: "no_effect"}[self]

    @property
    def significant(self) -> bool:
        return self is not Verdict.NONE


_NEGATED_SIGNIFICANCE = re.compile(
    r"\b(?:not|no|non|in|without)[\s-]*(?:statistically[\s-]+)?significan"
    r"|\binsignifican|\bnon-?significan",
)
_NO_EFFECT = re.compile(
    r"\bno\s+(?:measurable\s+|detectable\s+|significant\s+|clear\s+|real\s+)*"
    r"(?:effect|difference|change|improvement|benefit)"
    r"|\bnull\b|\binconclusive\b|\bneutral\b|\bno[_\s-]effect\b"
)
_SIGNIFICANT = re.compile(r"significan")
_BETTER = re.compile(r"\b(?:better|improv\w*|helps?|outperform\w*|wins?|gain\w*|reduc\w*|lower\s+loss|superior)\b")
_WORSE = re.compile(r"\b(?:worse|hurts?|degrad\w*|underperform\w*|harm\w*|regress\w*|inferior|loses?)\b")


# Verdict sentences up to this long are classified once per process: a batch's answers repeat a
# few phrasings ("idea better (significant)", "no measurable effect"), each read by an answer's
# checks and again by the cross-answer checks.  Longer ones are rarely repeated.
_CACHED_MAX_CHARS = 200


def classify_verdict(text: object) -> Verdict | None:
    """Classify a claimed comparison verdict by its words; None when it says nothing recognisable."""
    if not isinstance(text, str):
        return None
    if len(text) <= _CACHED_MAX_CHARS:
        return _classify_short(text)
    return _classify(text)


@functools.lru_cache(maxsize=1024)
def _classify_short(text: str) -> Verdict | None:
    """:func:`_classify`, kept per sentence (see :data:`_CACHED_MAX_CHARS`)."""
    return _classify(text)


def _classify(text: str) -> Verdict | None:
    t = text.lower().replace("_", " ")
    if _NEGATED_SIGNIFICANCE.search(t) or _NO_EFFECT.search(t):
        return Verdict.NONE
    if _SIGNIFICANT.search(t):
        better, worse = bool(_BETTER.search(t)), bool(_WORSE.search(t))
        if better and not worse:
            return Verdict.BETTER
        if worse and not better:
            return Verdict.WORSE
    return None


_PRACTICAL = {
    "helps": Verdict.BETTER,
    "help": Verdict.BETTER,
    "hurts": Verdict.WORSE,
    "hurt": Verdict.WORSE,
    "no_effect": Verdict.NONE,
    "no effect": Verdict.NONE,
    "none": Verdict.NONE,
}


def classify_practical(text: object) -> Verdict | None:
    """Map a top-level ``practical_verdict`` (helps / hurts / no_effect) to a verdict."""
    if not isinstance(text, str):
        return None
    return _PRACTICAL.get(text.strip().lower().replace("-", "_"))
