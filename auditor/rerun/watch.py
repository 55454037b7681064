"""Watch a started run: its timeout, its output cap, and what its supervisor said through the pipe.

The timeout and the output cap kill the run's process group; with bubblewrap
that takes the pid namespace, hence every descendant, down with it.  Only the
tail of each output stream is kept in memory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from auditor.rerun import cgroup
from auditor.rerun.spec import Limits, MiB, Outcome, SandboxUnavailable

PIPE_BYTES = MiB  # F_SETPIPE_SZ on the output pipes: fewer, larger reads
F_SETPIPE_SZ = 1031


def watch(
    proc: subprocess.Popen,
    start: float,
    channel_fd: int,
    limits: Limits,
    *,
    sandboxed: bool,
    kill_rest: Callable[[], None] = lambda: None,
) -> tuple[Outcome, str | None]:
    if proc.stdout is None or proc.stderr is None:
        raise ValueError("watch() needs a process started with stdout and stderr piped")
    killer = _GroupKiller(proc)
    budget = _OutputBudget(limits.output_limit_bytes, killer.kill)
    stdout = _TailReader(proc.stdout, limits.output_tail_bytes, budget)
    stderr = _TailReader(proc.stderr, limits.output_tail_bytes, budget)
    channel = _ChannelReader(channel_fd, limits.max_report_bytes + 4096)
    timed_out = False
    try:
        proc.wait(timeout=limits.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        killer.kill()
    except BaseException:  # interrupted (Ctrl-C): leave nothing running
        killer.kill()
        raise
    finally:
        proc.wait()
        killer.reaped()
    if not sandboxed:
        # Unsandboxed, background children survive their parent (and those that
        # left its process group its cgroup); with bwrap the pid namespace
        # already died with the command.
        _kill_group(proc)
        kill_rest()
    seconds = time.monotonic() - start
    for reader in (stdout, stderr, channel):
        reader.join()
    capped = budget.exceeded and not timed_out
    killed = timed_out or capped
    said = _parse_channel(channel.data)
    if said.setup_error is not None:
        raise SandboxUnavailable(f"the sandbox could not be prepared: {said.setup_error}")
    if not said.started and not killed and (sandboxed or cgroup.JOIN_NAME in stderr.text()):
        what = "bubblewrap" if sandboxed else "the run"
        raise SandboxUnavailable(f"{what} failed before the experiment started: {_last_line(stderr.text())}")
    exit_code, signal_name = _how_it_ended(proc.returncode, said, killed=killed, sandboxed=sandboxed)
    return Outcome(
        exit_code=exit_code,
        signal=signal_name,
        timed_out=timed_out,
        output_capped=capped,
        seconds=seconds,
        stdout=stdout.text(),
        stderr=stderr.text(),
        output_bytes=budget.total,
        report=said.report,
        report_problem=said.problem,
        activity=said.activity,
    ), said.keyring


def _how_it_ended(code: int, said: _Said, *, killed: bool, sandboxed: bool) -> tuple[int | None, str | None]:
    """(exit code, signal name): a signal only where a process was really signalled.

    The supervisor says how the experiment ended (its wait status); an exit
    code of 153 is an exit code, not SIGXFSZ.  Only where the supervisor
    could not say (it was killed itself) does the launcher's code speak: a
    negative one, or bubblewrap's 128 + N for a signalled supervisor.
    """
    if killed:
        return None, "SIGKILL"
    if said.signal is not None:
        return None, _signal_name(said.signal)
    if said.exit_code is not None:
        return said.exit_code, None
    if code < 0:
        return None, _signal_name(-code)
    if sandboxed and 128 < code < 128 + 65:
        return None, _signal_name(code - 128)
    return code, None


@dataclass(frozen=True)
class _Said:
    """What the supervisor said through its pipe."""

    started: bool = False
    keyring: str | None = None
    exit_code: int | None = None  # the experiment exited with this code ...
    signal: int | None = None  # ... or was killed by this signal
    report: bytes | None = None
    problem: str | None = None
    setup_error: str | None = None
    activity: dict | None = None  # the supervisor's check of the probe's record (see supervisor.py)


def _parse_channel(data: bytes) -> _Said:
    """The supervisor's lines: ``AUDITOR-STARTED [keyring=...]``, ``AUDITOR-EXIT code|signal N``,
    then ``AUDITOR-REPORT <status>`` and the report's bytes; or ``AUDITOR-SETUP <error>`` alone."""
    said, rest = _Said(), data
    while rest.startswith((b"AUDITOR-STARTED", b"AUDITOR-EXIT ", b"AUDITOR-ACTIVITY ")):
        line, _, rest = rest.partition(b"\n")
        words = line.decode("utf-8", errors="replace").split()
        if words[0] == "AUDITOR-ACTIVITY":
            said = dataclasses.replace(said, activity=_activity(line[len(b"AUDITOR-ACTIVITY ") :]))
        elif words[0] == "AUDITOR-STARTED":
            keyring = next((w[len("keyring=") :] for w in words[1:] if w.startswith("keyring=")), None)
            said = dataclasses.replace(said, started=True, keyring=keyring)
        elif len(words) == 3 and words[1] == "code" and words[2].isdecimal():
            said = dataclasses.replace(said, exit_code=int(words[2]))
        elif len(words) == 3 and words[1] == "signal" and words[2].isdecimal():
            said = dataclasses.replace(said, signal=int(words[2]))
    header, _, body = rest.partition(b"\n")
    text = header.decode("utf-8", errors="replace")
    if text.startswith("AUDITOR-SETUP "):
        return dataclasses.replace(said, setup_error=text[len("AUDITOR-SETUP ") :])
    if text.startswith("AUDITOR-REPORT "):
        status = text[len("AUDITOR-REPORT ") :]
        if status == "ok":
            return dataclasses.replace(said, report=body)
        return dataclasses.replace(said, problem=status)
    return dataclasses.replace(said, problem="was not received: the run ended before its supervisor could send it")


def _activity(data: bytes) -> dict:
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"status": "invalid", "why": "the supervisor's line is unreadable"}


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:500] if lines else "no message"


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _GroupKiller:
    """Kills the run's process group from any thread, never after its leader was reaped."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self._proc = proc
        self._lock = threading.Lock()
        self._reaped = False

    def kill(self) -> None:
        with self._lock:
            if not self._reaped:
                _kill_group(self._proc)

    def reaped(self) -> None:
        with self._lock:
            self._reaped = True


def _signal_name(number: int) -> str:
    """SIGKILL for 9, ...; "signal N" for numbers Python does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class _OutputBudget:
    """Bytes printed on stdout and stderr together; past ``limit`` the run is killed."""

    def __init__(self, limit: int, on_exceeded: Callable[[], None]) -> None:
        self.limit, self.total, self.exceeded = limit, 0, False
        self._on_exceeded = on_exceeded
        self._lock = threading.Lock()

    def spend(self, count: int) -> None:
        with self._lock:
            self.total += count
            fire = self.total > self.limit and not self.exceeded
            self.exceeded = self.exceeded or fire
        if fire:
            self._on_exceeded()


class _TailReader:
    """Drain a pipe in a thread, keeping only its last ``limit`` bytes (memory stays bounded)."""

    def __init__(self, pipe: IO[bytes], limit: int, budget: _OutputBudget) -> None:
        self._pipe, self._limit, self._budget = pipe, limit, budget
        self._buffer = bytearray()
        self.truncated = False
        with contextlib.suppress(OSError):
            fcntl.fcntl(pipe.fileno(), F_SETPIPE_SZ, PIPE_BYTES)
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        fd = self._pipe.fileno()
        while chunk := os.read(fd, PIPE_BYTES):
            self._budget.spend(len(chunk))
            self._buffer += chunk
            if len(self._buffer) > self._limit:
                del self._buffer[: len(self._buffer) - self._limit]
                self.truncated = True
        self._pipe.close()

    def join(self) -> None:
        # A process that escaped the group (possible only without the sandbox)
        # may hold the pipe open; do not wait for it forever.
        self._thread.join(timeout=5)

    def text(self) -> str:
        return bytes(self._buffer).decode("utf-8", errors="replace")


class _ChannelReader:
    """The supervisor's pipe: at most ``limit`` bytes kept, the rest drained and dropped."""

    def __init__(self, fd: int, limit: int) -> None:
        self._fd, self._limit = fd, limit
        self._chunks: list[bytes] = []
        self._kept = 0
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._fd, 65536):
                if self._kept < self._limit:
                    chunk = chunk[: self._limit - self._kept]
                    self._chunks.append(chunk)
                    self._kept += len(chunk)
        finally:
            os.close(self._fd)

    def join(self) -> None:
        self._thread.join(timeout=5)

    @property
    def data(self) -> bytes:
        return b"".join(self._chunks)
