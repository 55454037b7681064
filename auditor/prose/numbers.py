"""Numbers as prose writes them, and the clause around them.

A number written with k decimals is consistent with every value that rounds
to it (statcheck's rule): ``|x - v| <= 0.5 * 10**-k``.  The clause helpers
find where the words about a number begin and end.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

# Long numbers ("-0.008685469627380371") are float reprs: their last digits
# are noise, so they also match within this relative tolerance.
LONG_NUMBER_RTOL = 1e-6

# A number as agents write it: "-0.0087", ".05", "1.5e-3", "2×10^-4" ("−" is U+2212).
NUM = r"[-−+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-−+]?\d+|\s?[×x]\s?10\^?[-−+]?\d+)?"
# The same, with groups: mantissa, its decimals (two spellings), exponent (two spellings).
_MANTISSA_EXPONENT = re.compile(r"([-−+]?(?:\d+(?:\.(\d+))?|\.(\d+)))(?:[eE]([-−+]?\d+)|\s?[×x]\s?10\^?([-−+]?\d+))?")
_SIGNS = ("-", "−", "+")
# Half a unit in the last digit of a plain decimal with k decimals, for the k prose writes.
_HALF_UNITS = tuple(0.5 * 10.0**-decimals for decimals in range(24))

# A clause ends at these marks; "." only when followed by space (not a decimal point).
CLAUSE_BREAK = re.compile(r"[,;:()\[\]\n]|\.\s")
# A text up to the end of its last clause break: found from the end, so in the
# time of the words after it.
_THROUGH_LAST_BREAK = re.compile(rf".*(?:{CLAUSE_BREAK.pattern})", re.DOTALL)
CLAUSE_WINDOW = 100
_CONJUNCTION = r"\b(?:and|but|while|whilst|whereas|although|though|yet)\b"
# The wide context of a claim ends at a sentence or a conjunction; the narrow
# one also at a comma, colon or bracket.  Both are searched on folded text (.scanning).
SENTENCE_BREAK = re.compile(rf"[;\n]|\.\s|{_CONJUNCTION}")
NARROW_BREAK = re.compile(rf"[,;:()\[\]\n]|\.\s|{_CONJUNCTION}")


class Reported(NamedTuple):
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
        return diff <= self.half_unit + slack or diff <= LONG_NUMBER_RTOL * max(abs(actual), abs(self.value))


def parse_number(text: str) -> Reported | None:
    """``"1.5e-3"`` -> Reported(0.0015, half_unit=5e-5); None when ``text`` is not a number."""
    text = text.strip()
    # Plain decimals ("0.01475", "-3", ".05"), nearly every number prose quotes,
    # are read without the pattern: what it would find, with no exponent.
    body = text[1:] if text[:1] in _SIGNS else text
    whole, point, fraction = body.partition(".")
    if (whole.isdecimal() or (point and not whole)) and (fraction.isdecimal() or not point):
        value = float(text.replace("−", "-"))
        decimals = len(fraction)
        half_unit = _HALF_UNITS[decimals] if decimals < len(_HALF_UNITS) else 0.5 * 10.0**-decimals
        return Reported(text, value, half_unit) if math.isfinite(value) else None
    m = _MANTISSA_EXPONENT.fullmatch(text)
    if m is None:
        return None
    mantissa, decimals_a, decimals_b, exp_e, exp_times = m.groups()
    decimals = len(decimals_a or decimals_b or "")
    written_exponent = exp_e or exp_times
    exponent = int(written_exponent.replace("−", "-")) if written_exponent else 0
    try:
        value = float(mantissa.replace("−", "-")) * 10.0**exponent
    except OverflowError:
        return None
    if not math.isfinite(value):
        return None
    return Reported(text, value, 0.5 * 10.0 ** (exponent - decimals))


def capped(text: str, max_chars: int | None) -> str:
    return text if max_chars is None else text[:max_chars]


def clause_before(text: str, start: int) -> str:
    """The words before ``start`` back to the previous clause break."""
    window = text[max(0, start - CLAUSE_WINDOW) : start]
    through_break = _THROUGH_LAST_BREAK.match(window)
    return window[through_break.end() :] if through_break else window


def clause_after(text: str, end: int) -> str:
    """The words after ``end`` up to the next clause break."""
    window = text[end : end + CLAUSE_WINDOW // 2]
    next_break = CLAUSE_BREAK.search(window)
    return window[: next_break.start()] if next_break else window


def followed_by_percent(text: str, end: int) -> bool:
    """Percentages are in other units than the report's numbers; they are not compared."""
    return text[end : end + 2].lstrip().startswith("%")


def last_break(pattern: re.Pattern[str], text: str, start: int, end: int) -> int:
    """Where the last match of ``pattern`` in ``text[start:end]`` ends (``start`` when none)."""
    position = start
    for m in pattern.finditer(text, start, end):
        position = m.end()
    return position


def first_break(pattern: re.Pattern[str], text: str, start: int, end: int) -> int:
    m = pattern.search(text, start, end)
    return m.start() if m else end
