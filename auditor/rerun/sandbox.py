"""Run one command on a copy of the workspace inside bubblewrap, with limits.

What the sandbox gives the experiment (see also the README's security model):

* its own empty network namespace (``--unshare-all``): no network, not even
  loopback services or abstract unix sockets of the host;
* the host's file system read-only (``--ro-bind / /``), a fresh ``/dev`` and
  ``/proc``, and empty private tmpfs over ``/tmp``, ``/var/tmp``, ``/run``,
  ``/home`` and ``/root`` (host sockets, other users' files); the chosen
  interpreter's prefix and packages are bound back read-only, then the copy
  of the workspace, the only writable host folder;
* a pid namespace and ``--die-with-parent``: when the auditor kills bwrap on
  timeout, or dies itself, every process of the experiment dies with it;
* no capabilities (``--cap-drop ALL``), a new session (no terminal injection),
  no nested user namespaces where bwrap supports ``--disable-userns``;
* a cleared environment: PATH, HOME (the copy), LANG and device variables only;
* rlimits set before bwrap starts, inherited by everything inside: memory
  (RLIMIT_AS, or RLIMIT_DATA on GPU), file size (RLIMIT_FSIZE), no core dumps.

Not guaranteed:

* the number of processes is not capped: RLIMIT_NPROC counts per user across
  the whole host and does not apply to root, so the pid namespace (killed as a
  whole) and the wall-clock timeout are what bound a fork bomb;
* the rest of the host file system stays readable, and what the experiment
  prints is quoted in findings (R803/R807 show the output's tail);
* unix sockets outside the masked folders can still be connected to (a
  read-only mount does not stop ``connect``);
* CPU time, disk usage of the copy (beyond the per-file cap and the timeout)
  and GPU memory are not limited; the kernel is shared with the host.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import AuditorError

MiB = 1024 * 1024
# Host folders hidden behind empty tmpfs (with the auditor user's home): the
# host's scratch space, service sockets (/run) and home folders (credentials,
# other projects).
MASKED_DIRS = ("/tmp", "/var/tmp", "/run", "/home", "/root")
MASK_TMPFS_BYTES = 512 * MiB
MAX_FILE_BYTES = 1024 * MiB
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
UNSAFE_HINT = "pass --unsafe-no-sandbox to run the experiment without isolation"
INSTALL_HINT = f"install the Debian/Ubuntu package `bubblewrap` (apt-get install -y bubblewrap), or {UNSAFE_HINT}"
# Applied by a tiny exec wrapper rather than subprocess's preexec_fn, which is
# unsafe when the caller has threads (the CLI's spinner is one).
_LIMITS_WRAPPER = """
import os, resource, sys
memory_resource, memory, file_size, *argv = sys.argv[1:]
memory, file_size = int(memory), int(file_size)
resource.setrlimit(getattr(resource, "RLIMIT_" + memory_resource), (memory, memory))
resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
os.execvp(argv[0], argv)
"""


class SandboxUnavailable(AuditorError):
    """The rerun cannot be set up as asked (no bubblewrap, no namespaces, no GPU, no interpreter)."""


@dataclass(frozen=True)
class Bubblewrap:
    """A bwrap binary and the options this host supports."""

    path: str
    user_namespace: bool  # --unshare-user works (else root without a userns, caps dropped)
    disable_userns: bool
    tmpfs_size: bool


@dataclass(frozen=True)
class Limits:
    timeout: float
    memory_bytes: int
    memory_resource: str = "AS"  # "AS" | "DATA"
    max_output_bytes: int = MiB
    max_file_bytes: int = MAX_FILE_BYTES


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None
    signal: str | None
    timed_out: bool
    seconds: float
    stdout: str  # the last max_output_bytes
    stderr: str
    output_truncated: bool

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.signal is None


@functools.lru_cache(maxsize=1)
def find_bubblewrap() -> Bubblewrap:
    """The host's bwrap, checked by running a sandbox once; raises :class:`SandboxUnavailable`."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable(f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}")
    try:
        usage = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bwrap at {path} cannot be run ({exc}): {INSTALL_HINT}") from None
    errors = []
    # A user namespace first (no real capabilities inside), else plain root
    # with every capability dropped: both keep the host read-only.
    for user_namespace in (True, False):
        bwrap = Bubblewrap(path, user_namespace, user_namespace and "--disable-userns" in usage, "--size" in usage)
        error = _smoke_test(bwrap)
        if error is None:
            return bwrap
        errors.append(error)
    raise SandboxUnavailable(
        f"bubblewrap cannot create its namespaces here ({errors[-1]}); in a container, allow user "
        f"namespaces (e.g. a seccomp profile permitting them), or {UNSAFE_HINT}"
    )


def _smoke_test(bwrap: Bubblewrap) -> str | None:
    true = shutil.which("true") or "/bin/true"
    argv = bwrap_argv(bwrap, copy_dir=Path("/"), command=[true], env={}, keep_paths=(), device_nodes=(),
                      writable=False)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit code {done.returncode}")


def bwrap_argv(
    bwrap: Bubblewrap,
    *,
    copy_dir: Path,
    command: list[str],
    env: dict[str, str],
    keep_paths: tuple[str, ...],
    device_nodes: tuple[str, ...],
    writable: bool = True,
) -> list[str]:
    """The bwrap command line; order matters: later mounts go on top of earlier ones."""
    argv = [bwrap.path, "--unshare-all"]
    if bwrap.user_namespace:
        argv.append("--unshare-user")
        if bwrap.disable_userns:
            argv.append("--disable-userns")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    masks = masked_dirs()
    for mask in masks:
        argv += (["--size", str(MASK_TMPFS_BYTES)] if bwrap.tmpfs_size else []) + ["--tmpfs", mask]
    for path in hidden_keep_paths(keep_paths, masks):
        argv += ["--ro-bind", path, path]
    for node in device_nodes:
        argv += ["--dev-bind", node, node]
    if writable:
        argv += ["--bind", str(copy_dir), str(copy_dir)]
    argv += ["--chdir", str(copy_dir), "--clearenv"]
    for name, value in env.items():
        argv += ["--setenv", name, value]
    return argv + ["--", *command]


def masked_dirs() -> tuple[str, ...]:
    """The existing folders to hide: :data:`MASKED_DIRS` and the auditor user's home."""
    candidates = [*MASKED_DIRS, os.path.realpath(os.path.expanduser("~"))]
    found = [d for d in dict.fromkeys(candidates) if d != "/" and os.path.isdir(d) and not os.path.islink(d)]
    return tuple(d for d in found if not any(m != d and _under(d, m) for m in found))


def hidden_keep_paths(paths: tuple[str, ...], masks: tuple[str, ...]) -> list[str]:
    """Existing ``paths`` (and their real paths) that a mask would hide, outermost only."""
    candidates: set[str] = set()
    for path in paths:
        for p in (os.path.abspath(path), os.path.realpath(path)):
            # A mask root itself is never bound back: that would undo the mask.
            if os.path.exists(p) and p not in masks and any(_under(p, m) for m in masks):
                candidates.add(p)
    return [p for p in sorted(candidates) if not any(q != p and _under(p, q) for q in candidates)]


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def sandbox_env(python: str, copy_dir: Path, device_env: dict[str, str]) -> dict[str, str]:
    """The only variables the experiment sees: no tokens or credentials pass."""
    return {
        "PATH": f"{os.path.dirname(python)}:{SYSTEM_PATH}",
        "HOME": str(copy_dir),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        **device_env,
    }


def launcher_env() -> dict[str, str]:
    """bwrap's own environment: it needs nothing, so it gets nothing to leak."""
    return {"PATH": SYSTEM_PATH}


def run(argv: list[str], *, copy_dir: Path, limits: Limits, env: dict[str, str], sandboxed: bool) -> Outcome:
    """Run ``argv`` (a bwrap command line, or the bare command when unsandboxed) in ``copy_dir``.

    The wall-clock timeout kills the process group; with bwrap that takes the
    pid namespace, hence every descendant, down with it.
    """
    wrapped = [sys.executable, "-I", "-S", "-c", _LIMITS_WRAPPER, limits.memory_resource,
               str(limits.memory_bytes), str(limits.max_file_bytes), *argv]
    start = time.monotonic()
    proc = subprocess.Popen(
        wrapped, cwd=copy_dir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
    )
    stdout = _TailReader(proc.stdout, limits.max_output_bytes)
    stderr = _TailReader(proc.stderr, limits.max_output_bytes)
    timed_out = False
    try:
        proc.wait(timeout=limits.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
    except BaseException:  # interrupted (Ctrl-C): leave nothing running
        _kill_group(proc)
        raise
    finally:
        proc.wait()
    if not sandboxed:
        # Unsandboxed, background children survive their parent; with bwrap
        # the pid namespace already died with the command.
        _kill_group(proc)
    seconds = time.monotonic() - start
    stdout.join()
    stderr.join()
    code = proc.returncode
    return Outcome(
        exit_code=None if timed_out or code < 0 else code,
        signal=_signal_name(code, sandboxed=sandboxed) if not timed_out else "SIGKILL",
        timed_out=timed_out,
        seconds=seconds,
        stdout=stdout.text(),
        stderr=stderr.text(),
        output_truncated=stdout.truncated or stderr.truncated,
    )


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_name(code: int, *, sandboxed: bool) -> str | None:
    """The signal that ended the command: negative codes, or bwrap's 128 + signal."""
    number = -code if code < 0 else (code - 128 if sandboxed and 128 < code < 128 + 65 else None)
    if number is None:
        return None
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class _TailReader:
    """Drain a pipe in a thread, keeping only its last ``limit`` bytes."""

    def __init__(self, pipe, limit: int) -> None:  # type: ignore[no-untyped-def]
        self._pipe, self._limit = pipe, limit
        self._buffer = bytearray()
        self.truncated = False
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while chunk := self._pipe.read1(65536):
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
