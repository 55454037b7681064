"""The compiled decoder's path (orjson) gives what json's path gives, number for number."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import FIXTURES
from hypothesis import example, given, settings
from hypothesis import strategies as st

from auditor import jsonscan
from auditor.transcript import locate

_ANSWERS = [path.read_bytes().decode("utf-8", "replace") for path in sorted(FIXTURES.rglob("*.txt"))]
_SEEDS = ("000_28acc42565c7de9b.txt", "001_0adda411732ac938.txt")
_OBJECTS = [text[text.index("{") : text.rindex("}") + 1] for text in _ANSWERS if "{" in text]
# What damages or stretches an answer: numbers json and orjson read apart, literals only json
# accepts (as stand-ins), escapes, separators and prose after the object.
_PIECES = [
    *("NaN", "-Infinity", "1e400", "-1.8e308", "1e-400", "1" * 25, "-9223372036854775809", "18446744073709551616"),
    *("9223372036854775807", "1" * 19, "0." + "1" * 19, "0." + "1" * 40, "1" * 250, "1" * 250 + ".5", "-0", "-0.0"),
    *("01", "1.", ".5", "+1", "1e", '"', "{", "}", "[", "]", ",", ":", "\\u00e9", "\\ud800", "\\ud83d\\ude00"),
    *("\\x", "\x00", "\t", "\n", "\u00a0", "é", "😀", "true", "null", "[]", '"a": 1,', " trailing } prose", " {x}"),
]


@contextlib.contextmanager
def _decoders(*, compiled: bool) -> Iterator[None]:
    """Every object read by orjson where it reads it as json would (``compiled``), or every one by json."""
    saved = jsonscan.ORJSON_AFTER
    jsonscan.ORJSON_AFTER = 0 if compiled else 1 << 62
    try:
        yield
    finally:
        jsonscan.ORJSON_AFTER = saved


def _decoded(document: str, *, compiled: bool) -> tuple[Any, ...]:
    """What a fresh StrictDecoder makes of ``document``: (value, end, shape, stand-ins made) or the error."""
    with _decoders(compiled=compiled):
        try:
            decoder = jsonscan.StrictDecoder()
            value, end, shape = decoder.raw_decode_shaped(document, 0)
        except (ValueError, RecursionError) as exc:
            return ("error", type(exc).__name__, str(exc))
    return (_typed(value), end, shape, decoder.created)


def _typed(value: Any) -> Any:
    """``value`` with every number's type and exact spelling, and every key's order, made comparable."""
    if isinstance(value, dict):
        return [(key, _typed(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if isinstance(value, float):
        return ("float", repr(value), math.copysign(1.0, value))
    if isinstance(value, jsonscan.NonFinite):
        return ("stand-in", value.literal, value.description)
    return (type(value).__name__, value)


def test_the_compiled_decoder_is_installed_and_takes_the_answers() -> None:
    """orjson is a dependency; without it every answer would silently take the slower path."""
    orjson = jsonscan._compiled_decoder()
    assert orjson is not None
    seeds = [(FIXTURES / "answers" / name).read_text(encoding="utf-8") for name in _SEEDS]
    assert all(jsonscan._whole_object(orjson, text, text.index("{")) is not None for text in seeds)
    taken = sum(jsonscan._whole_object(orjson, document, 0) is not None for document in _OBJECTS)
    # The rest are the parse-stage fixtures: malformed, NaN, huge numbers, two answers, UTF-16.
    assert taken >= 0.9 * len(_OBJECTS)


def test_a_decoder_reads_its_first_objects_by_json_and_the_rest_by_orjson() -> None:
    """Importing orjson pays only over many answers: one transcript's audit never needs it."""
    decoder = jsonscan.StrictDecoder()
    document = _OBJECTS[0]
    for _ in range(jsonscan.ORJSON_AFTER):
        assert decoder.decode_whole_object(document, 0) is None
    decoded = decoder.decode_whole_object(document, 0)
    assert decoded is not None and decoded[1] == len(document)
    assert decoder.raw_decode_shaped(document, 0)[1:] == decoded[1:]


@pytest.mark.parametrize(
    "number",
    ["18446744073709551616", "-9223372036854775809", "1" * 30, "1e400", "NaN", "1" * 250 + ".5", "-Infinity"],
)
def test_numbers_orjson_reads_otherwise_keep_jsons_path(number: str) -> None:
    document = '{"a": [0.25, ' + number + "]}"
    assert jsonscan._whole_object(jsonscan._compiled_decoder(), document, 0) is None
    assert _decoded(document, compiled=True) == _decoded(document, compiled=False)


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(_OBJECTS),
    st.lists(st.tuples(st.floats(0, 1), st.sampled_from(_PIECES), st.integers(0, 3)), min_size=1, max_size=3),
)
@example(_OBJECTS[0], [(0.5, "1" * 25, 0)])
@example(_OBJECTS[0], [(0.99, " trailing } prose", 0)])
def test_damaged_answers_decode_alike_on_both_paths(document: str, edits: list[tuple[float, str, int]]) -> None:
    for where, piece, drop in edits:
        at = int(where * len(document))
        document = document[:at] + piece + document[at + drop :]
    assert _decoded(document, compiled=True) == _decoded(document, compiled=False)


def test_a_transcript_decoded_by_orjson_is_located_as_before() -> None:
    """The located answer (its value, start and shape) is the same on both paths."""
    for text in _ANSWERS[:6]:
        with _decoders(compiled=True):
            compiled = locate(text, max_bytes=1 << 24, max_depth=64)
        with _decoders(compiled=False):
            plain = locate(text, max_bytes=1 << 24, max_depth=64)
        assert (compiled.start, compiled.shape, compiled.findings) == (plain.start, plain.shape, plain.findings)
        assert _typed(compiled.document) == _typed(plain.document)
