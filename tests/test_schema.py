"""JSON Schema validation (S201-S203), the schema files, and the typed models."""

from __future__ import annotations

import copy
import json
import sys

import pytest
from conftest import ROOT, as_transcript, codes, seed_answer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

from auditor.answer.model import Answer, BenchReport, FlatIdea, SeedStats, TunedArm
from auditor.answer.schema import (
    SUPPORTED_BENCH_VERSIONS,
    check_document,
    is_answer,
    validate,
)
from auditor.answer.validators import ANSWER_SCHEMA, BENCH_REPORT_SCHEMA, load_schema, strict_copy, validator
from auditor.findings import Severity

sys.path.insert(0, str(ROOT / "fixtures" / "generators"))
from parse_schema import tuned_idea  # noqa: E402  (the fixtures' own rewrite, shared)


def rules(findings) -> list[str]:
    return [f.rule for f in findings]


def edited(which: str, edit) -> dict:
    answer = seed_answer(which)
    edit(answer)
    return answer


def tuned_idea_000() -> dict:
    """Seed 000 with its flat idea rewritten in seed 001's tuned shape."""
    answer = seed_answer("000")
    tuned_idea(answer)
    return answer


# --------------------------------------------------------------------------- the schema files


@pytest.mark.parametrize("name", [ANSWER_SCHEMA, BENCH_REPORT_SCHEMA])
def test_schema_files_are_valid_2020_12_with_ids(name):
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(name)
    # schemas/ at the repository root is the same folder.
    assert json.loads((ROOT / "schemas" / name).read_text(encoding="utf-8")) == schema


def test_answer_schema_references_the_bench_report_schema():
    assert load_schema(ANSWER_SCHEMA)["properties"]["bench_report"] == {"$ref": BENCH_REPORT_SCHEMA}


def test_strict_copy_closes_objects_that_list_properties_only():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"x": {}}},
            "free": {"type": "object", "properties": {"c": {}}, "additionalProperties": True},
            "cfg": {"type": "object", "additionalProperties": True},
        },
        "$defs": {"d": {"properties": {}}},
    }
    strict = strict_copy(schema)
    assert strict["additionalProperties"] is False
    assert strict["properties"]["a"]["additionalProperties"] is False
    assert strict["properties"]["free"]["additionalProperties"] is True
    assert (
        "additionalProperties" not in strict["properties"]["cfg"] or strict["properties"]["cfg"]["additionalProperties"]
    )
    assert strict["$defs"]["d"]["additionalProperties"] is False
    assert "additionalProperties" not in schema  # the original is untouched


# --------------------------------------------------------------------------- valid documents


VALID = {
    "seed_000": lambda: seed_answer("000"),
    "seed_001": lambda: seed_answer("001"),
    "bare_000": lambda: seed_answer("000")["bench_report"],
    "bare_001": lambda: seed_answer("001")["bench_report"],
    "tuned_idea_000": tuned_idea_000,
    "nulls_for_optionals": lambda: edited(
        "000",
        lambda a: (
            a.update(worked=None, confidence=None, metrics=None, files=None, mechanism_ok=None),
            a["bench_report"]["comparison"].update(mde=None, mde_rel_pct=None, per_seed_diffs=None, system_worked=None),
            a["bench_report"].update(track=None, model=None, n_seeds=None, mechanism_signature=None),
        ),
    ),
    "minimal": lambda: edited(
        "001",
        lambda a: (
            [a.pop(k) for k in list(a) if k != "bench_report"]
            + [a["bench_report"].pop(k) for k in ("track", "model", "n_seeds", "mechanism_signature")]
            + [
                a["bench_report"]["comparison"].pop(k)
                for k in ("mde", "mde_rel_pct", "per_seed_diffs", "system_worked")
            ]
            + [a["bench_report"]["baseline"].pop(k) for k in ("best_cfg", "sweep")]
        ),
    ),
    "mechanism_ok_boolean": lambda: edited("000", lambda a: a.update(mechanism_ok=True)),
    "any_track": lambda: edited("000", lambda a: a["bench_report"].update(track="reinforcement")),
    "higher_is_better": lambda: edited("000", lambda a: a["bench_report"].update(metric_direction="higher is better")),
    "integral_float_counts": lambda: edited("000", lambda a: a["bench_report"]["comparison"].update(n_pairs=8.0)),
    "free_form_objects": lambda: edited(
        "000",
        lambda a: (
            a["metrics"].update(anything={"nested": [1, 2]}),
            a["bench_report"]["mechanism_signature"].update(extra="yes"),
            a["bench_report"]["idea"]["cfg"].update(momentum=0.9),
            a["bench_report"].update(math_check="passed", protocol_note=None),
        ),
    ),
}


@pytest.mark.parametrize("make", VALID.values(), ids=VALID.keys())
def test_valid_documents_have_no_findings(make):
    document = make()
    findings, models = check_document(document)
    assert findings == []
    assert models.report_pointer == ("/bench_report" if "bench_report" in document else "")
    assert (models.answer is None) == ("bench_report" not in document)


def test_both_idea_shapes_build_their_models():
    assert isinstance(check_document(seed_answer("000"))[1].report.idea, FlatIdea)
    assert isinstance(check_document(seed_answer("001"))[1].report.idea, TunedArm)
    assert isinstance(check_document(tuned_idea_000())[1].report.idea, TunedArm)


def test_an_idea_with_full_is_tuned_even_when_the_flat_fields_fit_too():
    answer = tuned_idea_000()
    idea = answer["bench_report"]["idea"]
    idea.update({k: idea["full"][k] for k in ("mean", "std", "per_seed", "n")})
    models = check_document(answer)[1]
    assert isinstance(models.report.idea, TunedArm)
    assert models.answer.bench_report is models.report


def test_a_key_of_superscript_digits_is_sorted_as_a_key_not_an_index() -> None:
    """'\u00b9' is a digit to str.isdigit but no number to int(): findings under it still sort and report."""
    document = seed_answer("000")
    document["bench_report"]["baseline"]["sweep"][2] = {"\u00b9": None}
    pointers = [f.pointer for f in validate(document)]
    under = "/bench_report/baseline/sweep/2/"
    assert pointers == [under + "cfg", under + "mean", under + "\u00b9"]  # the missing keys, then the unknown one


def test_models_type_each_json_number_as_their_field_declares() -> None:
    """Integers in float fields become floats, integral floats in integer fields ints, booleans stay booleans."""
    answer = seed_answer("001")
    report = answer["bench_report"]
    report["baseline"]["full"].update(mean=3, per_seed=[1, 2.5] * 4, n=8.0)
    report["comparison"].update(delta_mean=0, n_pairs=8.0, p_value=1)
    answer.update(mechanism_ok=1.0, confidence=1, worked=True, unknown_key={"kept": [1]})
    assert not [f for f in validate(answer) if f.severity is Severity.ERROR]  # the schema accepts each
    models = check_document(answer)[1]
    model, built = models.answer, models.report
    full = built.baseline.full
    assert (type(full.mean), type(full.n), {type(v) for v in full.per_seed}) == (float, int, {float})
    assert (full.mean, full.n, full.per_seed[:2]) == (3.0, 8, [1.0, 2.5])
    comparison = built.comparison
    assert (type(comparison.delta_mean), type(comparison.n_pairs), type(comparison.p_value)) == (float, int, float)
    assert (type(model.mechanism_ok), model.mechanism_ok) == (int, 1)
    assert (type(model.confidence), model.worked) == (float, True)
    assert model.model_extra == {"unknown_key": {"kept": [1]}} and built.model_extra == {}
    assert check_document({**answer, "mechanism_ok": False})[1].answer.mechanism_ok is False


def test_models_are_read_only() -> None:
    models = check_document(seed_answer("000"))[1]
    model, report = models.answer, models.report
    with pytest.raises(ValidationError, match="frozen"):
        report.comparison.p_value = 0.5  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        del model.verdict
    assert report.comparison.p_value == seed_answer("000")["bench_report"]["comparison"]["p_value"]


def test_absent_and_null_optional_fields_both_read_as_none() -> None:
    report = seed_answer("001")["bench_report"]
    report.pop("track", None)
    report["model"] = None
    built = BenchReport.model_validate(report)
    assert built.track is None and built.model is None and "model" not in built.model_extra
    assert isinstance(built.idea, TunedArm) and isinstance(built.idea.full, SeedStats)
    assert Answer.model_validate({"bench_report": report}).bench_report.track is None


# --------------------------------------------------------------------------- S201


def _set(path: str, value):
    def edit(answer: dict) -> None:
        *parents, last = path.strip("/").split("/")
        node = answer
        for token in parents:
            node = node[int(token)] if isinstance(node, list) else node[token]
        if value is _DELETE:
            del node[int(last) if isinstance(node, list) else last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return edit


_DELETE = object()

VIOLATIONS = [
    # (seed, path, new value, words in the message, claimed)
    ("000", "/bench_report/comparison/p_value", "0.01475", ["'p_value'", "a number", 'string "0.01475"'], "0.01475"),
    ("000", "/bench_report/comparison/p_value", 1.5, ["'p_value'", "at most 1", "1.5"], 1.5),
    ("000", "/bench_report/comparison/p_value", -0.1, ["at least 0"], -0.1),
    ("000", "/bench_report/comparison/n_pairs", -1, ["'n_pairs'", "at least 0"], -1),
    ("000", "/bench_report/comparison/idea_wins", 6.5, ["'idea_wins'", "an integer"], 6.5),
    ("000", "/bench_report/comparison/idea_wins", 1e300, ["'idea_wins'", "at most"], 1e300),
    ("000", "/bench_report/idea/n", "8", ["'n'", "an integer", 'string "8"'], "8"),
    ("000", "/bench_report/idea/std", -0.5, ["'std'", "at least 0"], -0.5),
    ("000", "/bench_report/idea/per_seed/2", "x", ["'per_seed[2]'", "a number"], "x"),
    ("000", "/bench_report/idea/per_seed/3", None, ["'per_seed[3]'", "got null"], None),
    ("001", "/bench_report/baseline/full/per_seed", "1,2,3", ["'per_seed'", "an array"], "1,2,3"),
    (
        "000",
        "/bench_report/metric_direction",
        "lower",
        ["'metric_direction'", '"lower is better"', 'string "lower"'],
        "lower",
    ),
    ("000", "/bench_report/bench_version", "1", ["'bench_version'", "an integer"], "1"),
    ("000", "/mechanism_ok", 2, ["'mechanism_ok'", "one of 0, 1, true, false"], 2),
    ("000", "/bench_report/mechanism_signature/confirmed", "yes", ["'confirmed'", "boolean"], "yes"),
    ("000", "/worked", "true", ["'worked'", "boolean"], "true"),
    ("000", "/files/0", 3, ["'files[0]'", "a string"], 3),
    ("000", "/bench_report/baseline/sweep/1/cfg", "lr=0.003", ["'cfg'", "an object"], "lr=0.003"),
    (
        "000",
        "/bench_report/comparison/verdict",
        ["idea better"],
        ["'verdict'", "a string", "an array of 1 item"],
        ["idea better"],
    ),
    ("000", "/bench_report", "see bench_report.json", ["'bench_report'", "an object"], "see bench_report.json"),
]


@pytest.mark.parametrize(
    "seed, path, value, words, claimed", VIOLATIONS, ids=[v[1] + "=" + repr(v[2]) for v in VIOLATIONS]
)
def test_s201_reports_the_violation_at_its_pointer(seed, path, value, words, claimed):
    findings = validate(edited(seed, _set(path, value)))
    s201 = [f for f in findings if f.rule == "S201"]
    assert [f.pointer for f in s201] == [path], [f.message for f in findings]
    assert all(word in s201[0].message for word in words), s201[0].message
    assert s201[0].claimed == claimed and s201[0].severity is Severity.ERROR


MISSING = [
    ("000", "/bench_report/comparison/verdict", "'comparison' is missing the required field 'verdict'"),
    ("000", "/bench_report/idea/n", "'idea' is missing the required field 'n'"),
    ("001", "/bench_report/baseline/full/std", "'full' is missing the required field 'std'"),
    ("000", "/bench_report/baseline/sweep/1/mean", "'sweep[1]' is missing the required field 'mean'"),
    ("000", "/bench_report/metric_direction", "'bench_report' is missing the required field 'metric_direction'"),
]


@pytest.mark.parametrize("seed, path, message", MISSING, ids=[m[1] for m in MISSING])
def test_s201_missing_fields_point_at_the_missing_key(seed, path, message):
    findings = validate(edited(seed, _set(path, _DELETE)))
    assert [(f.rule, f.pointer, f.message) for f in findings if f.rule == "S201"] == [("S201", path, message)]


def test_an_array_over_max_items_is_one_s201_each():
    answer = seed_answer("000")
    assert validate(answer, max_items=8) == []
    findings = validate(answer, max_items=7)  # both arms' per_seed and per_seed_diffs hold 8
    assert [(f.rule, f.pointer, f.claimed) for f in findings] == [
        ("S201", "/bench_report/baseline/full/per_seed", 8),
        ("S201", "/bench_report/comparison/per_seed_diffs", 8),
        ("S201", "/bench_report/idea/per_seed", 8),
    ]
    assert "more than the limit of 7 (--max-seeds)" in findings[0].message


def test_an_idea_without_full_is_checked_as_the_flat_shape():
    # The shape is decided by the presence of "full" (as in the models), so a
    # tuned idea that lost it reads as a flat idea missing its statistics.
    findings = validate(edited("001", _set("/bench_report/idea/full", _DELETE)))
    assert [(f.rule, f.pointer) for f in findings] == [
        ("S203", "/bench_report/idea/best_cfg"),
        ("S201", "/bench_report/idea/mean"),
        ("S201", "/bench_report/idea/n"),
        ("S201", "/bench_report/idea/per_seed"),
        ("S201", "/bench_report/idea/std"),
        ("S203", "/bench_report/idea/sweep"),
    ]


def test_a_broken_tuned_idea_gets_errors_for_the_tuned_shape_only():
    answer = edited("001", lambda a: a["bench_report"]["idea"]["full"].pop("n"))
    findings = validate(answer)
    assert [(f.rule, f.pointer) for f in findings] == [("S201", "/bench_report/idea/full/n")]


def test_a_broken_flat_idea_gets_errors_for_the_flat_shape_only():
    answer = edited("000", lambda a: a["bench_report"]["idea"].update(mean="10.9"))
    assert [(f.rule, f.pointer) for f in validate(answer)] == [("S201", "/bench_report/idea/mean")]


def test_bare_report_pointers_start_at_the_root():
    report = seed_answer("000")["bench_report"]
    report["comparison"]["p_value"] = "0.01"
    assert [f.pointer for f in validate(report)] == ["/comparison/p_value"]


def test_an_answer_without_its_report_says_so():
    findings = validate({"worked": True, "verdict": "it worked"})
    assert [(f.rule, f.pointer, f.message) for f in findings] == [
        ("S201", "/bench_report", "the answer is missing the required field 'bench_report'")
    ]


def test_non_object_document():
    assert rules(validate([1, 2])) == ["S201"]


def test_findings_are_sorted_and_deterministic():
    def break_many(answer: dict) -> None:
        c = answer["bench_report"]["comparison"]
        c.update(p_value="x", n_pairs=-1, zzz=1)
        answer["bench_report"]["idea"]["per_seed"][2] = "a"
        answer["bench_report"]["idea"]["per_seed"][7] = "b"
        answer["aaa"] = 1
        del c["verdict"]

    first = validate(edited("000", break_many))
    assert first == validate(edited("000", break_many))
    assert [f.pointer for f in first] == [
        "/aaa",
        "/bench_report/comparison/n_pairs",
        "/bench_report/comparison/p_value",
        "/bench_report/comparison/verdict",
        "/bench_report/comparison/zzz",
        "/bench_report/idea/per_seed/2",
        "/bench_report/idea/per_seed/7",
    ]


# --------------------------------------------------------------------------- S202


def test_s202_unsupported_bench_version():
    findings = validate(edited("000", lambda a: a["bench_report"].update(bench_version=2)))
    assert [(f.rule, f.pointer, f.claimed) for f in findings] == [("S202", "/bench_report/bench_version", 2)]
    assert findings[0].severity is Severity.ERROR and "not supported" in findings[0].message
    assert SUPPORTED_BENCH_VERSIONS == {1}


def test_s202_on_a_bare_report():
    report = seed_answer("001")["bench_report"]
    report["bench_version"] = 0
    assert [(f.rule, f.pointer) for f in validate(report)] == [("S202", "/bench_version")]


@pytest.mark.parametrize(
    "version, expected", [(1, []), (1.0, []), ("2", ["S201"]), (True, ["S201"]), (1.5, ["S201"]), (1e300, ["S201"])]
)
def test_s202_only_for_well_formed_versions(version, expected):
    assert rules(validate(edited("000", lambda a: a["bench_report"].update(bench_version=version)))) == expected


# --------------------------------------------------------------------------- S203


def test_s203_one_info_per_unknown_key_with_its_pointer():
    def add_unknown(answer: dict) -> None:
        answer["bench_report"]["comparison"].update(p_val=0.01, wins=7)
        answer["bench_report"]["baseline"]["sweep"][0]["std"] = 1.0
        answer["notes"] = "x"

    findings = validate(edited("000", add_unknown))
    assert [(f.rule, f.pointer) for f in findings] == [
        ("S203", "/bench_report/baseline/sweep/0/std"),
        ("S203", "/bench_report/comparison/p_val"),
        ("S203", "/bench_report/comparison/wins"),
        ("S203", "/notes"),
    ]
    assert all(f.severity is Severity.INFO for f in findings)
    assert "unknown key 'p_val' in 'comparison'" in findings[1].message


def test_s203_is_silent_on_the_seeds_known_extras():
    # confidence, limitations, math_check, protocol_note, system_judged, idea_sweep
    assert validate(seed_answer("000")) == [] and validate(seed_answer("001")) == []


def test_s203_flags_flat_fields_inside_a_tuned_idea():
    answer = edited("001", lambda a: a["bench_report"]["idea"].update(cfg={"lr": 0.006}))
    assert [(f.rule, f.pointer) for f in validate(answer)] == [("S203", "/bench_report/idea/cfg")]


# --------------------------------------------------------------------------- the pipeline


def test_every_s_rule_through_the_pipeline(audit):
    s201 = audit(as_transcript(edited("000", _set("/bench_report/comparison/p_value", "0.01"))))
    assert s201.status == "error" and codes(s201) == {"S201"}
    s202 = audit(as_transcript(edited("000", _set("/bench_report/bench_version", 3))))
    assert s202.status == "error" and codes(s202) == {"S202"}
    s203 = audit(as_transcript(edited("000", _set("/bench_report/comparison/p_val", 0.01))))
    assert s203.status == "pass" and "S203" in codes(s203) and s203.recomputed is not None


# --------------------------------------------------------------------------- schema and models agree

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 10)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e300, -1e300, 2.0**63, -(2.0**63), 2**70, 8.0, 0.5])
    | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)


def _pointers(value, pointer=""):
    yield pointer
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _pointers(item, f"{pointer}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _pointers(item, f"{pointer}/{index}")


def assert_models_hold(model, data) -> None:
    """``model`` holds each value of ``data`` with its declared type, null or absent fields as None,
    and every undeclared key, as written, in ``model_extra``."""
    assert isinstance(model, BaseModel)
    fields = type(model).model_fields
    assert model.model_extra == {key: value for key, value in data.items() if key not in fields}
    for name in fields:
        value, written = getattr(model, name), data.get(name)
        if isinstance(value, BaseModel):
            assert_models_hold(value, written)
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            assert len(value) == len(written)
            for item, item_written in zip(value, written):
                assert_models_hold(item, item_written)
        else:
            assert value == written and (value is None) == (written is None)


SEED_POINTERS = {which: [p for p in _pointers(seed_answer(which)) if p] for which in ("000", "001")}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["000", "001"]), st.data(), JSON_VALUES, st.booleans(), st.sampled_from([None, 4]))
def test_the_models_accept_exactly_what_the_schema_accepts(which, data, value, delete, max_items):
    """The pydantic models and the published JSON Schema agree on every edited answer and bare
    report: both accept it or both refuse it, and what the models accept they hold as written."""
    path = data.draw(st.sampled_from(SEED_POINTERS[which]))
    document = edited(which, _set(path, _DELETE if delete else copy.deepcopy(value)))
    for name, doc in ((ANSWER_SCHEMA, document), (BENCH_REPORT_SCHEMA, document.get("bench_report"))):
        errors = [
            e for e in validator(name, max_items=max_items).iter_errors(doc) if e.validator != "additionalProperties"
        ]
        findings, models = check_document(doc, max_items=max_items)
        if name == BENCH_REPORT_SCHEMA and isinstance(doc, dict) and is_answer(doc):
            continue  # a report edited into answer shape is read as an answer
        assert (models is not None) == (errors == []), ([e.message for e in errors], findings)
        if models is not None:
            typed = models.answer if models.answer is not None else models.report
            assert_models_hold(typed, doc)  # every value as written, none added or lost
            assert isinstance(models.report.idea, TunedArm) == ("full" in (doc.get("bench_report") or doc)["idea"])
