"""Where a finding is in its transcript: the line and column of a JSON Pointer's value.

A finding names its place in the answer by an RFC 6901 pointer; editors, CI
annotations and SARIF viewers want a line and a column in the file.  This
module maps one to the other, in the transcript's own text (header, fence and
trailing prose included, CRLF line ends kept), starting from where the answer
object begins:

* a pointer is placed at the first character of its value (the ``{`` of an
  object, the ``"`` of a string, the first digit of a number);
* a member or an element the answer lacks is placed at its nearest existing
  parent (a schema finding for a missing key points at the object that lacks
  it), and ``""`` at the answer's ``{``;
* with duplicate keys the last one wins, as :func:`json.loads` decides;
* lines are 1-based and end at ``\\n`` (``\\r\\n`` is one line end, as in
  :func:`auditor.jsonscan.line_column`); columns are 1-based and count
  characters (code points), not bytes.

All the pointers of one transcript are placed in one pass over the answer's
text: only the branches that lead to a requested pointer are followed key by
key; every other value is jumped over bracket by bracket (numbers cost
nothing), so an answer with 10,000 per-seed values costs a few jumps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from .findings import Finding
from .jsonscan import (
    LONE_SURROGATE,
)

# Where a pointer is placed when the transcript has no answer to point into.
START_OF_FILE = (1, 1)

_WHITESPACE = re.compile(r"[ \t\r\n]*")
# A JSON string from its opening quote; possessive, so long strings cost one step each run.
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
# A number or a literal (true, NaN, -Infinity): everything up to the next delimiter.
_SCALAR = re.compile(r"[^,\]}\s]+")
# From inside a container to its next bracket, jumping over whole strings (as
# _STRING reads them) in the regex engine; it stops early at a quote that never closes.
_TO_NEXT_BRACKET = re.compile(r'(?:[^{}\[\]"]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+[{}\[\]"]', re.DOTALL)
# A member's key and its colon, and the delimiter after an item, each with the blanks around them.
_MEMBER = re.compile(r'("[^"\\]*+(?:\\.[^"\\]*+)*+")[ \t\r\n]*:[ \t\r\n]*', re.DOTALL)
# Larger than any array's length: no element is wanted any more.
_PAST_ANY_INDEX = 1 << 62
# Plain array items, each with its comma: no string, no container.
_SCALAR_RUN = re.compile(r'(?:[^,\[\]{}"]*+,)*+[ \t\r\n]*')
_DELIMITER = re.compile(r"[ \t\r\n]*([,\]}])[ \t\r\n]*")


@dataclass
class _Node:
    """One step of the requested pointers: a trie keyed by unescaped reference tokens."""

    pointer: str
    children: dict[str, _Node] = field(default_factory=dict)


class _Malformed(Exception):
    """The text is not the JSON the decoder accepted (a wrong start offset): stop placing."""


def split_pointer(pointer: str) -> list[str] | None:
    """The unescaped reference tokens of ``pointer`` (``~1`` is ``/``, ``~0`` is ``~``); None if it is no pointer."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        return None
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def _trie(pointers: Iterable[str]) -> _Node:
    root = _Node("")
    for pointer in pointers:
        node = root
        for token in split_pointer(pointer) or []:
            node = node.children.setdefault(token, _Node(f"{node.pointer}/{_escape(token)}"))
    return root


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class _Placer:
    """Walks the answer's text once, recording where the value of every trie node starts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: dict[str, int] = {}

    def value(self, pos: int, node: _Node | None) -> int:
        """Place the value at ``pos`` (and, for ``node``, its requested descendants); return its end."""
        if node is None:
            return self.skip(pos)
        if node.pointer in self.found:  # a duplicate key: this later value replaces the whole earlier one
            self.forget(node)
        self.found[node.pointer] = pos
        char = self.text[pos : pos + 1]
        if node.children and char == "{":
            return self.object(pos, node)
        if node.children and char == "[":
            return self.array(pos, node)
        return self.skip(pos)

    def forget(self, node: _Node) -> None:
        pending = [node]
        while pending:
            current = pending.pop()
            self.found.pop(current.pointer, None)
            pending.extend(current.children.values())

    def object(self, pos: int, node: _Node) -> int:
        pos = self.blank(pos + 1)
        if self.text.startswith("}", pos):
            return pos + 1
        while True:
            member = _MEMBER.match(self.text, pos)
            if member is None:
                raise _Malformed(pos)
            pos = self.value(member.end(), node.children.get(_decode_key(member.group(1))))
            pos = self.after_item(pos, "}")
            if pos < 0:
                return -pos

    def array(self, pos: int, node: _Node) -> int:
        pos = self.blank(pos + 1)
        if self.text.startswith("]", pos):
            return pos + 1
        targets = iter(sorted(int(token) for token in node.children if token.isdigit()))
        target = next(targets, _PAST_ANY_INDEX)
        index = 0
        while True:
            if index < target:
                pos, index = self.skip_numbers(pos, index, target)
            if index == target:
                target = next(targets, _PAST_ANY_INDEX)
            pos = self.value(pos, node.children.get(str(index)))
            index += 1
            pos = self.after_item(pos, "]")
            if pos < 0:
                return -pos

    def skip_numbers(self, pos: int, index: int, target: int) -> tuple[int, int]:
        """Jump over the run of plain items (numbers, literals) from ``index`` up to at most
        ``target``: per-seed arrays of thousands of values cost a few C-level scans."""
        end = _SCALAR_RUN.match(self.text, pos).end()  # type: ignore[union-attr]  # matches the empty string
        commas = self.text.count(",", pos, end)
        if commas <= target - index:
            return end, index + commas
        for _ in range(target - index):  # the run goes past the target: stop at the target's comma
            pos = self.text.index(",", pos) + 1
        return self.blank(pos), target

    def after_item(self, pos: int, closer: str) -> int:
        """The start of the next item after a ``,``, or minus the end of the container."""
        delimiter = _DELIMITER.match(self.text, pos)
        if delimiter is None:
            raise _Malformed(pos)
        if delimiter.group(1) == ",":
            return delimiter.end()
        if delimiter.group(1) == closer:
            return -delimiter.start(1) - 1
        raise _Malformed(pos)

    def skip(self, pos: int) -> int:
        """The end of the value at ``pos``, found without looking inside it beyond its brackets and strings."""
        char = self.text[pos : pos + 1]
        if char == '"':
            match = _STRING.match(self.text, pos)
        elif char in ("{", "["):
            return self.skip_container(pos)
        else:
            match = _SCALAR.match(self.text, pos)
        if match is None:
            raise _Malformed(pos)
        return match.end()

    def skip_container(self, pos: int) -> int:
        depth = 0
        while True:
            match = _TO_NEXT_BRACKET.match(self.text, pos)
            if match is None:
                raise _Malformed(pos)
            pos = match.end()
            char = self.text[pos - 1]
            if char == '"':
                raise _Malformed(pos - 1)
            depth += 1 if char in "{[" else -1
            if depth == 0:
                return pos

    def blank(self, pos: int) -> int:
        return _WHITESPACE.match(self.text, pos).end()  # type: ignore[union-attr]  # matches the empty string


def _decode_key(literal: str) -> str:
    if "\\" not in literal:
        return literal[1:-1]
    # As the transcript's decoder reads it: escapes decoded, lone surrogates as U+FFFD.
    return LONE_SURROGATE.sub("\ufffd", json.loads(literal))


def value_offsets(text: str, start: int, pointers: Iterable[str]) -> dict[str, int]:
    """Offset in ``text`` of the value each pointer names, for the answer that starts at ``start``.

    A pointer to something the answer lacks gets the offset of its nearest
    existing parent; one that is not a pointer at all that of the answer.
    """
    wanted = list(pointers)
    root = _trie(wanted)
    placer = _Placer(text)
    try:
        placer.value(start, root)
    except (_Malformed, ValueError, RecursionError):
        pass  # keep what was placed; the rest falls back to a parent, at worst the answer's start
    placer.found.setdefault("", start)
    return {pointer: _nearest(placer.found, root, pointer) for pointer in wanted}


def _nearest(found: dict[str, int], root: _Node, pointer: str) -> int:
    """The offset of ``pointer``'s value, or of its deepest ancestor that the answer has."""
    node, offset = root, found[""]
    for token in split_pointer(pointer) or []:
        node = node.children[token]
        if node.pointer not in found:
            break
        offset = found[node.pointer]
    return offset


def line_columns(text: str, offsets: Iterable[int]) -> dict[int, tuple[int, int]]:
    """1-based (line, column) of each offset, lines ending at ``\\n``, columns in characters.

    The offsets are visited in order and the text between two of them is
    searched once (in C, by :meth:`str.count`), so all of them cost one pass.
    """
    out = {}
    line, line_start, counted_to = 1, 0, 0
    for offset in sorted(set(offsets)):
        newlines = text.count("\n", counted_to, offset)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", counted_to, offset) + 1
        counted_to = offset
        out[offset] = (line, offset - line_start + 1)
    return out


def pointer_locations(text: str | None, start: int | None, pointers: Iterable[str]) -> dict[str, tuple[int, int]]:
    """(line, column) of each pointer's value in ``text``; :data:`START_OF_FILE` for all without an answer."""
    wanted = list(pointers)
    if text is None or start is None:
        return {pointer: START_OF_FILE for pointer in wanted}
    offsets = value_offsets(text, start, wanted)
    positions = line_columns(text, offsets.values())
    return {pointer: positions[offset] for pointer, offset in offsets.items()}


def with_locations(findings: Iterable[Finding], text: str | None, start: int | None) -> list[Finding]:
    """``findings`` with the line and column of their pointers in ``text`` (one pass for all)."""
    findings = list(findings)
    places = pointer_locations(text, start, {f.pointer for f in findings})
    return [replace(f, line=places[f.pointer][0], column=places[f.pointer][1]) for f in findings]
