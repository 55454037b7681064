"""The strict JSON decoder of answers: numbers with no finite value as stand-ins, lone surrogates replaced.

:func:`thread_decoder` gives a :class:`StrictDecoder` that turns the numbers JSON
has no finite value for (``NaN``, ``Infinity``, ``1e999``, integers of hundreds of
digits) into :class:`NonFinite` stand-ins, which :func:`replace_nonfinite` then
swaps for None, recording their pointers, and lone surrogates (``"\\ud800"``,
which no UTF-8 output can write) into U+FFFD.  Its shape of a decoded text
(:func:`shape_of`) lets :mod:`auditor.parse.locate` jump over strings and
containers; :func:`nesting_depth` and :func:`count_nodes` measure decoded values.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from auditor.parse.literals import PrintedFloat, from_literal, keep_claim_literals
from auditor.parse.pointers import join_pointer

# A number literal whose shortest repr may lose digits it printed: a fraction of two or more digits
# ending in a zero ("0.0000", "10.930"; "0.0" is its own repr), or any exponent form ("1.50e-3", "1e1":
# its repr may spell it otherwise).  Only a text holding one pays for the number hooks that keep such
# literals (auditor.parse.literals), which alone decide; a match in a string only costs that.
_LITERAL_DIGITS = re.compile(r"\.[0-9]+0(?![0-9])|[0-9][eE]")


class NonFinite:
    """Stands in for a number that has no finite double value."""

    __slots__ = ("description", "literal")

    def __init__(self, literal: str, description: str) -> None:
        self.literal = literal
        self.description = description


# A number the fast C decoder could turn into inf or refuse (more than 4300
# digits): 200+ digits in a row (an overflowing mantissa needs more than 208
# when its exponent has two digits) or an exponent of 100 or more.  Only such
# chunks pay for the number hooks, which cost a Python call per number.  Both
# are looked for in the chunk's shape: a copy of it, one byte per character
# (non-ASCII ones a blank), where every ASCII digit is "0", "e", "E" and "+"
# are "e", "{" and "[" are SHAPE_OPEN (their count bounds the nesting depth),
# "}" and "]" SHAPE_CLOSE, and a quote, a backslash and a "." stay as they are;
# everything else is a blank: a few C-level passes instead of a regex tried at
# every character ("e+100" reads "ee000").  The shape also finds exponents of
# zeros ("e000") and a "+" before three digits in prose ("+100"), which only
# send a chunk to the hooks, whose values are the same.  Its offsets are the
# chunk's, so :mod:`auditor.parse.locate` jumps over the answer's strings and containers in it.
SHAPE_OPEN, SHAPE_CLOSE = b"\n", b"\r"  # bytes no other character becomes
_SHAPE = bytes(
    ord("0")
    if chr(i).isascii() and chr(i).isdigit()
    else ord("e")
    if chr(i) in "eE+"
    else SHAPE_OPEN[0]
    if chr(i) in "{["
    else SHAPE_CLOSE[0]
    if chr(i) in "}]"
    else i
    if chr(i) in '"\\.'
    else 32
    for i in range(256)
)
_LONG_DIGIT_RUN = b"0" * 200
_LARGE_EXPONENT = b"e000"
# A surrogate escape (\ud800): strings that may hold code points no UTF-8
# output can write.  (Raw lone surrogates never reach the decoder: a str input
# holding one is refused as P105.)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


class StrictDecoder:
    """:meth:`raw_decode` like :class:`json.JSONDecoder`, with non-finite numbers as stand-ins.

    NaN/Infinity, ``1e999`` and integers that overflow a double become
    :class:`NonFinite` (``created`` counts them, so that documents without any
    are not walked); lone surrogates in strings become U+FFFD.  Values without
    suspicious numbers are decoded by the C fast path alone.
    """

    def __init__(self) -> None:
        self.created = 0
        self.printed = 0  # PrintedFloat values made (auditor.parse.literals)
        self._fast = json.JSONDecoder(parse_constant=self._parse_constant)
        self._slow: json.JSONDecoder | None = None  # built on first need: most texts never need it

    def raw_decode(self, text: str, start: int = 0) -> tuple[Any, int]:
        """The value that starts at ``start`` in ``text``, and the offset just past it."""
        value, end, _ = self.raw_decode_shaped(text, start)
        return value, end

    def raw_decode_shaped(self, text: str, start: int = 0) -> tuple[Any, int, bytes]:
        """:meth:`raw_decode`, and the shape of the value's text (see :data:`_SHAPE`), which the
        decoder makes anyway: its count of SHAPE_OPEN (the value's "{" and "[", in its strings too)
        is at least its nesting depth.  json's C path, or the hooks where the shape asks."""
        printed_before = self.printed
        try:
            value, end = self._fast.raw_decode(text, start)
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer beyond int()'s digit limit: decode it slowly
            value, end = self._slow_decoder().raw_decode(text, start)
            shape = shape_of(text[start:end])
        else:
            shape = shape_of(text[start:end])
            # The fast path turned any overflowing number into inf or a huge int, and kept no literal:
            # decode again, slowly, when the text holds either.
            if _may_overflow(shape) or _LITERAL_DIGITS.search(text, start, end) is not None:
                value, end = self._slow_decoder().raw_decode(text, start)
        if self.printed != printed_before:
            keep_claim_literals(value)
        if shape.find(b"\\") >= 0 and _SURROGATE_ESCAPE.search(text, start, end) is not None:
            value = replace_lone_surrogates(value)
        return value, end, shape

    def _slow_decoder(self) -> json.JSONDecoder:
        if self._slow is None:
            self._slow = json.JSONDecoder(
                parse_float=self._parse_float, parse_int=self._parse_int, parse_constant=self._parse_constant
            )
        return self._slow

    def _non_finite(self, literal: str, description: str) -> NonFinite:
        self.created += 1
        return NonFinite(literal, description)

    def _parse_constant(self, text: str) -> NonFinite:  # NaN, Infinity, -Infinity
        return self._non_finite(text, f"{text} (not a JSON number)")

    def _parse_float(self, text: str) -> float | NonFinite:
        value = from_literal(text)
        if value in (_INF, -_INF):
            return self._non_finite(_shorten(text), f"{_shorten(text)} (overflows a 64-bit float to infinity)")
        if type(value) is PrintedFloat:
            self.printed += 1
        return value

    def _parse_int(self, text: str) -> int | NonFinite:
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
        return self._non_finite(_shorten(text), f"an integer of {digits} digits (overflows a 64-bit float to infinity)")


def shape_of(chunk: str) -> bytes:
    """``chunk`` as :data:`_SHAPE` reads it, one byte per character: two passes in C."""
    return chunk.encode("ascii", "replace").translate(_SHAPE)


def _may_overflow(shape: bytes) -> bool:
    """The chunk of this shape may hold a number the fast decoder turns into inf or refuses (see :data:`_SHAPE`)."""
    # (find, not "in": "in" on bytes first tries its operand as an integer, a failure that costs more)
    return shape.find(_LONG_DIGIT_RUN) >= 0 or shape.find(_LARGE_EXPONENT) >= 0


_THREAD_DECODERS = threading.local()


def thread_decoder() -> StrictDecoder:
    """This thread's decoder that turns non-finite numbers into :class:`NonFinite` (see :class:`StrictDecoder`).

    Building one (and its C scanner) costs as much as the other checks of a
    small answer, so each thread keeps one: its ``created`` counts across
    decodes, and a caller compares it before and after its own.
    """
    decoder = getattr(_THREAD_DECODERS, "decoder", None)
    if decoder is None:
        decoder = _THREAD_DECODERS.decoder = StrictDecoder()
    return decoder


def replace_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings and keys replaced by U+FFFD.

    JSON may escape half of a surrogate pair (``"\\ud800"``); such a string has
    no UTF-8 spelling, so writing it to any output would fail.
    """

    def fix(text: str) -> str:
        return LONE_SURROGATE.sub("\ufffd", text)

    if isinstance(value, str):
        return fix(value)
    stack = [value] if isinstance(value, (dict, list)) else []
    while stack:
        container = stack.pop()
        entries: Iterable[tuple[Any, Any]]  # (key or index, item)
        if isinstance(container, dict):
            if any(isinstance(k, str) and LONE_SURROGATE.search(k) for k in container):
                items = list(container.items())
                container.clear()
                container.update((fix(k), v) for k, v in items)
            entries = container.items()
        else:
            entries = enumerate(container)
        for key, item in list(entries):
            if isinstance(item, str):
                if LONE_SURROGATE.search(item):
                    container[key] = fix(item)
            elif isinstance(item, (dict, list)):
                stack.append(item)
    return value


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


def _entries(container: dict[Any, Any] | list[Any]) -> Iterator[tuple[Any, Any]]:
    return iter(container.items()) if isinstance(container, dict) else enumerate(container)


def nesting_depth(value: Any, limit: int) -> int:
    """How deep containers nest in ``value`` (itself the first level, as the scan counts), up to ``limit + 1``."""
    depth, level = 0, [value]
    while level and depth <= limit:
        depth += 1
        level = [
            item
            for container in level
            for item in (container.values() if isinstance(container, dict) else container)
            if isinstance(item, (dict, list))
        ]
    return depth


# count_nodes stops here: larger values are compared by their length as JSON text.
MAX_COUNTED_NODES = 100_000


def count_nodes(value: Any) -> int:
    """Values and containers in ``value``, counted up to :data:`MAX_COUNTED_NODES`."""
    count, pending = 0, [value]
    while pending and count < MAX_COUNTED_NODES:
        item = pending.pop()
        count += 1
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return count
