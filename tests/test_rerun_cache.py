"""The rerun cache (auditor.rerun.cache): an unchanged experiment is not run again.

Most tests run a tiny experiment without the sandbox (``unsafe_no_sandbox``), so that it can
leave evidence on the host: every execution appends a line to a counter file outside its
workspace.  A served run adds no line.  One test runs the real sandbox, where a served run is
recognised by the host uid (fresh and random per live run); one runs on a dask.distributed
cluster started as separate ``dask scheduler`` / ``dask worker`` processes.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, as_transcript, load_answer, needs_bubblewrap, rules_of, sandbox_findings

from auditor.options.models import AuditOptions, RerunOptions
from auditor.rerun import cache, probe_memo, run_and_compare
from auditor.rerun.device import Interpreter
from auditor.rerun.spec import Confinement, Limits, Outcome

# Writes the claimed report back (or fails as data.txt says) and counts its executions.
SCRIPT = """\
import json, sys, time
with open({counter!r}, "a") as f:
    f.write("ran\\n")
mode = open("data.txt").read().split()[0]
if mode == "fail":
    print("something went wrong", file=sys.stderr)
    sys.exit(3)
if mode == "hang":
    time.sleep(60)
report = json.load(open("claim.json"))
if mode == "other":
    report["idea"]["full"]["per_seed"][0] += 1.0
json.dump({{"bench_report": report}}, open("bench_report.json", "w"))
"""


def make_workspace(folder: Path, counter: Path, mode: str = "ok") -> dict:
    """A workspace running SCRIPT on the clip_honest claim; the answer that references it."""
    folder.mkdir(parents=True)
    document = load_answer("clip_honest")
    (folder / "count.py").write_text(SCRIPT.format(counter=str(counter)))
    (folder / "claim.json").write_text(json.dumps(document["bench_report"]))
    (folder / "data.txt").write_text(f"{mode}\n")
    document.update(how_to_run="python3 count.py", files=["count.py", "claim.json", "data.txt"])
    (folder / "answer.txt").write_text(as_transcript(document), encoding="utf-8")
    return document


def runs(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def rerun(document: dict, folder: Path, cache_dir: Path, **overrides):
    overrides = {"device": "cpu", "timeout": 60, "unsafe_no_sandbox": True, "cache_dir": str(cache_dir), **overrides}
    return sandbox_findings(
        run_and_compare(document, str(folder / "answer.txt"), RerunOptions(**overrides), AuditOptions())
    )


def entries(cache_dir: Path) -> list[Path]:
    folder = cache.entries_folder(str(cache_dir))
    """The stored runs (not the remembered interpreter probes)."""
    found = folder.glob("*.json") if folder.is_dir() else []
    return sorted(p for p in found if not p.name.startswith(probe_memo.KEY_PREFIX))


@pytest.fixture
def setup(tmp_path: Path):
    counter = tmp_path / "counter.txt"
    return tmp_path / "ws", counter, tmp_path / "cache"


# -- through run_and_compare ------------------------------------------------------------------------


def test_a_second_rerun_of_an_unchanged_workspace_is_served_from_the_cache(setup) -> None:
    folder, counter, cache_dir = setup
    document = make_workspace(folder, counter)
    first_findings, first = rerun(document, folder, cache_dir)
    second_findings, second = rerun(document, folder, cache_dir)
    assert runs(counter) == 1  # the experiment ran once
    assert (first["cached"], second["cached"]) == (False, True)
    assert first["reproduced"] and second["reproduced"] and rules_of(first_findings) == rules_of(second_findings) == []
    assert {k: v for k, v in first.items() if k != "cached"} == {k: v for k, v in second.items() if k != "cached"}
    assert second["p_value"] == first["p_value"] and second["verdict"] == "idea better (significant)"
    assert second["baseline"] == document["bench_report"]["baseline"]["full"]["per_seed"]


def test_one_changed_byte_of_a_file_runs_again(setup) -> None:
    folder, counter, cache_dir = setup
    document = make_workspace(folder, counter)
    rerun(document, folder, cache_dir)
    claim = (folder / "claim.json").read_bytes()
    (folder / "claim.json").write_bytes(claim.replace(b"8", b"9", 1))  # one byte: a claimed number of the copy
    _, record = rerun(document, folder, cache_dir)
    assert runs(counter) == 2 and record["cached"] is False
    assert len(entries(cache_dir)) == 2


def test_no_cache_always_runs_and_leaves_the_cache_alone(setup) -> None:
    folder, counter, cache_dir = setup
    document = make_workspace(folder, counter)
    rerun(document, folder, cache_dir)
    before = {p.name: p.read_bytes() for p in entries(cache_dir)}
    _, record = rerun(document, folder, cache_dir, use_cache=False)
    assert runs(counter) == 2 and record["cached"] is False
    assert {p.name: p.read_bytes() for p in entries(cache_dir)} == before
    _, again = rerun(document, folder, cache_dir)
    assert runs(counter) == 2 and again["cached"] is True


def test_other_limits_run_again(setup) -> None:
    folder, counter, cache_dir = setup
    document = make_workspace(folder, counter)
    rerun(document, folder, cache_dir)
    _, record = rerun(document, folder, cache_dir, timeout=61)
    assert runs(counter) == 2 and record["cached"] is False


@pytest.mark.parametrize("damage", ["content", "hash", "truncated", "not json"])
def test_a_damaged_entry_is_ignored_and_rewritten(setup, damage: str) -> None:
    folder, counter, cache_dir = setup
    document = make_workspace(folder, counter)
    rerun(document, folder, cache_dir)
    [entry] = entries(cache_dir)
    data = json.loads(entry.read_text())
    if damage == "content":  # a failure turned into a pass, its hash left as it was
        data["value"]["stdout"] = "forged"
        entry.write_text(json.dumps(data))
    elif damage == "hash":
        data["sha256"] = "0" * 64
        entry.write_text(json.dumps(data))
    elif damage == "truncated":
        entry.write_bytes(entry.read_bytes()[:100])
    else:
        entry.write_bytes(b"\x00\xff garbage")
    _, record = rerun(document, folder, cache_dir)
    assert runs(counter) == 2 and record["cached"] is False
    key = entry.stem
    assert cache.load(entry.parent, key) is not None  # rewritten intact
    _, again = rerun(document, folder, cache_dir)
    assert runs(counter) == 2 and again["cached"] is True


@pytest.mark.parametrize("mode", ["fail", "hang"])
def test_a_failed_or_timed_out_run_is_cached_as_that_failure(setup, mode: str) -> None:
    folder, counter, cache_dir = setup
    document = make_workspace(folder, counter, mode)
    timeout = 2 if mode == "hang" else 60
    first_findings, first = rerun(document, folder, cache_dir, timeout=timeout)
    second_findings, second = rerun(document, folder, cache_dir, timeout=timeout)
    assert runs(counter) == 1 and (first["cached"], second["cached"]) == (False, True)
    assert rules_of(second_findings) == rules_of(first_findings) == ["R803"]
    assert second_findings[0].message == first_findings[0].message
    assert second["reproduced"] is False and second["p_value"] is None and second["baseline"] is None
    if mode == "fail":
        assert second["exit_code"] == 3 and "something went wrong" in second_findings[0].message
    else:
        assert second["timed_out"] is True and second["signal"] == "SIGKILL"


def test_answers_sharing_a_workspace_are_each_judged_on_their_own_claims(setup) -> None:
    folder, counter, cache_dir = setup
    honest = make_workspace(folder, counter)
    rerun(honest, folder, cache_dir)
    edited = json.loads(json.dumps(honest))
    edited["bench_report"]["idea"]["full"]["per_seed"][0] -= 0.5
    findings, record = rerun(edited, folder, cache_dir)
    assert runs(counter) == 1 and record["cached"] is True
    assert "R804" in rules_of(findings) and record["reproduced"] is False
    assert record["idea"] == honest["bench_report"]["idea"]["full"]["per_seed"]  # the rerun's own values


def test_a_run_whose_statistics_differ_carries_its_own(setup) -> None:
    folder, counter, cache_dir = setup
    document = make_workspace(folder, counter, "other")
    findings, record = rerun(document, folder, cache_dir)
    claimed = document["bench_report"]["idea"]["full"]["per_seed"]
    assert "R804" in rules_of(findings)
    assert record["idea"][0] == claimed[0] + 1.0 and record["idea"][1:] == claimed[1:]
    assert record["delta_mean"] == pytest.approx(
        sum(i - b for i, b in zip(record["idea"], record["baseline"])) / len(claimed)
    )
    assert 0 < record["p_value"] <= 1


# -- the cache module ------------------------------------------------------------------------------


def outcome(**changes) -> Outcome:
    base = Outcome(0, None, False, False, 1.5, "out\n", "", 4, b'{"a": 1}', None, Confinement(cgroup="v2"))
    return Outcome(**{**base.__dict__, **changes})


def test_entries_are_private_and_round_trip(tmp_path: Path) -> None:
    folder = cache.entries_folder(str(tmp_path / "c"))
    assert cache.store(folder, "k" * 64, outcome())
    path = folder / f"{'k' * 64}.json"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700  # the auditor's own cache folder too
    assert cache.load(folder, "k" * 64) == outcome()
    assert cache.load(folder, "j" * 64) is None  # another key
    assert not list(folder.glob(".*.tmp"))  # written through a temporary file and a rename


def test_an_entry_under_another_key_is_not_served(tmp_path: Path) -> None:
    folder = cache.entries_folder(str(tmp_path))
    cache.store(folder, "a" * 64, outcome())
    shutil.copy(folder / f"{'a' * 64}.json", folder / f"{'b' * 64}.json")
    assert cache.load(folder, "b" * 64) is None


def test_a_folder_others_may_write_is_never_used(tmp_path: Path) -> None:
    folder = cache.entries_folder(str(tmp_path))
    cache.store(folder, "a" * 64, outcome())
    os.chmod(folder, 0o777)
    assert cache.load(folder, "a" * 64) is None
    assert cache.store(folder, "b" * 64, outcome()) is False


def test_the_default_folder_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.default_folder() == tmp_path / "auditor"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert cache.default_folder() == Path(os.path.expanduser("~")) / ".cache" / "auditor"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.default_folder() == Path(os.path.expanduser("~")) / ".cache" / "auditor"


def test_the_key_covers_files_command_device_interpreter_limits_and_sandbox(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"print(1)\n")
    files = cache.file_digests(tmp_path, ["a.py"])
    python = sys.executable
    interpreter = cache.interpreter_identity(python, "2.0")
    limits = Limits(timeout=10, memory_bytes=1 << 30)
    base = cache.run_key(files, [python, "a.py"], "cpu", interpreter, limits, sandboxed=True)
    (tmp_path / "a.py").write_bytes(b"print(2)\n")
    changed = [
        cache.run_key(cache.file_digests(tmp_path, ["a.py"]), [python, "a.py"], "cpu", interpreter, limits, True),
        cache.run_key(files, [python, "a.py", "--x"], "cpu", interpreter, limits, sandboxed=True),
        cache.run_key(files, [python, "a.py"], "cuda", interpreter, limits, sandboxed=True),
        cache.run_key(files, [python, "a.py"], "cpu", cache.interpreter_identity(python, "2.1"), limits, True),
        cache.run_key(files, [python, "a.py"], "cpu", interpreter, Limits(timeout=11, memory_bytes=1 << 30), True),
        cache.run_key(files, [python, "a.py"], "cpu", interpreter, limits, sandboxed=False),
    ]
    assert base == cache.run_key(files, [python, "a.py"], "cpu", interpreter, limits, sandboxed=True)
    assert len({base, *changed}) == 7


def test_the_probe_answer_is_remembered_until_a_package_folder_changes(tmp_path: Path) -> None:
    packages, bin_dir = tmp_path / "site-packages", tmp_path / "bin"
    packages.mkdir()
    bin_dir.mkdir()
    interpreter = Interpreter(
        path=sys.executable,
        paths=(str(bin_dir),),
        torch_version="2.0",
        gpus=0,
        torch_error=None,
        reported=(str(packages),),
    )
    folder = cache.entries_folder(str(tmp_path / "cache"))
    assert probe_memo.recall(folder, sys.executable, None) is None
    probe_memo.remember(folder, sys.executable, None, interpreter)
    assert probe_memo.recall(folder, sys.executable, None) == interpreter
    assert probe_memo.recall(folder, sys.executable, "another sandbox") is None
    (packages / "torch-2.1.dist-info").mkdir()  # a package installed: the folder changed
    assert probe_memo.recall(folder, sys.executable, None) is None


def test_a_cached_rerun_remembers_the_probe(setup) -> None:
    folder, counter, cache_dir = setup
    document = make_workspace(folder, counter)
    rerun(document, folder, cache_dir)
    remembered = probe_memo.recall(cache.entries_folder(str(cache_dir)), sys.executable, None)
    assert remembered is not None and remembered.path == sys.executable
    rerun(document, folder, cache_dir / "other", use_cache=False)
    assert not (cache_dir / "other").exists()  # --no-cache writes nothing, not even the probe


# -- the real sandbox, and a dask.distributed cluster --------------------------------------------


@needs_bubblewrap
def test_the_sandboxed_run_is_served_from_the_cache(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    document = make_workspace(folder, Path("/dev/null"))  # in the sandbox the counter is not the host's
    first_findings, first = rerun(document, folder, tmp_path / "cache", unsafe_no_sandbox=False)
    _, second = rerun(document, folder, tmp_path / "cache", unsafe_no_sandbox=False)
    assert first["sandbox"] == "bubblewrap" and first["reproduced"] and rules_of(first_findings) == []
    # A live run gets a fresh random host uid; the served one is the first run's.
    assert (first["cached"], second["cached"]) == (False, True) and second["host_uid"] == first["host_uid"]


def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log.open("wb"), start_new_session=True
    )


def _scheduler_address(path: Path, process: subprocess.Popen, log: Path) -> str:
    deadline = time.monotonic() + 120  # a bound on waiting for start-up, not a timing claim
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"dask scheduler exited: {log.read_text()[-2000:]}")
        if path.exists():
            try:
                return json.loads(path.read_text())["address"]
            except (ValueError, KeyError):
                pass
        time.sleep(0.2)
    pytest.fail("the dask scheduler did not start")


def test_a_rerun_on_a_dask_cluster_is_served_from_the_cache(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    folder, counter, cache_dir = tmp_path / "ws", tmp_path / "counter.txt", tmp_path / "cache"
    make_workspace(folder, counter)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    scheduler_file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    scheduler = _start(
        [*dask, "--scheduler-file", str(scheduler_file), "--port", "0", "--dashboard-address", ":0"],
        env,
        tmp_path / "scheduler.log",
    )
    worker = None
    try:
        address = _scheduler_address(scheduler_file, scheduler, tmp_path / "scheduler.log")
        worker = _start(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                address,
                "--nworkers",
                "1",
                "--nthreads",
                "1",
                "--no-dashboard",
            ],
            env,
            tmp_path / "worker.log",
        )
        argv = [
            sys.executable,
            "-m",
            "auditor",
            "audit",
            str(folder / "answer.txt"),
            "--rerun",
            "--dask",
            address,
            "--device",
            "cpu",
            "--unsafe-no-sandbox",
            "--cache-dir",
            str(cache_dir),
            "--format",
            "json",
        ]
        records = []
        for _ in range(2):
            done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
            assert done.returncode in (0, 1), done.stderr[-2000:]
            records.append(json.loads(done.stdout)["results"][0]["rerun"])
        assert runs(counter) == 1  # the worker ran the experiment once
        assert [r["cached"] for r in records] == [False, True] and records[1]["reproduced"]
        assert len(entries(cache_dir)) == 1
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
