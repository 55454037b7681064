"""Numeric claims quoted in free prose, and rounding-aware comparison.

Agents repeat their headline numbers in prose ("p=0.01475 and 7/8 wins",
"MSE improved from 10.93094 to 10.92225").  These pure functions find four
kinds of claim in a string:

* p-values: ``p=0.01475``, ``p_value=...``, ``p-value of 0.03``, ``p < 0.05``,
  ``p≤0.05``, ``p = 1.0``, ``p=1.5e-3``;
* win fractions: ``7/8 wins``, ``idea_wins=7/8``, ``wins 7 of 8``;
* the mean paired difference: ``delta_mean=-0.0087``, ``mean delta ...``,
  ``paired delta 0.0`` -- only these qualified spellings, because a bare
  "delta" is often a mechanism parameter ("target delta=0.02" in seed 000);
* ``from A to B`` mean pairs (baseline mean, then idea mean), unless the
  clause names a hyperparameter ("lr from 0.001 to 0.006").

A number written with k decimals is consistent with every value that rounds
to it (statcheck's rule): ``|x - v| <= 0.5 * 10**-k``.  Every regex is linear
in the input (no nested quantifiers) and the scanned text is capped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

# Long numbers ("-0.008685469627380371") are float reprs: their last digits
# are noise, so they also match within this relative tolerance.
LONG_NUMBER_RTOL = 1e-6

# A number as agents write it: "-0.0087", ".05", "1.5e-3", "2×10^-4" ("−" is U+2212).
_NUM = r"[-−+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-−+]?\d+|\s?[×x]\s?10\^?[-−+]?\d+)?"
# The same, with groups: mantissa, its decimals (two spellings), exponent (two spellings).
_MANTISSA_EXPONENT = re.compile(
    r"([-−+]?(?:\d+(?:\.(\d+))?|\.(\d+)))(?:[eE]([-−+]?\d+)|\s?[×x]\s?10\^?([-−+]?\d+))?"
)

_P_VALUE = re.compile(
    r"(?<![\w.])p(?:[\s_-]?values?)?(?![\w-])\s*"
    r"(?P<rel><=|>=|=<|=>|≤|≥|==?|<|>|≈|~|:|of|was|is|equals)\s*"
    rf"(?P<num>{_NUM})",
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
_DELTA = re.compile(
    r"\b(?:delta[_\s]?mean|mean[_\s](?:paired[_\s])?(?:delta|diff(?:erence)?)"
    r"|paired[_\s](?:delta|diff(?:erence)?)(?:[_\s]mean)?)\b\s*"
    r"(?:[=:≈~]|of|was|is|equals)?\s*"
    rf"(?P<num>{_NUM})",
    re.IGNORECASE,
)
_FROM_TO = re.compile(
    rf"\bfrom\s+(?P<a>{_NUM})\s*(?:to|->|→)\s*(?P<b>{_NUM})",
    re.IGNORECASE,
)

# A clause ends at these marks; "." only when followed by space (not a decimal point).
_CLAUSE_BREAK = re.compile(r"[,;:()\[\]\n]|\.\s")
_CLAUSE_WINDOW = 100
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
class Reported:
    """A number as written in prose, with the rounding its digits imply."""

    text: str
    value: float
    # Half a unit in the last written digit: 5e-6 for "10.93094".
    half_unit: float

    def consistent_with(self, actual: float) -> bool:
        """True when ``actual`` rounds to the written number (or matches a long one closely)."""
        if not math.isfinite(actual):
            return False
        diff = abs(actual - self.value)
        slack = 1e-9 * self.half_unit + 1e-15 * max(1.0, abs(self.value))  # float noise at exact halves
        if diff <= self.half_unit + slack:
            return True
        return diff <= LONG_NUMBER_RTOL * max(abs(actual), abs(self.value))


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

    def __bool__(self) -> bool:
        return bool(self.p_values or self.wins or self.deltas or self.from_to)


def parse_number(text: str) -> Reported | None:
    """``"1.5e-3"`` -> Reported(0.0015, half_unit=5e-5); None when ``text`` is not a number."""
    m = _MANTISSA_EXPONENT.fullmatch(text.strip())
    if m is None:
        return None
    mantissa, decimals_a, decimals_b, exp_e, exp_times = m.groups()
    decimals = len(decimals_a or decimals_b or "")
    exponent = int((exp_e or exp_times or "0").replace("−", "-"))
    try:
        value = float(mantissa.replace("−", "-")) * 10.0**exponent
    except OverflowError:
        return None
    if not math.isfinite(value):
        return None
    return Reported(text.strip(), value, 0.5 * 10.0 ** (exponent - decimals))


def _capped(text: str, max_chars: int | None) -> str:
    return text if max_chars is None else text[:max_chars]


def _clause_before(text: str, start: int) -> str:
    """The words before ``start`` back to the previous clause break."""
    window = text[max(0, start - _CLAUSE_WINDOW) : start]
    pieces = _CLAUSE_BREAK.split(window)
    return pieces[-1]


def _clause_after(text: str, end: int) -> str:
    window = text[end : end + _CLAUSE_WINDOW // 2]
    return _CLAUSE_BREAK.split(window)[0]


def _followed_by_percent(text: str, end: int) -> bool:
    """Percentages are in other units than the report's numbers; they are not compared."""
    return text[end : end + 2].lstrip().startswith("%")


_RELATIONS = {"<": "<", ">": ">", "<=": "<=", "=<": "<=", "≤": "<=", ">=": ">=", "=>": ">=", "≥": ">="}


def extract_p_values(text: str, max_chars: int | None = None) -> list[PValueClaim]:
    """p-values quoted as results; thresholds ("criterion p < 0.05", "if p < alpha") are skipped."""
    text = _capped(text, max_chars)
    out = []
    for m in _P_VALUE.finditer(text):
        reported = parse_number(m.group("num"))
        if reported is None or _followed_by_percent(text, m.end()):
            continue
        if _THRESHOLD_WORDS.search(_clause_before(text, m.start())):
            continue
        relation = _RELATIONS.get(m.group("rel").lower(), "=")
        out.append(PValueClaim(m.group(0), m.span(), relation, reported))
    return out


def extract_wins(text: str, max_chars: int | None = None) -> list[WinsClaim]:
    """Win counts, optionally out of a total; overlapping spellings are reported once."""
    text = _capped(text, max_chars)
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
    text = _capped(text, max_chars)
    out = []
    for m in _DELTA.finditer(text):
        reported = parse_number(m.group("num"))
        if reported is None or _followed_by_percent(text, m.end()):
            continue
        if _PARAMETER_WORDS.search(text[max(0, m.start() - 30) : m.start()]):
            continue
        out.append(DeltaClaim(m.group(0), m.span(), reported))
    return out


def extract_from_to(text: str, max_chars: int | None = None) -> list[FromToClaim]:
    """``from A to B`` pairs whose clause does not name a hyperparameter."""
    text = _capped(text, max_chars)
    out = []
    for m in _FROM_TO.finditer(text):
        start, end = parse_number(m.group("a")), parse_number(m.group("b"))
        if start is None or end is None:
            continue
        if _followed_by_percent(text, m.end("a")) or _followed_by_percent(text, m.end()):
            continue
        clause = _clause_before(text, m.start()) + " " + _clause_after(text, m.end())
        if _HYPERPARAMETER_WORDS.search(clause):
            continue
        out.append(FromToClaim(m.group(0), m.span(), start, end))
    return out


def extract_claims(text: str, max_chars: int | None = None) -> ProseClaims:
    """Every numeric claim of the four kinds in ``text`` (at most ``max_chars`` scanned)."""
    if not isinstance(text, str):
        return ProseClaims()
    text = _capped(text, max_chars)
    return ProseClaims(
        p_values=extract_p_values(text),
        wins=extract_wins(text),
        deltas=extract_deltas(text),
        from_to=extract_from_to(text),
    )
