"""Monte-Carlo resample counts an answer states ("10,000 sign flips", "n_resamples=20000", "5k permutations")."""

from __future__ import annotations

import math
import re
from itertools import islice

from .numbers import (
    CLAUSE_BREAK,
    CLAUSE_WINDOW,
    SENTENCE_BREAK,
    capped,
    first_break,
    last_break,
)

# A count as agents write it: "10,000", "20_000", "10000", "5k", "1.5M", "1e4", "10^4", "1×10^4".
# The look-behind keeps a match from starting inside a number ("2^8" or "1,000").
_COUNT = (
    r"(?<![\w.^,/])(?P<count>(?:\d+(?:\.\d+)?\s?[×x]\s?)?10\^\+?\d+|\d{1,3}(?:[,_]\d{3})+(?![\d,])"
    r"|\d+(?:\.\d+)?(?:[kKM]\b|[eE]\+?\d+)?)"
)
_MC = r"monte[\s-]?carlo|mc"
_RESAMPLE_NOUN = (
    r"(?:resamples|resamplings|permutations|shuffles|sign[\s-]?flips"
    rf"|(?:{_MC})\s+(?:draws|samples|replicates|simulations|iterations)"
    r"|sign[\s-]?flip\s+(?:draws|samples|replicates|resamples|permutations))\b"
)
# The singular after a hyphen: "a 10,000-permutation test".
_RESAMPLE_NOUN_SINGULAR = r"(?:resample|permutation|shuffle|sign[\s-]?flip)\b"
_RESAMPLE_ADJECTIVE = rf"(?:random(?:ized|ised)?|{_MC}|paired|independent|additional|label|permutation|sign)"
_RESAMPLE_COUNTS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # "10,000 random sign flips", "B = 5000 resamples", "5k permutations", "a 10,000-permutation test"
        (
            rf"{_COUNT}(?:\s+(?:{_RESAMPLE_ADJECTIVE}[\s-]+){{0,3}}{_RESAMPLE_NOUN}"
            rf"|\s*-\s*(?:{_RESAMPLE_ADJECTIVE}[\s-]+){{0,2}}(?:{_RESAMPLE_NOUN}|{_RESAMPLE_NOUN_SINGULAR}))"
        ),
        # "n_resamples=20000", "number of permutations: 10,000", "num_permutations = 5000"
        (
            r"\b(?:n|num|number)[\s_-]?(?:of[\s_-]?)?(?:resamples|resamplings|permutations|perms|shuffles"
            rf"|sign[\s_-]?flips|(?:monte[\s_-]?carlo|mc)[\s_-]?(?:samples|draws|resamples))\b"
            rf"\s*(?:[=:]|\bwas\b|\bis\b|\bof\b)?\s*{_COUNT}(?![\w.])"
        ),
        # "resamples: 2000", "permutations=5000"
        rf"\b(?:resamples|permutations|shuffles|sign[\s_-]?flips)\s*[=:]\s*{_COUNT}(?![\w.])",
        # "resampled 10000 times"
        rf"\b(?:resampled|permuted|shuffled|sign[\s-]?flipped)\s+{_COUNT}\s+times\b",
    )
)
# "B = 10000" counts only next to a resampling word, and never next to a batch.
_B_COUNT = re.compile(rf"(?<![\w.])B\s*=\s*{_COUNT}(?![\w.])")
_RESAMPLING_WORD = re.compile(rf"resampl|permut|sign[\s-]?flip|shuffl|{_MC}\b", re.IGNORECASE)
_BATCH_WORD = re.compile(r"\bbatch", re.IGNORECASE)
# "all 256 sign flips", "2^8 = 256 permutations", "exhaustive enumeration of 256 ...": exact, not resampled.
_EXACT_BEFORE = re.compile(
    r"(?:\b(?:all|every|each|full|complete|exhaustive(?:ly)?|exact|enumerat\w*)(?:\s+(?:one|of|the))*"
    r"|(?:\^|\*\*)\s*\d+\s*=)\s*$",
    re.IGNORECASE,
)
_EXACT_CLAUSE = re.compile(r"enumerat|exhaustiv", re.IGNORECASE)
# Every spelling above holds one of these stems (IGNORECASE, like the patterns,
# so case-folded letters agree): text without any states no resample count, and
# most prose has none, so one cheap search spares the five costly passes.
_ANY_RESAMPLE_STEM = re.compile(r"resampl|permut|perms|shuffl|sign[\s_-]?flip|monte[\s_-]?carlo|mc", re.IGNORECASE)
MIN_RESAMPLES, MAX_RESAMPLES = 10, 100_000_000
# At most this many matches of each spelling are read per text (bounded work on hostile text).
MAX_RESAMPLE_MATCHES = 256


def _parse_count(text: str) -> int | None:
    """``"10,000"`` -> 10000, ``"5k"`` -> 5000, ``"1e4"`` -> 10000; None when not a whole count in range."""
    t = text.replace(",", "").replace("_", "").replace(" ", "").lower()
    try:
        if "^" in t:
            mantissa, _, exponent = t.partition("10^")
            value = float(mantissa.rstrip("×x") or 1) * 10.0 ** min(int(exponent.lstrip("+")), 20)
        elif t[-1] in "km":
            value = float(t[:-1]) * (1e3 if t[-1] == "k" else 1e6)
        else:
            value = float(t)
    except (ValueError, OverflowError):
        return None
    if not (math.isfinite(value) and value == int(value) and MIN_RESAMPLES <= value <= MAX_RESAMPLES):
        return None
    return int(value)


def _stated_exact(text: str, start: int, end: int) -> bool:
    """The count at ``text[start:end]`` is an exact enumeration ("all 256 sign patterns")."""
    if _EXACT_BEFORE.search(text, max(0, start - 30), start):
        return True
    clause_start = last_break(CLAUSE_BREAK, text, max(0, start - CLAUSE_WINDOW), start)
    clause_end = first_break(CLAUSE_BREAK, text, end, min(len(text), end + CLAUSE_WINDOW // 2))
    return bool(_EXACT_CLAUSE.search(text, clause_start, clause_end))


def extract_resample_counts(text: str, max_chars: int | None = None) -> list[int]:
    """The Monte-Carlo resample counts ``text`` states, distinct, in order of appearance.

    Read: ``1,000 sign flips``, ``10000 random sign flips``, ``n_resamples=20000``,
    ``20,000 permutations``, ``B = 5000 resamples``, ``5k permutations``,
    ``100000 Monte-Carlo resamples``, ``resamples: 2000``, ``10,000 MC draws``,
    ``a 10,000-permutation test``, ``resampled 5000 times``, and ``B=10000`` when
    a resampling word is near.  Not read: epochs, seeds, steps, dataset samples
    ("400-sample Friedman#1"), bootstrap resamples, and exact enumerations ("all
    256 sign patterns", "2^8 = 256 sign flips").  Each count is a whole number in
    [10, 100,000,000].
    """
    if not isinstance(text, str):
        return []
    text = capped(text, max_chars)
    if _ANY_RESAMPLE_STEM.search(text) is None:
        return []
    found: list[tuple[int, int]] = []
    for pattern in _RESAMPLE_COUNTS:
        for m in islice(pattern.finditer(text), MAX_RESAMPLE_MATCHES):
            count = _parse_count(m.group("count"))
            if count is not None and not _stated_exact(text, m.start("count"), m.end()):
                found.append((m.start("count"), count))
    for m in islice(_B_COUNT.finditer(text), MAX_RESAMPLE_MATCHES):
        count = _parse_count(m.group("count"))
        if count is None:
            continue
        start = last_break(SENTENCE_BREAK, text, max(0, m.start() - 60), m.start())
        end = first_break(SENTENCE_BREAK, text, m.end(), min(len(text), m.end() + 30))
        if _RESAMPLING_WORD.search(text, start, end) and not _BATCH_WORD.search(text, start, end):
            found.append((m.start("count"), count))
    out: list[int] = []
    for _, count in sorted(found):
        if count not in out:
            out.append(count)
    return out
