"""The command line end to end: table, exit codes, usage errors, the console entry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, SEED_000, SEED_001

from auditor.cli import main


def test_audit_of_the_fixture_folder_prints_the_table_and_exits_1(capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["audit", "fixtures/", "-q"]) == 1
    out = capsys.readouterr().out
    assert "transcripts in fixtures/" in out
    assert "most frequent:" in out and "ideas tested:" in out
    rows = [line for line in out.splitlines() if line.lstrip().startswith(("answers/", "defects/", "silent/"))]
    statuses = [
        line.split()[1] for line in rows if len(line.split()) > 1 and line.split()[1] in {"FAIL", "ERROR", "PASS"}
    ]
    assert statuses == sorted(statuses, key=["FAIL", "ERROR", "PASS"].index), "failures first"
    assert "bench_report.json" not in out


def test_console_entry_runs_as_a_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "auditor", "audit", "fixtures/answers"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "001_0adda411732ac938.txt" in proc.stdout and "FAIL" in proc.stdout
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal


def test_single_transcript_keeps_the_detailed_panel(capsys) -> None:
    assert main(["audit", str(SEED_000)]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "quantity" in out and "T601" in out


@pytest.mark.parametrize(
    "argv, says",
    [
        (["audit", "--no-such-option", "x"], "unrecognized arguments: --no-such-option"),
        (["audit", "--format", "xml", str(SEED_000)], "argument --format: invalid choice: 'xml'"),
        (["audit", "does/not/exist.txt"], "no such file or directory: does/not/exist.txt"),
        (["audit", "--baseline", "does/not/exist.json", str(SEED_000)], "cannot read baseline does/not/exist.json"),
        (
            ["audit", "--config", "does/not/pyproject.toml", str(SEED_000)],
            "config file not found: does/not/pyproject.toml",
        ),
        (["audit", "--resume", str(SEED_000)], "--resume needs --format jsonl and --output FILE"),
        (["audit", "--statistics", "--format", "json", str(SEED_000)], "it needs --format text"),
        (
            ["audit", "--fail-on", "sometimes", str(SEED_000)],
            "--fail-on: expected one of error, warning, info, never, got 'sometimes'",
        ),
        (["audit", "--alpha", "abc", str(SEED_000)], "--alpha: expected a number, got 'abc'"),
        (["audit", "--timeout", "-1", "--rerun", str(SEED_000)], "--timeout: expected a positive number, got -1"),
        (["audit", "--select", "XYZ", str(SEED_000)], "unknown rule code or prefix 'XYZ'"),
        (["audit", "--ignore", "T6O1", str(SEED_000)], "unknown rule code or prefix 'T6O1' (did you mean 'T601'?)"),
        (["audit", "--extend-select", "A3,Q", str(SEED_000)], "unknown rule code or prefix 'Q'"),
        (["audit", "--jobs", "0", str(SEED_000)], "expected a positive integer, got 0"),
        (["audit", "--fdr", "1.5", str(SEED_000)], "expected a number between 0 and 1, got 1.5"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
    ids=lambda value: None if isinstance(value, list) else value[:24],
)
def test_usage_errors_exit_2(argv, says, capsys) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.startswith("auditor: error: ") and says in err and err.count("\n") == 1, err
    assert out == ""


def test_an_empty_folder_is_a_usage_error(tmp_path, capsys) -> None:
    assert main(["audit", str(tmp_path)]) == 2
    assert "no transcripts" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, code",
    [
        ([], 1),
        (["--exit-zero"], 0),
        (["--fail-on", "never"], 0),
        (["--ignore", "D501"], 0),
        (["--select", "T6"], 0),
    ],
)
def test_fail_on_and_exit_zero(extra, code, capsys) -> None:
    assert main(["audit", "-q", str(SEED_001), *extra]) == code


def test_fail_on_warning_fails_on_seed_000_warnings(capsys) -> None:
    assert main(["audit", str(SEED_000), "--fail-on", "warning"]) == 1


def test_statistics_counts_findings_per_rule(capsys) -> None:
    assert main(["audit", "-q", str(FIXTURES / "answers"), "--statistics"]) == 1
    lines = capsys.readouterr().out.splitlines()
    by_code = {line.split()[1]: line.split() for line in lines if line.strip()}
    assert by_code["T601"][0] == "4" and by_code["D501"][0] == "1"
    assert "idea-identical-to-baseline" in by_code["D501"]


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "junit", "github", "jsonl", "html"])
def test_output_file_receives_every_format(fmt, tmp_path, capsys) -> None:
    argv = ["audit", "-q", str(FIXTURES / "answers"), "--format", fmt]
    assert main(argv) == 1
    printed = capsys.readouterr().out
    target = tmp_path / f"out.{fmt}"
    assert main([*argv, "--output", str(target)]) == 1
    assert capsys.readouterr().out == ""
    import re

    untimed = lambda text: re.sub(r'time="[0-9.]+"', 'time=""', text)  # noqa: E731 -- JUnit's times vary
    assert printed.strip() and untimed(target.read_text(encoding="utf-8")) == untimed(printed)  # stdout's report
    assert [p.name for p in tmp_path.iterdir()] == [target.name], "no temporary file left behind"


def test_json_contract_for_a_batch_carries_the_cross_summary(capsys) -> None:
    assert main(["audit", "-q", str(FIXTURES / "answers"), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["summary"] == {"files": 2, "pass": 1, "fail": 1, "error": 0}
    assert data["cross"]["ideas_tested"] == 2
    assert [Path(r["source"]).name for r in data["results"]] == sorted(Path(r["source"]).name for r in data["results"])


def test_rules_lists_the_cross_answer_rules(capsys) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "X901" in out and "X902" in out
    assert main(["rule", "X902"]) == 0
    assert "## Why is this bad?" in capsys.readouterr().out


def test_pre_commit_hook_entry_runs(capsys) -> None:
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    entry = next(line.split(":", 1)[1].split() for line in hooks.splitlines() if line.strip().startswith("entry:"))
    assert entry[:2] == ["auditor", "audit"] and "id: auditor" in hooks
    assert main([*entry[1:], str(SEED_000), str(SEED_001)]) == 1  # pre-commit appends the staged files
    assert main([*entry[1:], str(SEED_000)]) == 0


# Runs the console entry with matplotlib absent: a finder ahead of all others refuses to find it.
_WITHOUT_MATPLOTLIB = """
import runpy, sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "matplotlib":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Absent())
sys.argv[0] = "auditor"
runpy.run_module("auditor", run_name="__main__")
"""


@pytest.mark.parametrize("matplotlib", ["absent", "broken"])
def test_html_without_matplotlib_is_a_usage_error_naming_the_extra(matplotlib, tmp_path) -> None:
    broken = tmp_path / "shadow" / "matplotlib"
    broken.mkdir(parents=True)  # first on the path: a matplotlib whose import fails
    (broken / "__init__.py").write_text("raise ImportError('numpy ABI mismatch')\n")
    env = {**os.environ, "PYTHONPATH": str(broken.parent)} if matplotlib == "broken" else dict(os.environ)
    entry = ["-c", _WITHOUT_MATPLOTLIB] if matplotlib == "absent" else ["-m", "auditor"]

    def audit(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *entry, "audit", str(SEED_001), *argv],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    target = tmp_path / "report.html"
    proc = audit("--format", "html", "-o", str(target))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("auditor: error: --format html needs matplotlib"), proc.stderr
    assert "pip install 'auditor[html]'" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == "" and not target.exists()  # stopped before auditing or writing anything
    # Formats that need no matplotlib do not ask for it.
    proc = audit("--format", "json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["summary"]["fail"] == 1, proc.stderr
