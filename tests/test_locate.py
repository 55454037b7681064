"""Findings placed in their transcript: a JSON Pointer to the line and column of its value."""

from __future__ import annotations

import json
import math

import pytest
from conftest import FIXTURES, HEADER
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.audit import audit_bytes
from auditor.findings import Finding, Severity
from auditor.options.models import AuditOptions
from auditor.parse.locate import (
    START_OF_FILE,
    line_columns,
    pointer_locations,
    with_locations,
)
from auditor.parse.pointers import join_pointer
from auditor.parse.transcript import locate

LIMITS = {"max_bytes": 16 * 1024 * 1024, "max_depth": 64}


def offset_of(text: str, line: int, column: int) -> int:
    """The inverse of a (line, column) placement: lines end at \\n, columns count characters."""
    lines = text.split("\n")
    return sum(len(previous) + 1 for previous in lines[: line - 1]) + column - 1


def value_at(text: str, line: int, column: int):
    """The JSON value that starts at (line, column) of ``text``."""
    return json.JSONDecoder().raw_decode(text, offset_of(text, line, column))[0]


def every_pointer(value, pointer: str = ""):
    """(pointer, value) for ``value`` and everything inside it."""
    yield pointer, value
    entries = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in entries:
        yield from every_pointer(item, join_pointer(pointer, key))


def place(text: str, pointers, start: int | None = None) -> dict[str, tuple[int, int]]:
    return pointer_locations(text, text.index("{") if start is None else start, pointers)


# --------------------------------------------------------------------------- examples

DOCUMENT = {"bench_report": {"comparison": {"p_value": 0.03, "per_seed_diffs": [0.1, -0.2, 0.3]}}, "note": "ok"}


def test_nested_pointer_in_a_fenced_transcript_with_a_header() -> None:
    text = HEADER + "```json\n" + json.dumps(DOCUMENT, indent=2) + "\n```\nHope this helps {really}.\n"
    header_lines = HEADER.count("\n") + 1  # the fence's own line
    found = place(text, ["/bench_report/comparison/p_value", "/bench_report/comparison/per_seed_diffs/1", ""])
    assert found["/bench_report/comparison/p_value"] == (header_lines + 4, 18)
    assert found["/bench_report/comparison/per_seed_diffs/1"] == (header_lines + 7, 9)
    assert found[""] == (header_lines + 1, 1)


def test_crlf_line_ends_count_once_and_leave_columns_alone() -> None:
    lf = "Answer:\n" + json.dumps(DOCUMENT, indent=2)
    crlf = lf.replace("\n", "\r\n")
    pointers = [pointer for pointer, _ in every_pointer(DOCUMENT)]
    assert place(crlf, pointers) == place(lf, pointers)


def test_columns_count_characters_not_bytes_or_utf16_units() -> None:
    text = '{"é😀 key": "ü😀", "n": 1}'
    assert place(text, ["/n"])["/n"] == (1, len('{"é😀 key": "ü😀", "n": ') + 1) == (1, 23)


def test_escaped_keys_follow_rfc_6901() -> None:
    text = json.dumps({"a/b": {"m~n": 1, "m": 2}, '\u00e9"\\': [3]})  # ensure_ascii: the key is escaped
    found = place(text, ["/a~1b/m~0n", "/a~1b/m", '/\u00e9"\\/0'])
    assert value_at(text, *found["/a~1b/m~0n"]) == 1
    assert value_at(text, *found["/a~1b/m"]) == 2
    assert value_at(text, *found['/\u00e9"\\/0']) == 3


def test_the_last_of_duplicate_keys_wins_as_in_json_loads() -> None:
    text = '{"a": {"b": 1}, "c": 0, "a": {"x": 2}}'
    found = place(text, ["/a", "/a/b", "/a/x"])
    assert value_at(text, *found["/a"]) == {"x": 2}
    assert found["/a/b"] == found["/a"]  # gone with the first "a": the parent that lacks it
    assert value_at(text, *found["/a/x"]) == 2
    replaced_by_a_number = '{"a": {"b": 1}, "a": 5}'
    assert place(replaced_by_a_number, ["/a/b"])["/a/b"] == (1, 22)


def test_missing_members_point_at_the_parent_that_lacks_them() -> None:
    text = 'x\n{"report": {"arms": [10, 20]},\n "k": null}'
    found = place(text, ["/report/missing", "/report/arms/7", "/report/arms/1/deeper", "/absent/deep", "not a pointer"])
    assert found["/report/missing"] == (2, 12)
    assert found["/report/arms/7"] == found["/report/arms/1/deeper"][:1] + (21,) == (2, 21)
    assert found["/report/arms/1/deeper"] == (2, 26)  # a number has no members: the number itself
    assert found["/absent/deep"] == found["not a pointer"] == (2, 1)


def test_non_finite_literals_are_placed_like_numbers() -> None:
    text = '{"a": NaN, "b": [-Infinity, 1e999], "c": Infinity}'
    found = place(text, ["/a", "/b/1", "/c"])
    columns = {"/a": text.index("NaN"), "/b/1": text.index("1e999"), "/c": text.rindex("Infinity")}
    assert found == {pointer: (1, column + 1) for pointer, column in columns.items()}


def test_without_an_answer_everything_is_at_the_start_of_the_file() -> None:
    assert START_OF_FILE == (1, 1)
    assert pointer_locations(None, None, ["", "/a"]) == {"": (1, 1), "/a": (1, 1)}
    assert pointer_locations("no json here", None, [""]) == {"": (1, 1)}


def test_line_columns_agree_with_the_scanners_line_column() -> None:
    from auditor.parse.jsonscan import line_column

    text = "ab\r\nc😀d\n\nef"
    offsets = range(len(text) + 1)
    assert line_columns(text, offsets) == {offset: line_column(text, offset) for offset in offsets}


def test_long_arrays_are_jumped_not_walked_yet_placed_exactly() -> None:
    values = [1.0 + i * 1e-6 for i in range(5000)]
    text = json.dumps({"per_seed": values, "mixed": [1, [2, 3], "s,]", 4, {"k": 5}, 6]}, indent=1)
    pointers = ["/per_seed/0", "/per_seed/2500", "/per_seed/4999", "/per_seed/5000"]
    pointers += ["/mixed/3", "/mixed/4/k", "/mixed/5"]
    found = place(text, pointers)
    assert value_at(text, *found["/per_seed/2500"]) == values[2500]
    assert value_at(text, *found["/per_seed/4999"]) == values[4999]
    assert value_at(text, *found["/per_seed/5000"]) == values  # past the end: the array
    assert [value_at(text, *found[p]) for p in pointers[4:]] == [4, 5, 6]


def test_with_locations_fills_line_and_column_and_keeps_identity() -> None:
    text = "Header\n" + json.dumps(DOCUMENT, indent=2)
    findings = [
        Finding("A307", Severity.ERROR, "p", "/bench_report/comparison/p_value"),
        Finding("P104", Severity.INFO, "m"),
    ]
    placed = with_locations(findings, text, text.index("{"))
    assert [(f.line, f.column) for f in placed] == [(5, 18), (2, 1)]
    assert placed == findings  # a location is not part of a finding's identity
    assert placed[0].to_dict()["line"] == 5 and list(placed[0].to_dict())[-2:] == ["line", "column"]
    assert Finding.from_dict(placed[0].to_dict()).column == 18


def test_no_findings_need_no_placing() -> None:
    assert with_locations([], "{broken", 0) == [] and with_locations(iter(()), None, None) == []


def test_placed_result_is_the_result_with_its_findings_replaced() -> None:
    from dataclasses import replace

    from auditor.audit import _located

    text = "Header\n" + json.dumps(DOCUMENT, indent=2)
    result = audit_bytes(text.encode("utf-8"), "t.txt", AuditOptions(alpha=0.01))
    unplaced = replace(result, findings=tuple(replace(f, line=None, column=None) for f in result.findings))
    placed = _located(unplaced, text, text.index("{"))
    assert placed == replace(unplaced, findings=placed.findings) and type(placed.status) is type(result.status)
    assert [(f.line, f.column) for f in placed.findings] == [(f.line, f.column) for f in result.findings]
    assert placed.__dict__ == {**unplaced.__dict__, "findings": placed.findings}


def test_answer_start_is_the_answer_the_transcript_chose() -> None:
    answer = json.dumps(DOCUMENT)
    text = 'Template {"note": "x"} then {broken\n```json\n' + answer + "\n```\nthe same again: " + answer
    located = locate(text, **LIMITS)
    assert located.start == text.rindex(answer) and located.text == text  # the later of two copies
    assert locate("no answer {here}", **LIMITS).start is None


# --------------------------------------------------------------------------- through the audit


def test_audited_findings_carry_the_place_of_their_value() -> None:
    source = (FIXTURES / "defects" / "A304_seed4_sign_flipped.txt").read_text(encoding="utf-8")
    text = "Résumé 😀 de l'agent:\n```json\n" + source[source.index("{") :] + "\n```\nDone.\n"
    text = text.replace("\n", "\r\n")
    result = audit_bytes(text.encode("utf-8"), "t.txt", AuditOptions())
    document = locate(text, **LIMITS).document
    values = dict(every_pointer(document))
    assert "A304" in {f.rule for f in result.findings}
    lf_text = text.replace("\r\n", "\n")  # same lines and columns; raw_decode reads it more easily
    for f in result.findings:
        assert f.line is not None and f.column is not None, f
        if f.pointer in values:
            assert value_at(lf_text, f.line, f.column) == values[f.pointer], f.pointer


def test_parse_failures_are_at_the_start_of_the_file() -> None:
    result = audit_bytes(b"header only, no answer", "t.txt", AuditOptions())
    assert [(f.rule, f.line, f.column) for f in result.findings] == [("P101", 1, 1)]


# --------------------------------------------------------------------------- properties

KEYS = st.text(alphabet=st.sampled_from('ab/~"\\ é😀\u2028\t'), max_size=4)
NUMBERS = st.integers(-(10**12), 10**12) | st.floats(allow_nan=False, allow_infinity=False)
SCALARS = st.none() | st.booleans() | NUMBERS | st.text(max_size=5)
DOCUMENTS = st.dictionaries(
    KEYS,
    st.recursive(
        SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=12
    ),
    max_size=5,
)
LAYOUTS = st.sampled_from(
    [
        {"indent": None},
        {"indent": 2},
        {"indent": None, "separators": (",", ":")},
        {"indent": 2, "separators": (",", ": ")},
        {"indent": "\t", "ensure_ascii": False},
        {"indent": None, "separators": (" , ", " : "), "ensure_ascii": False},
    ]
)
HEADERS = st.sampled_from(["", "Answer:\n", HEADER, "Template {name} [draft]:\n```json\n", "é😀 {\n"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, layout=LAYOUTS, header=HEADERS, crlf=st.booleans())
def test_every_value_is_placed_where_it_starts(document, layout, header, crlf) -> None:
    body = json.dumps(document, **layout)
    text = header + body + "\n```\nHope this helps.\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    expected = dict(every_pointer(document))
    found = pointer_locations(text, len(header.replace("\n", "\r\n") if crlf else header), expected)
    lf_text = text.replace("\r\n", "\n")
    for pointer, value in expected.items():
        placed = value_at(lf_text, *found[pointer])
        assert placed == value or (isinstance(value, float) and math.isclose(placed, value)), pointer


SMALL_VALUES = st.integers(0, 9) | st.dictionaries(st.sampled_from("xy"), st.integers(0, 9), max_size=2)


@settings(max_examples=100, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.sampled_from(["a", "b", "a/b"]), SMALL_VALUES), max_size=6),
    indent=st.sampled_from([None, 2]),
)
def test_duplicate_keys_resolve_as_json_loads_does(pairs, indent) -> None:
    separator = ",\n" if indent else ", "
    text = "{" + separator.join(f"{json.dumps(k)}: {json.dumps(v, indent=indent)}" for k, v in pairs) + "}"
    document = json.loads(text)
    expected = dict(every_pointer(document))
    missing = ["/a/x", "/a/y", "/b/x", "/a~1b/y"]
    found = pointer_locations(text, 0, [*expected, *missing])
    for pointer, value in expected.items():
        assert value_at(text, *found[pointer]) == value, pointer
    for pointer in missing:
        if pointer not in expected:  # placed at its deepest existing parent
            parent = pointer.rsplit("/", 1)[0]
            assert found[pointer] == found[parent if parent in expected else ""], pointer


@pytest.mark.parametrize("copies", [1, 2])
def test_answer_start_finds_the_chosen_copy(copies) -> None:
    body = json.dumps(DOCUMENT, indent=2)
    text = HEADER + "\n\n".join([body] * copies) + "\nprose {x}"
    assert locate(text, **LIMITS).start == text.rindex(body)


# --------------------------------------------------------------------------- placing by keys

TRAILERS = st.sampled_from(
    [
        "",
        "\n```\n",
        "\nHope this helps.\n",
        '\nA "quote" and [1].\n',
        "\nback\\slash\n",
        "\nsee [1]{2}\n",
        '\n"lr": 9\n',
    ]
)


def walked_offsets(text: str, start: int, pointers) -> dict[str, int]:
    """Offsets as the walk places them, key search switched off."""
    from unittest import mock

    from auditor.parse import locate as placing

    with mock.patch.object(placing, "place_by_keys", return_value=False):
        return placing.value_offsets(text, start, pointers)


def assert_key_search_agrees_with_the_walk(text: str, start: int, pointers) -> None:
    """With and without the decoder's shape and document, placing by keys gives the walk's offsets."""
    from auditor.parse import locate as placing
    from auditor.parse.decoder import StrictDecoder

    walked = walked_offsets(text, start, pointers)
    document, _, shape = StrictDecoder().raw_decode_shaped(text, start)
    assert placing.value_offsets(text, start, pointers) == walked
    assert placing.value_offsets(text, start, pointers, shape) == walked
    assert placing.value_offsets(text, start, pointers, shape, document) == walked
    assert placing.value_offsets(text, start, pointers, None, document) == walked


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, layout=LAYOUTS, header=HEADERS, trailer=TRAILERS, crlf=st.booleans())
def test_placing_by_keys_agrees_with_the_walk(document, layout, header, trailer, crlf) -> None:
    """The key search (taken when the answer holds no backslash) places what the walk does, from the
    shape the decoder made of the answer or from one made of the text after its start, with or
    without the decoded document."""
    text = header + json.dumps(document, **layout) + trailer
    if crlf:
        text = text.replace("\n", "\r\n")
    start = len(header.replace("\n", "\r\n") if crlf else header)
    pointers = [pointer for pointer, _ in every_pointer(document)]
    pointers += [pointer + "/missing" for pointer in pointers[:3]] + ["/0", "/a/1", "not a pointer"]
    assert_key_search_agrees_with_the_walk(text, start, pointers)


# Raw JSON whose objects may repeat a key, whose strings may equal a key, and whose members nest
# the same keys: every way a searched key's text can occur somewhere other than at the member.
RAW_KEYS = st.sampled_from(["a", "lr", "b c", "[x]", "}"])
RAW_SCALARS = st.sampled_from(['"a"', '"lr"', '"[x]"', '"}{"', '"lr\\\\"', "1", "-2.5e3", "true", "null", "NaN"])
BLANKS = st.sampled_from(["", " ", "\n  ", "\t"])


def raw_json(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    member = st.tuples(BLANKS, RAW_KEYS, BLANKS, children).map(lambda m: f'{m[0]}"{m[1]}"{m[2]}:{m[2]}{m[3]}')
    objects = st.lists(member, max_size=5).map(lambda ms: "{" + ",".join(ms) + "}")
    arrays = st.lists(children, max_size=4).map(lambda items: "[" + ", ".join(items) + "]")
    return objects | arrays


RAW_VALUES = st.recursive(RAW_SCALARS, raw_json, max_leaves=25)
RAW_ANSWERS = st.lists(st.tuples(RAW_KEYS, RAW_VALUES), max_size=6).map(
    lambda ms: "{" + ", ".join(f'"{k}": {v}' for k, v in ms) + "}"
)
RAW_POINTERS = st.lists(st.sampled_from(["a", "lr", "b c", "[x]", "}", "0", "1", "2"]), min_size=1, max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=RAW_ANSWERS, pointers=st.lists(RAW_POINTERS, min_size=1, max_size=6), trailer=TRAILERS)
def test_repeated_keys_and_strings_like_keys_are_placed_as_the_walk_does(answer, pointers, trailer) -> None:
    text = "Answer:\n" + answer + trailer
    wanted = ["/" + "/".join(tokens) for tokens in pointers]
    assert_key_search_agrees_with_the_walk(text, len("Answer:\n"), wanted)


def test_a_key_in_a_nested_value_or_a_string_value_is_not_the_member() -> None:
    text = '{"x": {"lr": 1}, "y": "lr", "z": ["lr", {"lr": 0}], "lr": 2, "w": {"lr": 3}, "v": ["[lr]", "}"]}'
    assert value_at(text, *place(text, ["/lr"])["/lr"]) == 2
    assert value_at(text, *place(text, ["/z/1/lr", "/w/lr"])["/z/1/lr"]) == 0
    assert_key_search_agrees_with_the_walk(text, 0, ["/lr", "/z/1/lr", "/w/lr", "/x/lr", "/v/1"])


def test_the_only_occurrence_after_an_object_is_its_member_when_the_document_has_it() -> None:
    text = '{"lr": 1, "a": {"b": 2, "c": {"lr": 3}}}'
    # Searched without the document, the one "lr" after "a"'s "{" is inside "c": not a member of "a".
    assert_key_search_agrees_with_the_walk(text, 0, ["/a/lr", "/a/c/lr", "/lr"])
    assert place(text, ["/a/lr"])["/a/lr"] == place(text, ["/a"])["/a"]


def test_answers_nested_deeper_than_the_shape_patterns_are_walked() -> None:
    from auditor.parse.place_keys import MAX_SHAPE_NESTING

    deep = MAX_SHAPE_NESTING + 3
    text = '{"lr": 0, "a": ' + '{"lr": [' * deep + "1" + "]}" * deep + ', "b": {"lr": 5}}'
    pointers = ["/b/lr", "/a/lr/0/lr/0", "/lr"]
    assert_key_search_agrees_with_the_walk(text, 0, pointers)
    assert value_at(text, *place(text, ["/b/lr"])["/b/lr"]) == 5


def test_strings_with_backslashes_are_placed_by_the_walk() -> None:
    from auditor.parse import locate as placing
    from auditor.parse.place_keys import place_by_keys

    for text in ['{"note": "say \\"lr\\": 1", "lr": 2}', '{"l\\u0072": 2}']:
        assert not place_by_keys(text, 0, None, json.loads(text), placing._trie_of(["/lr"]).root, {})
        assert value_at(text, *place(text, ["/lr"])["/lr"]) == 2


def test_a_pointer_set_placed_again_in_another_text_gets_that_texts_places() -> None:
    """Tries are kept per pointer set across answers: a kept one holds no offsets of the text it was built for."""
    from auditor.parse import locate as placing

    pointers = ["/a/b", "/a/c/1", "/missing/x", "/q~1r"]
    first = '{"a": {"b": 1, "c": [0, 2]}, "q/r": 3}'
    second = '\n{\n  "pad": [[], {}],\n  "q/r": 30,\n  "a": {"c": [10, 20], "b": 11}\n}'
    for text in (first, second, first):
        places = placing.value_offsets(text, text.index("{"), pointers)
        decoded = json.loads(text)
        assert json.loads(text[places["/a/b"] :].split(",")[0].rstrip("}\n ")) == decoded["a"]["b"]
        assert text[places["/a/c/1"] :].startswith(str(decoded["a"]["c"][1]))
        assert places["/missing/x"] == text.index("{")  # the nearest parent that exists: the answer
        assert text[places["/q~1r"] :].startswith(str(decoded["q/r"]))


def test_kept_tries_stay_few_and_small() -> None:
    from auditor.parse import locate as placing

    text = '{"k": 1}'
    for i in range(placing._MAX_TRIES + 50):
        placing.value_offsets(text, 0, [f"/k{i}", "/k"])
        assert len(placing._TRIES) <= placing._MAX_TRIES
    long_set = ["/" + "x" * placing._MAX_CACHED_CHARS]
    assert placing.value_offsets(text, 0, long_set) == {long_set[0]: 0}
    assert frozenset(long_set) not in placing._TRIES
