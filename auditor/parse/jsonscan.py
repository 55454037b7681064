"""A linear-time scanner for JSON objects embedded in text.

:func:`scan_objects` pairs every ``{`` of a text with the bracket that closes
it and measures the nesting depth inside, in one pass, so that callers can
refuse too-deep objects before :mod:`json` recurses into them and never try a
start position twice; its work is capped at :data:`MAX_SCAN_EVENTS` brackets
and strings.  The strict decoder the spans are decoded with is
:mod:`auditor.parse.decoder`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BRACKET_OR_QUOTE = re.compile(r'[{}\[\]"]')
_OPENER = re.compile(r"[{\[]")
# The rest of a JSON string after its opening quote.  JSON strings cannot hold a
# raw newline, so a quote that does not close on its own line is prose (an inch
# mark, an apostrophe-like quote) and must not swallow the brackets after it.
_STRING_TAIL = re.compile(r'(?:[^"\\\n]|\\.)*+"')
_BRACKET = re.compile(r"[{}\[\]]")
# From inside a bracket to the next bracket, or to a quote that does not close
# on its line, jumping over whole strings (as _STRING_TAIL reads them): one
# match per bracket, all in the regex engine.  Possessive, so linear.
_TO_NEXT_BRACKET = re.compile(r'(?:[^{}\[\]"]++|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+")*+[{}\[\]"]')
_JSON_LOOKING = re.compile(r'\{\s*(?:["}]|\Z)')


def looks_like_json(text: str, start: int) -> bool:
    """``{`` at ``start`` is followed by a key, ``}``, or the end of the text."""
    return _JSON_LOOKING.match(text, start) is not None


@dataclass(slots=True)
class ObjectSpan:
    """A ``{`` and how far it reaches.

    ``end`` is the index of the bracket that closed it (its own ``}``, or a
    mismatched ``]``), or None when it is still open at the end of the text.
    ``depth`` is the nesting depth of everything inside, itself included.
    """

    start: int
    end: int | None = None
    depth: int = 1


# Most brackets and strings one scan looks at (a limit against hostile input):
# the scan costs one to three microseconds per event, so no input takes more
# than about a second to search.  Real answers hold a few hundred; an answer
# with 10,000 per-seed values holds no more, because numbers are not events.
MAX_SCAN_EVENTS = 500_000


class ScanLimitExceeded(Exception):
    """The text holds more brackets and strings than :data:`MAX_SCAN_EVENTS`."""

    def __init__(self, offset: int, limit: int) -> None:
        super().__init__(f"more than {limit} brackets and strings before offset {offset}")
        self.offset = offset
        self.limit = limit


def scan_objects(text: str, *, max_events: int | None = None) -> list[ObjectSpan]:
    """Every ``{`` of ``text`` with its extent and nesting depth, in text order.

    One pass over the brackets and quotes; each bracket is pushed and popped
    once, so the cost is linear even for 100k nested ``{``.  Quotes count only
    inside a bracket (prose quotes at top level are ignored), and a quote that
    cannot close on its line is treated as prose.  A string is jumped over in
    one step, whatever it holds.  More than ``max_events`` brackets and strings
    raise :class:`ScanLimitExceeded`, so the work is bounded for any input.
    """
    limit = len(text) + 1 if max_events is None else max_events
    # Every event is a bracket or a quote of the text, so when the text has no
    # more of them than the limit allows, the limit cannot be hit and the fast
    # scan (which does not count) finds the same spans.
    if len(text) <= limit or sum(map(text.count, '{}[]"')) <= limit:
        return _scan_uncounted(text)
    return _scan_counted(text, limit)


def _scan_counted(text: str, limit: int) -> list[ObjectSpan]:
    """:func:`scan_objects` one bracket or string at a time, counting them against ``limit``."""
    stack = _Brackets()
    quotes_dead_until = -1  # quotes before this index cannot open a string
    events = 0
    pos = 0
    while True:
        # Outside every bracket only an opener matters: prose quotes and stray
        # closers are skipped by the regex engine, not one by one here.
        match = (_BRACKET_OR_QUOTE if stack.brackets else _OPENER).search(text, pos)
        if match is None:
            break
        i = match.start()
        pos = i + 1
        events += 1
        if events > limit:
            raise ScanLimitExceeded(i, limit)
        char = text[i]
        if char == '"':
            if i < quotes_dead_until:
                continue
            tail = _STRING_TAIL.match(text, pos)
            if tail is not None:
                pos = tail.end()
            else:
                newline = text.find("\n", i)
                quotes_dead_until = len(text) if newline < 0 else newline
        else:
            stack.bracket(char, i)
    return stack.finish()


def _scan_uncounted(text: str) -> list[ObjectSpan]:
    """:func:`scan_objects` without the event count: strings and other text are
    jumped over by the regex engine, so Python steps once per bracket only."""
    stack = _Brackets()
    quotes_dead_until = -1  # quotes before this index cannot open a string
    pos = 0
    while True:
        if not stack.brackets:
            match = _OPENER.search(text, pos)
        elif pos < quotes_dead_until:  # after a quote that cannot close: brackets only, to the line end
            match = _BRACKET.search(text, pos, quotes_dead_until)
            if match is None:
                pos = quotes_dead_until
                continue
        else:
            match = _TO_NEXT_BRACKET.match(text, pos)
        if match is None:
            break
        i = match.end() - 1
        pos = i + 1
        char = text[i]
        if char == '"':  # it cannot close on its line: prose
            newline = text.find("\n", i)
            quotes_dead_until = len(text) if newline < 0 else newline
        else:
            stack.bracket(char, i)
    return stack.finish()


class _Brackets:
    """The open brackets of a scan: parallel stacks of the bracket, the deepest
    nesting below it so far, and its span (None for ``[``), plus every span made."""

    __slots__ = ("brackets", "child_depths", "open_count", "open_spans", "spans")

    def __init__(self) -> None:
        self.spans: list[ObjectSpan] = []
        self.brackets: list[str] = []
        self.child_depths: list[int] = []
        self.open_spans: list[ObjectSpan | None] = []
        self.open_count = {"{": 0, "[": 0}

    def bracket(self, char: str, i: int) -> None:
        """An opener or closer at offset ``i``."""
        if char == "{" or char == "[":
            span = ObjectSpan(i) if char == "{" else None
            if span is not None:
                self.spans.append(span)
            self.brackets.append(char)
            self.child_depths.append(0)
            self.open_spans.append(span)
            self.open_count[char] += 1
            return
        opener = "{" if char == "}" else "["
        if self.open_count[opener] == 0:
            return  # a stray closer in prose
        closed = ""
        while closed != opener:  # brackets left open inside close with it
            closed = self._pop(end=i)

    def finish(self) -> list[ObjectSpan]:
        """The spans, with every bracket still open closed at the end of the text (``end`` None)."""
        while self.brackets:
            self._pop(end=None)
        return self.spans

    def _pop(self, *, end: int | None) -> str:
        bracket = self.brackets.pop()
        depth = self.child_depths.pop() + 1
        span = self.open_spans.pop()
        self.open_count[bracket] -= 1
        if self.child_depths and self.child_depths[-1] < depth:
            self.child_depths[-1] = depth
        if span is not None:
            span.end, span.depth = end, depth
        return bracket


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text`` (CRLF counts as one line end)."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


class KeyIndex:
    """Whether a string (a quoted key) occurs inside a span, for spans visited in text order.

    Keeps the next occurrence of each key at or after the last span start, so
    all questions about one text together cost one pass per key.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.next: dict[str, int] = {}

    def occurs(self, key: str, start: int, stop: int) -> bool:
        position = self.next.get(key, -1)
        if position < start:
            position = self.text.find(key, start)
            position = len(self.text) + 1 if position < 0 else position
            self.next[key] = position
        return position + len(key) <= stop
