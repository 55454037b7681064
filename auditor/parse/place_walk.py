"""Placing pointers by walking the answer's JSON text once: the general way, for any answer.

Only the branches that lead to a requested pointer (a node of the trie :mod:`auditor.parse.locate`
builds) are followed key by key; every other value is jumped over bracket by bracket, so an
answer with 10,000 per-seed values costs a few jumps.
"""

from __future__ import annotations

import json
import re

from auditor.parse.decoder import LONE_SURROGATE

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


class PointerNode:
    """One step of the requested pointers: a trie keyed by unescaped reference tokens.

    Nodes are told apart by identity: they key the offsets found for them.
    """

    __slots__ = ("children",)

    def __init__(self) -> None:
        self.children: dict[str, PointerNode] = {}


class Malformed(Exception):
    """The text is not the JSON the decoder accepted (a wrong start offset): stop placing."""


class Placer:
    """Walks the answer's text once, recording where the value of every trie node starts."""

    def __init__(self, text: str, found: dict[PointerNode, int]) -> None:
        self.text = text
        self.found = found

    def value(self, pos: int, node: PointerNode | None) -> int:
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

    def forget(self, node: PointerNode) -> None:
        pending = [node]
        while pending:
            current = pending.pop()
            self.found.pop(current, None)
            pending.extend(current.children.values())

    def object(self, pos: int, node: PointerNode) -> int:
        pos = self.blank(pos + 1)
        if self.text.startswith("}", pos):
            return pos + 1
        while True:
            member = _MEMBER.match(self.text, pos)
            if member is None:
                raise Malformed(pos)
            pos = self.value(member.end(), node.children.get(_decode_key(member.group(1))))
            pos = self.after_item(pos, "}")
            if pos < 0:
                return -pos

    def array(self, pos: int, node: PointerNode) -> int:
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
            raise Malformed(pos)
        if delimiter.group(1) == ",":
            return delimiter.end()
        if delimiter.group(1) == closer:
            return -delimiter.start(1) - 1
        raise Malformed(pos)

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
            raise Malformed(pos)
        return match.end()

    def skip_container(self, pos: int) -> int:
        depth = 0
        while True:
            match = _TO_NEXT_BRACKET.match(self.text, pos)
            if match is None:
                raise Malformed(pos)
            pos = match.end()
            char = self.text[pos - 1]
            if char == '"':
                raise Malformed(pos - 1)
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
