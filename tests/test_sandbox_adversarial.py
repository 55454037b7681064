"""The rerun sandbox against hostile experiments: each is contained, capped or stopped, and leaves nothing.

Every script lives in ``fixtures/experiments/hostile_*`` and imports no torch, so
each rerun takes a second or two (the fork bomb runs into its timeout).  Each
test checks the finding (R803 with the reason where the run fails), that
nothing on the host changed, and that no process of the run is left, by
looking for a unique marker in every host process's command line.

Skipped only where bubblewrap is missing and the CI variable is not set.
"""

from __future__ import annotations

import json
import os
import re
import select
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import (
    EXPERIMENTS,
    ROOT,
    MiB,
    everything_said,
    experiment_workspace,
    load_answer,
    needs_bubblewrap,
    processes_with,
    rules_of,
    sandbox_findings,
)

from auditor.options.models import AuditOptions, RerunOptions
from auditor.rerun import run_and_compare
from auditor.rerun.sandbox import masked_dirs

pytestmark = [needs_bubblewrap, pytest.mark.usefixtures("warm_sandbox")]


def rerun(name: str, *, how_to_run: str | None = None, workspace: Path | None = None, **overrides):
    document = load_answer(name)
    if how_to_run:
        document["how_to_run"] = how_to_run
    overrides.setdefault("device", "cpu")
    overrides.setdefault("timeout", 30)
    overrides.setdefault("use_cache", False)  # every test runs the sandbox (the cache: test_rerun_cache.py)
    folder = workspace or EXPERIMENTS / name
    return sandbox_findings(
        run_and_compare(document, str(folder / "answer.txt"), RerunOptions(**overrides), AuditOptions())
    )


def assert_none_left(marker: str) -> None:
    """No process carries ``marker`` once the rerun returned (a grace for the kernel's reaping under load).

    A bound on waiting, not a timing claim; it stays well below the hostile scripts' own lifetimes (the fork
    bomb's processes exit by themselves 20 s after they start, the daemon after 60 s), so a process the
    sandbox failed to kill is still seen.
    """
    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []


@contextmanager
def sampled(measure: Callable[[], float], every: float = 0.02) -> Iterator[list[float]]:
    """Call ``measure`` in a thread while the block runs; yields the list of samples."""
    samples: list[float] = [measure()]
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every):
            samples.append(measure())

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join()
        samples.append(measure())


def rss_bytes() -> int:
    match = re.search(r"VmRSS:\s+(\d+) kB", Path("/proc/self/status").read_text())
    return int(match.group(1)) * 1024 if match else 0


def free_bytes(path: str) -> int:
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize


def outside_masks(path: Path) -> bool:
    return not any(str(path) == m or str(path).startswith(m + "/") for m in masked_dirs())


# -- processes ------------------------------------------------------------------------------


def test_fork_bomb_is_capped_killed_at_the_timeout_and_leaves_nothing() -> None:
    marker = f"auditor-forkbomb-{uuid.uuid4().hex}"
    cap, timeout = 48, 5
    with sampled(lambda: len(processes_with(marker))) as counts:
        findings, record = rerun(
            "hostile_forkbomb", how_to_run=f"python3 fork_bomb.py {marker} 20", timeout=timeout, max_processes=cap
        )
    assert record["limits"]["processes"] == cap, "the process cap must hold here (see the README's security model)"
    # bwrap's launcher and its pid 1 carry the marker too but are not the sandbox user's processes.
    assert cap // 2 <= max(counts) <= cap + 2, counts
    assert rules_of(findings) == ["R803"] and record["timed_out"] is True and record["signal"] == "SIGKILL"
    message = findings[0].message
    assert "timeout" in message and "fork refused" in message and "--max-processes" in message, message
    assert_none_left(marker)


def test_daemon_does_not_outlive_the_run() -> None:
    marker = f"auditor-daemon-{uuid.uuid4().hex}"
    findings, record = rerun("hostile_daemon", how_to_run=f"python3 spawn_daemon.py {marker}", timeout=20)
    # The daemon held the output pipes open for 60 s: had the auditor waited for them, the 20 s timeout would
    # have ended the run.  It ended with the script: exit code 0, no timeout.
    assert record["timed_out"] is False and record["signal"] is None
    assert rules_of(findings) == ["R807"] and record["exit_code"] == 0
    assert f"daemon {marker} started" in findings[0].message
    assert_none_left(marker)


def test_timeout_kills_the_run_with_sigkill_and_leaves_nothing() -> None:
    marker = f"auditor-sleep-{uuid.uuid4().hex}"
    findings, record = rerun("hostile_sleep", how_to_run=f"python3 sleep_forever.py {marker}", timeout=2)
    assert rules_of(findings) == ["R803"] and record["timed_out"] and record["signal"] == "SIGKILL"
    assert "2 s timeout" in findings[0].message
    assert_none_left(marker)


# -- memory, disk, output -----------------------------------------------------------------------


def test_unbounded_allocation_is_stopped_by_the_memory_cap() -> None:
    findings, record = rerun("hostile_alloc", memory_bytes=256 * MiB, timeout=30)
    assert rules_of(findings) == ["R803"] and not record["timed_out"] and record["exit_code"] == 1
    assert "MemoryError" in findings[0].message
    assert "the memory cap is 256 MiB, --memory" in findings[0].message
    assert record["limits"]["memory_bytes"] == 256 * MiB


def test_filling_the_disk_stops_at_the_cap_and_spares_the_host() -> None:
    disk = 64 * MiB
    watched = {tempfile.gettempdir(), str(ROOT), os.path.expanduser("~")}
    before = {path: free_bytes(path) for path in watched}
    with sampled(lambda: min(free_bytes(p) - before[p] for p in watched)) as drops:
        findings, record = rerun("hostile_fill", disk_bytes=disk, timeout=30)
    assert rules_of(findings) == ["R803"] and record["exit_code"] == 3
    message = findings[0].message
    assert "No space left on device" in message and "may grow by 64 MiB on top of its files, --disk" in message
    summary = json.loads(next(line for line in message.splitlines() if line.startswith("{")))
    written = summary["written"]
    # The copy's tmpfs also holds its files (in whole pages) and a MiB of slack.
    assert 0 < written["."] <= disk + 2 * MiB and written["/tmp"] <= disk and written["/dev/shm"] <= disk, written
    assert written["/var/tmp"] == 0 and written["/dev"] == 0, written  # read-only
    assert set(summary["errors"]) == set(written), summary  # every place refused before the 256 MiB safety net
    assert summary["nested_userns"].startswith("refused"), summary  # its own tmpfs would have no cap
    # Had any of it reached a host disk, 64 MiB or more would be gone (host noise stays far below).
    assert min(drops) > -32 * MiB, min(drops)
    assert record["limits"]["disk_bytes"] == disk


def test_printing_gigabytes_is_cut_at_the_output_cap_in_bounded_memory() -> None:
    rss_before = rss_bytes()
    with sampled(rss_bytes) as rss:
        findings, record = rerun("hostile_print", timeout=60)  # prints 2 GiB; the cap is 1 GiB
    assert rules_of(findings) == ["R803"] and record["output_capped"] is True and not record["timed_out"]
    assert 1024 * MiB < record["output_bytes"] < 1100 * MiB, record["output_bytes"]
    message = findings[0].message
    assert "printed more than 1 GiB (the output cap, --max-output)" in message
    assert re.search(r"flood block 00\d{4} x+", message), message[-300:]  # the tail, as printed
    assert len(message) < 4000
    # Only a 1 MiB tail per stream is ever held, whatever the run prints.
    assert max(rss) - rss_before < 64 * MiB, (max(rss) - rss_before) / MiB


# -- network and host files -------------------------------------------------------------------


def test_sockets_reach_nothing_on_the_host(tmp_path: Path, host_dir: Path) -> None:
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    abstract = f"\0auditor-{uuid.uuid4().hex}"
    unix_paths = {
        "masked": str(tmp_path / "masked.sock"),  # under /tmp: hidden by the sandbox's empty /tmp
        "open": str(host_dir / "open.sock"),  # outside the masks, writable by anyone
        "private": str(host_dir / "private.sock"),  # outside the masks, the auditor user's only
        "abstract": abstract,  # abstract namespace: per network namespace
    }
    listeners = [tcp, udp]
    for kind, path in unix_paths.items():
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(4)
        if kind != "abstract":
            os.chmod(path, 0o777 if kind == "open" else 0o700)
        listeners.append(server)
    workspace = tmp_path / "workspace"
    experiment_workspace("hostile_sockets", workspace)
    targets = {"tcp": tcp.getsockname(), "udp": udp.getsockname(), "unix": list(unix_paths.values())}
    (workspace / "targets.json").write_text(json.dumps(targets))
    try:
        findings, record = rerun("hostile_sockets", workspace=workspace)
        reached = [s for s in select.select(listeners, [], [], 0.5)[0]]
    finally:
        for listener in listeners:
            listener.close()
    assert rules_of(findings) == ["R807"] and record["exit_code"] == 0
    outcome = json.loads(findings[0].message.rsplit("\n", 1)[1])
    assert outcome["tcp"].startswith("refused") and outcome[abstract].startswith("refused"), outcome
    assert outcome[unix_paths["masked"]].startswith("refused"), outcome
    open_reachable = outside_masks(host_dir)
    private_reachable = open_reachable and record["sandbox_uid"] == os.getuid()
    # Documented limitation: a unix socket outside the masked folders that the
    # sandbox user may write to can be connected to (a read-only mount does not
    # stop connect); one only the auditor's user (root) may use cannot.
    assert outcome[unix_paths["open"]].startswith("CONNECTED" if open_reachable else "refused"), outcome
    assert outcome[unix_paths["private"]].startswith("CONNECTED" if private_reachable else "refused"), outcome
    expected = {
        listeners[2 + list(unix_paths).index(k)]
        for k in ("open", "private")
        if (open_reachable if k == "open" else private_reachable)
    }
    assert set(reached) == expected  # TCP, UDP, masked and abstract sockets saw nothing


def test_host_secrets_stay_unreadable(tmp_path: Path, host_dir: Path) -> None:
    secret = f"auditor-secret-{uuid.uuid4().hex}"  # the files' content, never in their names
    home_file = Path.home() / f".auditor-read-{uuid.uuid4().hex}"
    private_dir = host_dir / "private"
    private_dir.mkdir(mode=0o700)
    private_file = private_dir / "token"
    shadow = Path("/etc/shadow")
    try:
        shadow_text = shadow.read_text(errors="replace")
    except OSError:
        shadow_text = ""
    workspace = tmp_path / "workspace"
    experiment_workspace("hostile_read", workspace)
    targets = [str(shadow), "/root", str(Path.home()), str(home_file), str(private_file)]
    (workspace / "targets.json").write_text(json.dumps(targets))
    try:
        for path in (home_file, private_file):
            path.write_text(f"{secret}\n")
            os.chmod(path, 0o600)
        findings, record = rerun("hostile_read", workspace=workspace)
    finally:
        home_file.unlink(missing_ok=True)
    said = everything_said(findings, record)
    assert rules_of(findings) == ["R807"] and record["exit_code"] == 0
    seen = json.loads(findings[0].message.split("output tail:\n", 1)[1])
    assert seen[str(home_file)].startswith("refused") and secret not in seen[str(Path.home())]
    assert seen["/root"].startswith(("LISTED", "refused")) and secret not in seen["/root"]
    if record["sandbox_uid"] != os.getuid() or os.getuid() != 0:  # root-only files need a non-root sandbox user
        assert seen[str(shadow)].startswith("refused"), seen
        assert shadow_text == "" or all(line not in said for line in shadow_text.splitlines() if len(line) > 8)
    if record["sandbox_uid"] != os.getuid() or not outside_masks(host_dir):
        assert seen[str(private_file)].startswith("refused"), seen
        assert secret not in said


def test_writes_to_tmp_home_and_dev_change_nothing_on_the_host(tmp_path: Path, host_dir: Path) -> None:
    token = uuid.uuid4().hex
    workspace = tmp_path / "workspace"
    experiment_workspace("hostile_write", workspace)
    targets = [
        f"/tmp/auditor-escaped-{token}",
        os.path.join(os.path.expanduser("~"), f".auditor-escaped-{token}"),
        f"/var/tmp/auditor-escaped-{token}",
        f"/dev/shm/auditor-escaped-{token}",
        f"/etc/auditor-escaped-{token}",
        str(host_dir / f"escaped-{token}"),
    ]
    (workspace / "targets.json").write_text(json.dumps(targets))
    before = {p.name: p.read_bytes() for p in workspace.iterdir()}
    try:
        findings, record = rerun("hostile_write", workspace=workspace)
        left = [t for t in targets if os.path.lexists(t)]
    finally:
        for target in targets:
            if os.path.lexists(target):
                os.unlink(target)
    assert rules_of(findings) == ["R807"] and record["exit_code"] == 0
    assert left == []
    assert {p.name: p.read_bytes() for p in workspace.iterdir()} == before
    results = json.loads(findings[0].message.rsplit("\n", 1)[1])
    # Inside, /tmp and /dev/shm are the sandbox's own (gone with it); the rest is read-only.
    assert all(results[t] != "WRITTEN" for t in targets[1:] if not t.startswith("/dev/shm")), results
