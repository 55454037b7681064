"""The JSON Schema is the published description of an answer; the pydantic models are checked against it.

Every model declares exactly the properties of the schema object it types, requires
exactly what that object requires, and decides the idea's shape the way the schema's
``if``/``then``/``else`` does.  (Value-level agreement, the models accept exactly what the
schema accepts, is ``tests/test_schema.py``'s property test.)
"""

from __future__ import annotations

import pytest
from conftest import seed_answer
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from auditor.answer.model import (
    Answer,
    BenchReport,
    Comparison,
    FlatIdea,
    SeedStats,
    SweepEntry,
    TunedArm,
    idea_shape,
)
from auditor.answer.schema import validate
from auditor.answer.validators import ANSWER_SCHEMA, BENCH_REPORT_SCHEMA, load_schema

REPORT = load_schema(BENCH_REPORT_SCHEMA)
DEFS = REPORT["$defs"]

# Each model and the schema object it types.
MIRRORS = {
    Answer: load_schema(ANSWER_SCHEMA),
    BenchReport: REPORT,
    TunedArm: DEFS["tuned_arm"],
    FlatIdea: DEFS["flat_idea"],
    SeedStats: DEFS["seed_stats"],
    SweepEntry: DEFS["sweep_entry"],
    Comparison: DEFS["comparison"],
}


@pytest.mark.parametrize("model", MIRRORS, ids=lambda m: m.__name__)
def test_each_model_declares_the_properties_of_its_schema_object(model):
    assert set(model.model_fields) == set(MIRRORS[model]["properties"])


@pytest.mark.parametrize("model", MIRRORS, ids=lambda m: m.__name__)
def test_each_model_requires_what_its_schema_object_requires(model):
    required = {name for name, field in model.model_fields.items() if field.is_required()}
    assert required == set(MIRRORS[model]["required"])


def test_the_schema_decides_the_idea_shape_by_full_as_the_models_do():
    idea = REPORT["properties"]["idea"]
    assert idea["if"] == {"type": "object", "required": ["full"]}
    assert idea["then"] == {"$ref": "#/$defs/tuned_arm"} and idea["else"] == {"$ref": "#/$defs/flat_idea"}


FLAT = seed_answer("000")["bench_report"]["idea"]
TUNED = seed_answer("001")["bench_report"]["idea"]
SHAPES = {
    "flat": (FLAT, "flat"),
    "tuned": (TUNED, "tuned"),
    "tuned_with_flat_fields": ({**FLAT, "full": TUNED["full"]}, "tuned"),
    "flat_with_tuned_fields": ({**FLAT, "best_cfg": None, "sweep": None}, "flat"),
    "empty": ({}, "flat"),
}


@pytest.mark.parametrize("idea, shape", SHAPES.values(), ids=SHAPES.keys())
def test_idea_shape_matches_the_branch_the_schema_takes(idea, shape):
    assert idea_shape(idea) == shape
    taken_if = Draft202012Validator(REPORT["properties"]["idea"]["if"]).is_valid(idea)
    assert taken_if == (shape == "tuned")


@pytest.mark.parametrize("idea, shape", [SHAPES["tuned_with_flat_fields"], SHAPES["flat"]], ids=["tuned", "flat"])
def test_a_valid_report_gets_the_model_of_its_declared_shape(idea, shape):
    report = {**seed_answer("000")["bench_report"], "idea": idea}
    findings = validate(report)
    assert [f.rule for f in findings if f.rule != "S203"] == []
    model = BenchReport.model_validate(report)
    assert isinstance(model.idea, TunedArm if shape == "tuned" else FlatIdea)
    assert idea_shape(model.idea) == shape


def test_a_model_refuses_what_its_schema_object_refuses():
    with pytest.raises(ValidationError):
        TunedArm.model_validate({})  # "full" is required
    with pytest.raises(ValidationError):
        Comparison.model_validate({**seed_answer("000")["bench_report"]["comparison"], "p_value": "0.01"})
    assert BenchReport.model_validate({**seed_answer("000")["bench_report"], "x": 1}).model_extra == {"x": 1}


def test_a_refusal_jsonschema_cannot_explain_is_still_an_error():
    """Should the models ever refuse what the schema accepts, the models' own error is reported (fail closed)."""
    from auditor.answer.schema import _first_model_error

    report = {**seed_answer("001")["bench_report"]}
    report["idea"] = {**report["idea"], "full": {**report["idea"]["full"], "n": "8"}}
    with pytest.raises(ValidationError) as refused:
        BenchReport.model_validate(report)
    finding = _first_model_error(refused.value, "the bench report")
    assert (finding.rule, finding.pointer, finding.claimed) == ("S201", "/idea/full/n", "8")
    assert finding.message.startswith("'n': ")
