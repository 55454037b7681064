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
  :func:`auditor.parse.jsonscan.line_column`); columns are 1-based and count
  characters (code points), not bytes.

All the pointers of one transcript are placed together.  Most answers hold
no backslash; then a requested key is found by searching for its quoted
text, and an occurrence that is not the only one after its object's "{" is
told apart by jumping over the whole strings and containers before it in the
answer's shape, in C (:class:`_KeyPlacer`).  Other answers are walked once:
only the branches that lead to a requested pointer are followed key by key;
every other value is jumped over bracket by bracket (numbers cost nothing),
so an answer with 10,000 per-seed values costs a few jumps.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import NamedTuple

from auditor.findings import Finding
from auditor.parse.jsonscan import (
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


def value_offsets(
    text: str, start: int, pointers: Iterable[str], shape: bytes | None = None, document: object = None
) -> dict[str, int]:
    """Offset in ``text`` of the value each pointer names, for the answer that starts at ``start``
    (whose text has this ``shape`` when the decoder made one, see :func:`~auditor.parse.jsonscan.shape_of`,
    and decodes to ``document`` when given: it spares searches; None when not known).

    A pointer to something the answer lacks gets the offset of its nearest
    existing parent; one that is not a pointer at all that of the answer.
    """
    trie = _trie_of(pointers)
    root = trie.root
    found = {root: start}
    if root.children and not (trie.findable and _place_by_keys(text, start, shape, document, root, found)):
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


# --------------------------------------------------------------------------- placing by keys

# A container of the shape (jsonscan.shape_of: "{[" are "\n", "}]" are "\r", quotes kept) nested at
# most this deep, its strings jumped over whole: deeper ones leave the answer to the walk.
_MAX_SHAPE_NESTING = 16
# The colon after a key and the blanks around it.
_COLON = re.compile(r"[ \t\r\n]*:[ \t\r\n]*")
# A token of a pointer that cannot be found by searching for its quoted text: one that
# needs an escape, or is empty or starts like what may follow a string ('"a", "b"' holds '", "').
_UNFINDABLE_KEY = re.compile(r'/(?:$|[/ \t\r\n,:\]}])|["\\\x00-\x1f]')
_OPEN, _CLOSE = SHAPE_OPEN[0], SHAPE_CLOSE[0]


@functools.cache
def _shape_patterns() -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """(a container, what lies between two members of one container): regular expressions over a
    shape without backslashes, where a string is a quote, anything but a quote, and a quote.

    Compiled on first use: a clean answer places nothing.
    """
    container = rb'\n(?:[^"\n\r]++|"[^"]*+")*+\r'
    for _ in range(_MAX_SHAPE_NESTING - 1):
        container = rb'\n(?:[^"\n\r]++|"[^"]*+"|' + container + rb")*+\r"
    return re.compile(container), re.compile(rb'(?:[^"\n\r]++|"[^"]*+"|' + container + rb")*+")


def _place_by_keys(
    text: str, start: int, shape: bytes | None, document: object, root: _Node, found: dict[_Node, int]
) -> bool:
    """Place the trie at ``root``, whose keys can all be found by their text, in ``found`` by
    :class:`_KeyPlacer`; False (``found`` then partial) when the answer holds a backslash, or nests
    too deeply where a key is looked for."""
    if not text.startswith("{", start):
        return False
    if shape is None:
        shape = shape_of(text[start:])
    if shape.find(b"\\") >= 0:
        return False
    try:
        _KeyPlacer(text, start, shape).members(start, root, document, found)
    except (_Malformed, ValueError, RecursionError):
        return False
    return True


class _KeyPlacer:
    """Places members by searching for their quoted keys, in an answer without a backslash.

    Without a backslash every quote opens or closes a string, so a key's quoted
    text occurs only where that key is written, or a string equal to it.  An
    occurrence that is the only one after its object's "{" is the member, when
    the decoded document says the object has it.  Any other is told apart in the
    answer's shape (:func:`~auditor.parse.jsonscan.shape_of`, one byte per character):
    the text from the object's "{" up to it must be strings, scalars and whole
    containers, each jumped over by one regular expression in C.
    """

    __slots__ = ("end", "shape", "start", "text")

    def __init__(self, text: str, start: int, shape: bytes) -> None:
        self.text, self.start, self.shape = text, start, shape
        self.end = start + len(shape)  # the answer's end when the decoder made the shape, else the text's

    def members(self, opener: int, node: _Node, value: object, found: dict[_Node, int]) -> None:
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
                    _Placer(text, found).array(at, child)

    def member(self, opener: int, key: str, present: bool) -> int | None:
        """Where the value of the last member ``key`` of the object at ``opener`` starts; None if the
        object has none.  ``present``: the decoded object has it."""
        text, start, shape, end = self.text, self.start, self.shape, self.end
        quoted = f'"{key}"'
        at = text.find(quoted, opener + 1, end)
        if present and at >= 0 and text.find(quoted, at + len(quoted), end) < 0:
            colon = _COLON.match(text, at + len(quoted))  # the only occurrence after the "{": the member
            if colon is None:
                raise _Malformed(at)
            return colon.end()
        container, between = _shape_patterns()
        value, pos = None, opener + 1
        while at >= 0:
            reached = between.match(shape, pos - start, at - start).end() + start
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
                    raise _Malformed(reached)  # a string around a quote: impossible without backslashes
                inner = container.match(shape, reached - start)
                if inner is None:
                    raise _Malformed(reached)  # nested too deeply for the pattern
                pos = inner.end() + start  # the occurrence is inside this member's value
            at = text.find(quoted, pos, end)
        if present and value is None:
            raise _Malformed(opener)  # the decoder saw the member; the text must hold it
        return value


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
    text: str | None,
    start: int | None,
    pointers: Iterable[str],
    shape: bytes | None = None,
    document: object = None,
) -> dict[str, tuple[int, int]]:
    """(line, column) of each pointer's value in ``text``; :data:`START_OF_FILE` for all without an answer.

    ``shape`` and ``document`` are the answer's, when known (:func:`value_offsets`).
    """
    wanted = list(pointers)
    if text is None or start is None:
        return {pointer: START_OF_FILE for pointer in wanted}
    offsets = value_offsets(text, start, wanted, shape, document)
    positions = line_columns(text, offsets.values())
    return {pointer: positions[offset] for pointer, offset in offsets.items()}


def with_locations(
    findings: Iterable[Finding],
    text: str | None,
    start: int | None,
    shape: bytes | None = None,
    document: object = None,
) -> list[Finding]:
    """``findings`` with the line and column of their pointers in ``text`` (one pass for all;
    ``shape`` and ``document`` as for :func:`pointer_locations`)."""
    findings = list(findings)
    if not findings:  # a clean answer: no trie, no scan
        return findings
    places = pointer_locations(text, start, {f.pointer for f in findings}, shape, document)
    return [f.at(*places[f.pointer]) for f in findings]
