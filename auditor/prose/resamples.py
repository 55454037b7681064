"""Monte-Carlo resample counts an answer states ("10,000 sign flips", "n_resamples=20000", "5k permutations")."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from itertools import islice

from auditor.prose.numbers import (
    CLAUSE_BREAK,
    CLAUSE_WINDOW,
    SENTENCE_BREAK,
    capped,
    first_break,
    last_break,
)
from auditor.prose.scanning import fold


def _count(magnitudes: str) -> str:
    """A count as agents write it: "10,000", "20_000", "10000", "5k", "1.5M", "1e4", "10^4", "1×10^4".

    ``magnitudes`` is the class of the letters "k" and "M" as the pattern's case reads them.
    The look-behind keeps a match from starting inside a number ("2^8" or "1,000").
    """
    return (
        r"(?<![\w.^,/])(?P<count>(?:\d+(?:\.\d+)?\s?[×x]\s?)?10\^\+?\d+|\d{1,3}(?:[,_]\d{3})+(?![\d,])"
        rf"|\d+(?:\.\d+)?(?:{magnitudes}\b|[eE]\+?\d+)?)"
    )


# The spellings are in lower case and run on fold(text) (see .scanning), where "K" and "M" read "k" and "m".
_COUNT = _count("[km]")
_MC = r"monte[\s-]?carlo|mc"
_RESAMPLE_NOUN = (
    r"(?:resamples|resamplings|permutations|shuffles|sign[\s-]?flips"
    rf"|(?:{_MC})\s+(?:draws|samples|replicates|simulations|iterations)"
    r"|sign[\s-]?flip\s+(?:draws|samples|replicates|resamples|permutations))\b"
)
# The singular after a hyphen: "a 10,000-permutation test".
_RESAMPLE_NOUN_SINGULAR = r"(?:resample|permutation|shuffle|sign[\s-]?flip)\b"
_RESAMPLE_ADJECTIVE = rf"(?:random(?:ized|ised)?|{_MC}|paired|independent|additional|label|permutation|sign)"
# "10,000 random sign flips", "B = 5000 resamples", "5k permutations", "a 10,000-permutation test"
_COUNT_BEFORE_NOUN = re.compile(
    rf"{_COUNT}(?:\s+(?:{_RESAMPLE_ADJECTIVE}[\s-]+){{0,3}}{_RESAMPLE_NOUN}"
    rf"|\s*-\s*(?:{_RESAMPLE_ADJECTIVE}[\s-]+){{0,2}}(?:{_RESAMPLE_NOUN}|{_RESAMPLE_NOUN_SINGULAR}))"
)
# What every match of _COUNT_BEFORE_NOUN holds: a word of _RESAMPLE_NOUN, or the hyphenated singular.
_NOUN_WORDS = ("resampl", "permutations", "shuffles", "flip", "mc", "carlo")
_HYPHENATED_SINGULAR = re.compile(rf"-\s*(?:{_RESAMPLE_ADJECTIVE}[\s-]+){{0,2}}{_RESAMPLE_NOUN_SINGULAR}")
# The other spellings, each with words one of which every match of it holds.
_RESAMPLE_COUNTS = (
    # "n_resamples=20000", "number of permutations: 10,000", "num_permutations = 5000"
    (
        ("resampl", "permutations", "perms", "shuffles", "flips", "mc", "carlo"),
        re.compile(
            r"\b(?:n|num|number)[\s_-]?(?:of[\s_-]?)?(?:resamples|resamplings|permutations|perms|shuffles"
            rf"|sign[\s_-]?flips|(?:monte[\s_-]?carlo|mc)[\s_-]?(?:samples|draws|resamples))\b"
            rf"\s*(?:[=:]|\bwas\b|\bis\b|\bof\b)?\s*{_COUNT}(?![\w.])"
        ),
    ),
    # "resamples: 2000", "permutations=5000"
    (
        ("resamples", "permutations", "shuffles", "flips"),
        re.compile(rf"\b(?:resamples|permutations|shuffles|sign[\s_-]?flips)\s*[=:]\s*{_COUNT}(?![\w.])"),
    ),
    # "resampled 10000 times"
    (
        ("resampled", "permuted", "shuffled", "flipped"),
        re.compile(rf"\b(?:resampled|permuted|shuffled|sign[\s-]?flipped)\s+{_COUNT}\s+times\b"),
    ),
)
# "B = 10000" counts only next to a resampling word, and never next to a batch.  It
# is matched on the text ("B", not "b"); the look-behind after the "B" lets the
# search jump from one "B" to the next.
_B_COUNT = re.compile(rf"B(?<![\w.]B)\s*=\s*{_count('[kKM]')}(?![\w.])")
_RESAMPLING_WORD = re.compile(rf"resampl|permut|sign[\s-]?flip|shuffl|{_MC}\b")
_BATCH_WORD = re.compile(r"\bbatch")
# "all 256 sign flips", "2^8 = 256 permutations", "exhaustive enumeration of 256 ...": exact, not resampled.
_EXACT_BEFORE = re.compile(
    r"(?:\b(?:all|every|each|full|complete|exhaustive(?:ly)?|exact|enumerat\w*)(?:\s+(?:one|of|the))*"
    r"|(?:\^|\*\*)\s*\d+\s*=)\s*$"
)
_EXACT_CLAUSE = re.compile(r"enumerat|exhaustiv")
# Every spelling above holds one of these (B = 10000 only with a resampling
# word near): text without any states no resample count, and most prose has
# none, so a few substring tests spare the costly passes.
_ANY_RESAMPLE_WORD = ("resampl", "perm", "shuffl", "flip", "carlo", "mc")
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


def _stated_exact(folded: str, start: int, end: int) -> bool:
    """The count at ``folded[start:end]`` is an exact enumeration ("all 256 sign patterns")."""
    if _EXACT_BEFORE.search(folded, max(0, start - 30), start):
        return True
    clause_start = last_break(CLAUSE_BREAK, folded, max(0, start - CLAUSE_WINDOW), start)
    clause_end = first_break(CLAUSE_BREAK, folded, end, min(len(folded), end + CLAUSE_WINDOW // 2))
    return bool(_EXACT_CLAUSE.search(folded, clause_start, clause_end))


def _holds_any(folded: str, words: tuple[str, ...]) -> bool:
    return any(word in folded for word in words)


def _spellings(folded: str) -> Iterator[re.Pattern[str]]:
    """The spellings that may match ``folded``: those whose words it holds."""
    if _holds_any(folded, _NOUN_WORDS) or _HYPHENATED_SINGULAR.search(folded):
        yield _COUNT_BEFORE_NOUN
    for words, pattern in _RESAMPLE_COUNTS:
        if _holds_any(folded, words):
            yield pattern


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
    folded = fold(text)
    if not _holds_any(folded, _ANY_RESAMPLE_WORD):
        return []
    found: list[tuple[int, int]] = []
    for pattern in _spellings(folded):
        for m in islice(pattern.finditer(folded), MAX_RESAMPLE_MATCHES):
            start = m.start("count")
            count = _parse_count(text[start : m.end("count")])
            if count is not None and not _stated_exact(folded, start, m.end()):
                found.append((start, count))
    for m in islice(_B_COUNT.finditer(text), MAX_RESAMPLE_MATCHES):
        count = _parse_count(m.group("count"))
        if count is None:
            continue
        start = last_break(SENTENCE_BREAK, folded, max(0, m.start() - 60), m.start())
        end = first_break(SENTENCE_BREAK, folded, m.end(), min(len(text), m.end() + 30))
        if _RESAMPLING_WORD.search(folded, start, end) and not _BATCH_WORD.search(folded, start, end):
            found.append((m.start("count"), count))
    out: list[int] = []
    for _, count in sorted(found):
        if count not in out:
            out.append(count)
    return out


def stated_resample_counts(texts: Iterable[str], max_chars: int) -> tuple[int, ...]:
    """The distinct resample counts ``texts`` state, in order, reading at most ``max_chars`` characters of them.

    Each text is read by :func:`extract_resample_counts`, cut to what is left of ``max_chars``.
    """
    counts: dict[int, None] = {}
    for text in texts:
        if max_chars <= 0:
            break
        counts.update(dict.fromkeys(extract_resample_counts(text, max_chars)))
        max_chars -= len(text)
    return tuple(counts)


# Words that say a test drew its sign patterns at random rather than enumerating them.  "Permutation"
# alone does not: the bench calls its exact test a paired permutation test.
_RANDOMIZED = re.compile(
    rf"\b(?:{_MC})\b|\bresampl|\brandom(?:ly|ized|ised)?\s+(?:\w+\s+)?(?:sign|permut|shuffl|flip|draw|resampl)"
    r"|\b(?:approximate|sampled|randomi[sz]ation)\s+(?:\w+\s+)?(?:permut|sign|p\b|p-value|test)"
)


# The clause must be about the test's p ("MC dropout", "bootstrap resamples for the CI" are not) and not
# deny the draws ("no Monte-Carlo approximation").
_ABOUT_THE_TEST = re.compile(r"\bp\b|p[-_\s]?values?\b|sign[\s-]?flip|permutation|significan")
_NOT_THE_TEST = re.compile(r"\b(?:no|not|without|bootstrap\w*|dropout|confidence|ci)\b")


def says_randomized(texts: Iterable[str], max_chars: int) -> bool:
    """Whether ``texts`` (read up to ``max_chars`` characters) say the p-value came from random draws
    ("a Monte-Carlo p", "p from 10k random sign flips") in one clause; an enumerated test is not randomized."""
    read = fold("\n".join(text[:max_chars] for text in texts)[:max_chars])
    for m in islice(_RANDOMIZED.finditer(read), MAX_RESAMPLE_MATCHES):
        start = last_break(CLAUSE_BREAK, read, max(0, m.start() - CLAUSE_WINDOW), m.start())
        end = first_break(CLAUSE_BREAK, read, m.end(), min(len(read), m.end() + CLAUSE_WINDOW))
        clause = read[start:end]
        if (
            _ABOUT_THE_TEST.search(clause)
            and not _NOT_THE_TEST.search(clause)
            and not _stated_exact(read, m.start(), m.end())
        ):
            return True
    return False
