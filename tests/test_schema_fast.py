"""The compiled validity check (validation's fast path) says "valid" exactly when jsonschema does."""

from __future__ import annotations

import copy

import pytest
from conftest import seed_answer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from test_schema import _DELETE, JSON_VALUES, SEED_POINTERS, _set, edited

from auditor.answer.schema import (
    ANSWER_SCHEMA,
    BENCH_REPORT_SCHEMA,
    _fast_validity,
    _validator,
    validate,
)
from auditor.answer.schema_fast import UnsupportedSchema, compile_validity


@pytest.mark.parametrize("name", [ANSWER_SCHEMA, BENCH_REPORT_SCHEMA])
@pytest.mark.parametrize("max_items", [None, 3])
def test_the_shipped_schemas_compile(name, max_items):
    assert _fast_validity(name, max_items) is not None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["000", "001"]), st.data(), JSON_VALUES, st.booleans(), st.sampled_from([None, 4]))
def test_fast_check_agrees_with_jsonschema(which, data, value, delete, max_items):
    path = data.draw(st.sampled_from(SEED_POINTERS[which]))
    document = edited(which, _set(path, _DELETE if delete else copy.deepcopy(value)))
    report = document.get("bench_report")
    for name, doc in ((ANSWER_SCHEMA, document), (BENCH_REPORT_SCHEMA, report)):
        errors = list(_validator(name, max_items=max_items).iter_errors(doc))
        assert _fast_validity(name, max_items)(doc) == (errors == []), [e.message for e in errors]


@pytest.mark.parametrize("which", ["000", "001"])
def test_valid_seeds_take_the_fast_path_and_get_no_findings(which):
    answer = seed_answer(which)
    assert _fast_validity(ANSWER_SCHEMA, None)(answer) is True
    assert validate(answer) == []


def test_fast_path_still_reports_an_unsupported_version():
    answer = edited("000", lambda a: a["bench_report"].update(bench_version=2))
    assert _fast_validity(ANSWER_SCHEMA, None)(answer) is True
    assert [(f.rule, f.pointer) for f in validate(answer)] == [("S202", "/bench_report/bench_version")]


def test_an_array_over_max_items_is_not_valid():
    answer = seed_answer("000")
    assert _fast_validity(ANSWER_SCHEMA, 8)(answer) is True
    assert _fast_validity(ANSWER_SCHEMA, 7)(answer) is False
    findings = validate(answer, max_items=7)  # both arms' per_seed and per_seed_diffs hold 8
    assert {f.rule for f in findings} == {"S201"} and len(findings) == 3


# --------------------------------------------------------------------------- keyword semantics (Draft 2020-12)

CASES = [
    # (schema, value, valid)
    ({"type": "integer"}, 8.0, True),
    ({"type": "integer"}, 8.5, False),
    ({"type": "integer"}, True, False),
    ({"type": "number"}, False, False),
    ({"type": ["number", "null"]}, None, True),
    ({"enum": [0, 1, True, False, None]}, 1.0, True),
    ({"enum": [0, 1]}, True, False),
    ({"enum": [True]}, 1, False),
    ({"minimum": 0}, "text", True),
    ({"minimum": 0}, True, True),
    ({"minimum": 0, "maximum": 1}, 1.5, False),
    ({"required": ["a"]}, [], True),
    ({"required": ["a"]}, {"b": 1}, False),
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": "x"}, True),
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": "x", "b": 1}, False),
    ({"properties": {"a": {"type": "string"}}}, {"a": 3}, False),
    ({"items": {"type": "number", "minimum": -1, "maximum": 1}}, [0, 0.5, -1], True),
    ({"items": {"type": "number", "minimum": -1, "maximum": 1}}, [0, 2], False),
    ({"items": {"type": "number"}}, [1, True], False),
    ({"items": {"type": "string"}}, "not an array", True),
    (
        {"if": {"required": ["full"]}, "then": {"required": ["x"]}, "else": {"required": ["y"]}},
        {"full": 1, "x": 1},
        True,
    ),
    (
        {"if": {"required": ["full"]}, "then": {"required": ["x"]}, "else": {"required": ["y"]}},
        {"full": 1, "y": 1},
        False,
    ),
    ({"if": {"required": ["full"]}, "then": {"required": ["x"]}, "else": {"required": ["y"]}}, {"y": 1}, True),
    (True, {"anything": [1]}, True),
    ({"description": "no constraint"}, 3, True),
]


@pytest.mark.parametrize("schema, value, valid", CASES, ids=[f"{i}" for i in range(len(CASES))])
def test_keywords_follow_draft_2020_12(schema, value, valid):
    assert Draft202012Validator(schema).is_valid(value) == valid  # the reference agrees with the table
    assert compile_validity(schema)(value) == valid


def test_max_items_bounds_every_array_with_items():
    check = compile_validity({"items": {"type": "number"}}, max_items=2)
    assert check([1, 2]) and not check([1, 2, 3])


def test_a_nan_against_a_bound_goes_the_slow_way():
    # jsonschema accepts NaN (no comparison holds); the fast check only never says "valid" wrongly.
    assert compile_validity({"type": "number", "minimum": 0})(float("nan")) is False


@pytest.mark.parametrize(
    "schema",
    [
        {"pattern": "^a"},
        {"$ref": "#/$defs/x"},
        {"if": {"minimum": 0}, "then": {}},
        {"additionalProperties": {"type": "string"}},
    ],
)
def test_unsupported_keywords_are_refused(schema):
    with pytest.raises(UnsupportedSchema):
        compile_validity(schema)
