"""Output formats: SARIF against the official schema, JUnit, GitHub commands, jsonl, text."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from conftest import FIXTURES, SHARED, audit_tasks

from auditor.audit import audit_bytes
from auditor.batch.executors import Task
from auditor.batch.run import cross_check
from auditor.files.discovery import discover
from auditor.findings import Finding, Severity, all_rules
from auditor.formats import FORMATS, Run, writer
from auditor.formats.github import annotation, escape_data, escape_property
from auditor.formats.sarif import artifact_uri
from auditor.options.models import AuditOptions

SARIF_SCHEMA = SHARED / "schemas" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def fixture_run() -> Run:
    """The whole fixture set, cross-checked: failures, parse errors and passes."""
    paths = discover([str(FIXTURES)])
    results = audit_tasks([Task(p, AuditOptions()) for p in paths], jobs=1)
    results, cross = cross_check(results, lambda s: AuditOptions(), fdr=0.05, alpha=0.05)
    return Run(tuple(results), cross)


def _render(run: Run, name: str) -> str:
    out = io.StringIO()
    writer(name)(run, out)
    return out.getvalue()


def test_every_format_is_registered() -> None:
    assert {"text", "concise", "json", "jsonl", "sarif", "junit", "github", "html"} <= set(FORMATS)


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


# --------------------------------------------------------------------------- line and column

A304_SOURCE = (FIXTURES / "defects" / "A304_seed4_sign_flipped.txt").read_text(encoding="utf-8")
SEED4 = "/bench_report/comparison/per_seed_diffs/4"


@pytest.fixture(scope="module")
def fenced_run() -> tuple[Run, int, int]:
    """A304 in a fenced transcript with a two-line header: the run, and where seed 4's diff is."""
    body = A304_SOURCE[A304_SOURCE.index("{") :]
    text = "Réponse de l'agent 😀:\n\n```json\n" + body + "\n```\nThat is all.\n"
    lines = text.split("\n")
    line = next(i for i, row in enumerate(lines, 1) if i > 3 and row.strip().startswith("-0.0035953521728"))
    column = lines[line - 1].index("-") + 1
    result = audit_bytes(text.encode("utf-8"), "answers/a304.txt", AuditOptions())
    return Run((result,)), line, column


def test_the_finding_is_located_at_its_value(fenced_run) -> None:
    run, line, column = fenced_run
    (finding,) = [f for f in run.results[0].findings if f.rule == "A304"]
    assert (finding.pointer, finding.line, finding.column) == (SEED4, line, column)
    assert line > 90  # below the header and the fence, not counted from the answer's first line


def test_sarif_region_has_the_line_and_column(fenced_run) -> None:
    run, line, column = fenced_run
    document = json.loads(_render(run, "sarif"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(document)
    assert document["runs"][0]["columnKind"] == "unicodeCodePoints"
    (result,) = [r for r in document["runs"][0]["results"] if r["ruleId"] == "A304"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": line, "startColumn": column}
    assert all("region" in r["locations"][0]["physicalLocation"] for r in document["runs"][0]["results"])


def test_github_annotation_has_line_and_col(fenced_run) -> None:
    run, line, column = fenced_run
    (command,) = [c for c in _render(run, "github").splitlines() if "title=A304" in c]
    assert command.startswith(f"::error file=answers/a304.txt,line={line},col={column},title=A304::{SEED4}: ")
    unplaced = Finding("X901", Severity.WARNING, "m", "/a")  # a cross-answer finding has no place
    assert annotation("a.txt", unplaced) == "::warning file=a.txt,title=X901::/a: m"


def test_text_shows_path_line_col(fenced_run) -> None:
    run, line, column = fenced_run
    assert f"answers/a304.txt:{line}:{column}: {SEED4}" in _render(run, "text")


def test_concise_is_one_line_per_finding_as_ruff_writes_it(fenced_run) -> None:
    run, line, column = fenced_run
    lines = _render(run, "concise").splitlines()
    findings = run.results[0].findings
    assert len(lines) == len(findings) + 1 and lines[-1].startswith(f"Found {len(findings)} findings")
    (a304,) = [row for row in lines if " A304 " in row]
    message = next(f.message for f in findings if f.rule == "A304")
    assert a304 == f"answers/a304.txt:{line}:{column}: A304 {message}"
    places = [tuple(map(int, row.split(":")[1:3])) for row in lines[:-1]]
    assert places == sorted(places)  # in the order of the text, as ruff lists them


def test_concise_places_unlocated_findings_at_the_start_and_keeps_one_line() -> None:
    from auditor.formats.concise import line

    assert line("-", Finding("X901", Severity.WARNING, "two\nlines", "/a")) == "stdin:1:1: X901 two lines"
    assert _render(Run(()), "concise") == "All checks passed! (0 files: 0 pass, 0 fail, 0 error)\n"


# --------------------------------------------------------------------------- the rerun's outcome


def _rerun_text(rerun: dict) -> str:
    """The rerun line of a one-transcript panel, without the panel's border and padding."""
    from auditor.result import AuditResult

    text = _render(Run((AuditResult("a.txt", "pass", (), rerun=rerun),)), "text")
    return next(row for row in text.splitlines() if "rerun:" in row).strip("│ ")


def test_text_shows_the_rerun_outcome_and_its_statistics() -> None:
    record = {
        "reproduced": True,
        "device": "cpu",
        "seconds": 12.3,
        "exit_code": 0,
        "verdict": "better",
        "p_value": 0.0078,
        "delta_mean": -0.0123,
        "cached": False,
    }
    assert _rerun_text(record) == "rerun: reproduced (cpu, 12.3 s) — verdict better, delta_mean = -0.0123, p = 0.0078"
    failed = {"reproduced": False, "device": "cuda", "seconds": 3.0, "exit_code": 1, "verdict": None, "cached": True}
    assert _rerun_text(failed) == "rerun: NOT reproduced (cuda, 3 s, exit 1) (cached)"


def test_text_rerun_line_without_the_newer_keys_or_a_run() -> None:
    older = {"reproduced": False, "device": "cpu", "seconds": 2.5, "exit_code": 0, "verdict": "worse"}
    assert _rerun_text(older) == "rerun: NOT reproduced (cpu, 2.5 s) — verdict worse"
    assert _rerun_text({"reproduced": False, "seconds": None}) == "rerun: NOT reproduced (nothing was run)"


def _panel(answer: dict) -> dict[str, str]:
    """The text panel's comparison rows of one answer: label -> the row's mark."""
    result = audit_bytes(json.dumps(answer), "answer.txt")
    text = _render(Run((result,), None), "text")
    rows = {}
    for line in text.splitlines():
        cells = line.strip("│ ").split()
        if cells and cells[0] in ("delta_mean", "wins", "p_value", "mde", "verdict"):
            rows[cells[0]] = cells[-1]
    return rows


def test_text_panel_marks_equal_accepted_and_disputed_apart() -> None:
    """Issue 31 item 7: ✓ only for equal values, ≈ for accepted ones, ✗ where the wins row's n_pairs differs."""
    from conftest import seed_answer

    answer = seed_answer()
    marks = _panel(answer)
    assert marks == {"delta_mean": "✓", "wins": "✓", "p_value": "≈", "mde": "≈", "verdict": "✓"}
    answer["bench_report"]["comparison"]["n_pairs"] = 9  # "7/9" against 7/8
    assert _panel(answer)["wins"] == "✗"
