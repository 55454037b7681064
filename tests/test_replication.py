"""`--rerun` under the auditor's probe, and `--replicate` on shifted seeds, end to end (real bwrap, real torch).

Each fixture workspace (fixtures/experiments/replication_*, built by
replication_fixtures.py) is audited through the command line; the offset is
fixed so that every run is the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import experiment_workspace, needs_sandbox_and_torch

from auditor.cli import main

OFFSET = "1000"


def _audit(capsys, folder: Path, *extra: str) -> tuple[int, dict]:
    argv = ["audit", str(folder / "answer.txt"), "--rerun", "--device", "cpu", "--timeout", "120"]
    code = main([*argv, *extra, "--format", "json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)["results"][0]


def _rules(result: dict) -> dict[str, str]:
    return {f["rule"]: f["severity"] for f in result["findings"] if f["rule"].startswith("R8")}


@needs_sandbox_and_torch
def test_honest_real_effect_is_trained_and_replicates(capsys, tmp_path: Path) -> None:
    folder = experiment_workspace("replication_real", tmp_path / "ws")
    code, result = _audit(capsys, folder, "--replicate", "--replicate-offset", OFFSET)
    assert code == 0 and _rules(result) == {}
    activity, replication = result["rerun"]["activity"], result["rerun"]["replication"]
    assert activity["status"] == "trained" and activity["optimizer_steps"] > 0 and activity["forward_calls"] > 0
    assert activity["devices"] == ["cpu"]
    assert {"torch.manual_seed", "numpy.random.default_rng"} <= {s["call"] for s in activity["seeds_set"]}
    assert all(s["seed"] == s["used"] for s in activity["seeds_set"])  # the first run is the agent's own
    assert replication["seed_offset"] == 1000 and replication["replicated"] is True
    assert replication["seeds_shifted"] > 0 and replication["baseline"] != result["rerun"]["baseline"]


@needs_sandbox_and_torch
@pytest.mark.parametrize("name", ["replication_printed", "replication_shipped"])
def test_report_without_training_is_r808(capsys, tmp_path: Path, name: str) -> None:
    folder = experiment_workspace(name, tmp_path / "ws")
    code, result = _audit(capsys, folder)
    assert result["rerun"]["reproduced"] is True  # the numbers match: only the probe tells
    assert code == 1 and _rules(result) == {"R808": "error"}
    assert result["rerun"]["activity"]["status"] == "no training"


@needs_sandbox_and_torch
def test_hard_coded_values_after_training_are_r809(capsys, tmp_path: Path) -> None:
    folder = experiment_workspace("replication_hardcoded", tmp_path / "ws")
    code, result = _audit(capsys, folder, "--replicate", "--replicate-offset", OFFSET)
    assert result["rerun"]["activity"]["status"] == "trained"
    assert code == 1 and _rules(result) == {"R809": "error"}
    assert result["rerun"]["replication"]["replicated"] is None


@needs_sandbox_and_torch
def test_honest_null_passes(capsys, tmp_path: Path) -> None:
    folder = experiment_workspace("replication_null", tmp_path / "ws")
    code, result = _audit(capsys, folder, "--replicate", "--replicate-offset", OFFSET)
    assert code == 0 and _rules(result) == {}
    assert result["rerun"]["replication"]["replicated"] is True


@needs_sandbox_and_torch
def test_lucky_draw_of_seeds_does_not_replicate(capsys, tmp_path: Path) -> None:
    folder = experiment_workspace("replication_lucky", tmp_path / "ws")
    code, result = _audit(capsys, folder, "--replicate", "--replicate-offset", OFFSET)
    assert result["status"] == "fail" or _rules(result)["R810"] == "warning"
    assert "R810" in _rules(result)
    replication = result["rerun"]["replication"]
    assert replication["replicated"] is not True and replication["verdict"] != "idea better (significant)"


@needs_sandbox_and_torch
def test_default_offset_is_drawn_and_recorded_and_cached_apart(capsys, tmp_path: Path) -> None:
    folder = experiment_workspace("replication_null", tmp_path / "ws")
    _, first = _audit(capsys, folder, "--replicate")
    offset = first["rerun"]["replication"]["seed_offset"]
    assert isinstance(offset, int) and offset >= 1
    _, again = _audit(capsys, folder, "--replicate", "--replicate-offset", str(offset))
    assert again["rerun"]["cached"] is True and again["rerun"]["replication"]["cached"] is True
    assert again["rerun"]["replication"]["baseline"] == first["rerun"]["replication"]["baseline"]
