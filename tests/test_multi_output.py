"""``--output-format FORMAT:PATH``: several reports from one audit, through the command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from auditor.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SARIF_SCHEMA = Path(__file__).resolve().parent / "data" / "schemas" / "sarif-schema-2.1.0.json"


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    folder = tmp_path / "answers"
    folder.mkdir()
    for name in ("defects/A307_p_not_a_resample_estimate.txt", "silent/T601_interior_optimum.txt"):
        shutil.copy(FIXTURES / name, folder / Path(name).name)
    return folder


def test_one_run_writes_stdout_and_every_named_file(answers: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    code = main(
        [
            "audit",
            "answers",
            "-q",
            "--format",
            "github",
            "--output-format",
            "sarif:out/a.sarif",
            "--output-format",
            "json:r,1.json",  # a comma in a path stays in it
            "--output-format",
            "MARKDOWN:summary.md",  # format names in any case
            "--output-format",
            "junit:j.xml",
        ]
    )
    assert code == 1
    stdout = capsys.readouterr().out
    assert "::error file=answers/A307_p_not_a_resample_estimate.txt" in stdout
    document = json.loads((tmp_path / "r,1.json").read_text(encoding="utf-8"))
    assert document["summary"] == {"files": 2, "pass": 1, "fail": 1, "error": 0}
    sarif = json.loads((tmp_path / "out/a.sarif").read_text(encoding="utf-8"))
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} >= {"A307"}
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").startswith("## auditor: ✗ 1 of 2")
    assert "<testsuite" in (tmp_path / "j.xml").read_text(encoding="utf-8")


def test_the_reports_agree_and_sarif_is_schema_valid(answers: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """The same findings in every report: they come from one audit, not several."""
    monkeypatch.chdir(tmp_path)
    args = ["audit", "answers", "-q", "--format", "json", "-o", "main.json"]
    code = main([*args, "--output-format", "sarif:a.sarif", "--output-format", "concise:c.txt"])
    assert code == 1
    document = json.loads((tmp_path / "main.json").read_text(encoding="utf-8"))
    sarif = json.loads((tmp_path / "a.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(sarif)
    json_rules = sorted(f["rule"] for r in document["results"] for f in r["findings"])
    assert sorted(r["ruleId"] for r in sarif["runs"][0]["results"]) == json_rules
    concise = (tmp_path / "c.txt").read_text(encoding="utf-8").splitlines()
    assert sorted(line.split(": ")[1].split()[0] for line in concise[:-1]) == json_rules
    assert capsys.readouterr().out == ""  # the main report went to -o


def test_html_among_the_outputs_draws_its_charts(answers: Path, tmp_path: Path, monkeypatch) -> None:
    """The per-seed data the charts need is kept when html is any of the outputs, not only --format."""
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "answers", "-q", "--format", "concise", "--output-format", "html:r.html"]) == 1
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.count('<svg class="chart"') + page.count('class="chart">') >= 4


def test_jsonl_as_a_further_output_is_the_whole_run(answers: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "answers", "-q", "--format", "concise", "--output-format", "jsonl:r.jsonl"]) == 1
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 3 and lines[-1]["summary"]["files"] == 2


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("sarif", "expected FORMAT:PATH"),
        (":a.sarif", "expected FORMAT:PATH"),
        ("sarif:", "expected FORMAT:PATH"),
        ("yaml:a.yaml", "unknown format 'yaml'"),
        ("json:-", "stdout takes the --format report"),
        ("json:same.txt", "same.txt is written twice"),
    ],
)
def test_bad_targets_are_usage_errors_before_any_audit(
    answers: Path, tmp_path: Path, monkeypatch, capsys, value: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["audit", "answers", "-q", "-o", "same.txt", "--output-format", value])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "same.txt").exists()


def test_an_unwritable_target_is_a_usage_error(answers: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["audit", "answers", "-q", "--format", "concise", "--output-format", "sarif:missing/a.sarif"])
    assert code == 2
    assert "cannot write missing/a.sarif" in capsys.readouterr().err


def test_a_planted_link_is_not_written_through(answers: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """The agent may plant a link where the summary goes: the report replaces no file it points to."""
    monkeypatch.chdir(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep", encoding="utf-8")
    (tmp_path / "summary.md").symlink_to(victim)
    code = main(["audit", "answers", "-q", "--format", "concise", "--output-format", "markdown:summary.md"])
    assert code == 2
    assert victim.read_text(encoding="utf-8") == "keep"


def test_a_configuration_file_cannot_add_outputs(answers: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """Where reports go is the command line's: a [tool.auditor] key for it is unknown."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.auditor]\noutput-format = ["json:x.json"]\n', encoding="utf-8")
    assert main(["audit", "answers", "-q", "--config", "pyproject.toml"]) == 2
    assert "unknown key 'output-format'" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
