"""Output formats: SARIF against the official schema, JUnit, GitHub commands, jsonl, text."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from auditor.batch import audit_all, cross_check
from auditor.discovery import discover
from auditor.executors import Task
from auditor.findings import Finding, Severity, all_rules
from auditor.formats import FORMATS, Run, writer
from auditor.formats.github import annotation, escape_data, escape_property
from auditor.formats.sarif import artifact_uri
from auditor.options import AuditOptions

from conftest import FIXTURES, SHARED

SARIF_SCHEMA = SHARED / "schemas" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def fixture_run() -> Run:
    """The whole fixture set, cross-checked: failures, parse errors and passes."""
    paths = discover([str(FIXTURES)])
    results = audit_all([Task(p, AuditOptions()) for p in paths], jobs=1)
    results, cross = cross_check(results, lambda s: AuditOptions(), fdr=0.05, alpha=0.05)
    return Run(tuple(results), cross)


def _render(run: Run, name: str) -> str:
    out = io.StringIO()
    writer(name)(run, out)
    return out.getvalue()


def test_every_format_is_registered() -> None:
    assert {"text", "json", "jsonl", "sarif", "junit", "github", "html"} <= set(FORMATS)


def test_sarif_validates_against_the_official_schema(fixture_run) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    document = json.loads(_render(fixture_run, "sarif"))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER).validate(document)
    assert document["version"] == "2.1.0" and "sarif-2.1.0" in document["$schema"]


def test_sarif_rules_and_results(fixture_run) -> None:
    run = json.loads(_render(fixture_run, "sarif"))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()]
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["markdown"] and rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    assert "## Why is this bad?" in next(r for r in rules if r["id"] == "X901")["help"]["markdown"]
    findings = [(r, f) for r in fixture_run.results for f in r.findings]
    assert len(run["results"]) == len(findings)
    for sarif, (result, f) in zip(run["results"], findings):
        assert sarif["ruleId"] == f.rule and rules[sarif["ruleIndex"]]["id"] == f.rule
        assert sarif["level"] == {"error": "error", "warning": "warning", "info": "note"}[f.severity.value]
        location = sarif["locations"][0]
        uri = location["physicalLocation"]["artifactLocation"]["uri"]
        assert "\\" not in uri and not uri.startswith("/") and uri.endswith(result.source.rsplit("/", 1)[-1])
        if f.pointer:
            assert f.pointer in sarif["message"]["text"]
            assert location["logicalLocations"][0]["fullyQualifiedName"] == f.pointer


def test_sarif_uris_are_relative_with_forward_slashes(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert artifact_uri(str(tmp_path / "a b" / "x.txt")) == "a%20b/x.txt"
    assert artifact_uri("./answers/x.txt") == "answers/x.txt"
    assert artifact_uri("-") == "stdin"


def test_junit_has_one_testcase_per_transcript(fixture_run) -> None:
    root = ET.fromstring(_render(fixture_run, "junit"))
    suites = root.findall("testsuite")
    assert len(suites) == 1
    cases = suites[0].findall("testcase")
    assert [c.get("name") for c in cases] == [r.source for r in fixture_run.results]
    for case, result in zip(cases, fixture_run.results):
        failure, error = case.find("failure"), case.find("error")
        assert (failure is not None) == (result.status == "fail")
        assert (error is not None) == (result.status == "error")
        if failure is not None:
            assert all(f.rule in failure.text for f in result.findings)
    s = fixture_run.summary
    assert suites[0].get("tests") == str(s["files"]) and suites[0].get("failures") == str(s["fail"])
    assert suites[0].get("errors") == str(s["error"]) and s["error"] > 0


def test_github_escapes_per_the_workflow_command_spec() -> None:
    assert escape_data("50% a\r\nb:c,d") == "50%25 a%0D%0Ab:c,d"
    assert escape_property("dir,x/a:b%.txt") == "dir%2Cx/a%3Ab%25.txt"
    f = Finding("A307", Severity.ERROR, "p is wrong\nvery", "/bench_report/comparison/p_value")
    assert annotation("answers/a,b.txt", f) == (
        "::error file=answers/a%2Cb.txt,title=A307::/bench_report/comparison/p_value: p is wrong%0Avery"
    )
    assert annotation("a.txt", Finding("T601", Severity.WARNING, "m")).startswith("::warning ")
    assert annotation("a.txt", Finding("S203", Severity.INFO, "m")).startswith("::notice ")


def test_github_emits_one_command_per_finding(fixture_run) -> None:
    lines = _render(fixture_run, "github").splitlines()
    commands = [line for line in lines if line.startswith("::")]
    assert len(commands) == sum(len(r.findings) for r in fixture_run.results)
    assert all(line.split(" ", 1)[0] in {"::error", "::warning", "::notice"} for line in commands)


def test_jsonl_write_has_one_line_per_transcript(fixture_run) -> None:
    lines = [json.loads(line) for line in _render(fixture_run, "jsonl").splitlines()]
    assert [line["source"] for line in lines[:-1]] == [r.source for r in fixture_run.results]
    assert lines[-1]["summary"] == fixture_run.summary


def test_text_table_lists_failures_first_with_totals(fixture_run) -> None:
    text = _render(fixture_run, "text")
    assert "most frequent:" in text and "Benjamini-Hochberg" in text
    first_pass = text.index(" PASS ")
    assert text.rfind(" FAIL ") < first_pass and text.rfind(" ERROR ") < first_pass


def test_text_batch_details_the_first_failures_above_the_table(fixture_run) -> None:
    from auditor.formats.text import DETAILED_FAILURES

    text = _render(fixture_run, "text")
    failing = [r for r in fixture_run.results if r.status != "pass"]
    assert len(failing) > DETAILED_FAILURES
    assert text.count("╭─") == DETAILED_FAILURES  # one panel per detailed failure
    assert f"and {len(failing) - DETAILED_FAILURES} more failing transcripts" in text
    assert text.index("╭─") < text.index("most frequent:")
    first = failing[0]
    assert first.findings[0].message.split()[0] in text
