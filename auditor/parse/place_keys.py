"""Placing pointers by searching for their quoted keys, in an answer without a backslash.

Without a backslash every quote opens or closes a string, so a key's quoted text occurs only
where that key is written or in a string equal to it; an occurrence that is not the only one
after its object's "{" is told apart by jumping over whole strings and containers in the
answer's shape (:func:`~auditor.parse.decoder.shape_of`), in C.  :mod:`auditor.parse.locate`
tries this first and walks the answer (:mod:`auditor.parse.place_walk`) when it cannot.
"""

from __future__ import annotations

import functools
import re

from auditor.parse.decoder import SHAPE_CLOSE, SHAPE_OPEN, shape_of
from auditor.parse.place_walk import Malformed, Placer, PointerNode

# A container of the shape (decoder.shape_of: "{[" are "\n", "}]" are "\r", quotes kept) nested at
# most this deep, its strings jumped over whole: deeper ones leave the answer to the walk.
MAX_SHAPE_NESTING = 16
# The colon after a key and the blanks around it.
_COLON = re.compile(r"[ \t\r\n]*:[ \t\r\n]*")
# A token of a pointer that cannot be found by searching for its quoted text: one that
# needs an escape, or is empty or starts like what may follow a string ('"a", "b"' holds '", "').
UNFINDABLE_KEY = re.compile(r'/(?:$|[/ \t\r\n,:\]}])|["\\\x00-\x1f]')
_OPEN, _CLOSE = SHAPE_OPEN[0], SHAPE_CLOSE[0]


@functools.cache
def _shape_patterns() -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """(a container, what lies between two members of one container): regular expressions over a
    shape without backslashes, where a string is a quote, anything but a quote, and a quote.

    Compiled on first use: a clean answer places nothing.
    """
    container = rb'\n(?:[^"\n\r]++|"[^"]*+")*+\r'
    for _ in range(MAX_SHAPE_NESTING - 1):
        container = rb'\n(?:[^"\n\r]++|"[^"]*+"|' + container + rb")*+\r"
    return re.compile(container), re.compile(rb'(?:[^"\n\r]++|"[^"]*+"|' + container + rb")*+")


def place_by_keys(
    text: str, start: int, shape: bytes | None, document: object, root: PointerNode, found: dict[PointerNode, int]
) -> bool:
    """Place the trie at ``root``, whose keys can all be found by their text, in ``found`` by
    :class:`KeyPlacer`; False (``found`` then partial) when the answer holds a backslash, or nests
    too deeply where a key is looked for."""
    if not text.startswith("{", start):
        return False
    if shape is None:
        shape = shape_of(text[start:])
    if shape.find(b"\\") >= 0:
        return False
    try:
        KeyPlacer(text, start, shape).members(start, root, document, found)
    except (Malformed, ValueError, RecursionError):
        return False
    return True


class KeyPlacer:
    """Places members by searching for their quoted keys, in an answer without a backslash.

    Without a backslash every quote opens or closes a string, so a key's quoted
    text occurs only where that key is written, or a string equal to it.  An
    occurrence that is the only one after its object's "{" is the member, when
    the decoded document says the object has it.  Any other is told apart in the
    answer's shape (:func:`~auditor.parse.decoder.shape_of`, one byte per character):
    the text from the object's "{" up to it must be strings, scalars and whole
    containers, each jumped over by one regular expression in C.
    """

    __slots__ = ("end", "shape", "start", "text")

    def __init__(self, text: str, start: int, shape: bytes) -> None:
        self.text, self.start, self.shape = text, start, shape
        self.end = start + len(shape)  # the answer's end when the decoder made the shape, else the text's

    def members(self, opener: int, node: PointerNode, value: object, found: dict[PointerNode, int]) -> None:
        """Place the requested members of the object whose "{" is at ``opener``; ``value`` is its
        decoded value when known (a dict), else None."""
        text = self.text
        known = value if isinstance(value, dict) else None
        for key, child in node.children.items():
            if known is not None and key not in known:
                continue  # the answer lacks it: its parent is the nearest place
            at = self.member(opener, key, known is not None)
            if at is None:
                continue
            found[child] = at
            if child.children:
                char = text[at]
                if char == "{":
                    self.members(at, child, known[key] if known is not None else None, found)
                elif char == "[":
                    Placer(text, found).array(at, child)

    def member(self, opener: int, key: str, present: bool) -> int | None:
        """Where the value of the last member ``key`` of the object at ``opener`` starts; None if the
        object has none.  ``present``: the decoded object has it."""
        text, start, shape, end = self.text, self.start, self.shape, self.end
        quoted = f'"{key}"'
        at = text.find(quoted, opener + 1, end)
        if present and at >= 0 and text.find(quoted, at + len(quoted), end) < 0:
            colon = _COLON.match(text, at + len(quoted))  # the only occurrence after the "{": the member
            if colon is None:
                raise Malformed(at)
            return colon.end()
        container, between = _shape_patterns()
        value, pos = None, opener + 1
        while at >= 0:
            gap = between.match(shape, pos - start, at - start)
            assert gap is not None  # the pattern matches the empty string
            reached = gap.end() + start
            if reached == at:  # a string among the object's own members: a key if a colon follows
                pos = at + len(quoted)
                colon = _COLON.match(text, pos)
                if colon is not None:
                    value = colon.end()  # the last of duplicate keys wins
            else:
                mark = shape[reached - start]
                if mark == _CLOSE:
                    break  # the object ends before this occurrence
                if mark != _OPEN:
                    raise Malformed(reached)  # a string around a quote: impossible without backslashes
                inner = container.match(shape, reached - start)
                if inner is None:
                    raise Malformed(reached)  # nested too deeply for the pattern
                pos = inner.end() + start  # the occurrence is inside this member's value
            at = text.find(quoted, pos, end)
        if present and value is None:
            raise Malformed(opener)  # the decoder saw the member; the text must hold it
        return value
