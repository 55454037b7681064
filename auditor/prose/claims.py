"""p-values, win counts, mean paired differences and "from A to B" means quoted in prose.

:func:`extract_claims` gathers these and the relative changes of
:mod:`.relative` into one :class:`ProseClaims`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Iterator

from .numbers import (
    NUM,
    Reported,
    capped,
    clause_after,
    clause_before,
    followed_by_percent,
    parse_number,
)
from .relative import RelativeChangeClaim, extract_relative_changes

_P_VALUE = re.compile(
    r"(?<![\w.])p(?:[\s_-]?values?)?(?![\w-])\s*"
    r"(?P<rel><=|>=|=<|=>|≤|≥|⩽|⩾|==?|<|>|≈|~|:|of|was|is|equals)\s*"
    rf"(?P<num>{NUM})",
    re.IGNORECASE,
)
_WINS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # "7/8 wins", "7/8 paired seeds won"
        r"(?<![\w./])(?P<w>\d+)\s*/\s*(?P<n>\d+)\s+(?:paired\s+)?(?:seeds?\s+)?(?:wins?|won)\b",
        # "idea_wins=7/8", "wins: 7"
        r"\b(?:idea[_\s]?)?wins?\s*[=:]\s*(?P<w>\d+)(?:\s*/\s*(?P<n>\d+))?",
        # "wins 7 of 8", "won on 7/8 seeds"
        r"\b(?:wins?|won)\s+(?:on\s+|in\s+)?(?P<w>\d+)\s*(?:/|of|out\s+of)\s*(?P<n>\d+)",
        # "7 of 8 wins", "7 out of 8 seeds won"
        r"(?<![\w./])(?P<w>\d+)\s+(?:of|out\s+of)\s+(?P<n>\d+)\s+(?:paired\s+)?(?:seeds?\s+)?(?:wins?|won)\b",
    )
)
# Every spelling of _WINS holds "win" or "won" (IGNORECASE, like them): prose
# without either is not searched four times.
_ANY_WIN_WORD = re.compile(r"win|won", re.IGNORECASE)
_DELTA = re.compile(
    r"\b(?:delta[_\s]?mean|mean[_\s](?:paired[_\s])?(?:delta|diff(?:erence)?)"
    r"|paired[_\s](?:delta|diff(?:erence)?)(?:[_\s]mean)?)\b\s*"
    r"(?:[=:≈~]|of|was|is|equals)?\s*"
    rf"(?P<num>{NUM})",
    re.IGNORECASE,
)
_FROM_TO = re.compile(rf"\bfrom\s+(?P<a>{NUM})\s*(?:to|->|→)\s*(?P<b>{NUM})", re.IGNORECASE)
# Words that make a quoted p a threshold or a condition, not a result.
_THRESHOLD_WORDS = re.compile(
    r"\b(?:criteri(?:on|a)|thresholds?|alpha|cut-?off|significance\s+level"
    r"|requires?|required|if|unless|must|needs?)\b|α",
    re.IGNORECASE,
)
# Words that make a "mean delta" a parameter of the mechanism, not the result.
_PARAMETER_WORDS = re.compile(
    r"\b(?:target|expected|predicted|hypothesi[sz]ed|minimum|required|threshold|detectable)\s*$", re.IGNORECASE
)
# A "from A to B" clause naming one of these describes a hyperparameter change.
_HYPERPARAMETER_WORDS = re.compile(
    r"\b(?:lr|learning[\s_-]?rates?|epochs?|batch(?:es|[\s_-]?sizes?)?|depths?|widths?|steps?|seeds?"
    r"|thresholds?|warm[\s_-]?up|weight[\s_-]?decay|wd|dropout|layers?|hidden|heads?|momentum|temperature)\b",
    re.IGNORECASE,
)

@dataclass(frozen=True)
class PValueClaim:
    text: str
    span: tuple[int, int]
    relation: str  # "=", "<", "<=", ">", ">="
    reported: Reported

    def consistent_with(self, actual: float) -> bool:
        """An equality must round to ``actual``; an inequality must hold for it."""
        v = self.reported.value
        if self.relation == "<":
            return actual < v
        if self.relation == "<=":
            return actual <= v or self.reported.consistent_with(actual)
        if self.relation == ">":
            return actual > v
        if self.relation == ">=":
            return actual >= v or self.reported.consistent_with(actual)
        return self.reported.consistent_with(actual)


@dataclass(frozen=True)
class WinsClaim:
    text: str
    span: tuple[int, int]
    wins: int
    total: int | None  # None for "idea_wins=7"


@dataclass(frozen=True)
class DeltaClaim:
    text: str
    span: tuple[int, int]
    reported: Reported


@dataclass(frozen=True)
class FromToClaim:
    """``from A to B``: A is read as the baseline mean, B as the idea mean."""

    text: str
    span: tuple[int, int]
    start: Reported
    end: Reported


@dataclass(frozen=True)
class ProseClaims:
    p_values: list[PValueClaim] = field(default_factory=list)
    wins: list[WinsClaim] = field(default_factory=list)
    deltas: list[DeltaClaim] = field(default_factory=list)
    from_to: list[FromToClaim] = field(default_factory=list)
    relative_changes: list[RelativeChangeClaim] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.p_values or self.wins or self.deltas or self.from_to or self.relative_changes)

_RELATIONS = {"<": "<", ">": ">", "<=": "<=", "=<": "<=", "≤": "<=", "⩽": "<="}
_RELATIONS.update({">=": ">=", "=>": ">=", "≥": ">=", "⩾": ">="})


def _quoted_numbers(pattern: re.Pattern[str], text: str) -> Iterator[tuple[re.Match[str], Reported]]:
    """Matches of ``pattern`` whose group "num" is a number, and that number; percentages are skipped."""
    for m in pattern.finditer(text):
        reported = parse_number(m.group("num"))
        if reported is not None and not followed_by_percent(text, m.end()):
            yield m, reported


def extract_p_values(text: str, max_chars: int | None = None) -> list[PValueClaim]:
    """p-values quoted as results; thresholds ("criterion p < 0.05", "if p < alpha") are skipped."""
    text = capped(text, max_chars)
    return [
        PValueClaim(m.group(0), m.span(), _RELATIONS.get(m.group("rel").lower(), "="), reported)
        for m, reported in _quoted_numbers(_P_VALUE, text)
        if not _THRESHOLD_WORDS.search(clause_before(text, m.start()))
    ]


def extract_wins(text: str, max_chars: int | None = None) -> list[WinsClaim]:
    """Win counts, optionally out of a total; overlapping spellings are reported once."""
    text = capped(text, max_chars)
    if _ANY_WIN_WORD.search(text) is None:
        return []
    found: list[WinsClaim] = []
    for pattern in _WINS:
        for m in pattern.finditer(text):
            total = m.group("n")
            found.append(WinsClaim(m.group(0), m.span(), int(m.group("w")), int(total) if total else None))
    found.sort(key=lambda c: (c.span[0], -c.span[1]))
    out: list[WinsClaim] = []
    for claim in found:
        if out and claim.span[0] < out[-1].span[1]:
            continue  # overlaps an earlier, longer match of the same words
        out.append(claim)
    return out


def extract_deltas(text: str, max_chars: int | None = None) -> list[DeltaClaim]:
    """Mean paired differences in their qualified spellings; "target ..." parameters are skipped."""
    text = capped(text, max_chars)
    return [
        DeltaClaim(m.group(0), m.span(), reported)
        for m, reported in _quoted_numbers(_DELTA, text)
        if not _PARAMETER_WORDS.search(text[max(0, m.start() - 30) : m.start()])
    ]


def extract_from_to(text: str, max_chars: int | None = None) -> list[FromToClaim]:
    """``from A to B`` pairs whose clause does not name a hyperparameter."""
    text = capped(text, max_chars)
    out = []
    for m in _FROM_TO.finditer(text):
        start, end = parse_number(m.group("a")), parse_number(m.group("b"))
        if start is None or end is None:
            continue
        if followed_by_percent(text, m.end("a")) or followed_by_percent(text, m.end()):
            continue
        clause = clause_before(text, m.start()) + " " + clause_after(text, m.end())
        if _HYPERPARAMETER_WORDS.search(clause):
            continue
        out.append(FromToClaim(m.group(0), m.span(), start, end))
    return out

def extract_claims(text: str, max_chars: int | None = None, *, context: str = "") -> ProseClaims:
    """Every numeric claim of the five kinds in ``text`` (at most ``max_chars`` scanned).

    ``context`` (a metrics key, say) is passed to :func:`extract_relative_changes`.
    """
    if not isinstance(text, str):
        return ProseClaims()
    text = capped(text, max_chars)
    return ProseClaims(
        p_values=extract_p_values(text),
        wins=extract_wins(text),
        deltas=extract_deltas(text),
        from_to=extract_from_to(text),
        relative_changes=extract_relative_changes(text, context=context),
    )
