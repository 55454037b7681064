"""p-values, win counts, mean paired differences and "from A to B" means quoted in prose.

:func:`extract_claims` gathers these and the relative changes of
:mod:`.relative` into one :class:`ProseClaims`.  Claims are NamedTuples: every
number an audit reads becomes one, and a NamedTuple is built in a fraction of
the time of a frozen dataclass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from auditor.prose.numbers import (
    NUM,
    Reported,
    capped,
    clause_after,
    clause_before,
    followed_by_percent,
    parse_number,
)
from auditor.prose.relative import RelativeChangeClaim, relative_changes
from auditor.prose.scanning import fold, matches_at, positions

# The patterns are in lower case and run on fold(text) (see .scanning); what a
# claim quotes is read from the text at the match's span.
_P_VALUE = re.compile(
    # "p" before its look-behind, so that the search jumps from one "p" to the next
    r"p(?<![\w.]p)(?:[\s_-]?values?)?(?![\w-])\s*"
    r"(?P<rel><=|>=|=<|=>|≤|≥|⩽|⩾|==?|<|>|≈|~|:|of|was|is|equals)\s*"
    rf"(?P<num>{NUM})"
)
# Win counts, each spelling tried only where a word it holds puts it (see _win_matches).
_WIN_TAIL = r"\s+(?:paired\s+)?(?:seeds?\s+)?(?:wins?|won)\b"
# "7/8 wins", "7/8 paired seeds won": at the digits before a _FRACTION_TAIL.
_FRACTION_TAIL = re.compile(rf"/\s*(?P<n>\d+){_WIN_TAIL}")
_FRACTION_WINS = re.compile(rf"(?<![\w./])(?P<w>\d+)\s*{_FRACTION_TAIL.pattern}")
# "idea_wins=7/8", "wins: 7": at, or 4 or 5 characters before, a "win" where _NAMED_TAIL matches.
_NAMED_TAIL = re.compile(r"wins?\s*[=:]\s*\d")
_NAMED_WINS = re.compile(r"\b(?:idea[_\s]?)?wins?\s*[=:]\s*(?P<w>\d+)(?:\s*/\s*(?P<n>\d+))?")
# "wins 7 of 8", "won on 7/8 seeds": at a "win" or a "won".
_WINS_OF = re.compile(r"\b(?:wins?|won)\s+(?:on\s+|in\s+)?(?P<w>\d+)\s*(?:/|of|out\s+of)\s*(?P<n>\d+)")
# "7 of 8 wins", "7 out of 8 seeds won": searched for only in text that holds an _OF_TAIL.
_OF_TAIL = re.compile(rf"of\s+(?P<n>\d+){_WIN_TAIL}")
_OF_WINS = re.compile(rf"(?<![\w./])(?P<w>\d+)\s+(?:of|out\s+of)\s+(?P<n>\d+){_WIN_TAIL}")
_DELTA = re.compile(
    r"\b(?:delta[_\s]?mean|mean[_\s](?:paired[_\s])?(?:delta|diff(?:erence)?)"
    r"|paired[_\s](?:delta|diff(?:erence)?)(?:[_\s]mean)?)\b\s*"
    r"(?:[=:≈~]|of|was|is|equals)?\s*"
    rf"(?P<num>{NUM})"
)
_FROM_TO = re.compile(rf"from(?<!\wfrom)\s+(?P<a>{NUM})\s*(?:to|->|→)\s*(?P<b>{NUM})")
# Words that make a quoted p a threshold or a condition, not a result.
_THRESHOLD_WORDS = re.compile(
    r"\b(?:criteri(?:on|a)|thresholds?|alpha|cut-?off|significance\s+level"
    r"|requires?|required|if|unless|must|needs?)\b|α"
)
# Words that make a "mean delta" a parameter of the mechanism, not the result.
_PARAMETER_WORDS = re.compile(
    r"\b(?:target|expected|predicted|hypothesi[sz]ed|minimum|required|threshold|detectable)\s*$"
)
# A "from A to B" clause naming one of these describes a hyperparameter change.
_HYPERPARAMETER_WORDS = re.compile(
    r"\b(?:lr|learning[\s_-]?rates?|epochs?|batch(?:es|[\s_-]?sizes?)?|depths?|widths?|steps?|seeds?"
    r"|thresholds?|warm[\s_-]?up|weight[\s_-]?decay|wd|dropout|layers?|hidden|heads?|momentum|temperature)\b"
)


class PValueClaim(NamedTuple):
    text: str
    span: tuple[int, int]
    relation: str  # "=", "<", "<=", ">", ">="
    reported: Reported

    def consistent_with(self, actual: float) -> bool:
        """An equality must round to ``actual``; an inequality must hold for it."""
        relation = self.relation
        if relation == "=":  # nearly every claim: tested first
            return self.reported.consistent_with(actual)
        v = self.reported.value
        if relation == "<":
            return actual < v
        if relation == "<=":
            return actual <= v or self.reported.consistent_with(actual)
        if relation == ">":
            return actual > v
        if relation == ">=":
            return actual >= v or self.reported.consistent_with(actual)
        return self.reported.consistent_with(actual)


class WinsClaim(NamedTuple):
    text: str
    span: tuple[int, int]
    wins: int
    total: int | None  # None for "idea_wins=7"


class DeltaClaim(NamedTuple):
    text: str
    span: tuple[int, int]
    reported: Reported


class FromToClaim(NamedTuple):
    """``from A to B``: A is read as the baseline mean, B as the idea mean."""

    text: str
    span: tuple[int, int]
    start: Reported
    end: Reported


class ProseClaims(NamedTuple):
    p_values: list[PValueClaim]
    wins: list[WinsClaim]
    deltas: list[DeltaClaim]
    from_to: list[FromToClaim]
    relative_changes: list[RelativeChangeClaim]

    def __bool__(self) -> bool:
        return bool(self.p_values or self.wins or self.deltas or self.from_to or self.relative_changes)


_RELATIONS = {"<": "<", ">": ">", "<=": "<=", "=<": "<=", "≤": "<=", "⩽": "<="}
_RELATIONS.update({">=": ">=", "=>": ">=", "≥": ">=", "⩾": ">="})


def _number(m: re.Match[str], text: str) -> Reported | None:
    """The number of group "num" of ``m``, a match in the fold of ``text``; None for a percentage."""
    start, end = m.span("num")
    if followed_by_percent(text, end):
        return None
    return parse_number(text[start:end])


# A test for claims a caller would let pass: extract_claims leaves them out before reading their clause.
ClaimTest = Callable[[Any], bool]


def _p_values(text: str, folded: str, omit: ClaimTest | None = None) -> list[PValueClaim]:
    found = []
    for m in _P_VALUE.finditer(folded):
        reported = _number(m, text)
        if reported is None:
            continue
        start, end = m.span()
        # A relation in words ("of", "is") is not in _RELATIONS: it reads "=".
        claim = PValueClaim(text[start:end], (start, end), _RELATIONS.get(m.group("rel"), "="), reported)
        if (omit is None or not omit(claim)) and not _THRESHOLD_WORDS.search(clause_before(folded, start)):
            found.append(claim)
    return found


def _numbers_before(tail: re.Pattern[str], folded: str) -> list[int]:
    """Where the digits start that come, with only spaces after them, before each match of ``tail``.

    A fraction's look-behind keeps it from starting inside a number, so these
    are the only places a "7/8 wins" may start.
    """
    starts = []
    for m in tail.finditer(folded):
        i = m.start()
        while i and folded[i - 1].isspace():  # what \s matches
            i -= 1
        digits_end = i
        while i and folded[i - 1].isdecimal():  # what \d matches
            i -= 1
        if i < digits_end:
            starts.append(i)
    return starts


def _win_matches(folded: str) -> list[re.Match[str]]:
    """The matches of every win-count spelling, one spelling after the other."""
    found = []
    wins = positions(folded, "win")
    if "/" in folded:
        found += matches_at(_FRACTION_WINS, folded, _numbers_before(_FRACTION_TAIL, folded))
    named = {s for w in wins if _NAMED_TAIL.match(folded, w) for s in (w - 5, w - 4, w) if s >= 0}
    if named:
        found += matches_at(_NAMED_WINS, folded, sorted(named))
    won = positions(folded, "won")
    found += matches_at(_WINS_OF, folded, sorted(wins + won) if won else wins)
    if "of" in folded and _OF_TAIL.search(folded):
        found += _OF_WINS.finditer(folded)
    return found


def _wins(text: str, folded: str) -> list[WinsClaim]:
    if "win" not in folded and "won" not in folded:
        return []  # every spelling holds one of these
    found: list[WinsClaim] = []
    for m in _win_matches(folded):
        start, end = m.span()
        total = m.group("n")  # digits: folding left them as written
        found.append(WinsClaim(text[start:end], (start, end), int(m.group("w")), int(total) if total else None))
    if len(found) < 2:
        return found  # nothing to order or to overlap
    found.sort(key=lambda c: (c.span[0], -c.span[1]))
    out: list[WinsClaim] = []
    for claim in found:
        if out and claim.span[0] < out[-1].span[1]:
            continue  # overlaps an earlier, longer match of the same words
        out.append(claim)
    return out


def _deltas(text: str, folded: str, omit: ClaimTest | None = None) -> list[DeltaClaim]:
    found = []
    for m in _DELTA.finditer(folded):
        reported = _number(m, text)
        if reported is None:
            continue
        start, end = m.span()
        claim = DeltaClaim(text[start:end], (start, end), reported)
        if (omit is None or not omit(claim)) and not _PARAMETER_WORDS.search(folded[max(0, start - 30) : start]):
            found.append(claim)
    return found


def _from_to(text: str, folded: str, omit: ClaimTest | None = None) -> list[FromToClaim]:
    if "from" not in folded:
        return []  # the word every match holds
    found = []
    for m in _FROM_TO.finditer(folded):
        a_start, a_end = m.span("a")
        span = m.span()
        if followed_by_percent(text, a_end) or followed_by_percent(text, span[1]):
            continue
        start = parse_number(text[a_start:a_end])
        end = parse_number(text[m.start("b") : span[1]])
        if start is None or end is None:
            continue
        claim = FromToClaim(text[span[0] : span[1]], span, start, end)
        if omit is not None and omit(claim):
            continue
        clause = clause_before(folded, m.start()) + " " + clause_after(folded, m.end())
        if not _HYPERPARAMETER_WORDS.search(clause):
            found.append(claim)
    return found


def extract_p_values(text: str, max_chars: int | None = None) -> list[PValueClaim]:
    """p-values quoted as results; thresholds ("criterion p < 0.05", "if p < alpha") are skipped."""
    text = capped(text, max_chars)
    return _p_values(text, fold(text))


def extract_wins(text: str, max_chars: int | None = None) -> list[WinsClaim]:
    """Win counts, optionally out of a total; overlapping spellings are reported once."""
    text = capped(text, max_chars)
    return _wins(text, fold(text))


def extract_deltas(text: str, max_chars: int | None = None) -> list[DeltaClaim]:
    """Mean paired differences in their qualified spellings; "target ..." parameters are skipped."""
    text = capped(text, max_chars)
    return _deltas(text, fold(text))


def extract_from_to(text: str, max_chars: int | None = None) -> list[FromToClaim]:
    """``from A to B`` pairs whose clause does not name a hyperparameter."""
    text = capped(text, max_chars)
    return _from_to(text, fold(text))


def extract_claims(
    text: str, max_chars: int | None = None, *, context: str = "", omit: ClaimTest | None = None
) -> ProseClaims:
    """Every numeric claim of the five kinds in ``text`` (at most ``max_chars`` scanned).

    ``context`` (a metrics key, say) is passed to :func:`extract_relative_changes`.
    ``omit`` is a test for p-value, delta and from-to claims the caller would let
    pass (those the report agrees with): they are left out before the costly
    reading of their clause for threshold, parameter or hyperparameter words.
    """
    if not isinstance(text, str):
        return ProseClaims([], [], [], [], [])
    text = capped(text, max_chars)
    folded = fold(text)
    return ProseClaims(
        _p_values(text, folded, omit),
        _wins(text, folded),
        _deltas(text, folded, omit),
        _from_to(text, folded, omit),
        relative_changes(text, folded, context),
    )
