"""A linear-time scanner for JSON objects embedded in text, and a strict decoder.

:func:`scan_objects` pairs every ``{`` of a text with the bracket that closes
it and measures the nesting depth inside, in one pass, so that callers can
refuse too-deep objects before :mod:`json` recurses into them and never try a
start position twice.  :func:`make_decoder` builds a :class:`json.JSONDecoder`
that turns the numbers JSON has no finite value for (``NaN``, ``Infinity``,
``1e999``, integers of hundreds of digits) into :class:`NonFinite` stand-ins,
which :func:`replace_nonfinite` then swaps for None, recording their pointers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .model import join_pointer

_BRACKET_OR_QUOTE = re.compile(r'[{}\[\]"]')
# The rest of a JSON string after its opening quote.  JSON strings cannot hold a
# raw newline, so a quote that does not close on its own line is prose (an inch
# mark, an apostrophe-like quote) and must not swallow the brackets after it.
_STRING_TAIL = re.compile(r'(?:[^"\\\n]|\\.)*+"')
_JSON_LOOKING = re.compile(r'\{\s*(?:["}]|\Z)')


def looks_like_json(text: str, start: int) -> bool:
    """``{`` at ``start`` is followed by a key, ``}``, or the end of the text."""
    return _JSON_LOOKING.match(text, start) is not None


@dataclass
class ObjectSpan:
    """A ``{`` and how far it reaches.

    ``end`` is the index of the bracket that closed it (its own ``}``, or a
    mismatched ``]``), or None when it is still open at the end of the text.
    ``depth`` is the nesting depth of everything inside, itself included.
    """

    start: int
    end: int | None = None
    depth: int = 1


def scan_objects(text: str) -> list[ObjectSpan]:
    """Every ``{`` of ``text`` with its extent and nesting depth, in text order.

    One pass over the brackets and quotes; each bracket is pushed and popped
    once, so the cost is linear even for 100k nested ``{``.  Quotes count only
    inside a bracket (prose quotes at top level are ignored), and a quote that
    cannot close on its line is treated as prose.
    """
    spans: list[ObjectSpan] = []
    # Parallel stacks: the open bracket, the deepest nesting below it so far,
    # and its span (None for "[").
    brackets: list[str] = []
    child_depths: list[int] = []
    open_spans: list[ObjectSpan | None] = []
    open_count = {"{": 0, "[": 0}
    skip_to = 0  # end of the last string jumped over
    quotes_dead_until = -1  # quotes before this index cannot open a string
    for match in _BRACKET_OR_QUOTE.finditer(text):
        i = match.start()
        if i < skip_to:
            continue  # inside a string
        char = match.group()
        if char == '"':
            if not brackets or i < quotes_dead_until:
                continue
            tail = _STRING_TAIL.match(text, i + 1)
            if tail is not None:
                skip_to = tail.end()
            else:
                newline = text.find("\n", i)
                quotes_dead_until = len(text) if newline < 0 else newline
        elif char == "{" or char == "[":
            span = ObjectSpan(i) if char == "{" else None
            if span is not None:
                spans.append(span)
            brackets.append(char)
            child_depths.append(0)
            open_spans.append(span)
            open_count[char] += 1
        else:
            opener = "{" if char == "}" else "["
            if open_count[opener] == 0:
                continue  # a stray closer in prose
            closed = ""
            while closed != opener:  # brackets left open inside close with it
                closed = _pop(brackets, child_depths, open_spans, open_count, end=i)
    while brackets:
        _pop(brackets, child_depths, open_spans, open_count, end=None)
    return spans


def _pop(
    brackets: list[str],
    child_depths: list[int],
    open_spans: list[ObjectSpan | None],
    open_count: dict[str, int],
    *,
    end: int | None,
) -> str:
    bracket = brackets.pop()
    depth = child_depths.pop() + 1
    span = open_spans.pop()
    open_count[bracket] -= 1
    if child_depths and child_depths[-1] < depth:
        child_depths[-1] = depth
    if span is not None:
        span.end, span.depth = end, depth
    return bracket


class NonFinite:
    """Stands in for a number that has no finite double value."""

    __slots__ = ("literal", "description")

    def __init__(self, literal: str, description: str) -> None:
        self.literal = literal
        self.description = description


def make_decoder(created: list[int]) -> json.JSONDecoder:
    """A decoder that turns non-finite numbers into :class:`NonFinite`.

    ``created[0]`` counts them, so that documents without any are not walked.
    """

    def non_finite(literal: str, description: str) -> NonFinite:
        created[0] += 1
        return NonFinite(literal, description)

    def parse_constant(text: str) -> NonFinite:  # NaN, Infinity, -Infinity
        return non_finite(text, f"{text} (not a JSON number)")

    def parse_float(text: str) -> float | NonFinite:
        value = float(text)
        if value in (_INF, -_INF):
            return non_finite(_shorten(text), f"{_shorten(text)} (overflows a 64-bit float to infinity)")
        return value

    def parse_int(text: str) -> int | NonFinite:
        # int() refuses more than 4300 digits, and past ~309 digits a value
        # overflows the doubles the statistics are computed in anyway.
        if len(text) <= _MAX_INT_CHARS:
            value = int(text)
            try:
                float(value)
                return value
            except OverflowError:
                pass
        digits = len(text.lstrip("-"))
        return non_finite(_shorten(text), f"an integer of {digits} digits (overflows a 64-bit float to infinity)")

    return json.JSONDecoder(parse_float=parse_float, parse_int=parse_int, parse_constant=parse_constant)


_INF = float("inf")
_MAX_INT_CHARS = 400


def _shorten(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def replace_nonfinite(value: Any) -> list[tuple[str, NonFinite]]:
    """Replace stand-ins by None in place; (pointer, stand-in) in document order."""
    found: list[tuple[str, NonFinite]] = []
    stack: list[tuple[Any, Any, str]] = [(_entries(value), value, "")]
    while stack:
        entries, container, pointer = stack[-1]
        step = next(entries, None)
        if step is None:
            stack.pop()
            continue
        key, item = step
        if isinstance(item, NonFinite):
            found.append((join_pointer(pointer, key), item))
            container[key] = None  # same key: safe while iterating
        elif isinstance(item, (dict, list)):
            stack.append((_entries(item), item, join_pointer(pointer, key)))
    return found


def _entries(container: dict | list) -> Any:
    return iter(container.items()) if isinstance(container, dict) else enumerate(container)


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text`` (CRLF counts as one line end)."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1
