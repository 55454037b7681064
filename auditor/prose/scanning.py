"""Scanning prose fast: case-insensitive patterns without re.IGNORECASE, and matching where a word puts a claim.

With re.IGNORECASE, Python's regex engine cannot jump to the first letter of a
pattern: it tries the pattern at every position of the text, which made prose
scanning the costliest part of an audit.  :func:`fold` maps a text to lower
case, one character for one, so that a lower-case pattern run without the flag
on the folded text matches exactly where the pattern matches the text with the
flag: ASCII letters become lower case, and the four non-ASCII letters that the
flag equates with ASCII ones become those (``İ ı`` -> ``i``, ``K`` -> ``k``,
``ſ`` -> ``s``); every character keeps its class (``\\w``, ``\\d``, ``\\s``).
A pattern that starts with a literal is then searched for by that literal.

The prose patterns are written in lower case and run on folded text.  Folded
text is for finding: what a claim quotes is read from the text itself at the
match's span, with its capitals and exponent letters as written.

A pattern that starts with no literal (a number, a choice of words) is still
tried at every position; :func:`matches_at` tries it only where a word that
every match holds says a match may start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# The letters outside ASCII that re.IGNORECASE equates with an ASCII letter.
_NON_ASCII_FOLDS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u212a": "k", "\u017f": "s"})


def fold(text: str) -> str:
    """``text`` in lower case, as long as ``text``, for lower-case patterns that stand for IGNORECASE ones.

    str.lower lengthens only "İ" (to "i" and a combining dot), which is mapped first.
    """
    if text.isascii():
        return text.lower()
    return text.translate(_NON_ASCII_FOLDS).lower()


def matches_at(pattern: re.Pattern[str], text: str, starts: Iterable[int]) -> list[re.Match[str]]:
    """What ``pattern.finditer(text)`` finds, given every position a match may start at, in increasing order.

    ``pattern`` must not match the empty string.  Like finditer, a match
    that starts inside the previous one is not tried.
    """
    found: list[re.Match[str]] = []
    end = 0
    for start in starts:
        if start >= end:
            m = pattern.match(text, start)
            if m is not None:
                found.append(m)
                end = m.end()
    return found


def positions(text: str, word: str) -> list[int]:
    """Where ``word`` starts in ``text``, in increasing order."""
    found = []
    start = text.find(word)
    while start >= 0:
        found.append(start)
        start = text.find(word, start + 1)
    return found
