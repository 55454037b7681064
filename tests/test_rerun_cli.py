"""`auditor audit --rerun` end to end through the command line."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from conftest import EXPERIMENTS, experiment_workspace, needs_sandbox_and_torch

from auditor.cli import main


def _json_run(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["audit", *argv, "--format", "json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


@needs_sandbox_and_torch
def test_fabricated_answer_passes_statically_and_fails_on_rerun(capsys, tmp_path: Path) -> None:
    answer = str(experiment_workspace("fabricated", tmp_path / "ws") / "answer.txt")
    code, static = _json_run(capsys, answer)
    assert code == 0 and static["results"][0]["status"] == "pass"
    code, rerun = _json_run(capsys, answer, "--rerun", "--device", "cpu", "--timeout", "120")
    result = rerun["results"][0]
    assert code == 1
    assert {"R804", "R805"} <= {f["rule"] for f in result["findings"]}
    assert result["rerun"]["reproduced"] is False
    assert result["rerun"]["device"] == "cpu"


def test_injected_command_is_refused_and_runs_nothing(capsys, tmp_path: Path) -> None:
    marker = Path("/tmp") / f"pwned-{uuid.uuid4().hex}"
    workspace = tmp_path / "ws"
    experiment_workspace("injected_command", workspace)
    answer = workspace / "answer.txt"
    text = answer.read_text(encoding="utf-8").replace("/tmp/pwned", str(marker))
    answer.write_text(text, encoding="utf-8")
    code, out = _json_run(capsys, str(answer), "--rerun", "--device", "cpu", "--unsafe-no-sandbox")
    assert code == 1
    assert "R802" in {f["rule"] for f in out["results"][0]["findings"]}
    assert not marker.exists()


def test_missing_interpreter_is_a_usage_error(capsys) -> None:
    answer = str(EXPERIMENTS / "clip_honest" / "answer.txt")
    code = main(["audit", answer, "--rerun", "--python", "/nonexistent/python3", "--quiet"])
    assert code == 2
    assert "python" in capsys.readouterr().err.lower()
