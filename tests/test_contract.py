"""The JSON contract (auditor.formats.contract): the published schema is generated from it and current, real
outputs validate against that schema, typed access works, and what the contract refuses is never written."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, SEED_000
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from auditor.findings import Finding, Severity
from auditor.formats.contract import (
    Recomputed,
    Result,
    ResultLine,
    RunDocument,
    schema,
    schema_text,
)
from auditor.formats.jsonl import result_line, resume_from
from auditor.result import AuditResult, Status

SCHEMA_FILE = ROOT / "schemas" / "audit-output.schema.json"


def _validator(definition: str | None = None) -> Draft202012Validator:
    """The committed schema's validator for its root (the json document) or one of its ``$defs``."""
    published = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    if definition is not None:
        published = {**published, "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(published)


def _errors(validator: Draft202012Validator, instance: object) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


def test_the_committed_schema_is_the_one_the_models_generate() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "run: python -m auditor.formats.contract > schemas/audit-output.schema.json"
    )
    Draft202012Validator.check_schema(schema())
    done = subprocess.run(
        [sys.executable, "-m", "auditor.formats.contract"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout == schema_text()


@pytest.fixture(scope="module")
def fixture_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list[dict]]:
    """The json document of every fixture transcript, and the jsonl lines (signed, as the command line
    writes them) of the answers and a batch whose cross-answer check adds late findings."""
    from auditor.cli import main

    folder = tmp_path_factory.mktemp("out")
    common = ["--isolated", "--quiet", "--jobs", "1"]
    assert main(["audit", str(FIXTURES), "--format", "json", "-o", str(folder / "all.json"), *common]) == 1
    batch = [str(FIXTURES / "answers"), str(FIXTURES / "batches" / "x901")]
    assert main(["audit", *batch, "--format", "jsonl", "-o", str(folder / "out.jsonl"), *common]) == 1
    document = json.loads((folder / "all.json").read_text(encoding="utf-8"))
    lines = [json.loads(line) for line in (folder / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    return document, lines


def test_the_fixtures_json_output_validates_against_the_schema(fixture_runs) -> None:
    document, _ = fixture_runs
    assert _errors(_validator(), document) == []
    # Every part of the contract occurs: errors (no recomputed, no claimed), claims, the cross figures, skipped files.
    results = document["results"]
    assert {r["status"] for r in results} == {"pass", "fail", "error"}
    assert any("claimed" not in r for r in results) and any(r["recomputed"] is None for r in results)
    assert "cross" in document and document["summary"]["skipped"] >= 1
    assert RunDocument.model_validate(document).dump() == document  # the models read back what they wrote


def test_the_fixtures_jsonl_output_validates_against_the_schema(fixture_runs) -> None:
    _, lines = fixture_runs
    *results, summary = lines
    line_schema = _validator("ResultLine")
    assert results and all(_errors(line_schema, line) == [] for line in results)
    assert all("resume" in line and "cross" in line for line in results)  # signed, with the cross facts
    assert _errors(_validator("SummaryLine"), summary) == []
    assert summary["late_findings"] and summary["late_findings"][0]["source"]  # X901 fires in the batch
    assert list(summary["late_findings"][0])[:2] == ["source", "rule"]


def test_the_schema_is_not_vacuous(fixture_runs) -> None:
    """A line missing a key, with a key the contract does not name, or a value of the wrong type fails it."""
    document, _ = fixture_runs
    result = next(r for r in document["results"] if r["recomputed"] is not None)
    validator = _validator("Result")
    assert _errors(validator, result) == []
    missing = {k: v for k, v in result.items() if k != "status"}
    extra = {**result, "verdict_is_fine": True}
    wrong = {**result, "recomputed": {**result["recomputed"], "p_value": "0.01"}}
    unknown_severity = (
        {**result, "findings": [{**result["findings"][0], "severity": "fatal"}]} if result["findings"] else extra
    )
    for broken in (missing, extra, wrong, unknown_severity):
        assert _errors(validator, broken)
    assert _errors(_validator(), {**document, "results": [missing]})


def test_typed_access_to_a_result() -> None:
    from auditor import audit_file

    result = audit_file(SEED_000)
    typed = result.typed()
    assert isinstance(typed, Result) and isinstance(typed.recomputed, Recomputed)
    assert typed.recomputed.p_value == 0.015625 and typed.recomputed.verdict == "idea better (significant)"
    assert typed.claimed is not None and typed.claimed.p_value == 0.01475 and typed.claimed.n_pairs == 8
    assert typed.status == "pass" or typed.status == "fail"
    assert all(isinstance(f.severity, Severity) for f in typed.findings)
    assert Result.of(result) == typed


_RECOMPUTED = {
    "n_pairs": 8,
    "delta_mean": -0.01,
    "idea_wins": 7,
    "p_value": 0.015625,
    "p_value_one_sided": 0.0078125,
    "mde": 0.004,
    "mde_rel_pct": 0.04,
    "verdict": "idea better (significant)",
    "p_value_method": "exact",
    "baseline_mean": 10.93,
    "idea_mean": 10.92,
}


def test_a_value_the_contract_refuses_is_never_written() -> None:
    """NaN, a missing statistic or an unknown key raises (ValueError) instead of writing a line that breaks
    readers; the batch's worker then hands the whole result to the parent, which fails on it as before."""
    for recomputed in (
        {**_RECOMPUTED, "p_value": math.nan},
        {**_RECOMPUTED, "mde": math.inf},
        {k: v for k, v in _RECOMPUTED.items() if k != "p_value"},
        {**_RECOMPUTED, "p": 0.5},
    ):
        result = AuditResult("a.txt", Status.PASS, (), recomputed=recomputed)
        with pytest.raises(ValueError):
            result_line(result)
        with pytest.raises(ValidationError):
            result.typed()
    # A finding's non-finite values are written as text by the pipeline, so they pass.
    finding = Finding("A302", Severity.ERROR, "m", "/x", math.nan, [math.inf, 1.5])
    line = json.loads(result_line(AuditResult("a.txt", Status.FAIL, (finding,), recomputed=_RECOMPUTED)))
    assert (line["findings"][0]["claimed"], line["findings"][0]["recomputed"]) == ("nan", ["inf", 1.5])


def test_the_summary_line_written_a_late_finding_at_a_time_is_the_models_text() -> None:
    """The jsonl summary line is written in pieces (a batch may hold one late finding per answer); it is
    the SummaryLine model's text all the same, with or without late findings, and each one is validated."""
    from auditor.formats import Run
    from auditor.formats.contract import SummaryLine, json_text
    from auditor.formats.jsonl import summary_line

    result = AuditResult("a.txt", Status.FAIL, (), recomputed=_RECOMPUTED)
    run = Run((result,), None, config=None)
    late = [
        ("a.txt", Finding("X901", Severity.WARNING, "differs \u00e9", "/b/0", 1.5, 2.5)),
        ("b.txt", Finding("X902", Severity.WARNING, "m", "/v", "idea better", None)),
    ]
    for found in (late, []):
        dicts = [{"source": source, **f.to_dict()} for source, f in found]
        assert summary_line(run, found) == json_text(SummaryLine.of(run, dicts)) + "\n"
    assert json.loads(summary_line(run, late))["late_findings"][0]["message"] == "differs \u00e9"
    with pytest.raises(ValueError):  # a late finding the contract refuses is not written
        summary_line(run, [("a.txt", Finding("X901", Severity.WARNING, "m", "/b/0", line=0, column=1))])


def test_claimed_numbers_are_written_as_the_answer_wrote_them() -> None:
    claimed = {
        "n_pairs": 8,
        "delta_mean": 0,
        "idea_wins": 7,
        "p_value": 1,
        "mde": None,
        "mde_rel_pct": 2.5,
        "verdict": "no measurable effect",
    }
    line = result_line(AuditResult("a.txt", Status.PASS, (), recomputed=_RECOMPUTED, claimed=claimed))
    assert '"delta_mean":0,' in line and '"p_value":1,' in line  # not 0.0 and 1.0
    assert '"p_value":0.015625' in line and '"mde":0.004' in line


def test_every_agent_string_reaches_the_typed_model_cleaned() -> None:
    hostile = "ok\x1b]52;c;ZXZpbA==\x07\u202e\x9b2K"
    finding = Finding("V401", Severity.ERROR, f"verdict {hostile}", f"/x{hostile}", hostile, {hostile: [hostile]})
    cross = {
        "track": hostile,
        "model": None,
        "baseline_cfg": {hostile: hostile},
        "baseline_per_seed": [1.0],
        "baseline_pointer": "/b",
        "verdict_pointer": "/v",
    }
    result = AuditResult(
        f"a{hostile}.txt",
        Status.FAIL,
        (finding,),
        recomputed=_RECOMPUTED,
        claimed={
            **{k: _RECOMPUTED[k] for k in ("n_pairs", "delta_mean", "idea_wins", "p_value", "mde", "mde_rel_pct")},
            "verdict": hostile,
        },
        cross=cross,
    )
    text = result_line(result) + json.dumps(Result.of(result).dump()) + repr(ResultLine.of(result))
    assert "\x1b" not in text and "\u202e" not in text and "\x9b" not in text and "ZXZpbA" not in text
    assert ResultLine.of(result).cross.track == "ok"


def test_a_resumed_line_that_breaks_the_contract_is_audited_again(tmp_path: Path) -> None:
    """--resume reads each line back through the contract: a line with a wrong type does not count."""
    good = AuditResult("a.txt", Status.PASS, (), recomputed=_RECOMPUTED)
    bad = json.loads(result_line(AuditResult("b.txt", Status.PASS, (), recomputed=_RECOMPUTED)))
    bad["recomputed"]["n_pairs"] = "eight"
    out = tmp_path / "out.jsonl"
    out.write_text(result_line(good) + json.dumps(bad) + "\n", encoding="utf-8")
    done = resume_from(out, accept=lambda line, parse: parse(line))  # the test wrote the file
    assert list(done) == ["a.txt"] and done["a.txt"].typed().recomputed.n_pairs == 8
    assert out.read_text(encoding="utf-8") == result_line(good)  # the broken line is dropped, to be audited again
