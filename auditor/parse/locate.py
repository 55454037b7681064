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
answer's shape, in C (:mod:`auditor.parse.place_keys`).  Other answers are walked
once (:mod:`auditor.parse.place_walk`):
only the branches that lead to a requested pointer are followed key by key;
every other value is jumped over bracket by bracket (numbers cost nothing),
so an answer with 10,000 per-seed values costs a few jumps.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from auditor.findings import Finding
from auditor.parse.place_keys import UNFINDABLE_KEY, place_by_keys
from auditor.parse.place_walk import Malformed, Placer, PointerNode

# Where a pointer is placed when the transcript has no answer to point into.
START_OF_FILE = (1, 1)


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


def _trie(pointers: Iterable[str]) -> tuple[PointerNode, dict[str, list[PointerNode]]]:
    """The trie of ``pointers``, and the nodes of each pointer from the root down."""
    root = PointerNode()
    paths = {}
    for pointer in pointers:
        node, path = root, [root]
        for token in split_pointer(pointer) or []:
            child = node.children.get(token)
            if child is None:
                child = node.children[token] = PointerNode()
            node = child
            path.append(node)
        paths[pointer] = path
    return root, paths


def value_offsets(
    text: str, start: int, pointers: Iterable[str], shape: bytes | None = None, document: object = None
) -> dict[str, int]:
    """Offset in ``text`` of the value each pointer names, for the answer that starts at ``start``
    (whose text has this ``shape`` when the decoder made one, see :func:`~auditor.parse.decoder.shape_of`,
    and decodes to ``document`` when given: it spares searches; None when not known).

    A pointer to something the answer lacks gets the offset of its nearest
    existing parent; one that is not a pointer at all that of the answer.
    """
    trie = _trie_of(pointers)
    root = trie.root
    found = {root: start}
    if root.children and not (trie.findable and place_by_keys(text, start, shape, document, root, found)):
        found = {}
        try:
            Placer(text, found).value(start, root)
        except (Malformed, ValueError, RecursionError):
            pass  # keep what was placed; the rest falls back to a parent, at worst the answer's start
        found.setdefault(root, start)
    return {pointer: _nearest(found, path) for pointer, path in trie.paths.items()}


class _Trie(NamedTuple):
    """The trie of one set of pointers, as :func:`value_offsets` walks it."""

    root: PointerNode
    paths: dict[str, list[PointerNode]]  # the nodes of each pointer, from the root down
    findable: bool  # every key can be found by searching for its quoted text (see UNFINDABLE_KEY)


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
        trie = _Trie(root, paths, not any(map(UNFINDABLE_KEY.search, wanted)))
        if sum(map(len, wanted)) <= _MAX_CACHED_CHARS:
            if len(_TRIES) >= _MAX_TRIES:
                _TRIES.clear()
            _TRIES[wanted] = trie
    return trie


def _nearest(found: dict[PointerNode, int], path: list[PointerNode]) -> int:
    """The offset of the value at the end of ``path``, or of its deepest ancestor that the answer has."""
    offset = found[path[0]]
    for node in path[1:]:
        if node not in found:
            break
        offset = found[node]
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
