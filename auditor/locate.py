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

All the pointers of one transcript are placed together.  Most answers hold
no backslash and no bracket inside a string; then a few C-level passes over
the text find every bracket and how deep it nests, and a requested key is
found by searching for its quoted text, the brackets before it telling which
object it is a member of (:class:`_Brackets`).  Other answers are walked once:
only the branches that lead to a requested pointer are followed key by key;
every other value is jumped over bracket by bracket (numbers cost nothing),
so an answer with 10,000 per-seed values costs a few jumps.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate
from typing import NamedTuple

from .findings import Finding
from .jsonscan import (
    LONE_SURROGATE,
    SHAPE_CLOSE,
    SHAPE_OPEN,
    shape_of,
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


class _Node:
    """One step of the requested pointers: a trie keyed by unescaped reference tokens.

    Nodes are told apart by identity: they key the offsets found for them.
    """

    __slots__ = ("children",)

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}


class _Malformed(Exception):
    """The text is not the JSON the decoder accepted (a wrong start offset): stop placing."""


def split_pointer(pointer: str) -> list[str] | None:
    """The unescaped reference tokens of ``pointer`` (``~1`` is ``/``, ``~0`` is ``~``); None if it is no pointer."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        return None
    tokens = pointer[1:].split("/")
    if "~" not in pointer:
        return tokens
    return [token.replace("~1", "/").replace("~0", "~") for token in tokens]


def _trie(pointers: Iterable[str]) -> tuple[_Node, dict[str, list[_Node]]]:
    """The trie of ``pointers``, and the nodes of each pointer from the root down."""
    root = _Node()
    paths = {}
    for pointer in pointers:
        node, path = root, [root]
        for token in split_pointer(pointer) or []:
            child = node.children.get(token)
            if child is None:
                child = node.children[token] = _Node()
            node = child
            path.append(node)
        paths[pointer] = path
    return root, paths


class _Placer:
    """Walks the answer's text once, recording where the value of every trie node starts."""

    def __init__(self, text: str, found: dict[_Node, int]) -> None:
        self.text = text
        self.found = found

    def value(self, pos: int, node: _Node | None) -> int:
        """Place the value at ``pos`` (and, for ``node``, its requested descendants); return its end."""
        if node is None:
            return self.skip(pos)
        if node in self.found:  # a duplicate key: this later value replaces the whole earlier one
            self.forget(node)
        self.found[node] = pos
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
            self.found.pop(current, None)
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
        targets = iter(sorted(int(token) for token in node.children if token.isdecimal()))
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


def value_offsets(text: str, start: int, pointers: Iterable[str], shape: bytes | None = None) -> dict[str, int]:
    """Offset in ``text`` of the value each pointer names, for the answer that starts at ``start``
    (whose text has this ``shape`` when the decoder made one, see :func:`~auditor.jsonscan.shape_of`).

    A pointer to something the answer lacks gets the offset of its nearest
    existing parent; one that is not a pointer at all that of the answer.
    """
    trie = _trie_of(pointers)
    root = trie.root
    found = {root: start}
    if root.children and not (trie.findable and _place_by_brackets(text, start, shape, root, found)):
        found = {}
        try:
            _Placer(text, found).value(start, root)
        except (_Malformed, ValueError, RecursionError):
            pass  # keep what was placed; the rest falls back to a parent, at worst the answer's start
        found.setdefault(root, start)
    return {pointer: _nearest(found, path) for pointer, path in trie.paths.items()}


class _Trie(NamedTuple):
    """The trie of one set of pointers, as :func:`value_offsets` walks it."""

    root: _Node
    paths: dict[str, list[_Node]]  # the nodes of each pointer, from the root down
    findable: bool  # every key can be found by searching for its quoted text (see _UNFINDABLE_KEY)


# Tries of recent pointer sets, read only once built (placing keys offsets by node, in a dict of its
# own): a batch's findings sit at the same few pointers answer after answer.  Sets whose pointers
# are longer in all than _MAX_CACHED_CHARS are built each time, so the cache stays small.
_TRIES: dict[frozenset[str], _Trie] = {}
_MAX_TRIES = 256
_MAX_CACHED_CHARS = 4096


def _trie_of(pointers: Iterable[str]) -> _Trie:
    """The trie of ``pointers``, kept for the next answer whose findings sit at the same pointers."""
    wanted = frozenset(pointers)
    trie = _TRIES.get(wanted)
    if trie is None:
        root, paths = _trie(wanted)
        trie = _Trie(root, paths, not any(map(_UNFINDABLE_KEY.search, wanted)))
        if sum(map(len, wanted)) <= _MAX_CACHED_CHARS:
            if len(_TRIES) >= _MAX_TRIES:
                _TRIES.clear()
            _TRIES[wanted] = trie
    return trie


def _nearest(found: dict[_Node, int], path: list[_Node]) -> int:
    """The offset of the value at the end of ``path``, or of its deepest ancestor that the answer has."""
    offset = found[path[0]]
    for node in path[1:]:
        if node not in found:
            break
        offset = found[node]
    return offset


# --------------------------------------------------------------------------- placing by brackets

# What is not a bracket or a quote in a shape (jsonscan.shape_of), for _Brackets.of to delete.
_NEITHER_BRACKET_NOR_QUOTE = bytes(set(range(256)) - set(SHAPE_OPEN + SHAPE_CLOSE + b'"'))
_QUOTE = b'"'
_DEPTH_STEP = {SHAPE_OPEN[0]: 1, SHAPE_CLOSE[0]: -1}
# The colon after a key and the blanks around it.
_COLON = re.compile(r"[ \t\r\n]*:[ \t\r\n]*")
# A token of a pointer that cannot be found by searching for its quoted text: one that
# needs an escape, or is empty or starts like what may follow a string ('"a", "b"' holds '", "').
_UNFINDABLE_KEY = re.compile(r'/(?:$|[/ \t\r\n,:\]}])|["\\\x00-\x1f]')


def _place_by_brackets(text: str, start: int, shape: bytes | None, root: _Node, found: dict[_Node, int]) -> bool:
    """Place the trie at ``root``, whose keys can all be found by their text, in ``found`` by
    :class:`_Brackets`; False (``found`` then partial) when the answer's strings may mislead."""
    brackets = _Brackets.of(text, start, shape)
    if brackets is None:
        return False
    try:
        brackets.members(text, 0, root, found)
    except (_Malformed, ValueError, RecursionError):  # ValueError: an object never closed
        return False
    return True


class _Brackets:
    """Where each bracket of an answer is and how deeply it nests, when no string holds one.

    With no backslash in the answer, every quote opens or closes a string, a
    key needs no escape, and a key's quoted text occurs only where the key is
    written (or a string equal to it).  With no bracket inside a string, every
    bracket is one of the JSON text, so the brackets before an offset tell how
    deep it is.  Both are checked in a few C-level passes.
    """

    __slots__ = ("depths", "ends")

    def __init__(self, ends: list[int], depths: list[int]) -> None:
        self.ends = ends  # the offset just past each bracket in the text, in order
        self.depths = depths  # how many brackets are open just after each (the answer's "{" leaves 1)

    @classmethod
    def of(cls, text: str, start: int, shape: bytes | None = None) -> _Brackets | None:
        """The brackets from the answer at ``start`` on, read from ``shape`` (the answer's, or one
        made here of the text from ``start`` on); None if a backslash or a bracket in a string may mislead."""
        if not text.startswith("{", start):
            return None
        if shape is None:
            shape = shape_of(text[start:])
        if shape.find(b"\\") >= 0:
            return None
        # Quotes pair up in order; a string that holds a bracket leaves its quotes apart.
        brackets = shape.translate(None, _NEITHER_BRACKET_NOR_QUOTE).replace(_QUOTE * 2, b"")
        if brackets.find(_QUOTE) >= 0:
            return None
        # The shape's only line ends are its brackets, so each line ends just past one: an open
        # bracket is a "\n" and a close one a "\r", and outside strings JSON never writes a close
        # bracket right before an open one (splitlines would read "\r\n" as one line end).  Strings
        # holding brackets were refused above; text after the answer (in a shape made here) lies
        # past the answer's last bracket, beyond which no member is looked for.  A last line
        # without a bracket adds the text's end, which no bracket number reaches.
        ends = list(accumulate(map(len, shape.splitlines(keepends=True)), initial=start))[1:]
        return cls(ends, list(accumulate(map(_DEPTH_STEP.__getitem__, brackets))))

    def members(self, text: str, opener: int, node: _Node, found: dict[_Node, int]) -> None:
        """Place the requested members of the object whose "{" is bracket number ``opener``.

        A key's text is searched for; where it is deeper than the object's own
        members, the search goes on after the value that holds it.  The last of
        duplicate keys wins, as the walk decides.
        """
        ends, depths = self.ends, self.depths
        inside = depths[opener]
        closer = depths.index(inside - 1, opener)
        first, end = ends[opener], ends[closer] - 1
        for key, child in node.children.items():
            quoted = f'"{key}"'
            value = container = None
            pos = first
            while (at := text.find(quoted, pos, end)) >= 0:
                pos = at + len(quoted)
                following = bisect_right(ends, at, opener, closer)  # the first bracket after the key
                if depths[following - 1] != inside:  # inside a member's value: go on after it
                    pos = ends[depths.index(inside, following)]
                    continue
                colon = _COLON.match(text, pos)
                if colon is None:
                    continue  # a string value that reads like the key
                value = colon.end()
                container = following if ends[following] == value + 1 else None
                if container is not None:  # no need to search the value itself
                    pos = ends[depths.index(inside, container)]
            if value is None:
                continue
            found[child] = value
            if child.children and container is not None:
                if text[value] == "{":
                    self.members(text, container, child, found)
                else:
                    _Placer(text, found).array(value, child)


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


def pointer_locations(
    text: str | None, start: int | None, pointers: Iterable[str], shape: bytes | None = None
) -> dict[str, tuple[int, int]]:
    """(line, column) of each pointer's value in ``text``; :data:`START_OF_FILE` for all without an answer.

    ``shape`` is that of the answer's text, when the decoder made one (:func:`value_offsets`).
    """
    wanted = list(pointers)
    if text is None or start is None:
        return {pointer: START_OF_FILE for pointer in wanted}
    offsets = value_offsets(text, start, wanted, shape)
    positions = line_columns(text, offsets.values())
    return {pointer: positions[offset] for pointer, offset in offsets.items()}


def with_locations(
    findings: Iterable[Finding], text: str | None, start: int | None, shape: bytes | None = None
) -> list[Finding]:
    """``findings`` with the line and column of their pointers in ``text`` (one pass for all;
    ``shape`` as for :func:`pointer_locations`)."""
    findings = list(findings)
    if not findings:  # a clean answer: no trie, no scan
        return findings
    places = pointer_locations(text, start, {f.pointer for f in findings}, shape)
    return [f.at(*places[f.pointer]) for f in findings]
