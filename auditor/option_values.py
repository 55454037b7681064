"""The value rules of the options (:mod:`auditor.option_model`): one per kind of value.

A rule takes the raw value and whether it came from the command line (then a
string, which the number rules convert), and returns the value or raises
ValueError with the message for the user.  Where a rule checks a type, its
message is the one the options' former pydantic models gave ("Input should be
a valid string"), since users and scripts may match it.
"""

from __future__ import annotations

import sys
from typing import Any

from .findings import Severity

DEVICES = ("auto", "cpu", "cuda")




def as_number(raw: Any, from_cli: bool) -> float:
    if isinstance(raw, str) and from_cli:
        try:
            raw = float(raw)
        except ValueError:
            raise ValueError(f"expected a number, got {raw!r}") from None
    # Finite and within a float's range: NaN fails the comparison, and an int too large for float() is refused.
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not abs(raw) <= sys.float_info.max:
        raise ValueError(f"expected a number, got {raw!r}")
    return float(raw)


def as_probability(raw: Any, from_cli: bool) -> float:
    value = as_number(raw, from_cli)
    if not 0 < value < 1:
        raise ValueError(f"expected a number between 0 and 1, got {value:g}")
    return value


def as_positive(raw: Any, from_cli: bool) -> float:
    value = as_number(raw, from_cli)
    if value <= 0:
        raise ValueError(f"expected a positive number, got {value:g}")
    return value


def as_non_negative(raw: Any, from_cli: bool) -> float:
    value = as_number(raw, from_cli)
    if value < 0:
        raise ValueError(f"expected a non-negative number, got {value:g}")
    return value


def as_positive_int(raw: Any, from_cli: bool) -> int:
    if isinstance(raw, str) and from_cli:
        try:
            raw = int(raw.replace("_", ""))
        except ValueError:
            raise ValueError(f"expected a positive integer, got {raw!r}") from None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw <= 0:
        raise ValueError(f"expected a positive integer, got {raw!r}")
    return raw


def _string_list(raw: Any, what: str) -> tuple[str, ...]:
    """A list of strings or one string; every item splits on commas (``"A3,V4"``)."""
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) for item in items):
        raise ValueError(f"expected a list of {what}")
    return tuple(part.strip() for item in items for part in item.split(",") if part.strip())


def as_globs(raw: Any, from_cli: bool) -> tuple[str, ...]:
    return _string_list(raw, "glob patterns")


def suggest(word: str, known: list[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest known word, or nothing."""
    import difflib

    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_codes(codes: tuple[str, ...]) -> tuple[str, ...]:
    """Codes or prefixes that each select at least one registered rule ("ALL" selects every rule)."""
    from .findings import all_rules, matches

    registered = [rule.code for rule in all_rules()]
    for code in codes:
        if not any(matches(known, [code]) for known in registered):
            raise ValueError(f"unknown rule code or prefix {code!r}{suggest(code, registered)}; "
                             "`auditor rules` lists them")
    return codes


def as_codes(raw: Any, from_cli: bool) -> tuple[str, ...]:
    return check_codes(tuple(code.upper() for code in _string_list(raw, "rule codes or prefixes")))


def as_fail_on(raw: Any, from_cli: bool) -> str:
    choices = ("error", "warning", "info", "never")
    text = raw.strip().lower() if isinstance(raw, str) else raw
    if text not in choices:
        raise ValueError(f"expected one of {', '.join(choices)}, got {raw!r}")
    return text


def fail_on_severity(text: str) -> Severity | None:
    """``fail-on`` text to the lowest failing severity; None for "never"."""
    return None if text == "never" else Severity.parse(text)


def as_severity_table(raw: Any, from_cli: bool) -> dict[str, Severity]:
    from .findings import REGISTRY, load_rules

    if not isinstance(raw, dict):
        raise ValueError("expected a table of CODE = severity")
    load_rules()
    out = {}
    for code, level in raw.items():
        known = str(code).strip().upper()
        if known not in REGISTRY:
            raise ValueError(f"unknown rule {code!r}{suggest(known, sorted(REGISTRY))}")
        if not isinstance(level, str):
            raise ValueError(f"{code}: expected error, warning or info")
        out[known] = Severity.parse(level)
    return out


def as_per_file_ignores(raw: Any, from_cli: bool) -> dict[str, tuple[str, ...]]:
    if not isinstance(raw, dict) or not all(isinstance(glob, str) for glob in raw):
        raise ValueError("expected a table of glob = [codes]")
    return {glob: as_codes(codes, from_cli) for glob, codes in raw.items()}


def as_encoding(raw: Any, from_cli: bool) -> str:
    import codecs

    try:
        return codecs.lookup(str(raw)).name
    except LookupError:
        raise ValueError(f"unknown text encoding {raw!r}") from None


def as_details(raw: Any, from_cli: bool) -> str:
    text = str(raw).strip().lower()
    if text == "all" or (text.isdecimal() and int(text) >= 0):
        return text
    raise ValueError(f"expected a number or 'all', got {raw!r}")


def as_text(raw: Any, from_cli: bool) -> str:
    """A string (bytes are decoded as UTF-8)."""
    if isinstance(raw, (bytes, bytearray)):
        try:
            return raw.decode()
        except UnicodeDecodeError:
            raise ValueError("Input should be a valid string, unable to parse raw data as a unicode string") from None
    if not isinstance(raw, str):
        raise ValueError("Input should be a valid string")
    return raw


_SWITCH_WORDS = {"1": True, "on": True, "t": True, "true": True, "y": True, "yes": True,
                 "0": False, "off": False, "f": False, "false": False, "n": False, "no": False}


def as_switch(raw: Any, from_cli: bool) -> bool:
    """True or False; also 0 and 1, and the words of ``_SWITCH_WORDS`` in any case (as pydantic read a bool)."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, bytes):
        raw = raw.decode(errors="replace")
    if isinstance(raw, str) and raw.lower() in _SWITCH_WORDS:
        return _SWITCH_WORDS[raw.lower()]
    if isinstance(raw, (int, float)) and raw in (0, 1):
        return raw == 1
    if isinstance(raw, str) or (isinstance(raw, (int, float)) and -(2**63) <= raw < 2**63 and raw == int(raw)):
        raise ValueError("Input should be a valid boolean, unable to interpret input")  # a word or a 64-bit integer
    raise ValueError("Input should be a valid boolean")


def as_device(raw: Any, from_cli: bool) -> str:
    if isinstance(raw, str) and raw in DEVICES:
        return raw
    expected = f"{', '.join(map(repr, DEVICES[:-1]))} or {DEVICES[-1]!r}"
    raise ValueError(f"Input should be {expected}, got {raw!r}")
