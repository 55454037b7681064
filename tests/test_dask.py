"""Batches and reruns on a real dask.distributed cluster (started here, on loopback)."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, experiment_workspace, needs_sandbox_and_torch

from auditor.cli import main

LocalCluster = pytest.importorskip("dask.distributed", reason="the [dask] extra is not installed").LocalCluster


@pytest.fixture(scope="module")
def scheduler():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as cluster:
        yield cluster.scheduler_address


def _json(capsys, argv: list[str]) -> tuple[int, dict]:
    code = main(["audit", *argv, "--format", "json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


def test_a_batch_on_the_cluster_equals_the_local_run(capsys, scheduler: str) -> None:
    paths = [str(FIXTURES / "answers"), str(FIXTURES / "defects")]
    local_code, local = _json(capsys, [*paths, "--jobs", "1"])
    dask_code, remote = _json(capsys, [*paths, "--dask", scheduler])
    assert (dask_code, remote) == (local_code, local)
    assert remote["summary"]["files"] > 40


def test_a_jsonl_batch_on_the_cluster_equals_the_local_run(scheduler: str, tmp_path) -> None:
    """Cluster workers make each jsonl line and kept result (the pool's ``finish``), as this process does."""
    paths = [str(FIXTURES / "answers"), str(FIXTURES / "defects")]
    lines = {}
    for where, how in (("local", ["--jobs", "1"]), ("dask", ["--dask", scheduler])):
        out = tmp_path / f"{where}.jsonl"
        main(["audit", *paths, *how, "--format", "jsonl", "--output", str(out), "--quiet"])
        lines[where] = out.read_text(encoding="utf-8").splitlines()
    local, remote = lines["local"], lines["dask"]
    assert len(remote) > 40 and sorted(remote[:-1]) == sorted(local[:-1])  # in completion order
    assert remote[-1] == local[-1]


@needs_sandbox_and_torch
def test_a_rerun_on_the_cluster_reproduces(capsys, scheduler: str, tmp_path) -> None:
    answer = str(experiment_workspace("clip_noop", tmp_path / "ws") / "answer.txt")
    code, out = _json(capsys, [answer, "--dask", scheduler, "--rerun", "--device", "cpu", "--timeout", "120"])
    result = out["results"][0]
    assert result["rerun"]["reproduced"] is True
    assert result["rerun"]["sandbox"] == "bubblewrap"
    assert "D501" in {f["rule"] for f in result["findings"]}  # the no-op idea, as in a local run
    assert code == 1


def test_an_unreachable_scheduler_is_a_usage_error(capsys) -> None:
    code = main(["audit", str(FIXTURES / "answers"), "--dask", "tcp://127.0.0.1:9", "--quiet"])
    assert code == 2
    assert "dask scheduler" in capsys.readouterr().err
