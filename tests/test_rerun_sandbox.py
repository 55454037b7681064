"""--rerun for real: the fixture experiments and hostile scripts run through bubblewrap on CPU.

Skipped only where bubblewrap or torch is genuinely missing and the CI variable
is not set; in CI these tests always run.  The six torch experiments run once
per session, two at a time (each is single-threaded), each from a complete copy
of its workspace (the shared bench script added, see ``experiment_workspace``).
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import (
    EXPERIMENTS,
    MiB,
    experiment_workspace,
    load_answer,
    needs_sandbox_and_torch,
    processes_with,
    rules_of,
    sandbox_findings,
)

from auditor.audit import audit_path
from auditor.options.models import AuditOptions, RerunOptions
from auditor.rerun import DeviceUnavailable, run_and_compare
from auditor.rerun.device import probe_interpreter, resolve_python

pytestmark = needs_sandbox_and_torch
TORCH_EXPERIMENTS = (
    "clip_honest",
    "clip_noop",
    "adamw_honest",
    "edited_numbers",
    "fabricated",
    "shipped_report_differs",
)


def rerun(name: str, document: dict | None = None, workspace: Path | None = None, **overrides):
    overrides.setdefault("device", "cpu")
    overrides.setdefault("timeout", 180)
    overrides.setdefault("use_cache", False)  # every test runs the sandbox (the cache: test_rerun_cache.py)
    options = RerunOptions(**overrides)
    folder = workspace or EXPERIMENTS / name
    return sandbox_findings(
        run_and_compare(document or load_answer(name), str(folder / "answer.txt"), options, AuditOptions())
    )


def _with_how_to_run(name: str, how_to_run: str) -> dict:
    document = load_answer(name)
    document["how_to_run"] = how_to_run
    return document


@pytest.fixture(scope="module")
def torch_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """name -> (findings, record) for every torch experiment, rerun from a complete copy of its workspace."""
    probe_interpreter(resolve_python(None))  # once, before the threads share its cache
    root = tmp_path_factory.mktemp("torch-workspaces")

    def run(name: str):
        return rerun(name, workspace=experiment_workspace(name, root / name))

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(TORCH_EXPERIMENTS, pool.map(run, TORCH_EXPERIMENTS)))


# -- the experiments ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["clip_honest", "clip_noop", "adamw_honest"])
def test_honest_experiment_reproduces(torch_runs: dict, name: str) -> None:
    findings, record = torch_runs[name]
    assert findings == [], [f.to_dict() for f in findings]
    assert record["reproduced"] is True
    assert record["device"] == "cpu" and record["sandbox"] == "bubblewrap"
    assert record["torch_version"].startswith("2.")
    assert record["exit_code"] == 0 and record["signal"] is None and record["seconds"] > 0
    assert record["rtol"] == 1e-5 and record["claimed_device"] == "cpu"
    assert record["report_source"] == "file"
    assert record["command"][1:] == ["bench.py"]
    assert all(v <= 1e-5 for v in record["max_rel_diff"].values())
    assert record["verdict"] == load_answer(name)["bench_report"]["comparison"]["verdict"]


def test_noop_experiment_reproduces_but_fails_the_static_audit(torch_runs: dict) -> None:
    _, record = torch_runs["clip_noop"]
    assert record["reproduced"] and record["max_rel_diff"] == {"baseline": 0.0, "idea": 0.0}
    assert "D501" in {f.rule for f in audit_path(str(EXPERIMENTS / "clip_noop" / "answer.txt")).findings}


def test_edited_answer_fails_with_r804_and_r805(torch_runs: dict) -> None:
    findings, record = torch_runs["edited_numbers"]
    assert rules_of(findings) == ["R804", "R805"]
    numbers = next(f for f in findings if f.rule == "R804")
    assert numbers.pointer == "/bench_report/idea/full/per_seed" and "8 seeds differ" in numbers.message
    verdict = next(f for f in findings if f.rule == "R805")
    assert (verdict.claimed, verdict.recomputed) == ("idea better (significant)", "idea worse (significant)")
    assert record["reproduced"] is False and record["max_rel_diff"]["baseline"] <= 1e-5


def test_fabricated_answer_passes_static_audit_but_not_the_rerun(torch_runs: dict) -> None:
    static = audit_path(str(EXPERIMENTS / "fabricated" / "answer.txt"), AuditOptions())
    assert static.status == "pass", [f.to_dict() for f in static.findings]
    findings, record = torch_runs["fabricated"]
    assert rules_of(findings) == ["R804", "R805"]
    assert record["verdict"] == "no measurable effect" and record["reproduced"] is False


def test_shipped_report_edited_after_the_run_is_r806(torch_runs: dict) -> None:
    findings, record = torch_runs["shipped_report_differs"]
    assert rules_of(findings) == ["R806"]
    assert findings[0].pointer.startswith("/bench_report/baseline/full/")
    assert record["reproduced"] is True  # the answer itself is honest


def test_script_without_report_is_r807() -> None:
    findings, record = rerun("no_report")
    assert rules_of(findings) == ["R807"] and "training finished" in findings[0].message
    assert record["exit_code"] == 0 and record["reproduced"] is False


def test_report_printed_on_stdout_is_used_when_no_file_is_written(tmp_path: Path) -> None:
    document = load_answer("clip_honest")
    report = json.dumps(document["bench_report"])
    (tmp_path / "print_report.py").write_text(f"print('progress: done')\nprint({report!r})\nprint('bye')\n")
    document.update(how_to_run="python3 print_report.py", files=["print_report.py"])
    findings, record = rerun("clip_honest", document, workspace=tmp_path)
    assert findings == [] and record["reproduced"] is True and record["report_source"] == "stdout"


def test_unsafe_mode_runs_without_the_sandbox_and_says_so() -> None:
    findings, record = rerun("no_report", unsafe_no_sandbox=True)
    assert rules_of(findings) == ["R807"] and record["sandbox"] == "none"


def test_interpreter_under_tmp_stays_visible_in_the_sandbox(tmp_path: Path) -> None:
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=True).create(tmp_path / "venv")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "where.py").write_text("import sys\nprint('prefix=' + sys.prefix)\n")
    document = _with_how_to_run("no_report", "python3 where.py")
    document["files"] = ["where.py"]
    python = str(tmp_path / "venv" / "bin" / "python")
    findings, record = rerun("no_report", document, workspace=workspace, python=python)
    assert rules_of(findings) == ["R807"], [f.to_dict() for f in findings]
    assert f"prefix={tmp_path / 'venv'}" in findings[0].message and record["exit_code"] == 0


def test_environment_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws_secret_value")
    (tmp_path / "env.py").write_text("import json, os\nprint(json.dumps(sorted(os.environ)))\n")
    document = _with_how_to_run("no_report", "python3 env.py")
    document["files"] = ["env.py"]
    findings, _ = rerun("no_report", document, workspace=tmp_path)
    names = json.loads(findings[0].message.rsplit("\n", 1)[1])
    assert set(names) <= {"PATH", "HOME", "LANG", "CUDA_VISIBLE_DEVICES", "PWD"}, names
    assert "secret_value" not in findings[0].message


def test_cuda_without_a_gpu_is_refused() -> None:
    if probe_interpreter(resolve_python(None)).gpus:
        pytest.skip("a GPU is visible here")
    with pytest.raises(DeviceUnavailable, match="needs a GPU"):
        rerun("no_report", device="cuda")


# -- hostile scripts -----------------------------------------------------------------------


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "control-unsandboxed"])
def test_network_is_unreachable(sandboxed: bool) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        extra = "" if sandboxed else " --loopback-only"  # the control reaches out to nothing but the listener
        document = _with_how_to_run("hostile_socket", f"python3 probe_network.py {port}{extra}")
        findings, _ = rerun("hostile_socket", document, unsafe_no_sandbox=not sandboxed)
        try:
            listener.accept()[0].close()
            connected = True
        except TimeoutError:
            connected = False
    output = findings[0].message
    if sandboxed:
        assert not connected and "CONNECTED" not in output and "RESOLVED" not in output, output
    else:  # the control proves the probe would have noticed a connection
        assert connected and '"127.0.0.1": "CONNECTED"' in output


def test_writes_outside_the_copy_change_nothing_on_the_host(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    experiment_workspace("hostile_write", workspace)
    victim = tmp_path / "victim.txt"
    victim.write_text("original\n")
    token = uuid.uuid4().hex
    targets = [
        str(victim),
        str(workspace / "escape.py"),  # the original workspace, not the run's copy
        str(EXPERIMENTS / f"escaped-{token}.txt"),  # the repository, outside every tmpfs mask
        f"/etc/auditor-escaped-{token}.txt",
        f"/var/tmp/auditor-escaped-{token}.txt",
        f"/tmp/auditor-escaped-{token}.txt",
    ]
    (workspace / "targets.json").write_text(json.dumps(targets))
    before = {p: p.read_bytes() for p in workspace.iterdir()}
    try:
        findings, record = rerun("hostile_write", workspace=workspace)
        assert record["exit_code"] == 0 and rules_of(findings) == ["R807"]
        assert victim.read_text() == "original\n"
        assert {p: p.read_bytes() for p in workspace.iterdir()} == before  # own_output.txt stayed in the copy
        assert [t for t in targets[2:] if os.path.exists(t)] == []
    finally:
        for target in targets[2:]:
            if os.path.exists(target):
                os.unlink(target)


def test_timeout_kills_the_whole_process_tree() -> None:
    marker = f"auditor-sleep-{uuid.uuid4().hex}"
    document = _with_how_to_run("hostile_sleep", f"python3 sleep_forever.py {marker}")
    findings, record = rerun("hostile_sleep", document, timeout=3)
    assert rules_of(findings) == ["R803"] and "timeout" in findings[0].message
    assert "sleeping forever" in findings[0].message  # the log tail
    assert record["timed_out"] is True and record["signal"] == "SIGKILL" and record["exit_code"] is None
    deadline = time.monotonic() + 30  # a bound on waiting for the kernel's reaping, not a timing claim
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(marker) == []


def test_unbounded_allocation_hits_the_memory_cap() -> None:
    findings, record = rerun("hostile_alloc", memory_bytes=512 * MiB, timeout=60)
    # Stopped by the cap, not by the 60 s timeout: the script's own MemoryError, exit code 1.
    assert rules_of(findings) == ["R803"] and record["timed_out"] is False and record["exit_code"] == 1
    assert "MemoryError" in findings[0].message and "memory cap" in findings[0].message
