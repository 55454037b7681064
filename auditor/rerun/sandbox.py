"""Run the experiment on a copy of its workspace inside bubblewrap, with limits.

What the sandbox gives the experiment (the README's "Security model" says the same):

* its own empty network namespace: no network, not even the host's loopback
  services or abstract unix sockets;
* the host's file system read-only (``--ro-bind / /``), a fresh ``/dev`` (read-only
  but for its device nodes) and ``/proc``, and empty tmpfs over ``/tmp``, ``/var/tmp``,
  ``/run``, ``/home``, ``/root`` and the auditor user's home (host sockets,
  credentials, other projects); the chosen interpreter's prefix and packages are
  bound back read-only;
* everything it may write is a size-capped tmpfs inside the sandbox: its copy of
  the workspace (the files' size plus ``--disk``), ``/tmp`` and ``/dev/shm``
  (:data:`SCRATCH_BYTES` each, or ``--disk`` if smaller); the other masks are read-only; nothing it
  writes reaches a host disk, and the report comes back through a pipe
  (see :mod:`.supervisor`);
* when the auditor runs as root, the experiment does not: it runs as uid/gid
  :data:`SANDBOX_UID` (nobody) inside a user namespace the auditor makes,
  which is a fresh host uid from :data:`HOST_ID_RANGE` outside it (no host
  file belongs to it, not even those of the host's nobody), with no
  capabilities and no way to make further user namespaces, so root-only host
  files (``/etc/shadow``) stay unreadable and ``RLIMIT_NPROC`` applies (root is
  exempt from it); as another user it runs as that user, which the limit binds
  too. The process limit counts per user namespace, so it is the sandbox's own;
* a pid namespace and ``--die-with-parent``: when the experiment's main process
  ends, the timeout or the output cap strikes, or the auditor dies, every
  process it started dies with it (daemons included);
* a syscall filter (:mod:`.seccomp`): no keyring calls, io_uring, userfaultfd,
  bpf, perf_event_open, ptrace, personality changes, namespace or mount calls,
  modules, and no socket families but unix, IPv4, IPv6 and netlink-route;
  and a fresh, empty session keyring (the auditor's keys are out of reach);
* a cgroup of its own where the host allows one (:mod:`.cgroup`): the run's
  memory in all (processes together, memfd, shared memory, tmpfs, kernel
  memory such as a million empty files' inodes) is capped at ``--memory`` plus
  what its tmpfs may hold plus :data:`CGROUP_HEADROOM_BYTES`, swap included, and
  its tasks at ``--max-processes`` plus bubblewrap's two; the kernel kills the
  experiment (first in line) at the cap;
* a cleared environment: PATH, HOME (the copy), LANG and device variables only;
* rlimits: memory (RLIMIT_AS, or RLIMIT_DATA on GPU), processes (RLIMIT_NPROC),
  file size (RLIMIT_FSIZE), open files (:data:`MAX_OPEN_FILES`), no core dumps;
  a wall-clock timeout; a cap on what it may print
  (:attr:`Limits.output_limit_bytes`), of which only the tail is kept in memory.

Not guaranteed (see the README):

* the kernel is shared with the host: a kernel bug is an escape (the filter
  narrows what of the kernel is reachable, it does not remove the risk);
* the rest of the host file system stays readable (world-readable files, and
  all of the auditor user's own files when it is not root), and what the
  experiment prints is quoted in findings;
* unix sockets outside the masked folders whose permissions let the sandbox
  user write to them can be connected to (a read-only mount does not stop
  ``connect``);
* CPU time is bounded only by the timeout; GPU memory is not capped; where no
  cgroup can be made (no cgroup v2 delegation, cgroup v1 but not root) memory
  outside RLIMIT_AS (memfd, tmpfs inodes, kernel memory) is not capped and the
  run's :class:`Confinement` says so in ``note``;
* where the host allows no user namespace for root, or bubblewrap lacks
  ``--size``/``--perms``/``--seccomp``, the weaker fallback is recorded in the
  result (``limits``, ``sandbox_uid``, :class:`Confinement`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import AuditorError
from . import cgroup, seccomp

MiB = 1024 * 1024
GiB = 1024 * MiB
# The unprivileged user a root auditor's experiment runs as, as it sees itself inside its user
# namespace (nobody/nogroup, so that getpwuid() still answers) ...
SANDBOX_UID = SANDBOX_GID = 65534
# ... and the ids it has on the host: a fresh one per run from a range no distribution, container
# manager or systemd hands out (systemd's UIDS-GIDS.md: 1879048192-2147352575 unused), never one
# in /etc/passwd, /etc/group, /etc/subuid or /etc/subgid.  So no host file is the sandbox user's:
# host files owned by nobody (NFS root_squash) stay out of reach.
HOST_ID_RANGE = (0x70000000, 0x7FFDFFFF)
# Open files per process (the experiment's sockets and their buffers, memfds, pipes).
MAX_OPEN_FILES = 1024
# Added to the run's memory cap in its cgroup for bubblewrap and the supervisor.
CGROUP_HEADROOM_BYTES = 32 * MiB
# Tasks of the run that the process cap (RLIMIT_NPROC) does not count: bubblewrap's two.
LAUNCHER_TASKS = 2
# Host folders hidden behind empty tmpfs (with the auditor user's home): the
# host's scratch space, service sockets (/run) and home folders (credentials,
# other projects).  Only SCRATCH_DIR stays writable.
MASKED_DIRS = ("/tmp", "/var/tmp", "/run", "/home", "/root")
SCRATCH_DIR = "/tmp"
SCRATCH_BYTES = 512 * MiB  # /tmp and /dev/shm, each
READ_ONLY_MASK_BYTES = MiB
MAX_FILE_BYTES = GiB
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
UNSAFE_HINT = "pass --unsafe-no-sandbox to run the experiment without isolation"
INSTALL_HINT = f"install the Debian/Ubuntu package `bubblewrap` (apt-get install -y bubblewrap), or {UNSAFE_HINT}"
SUPERVISOR = Path(__file__).with_name("supervisor.py").read_text(encoding="utf-8")
# Capabilities the supervisor needs, as root inside, to hand the copy over and drop to SANDBOX_UID.
DROP_CAPS = ("CAP_CHOWN", "CAP_SETGID", "CAP_SETUID")
PIPE_BYTES = MiB  # F_SETPIPE_SZ on the output pipes: fewer, larger reads
F_SETPIPE_SZ = 1031
# Makes a user namespace owned by root with root and SANDBOX_UID mapped, in
# which nobody may make another one (a nested namespace could mount tmpfs of
# any size).  The parent writes the maps; the fd is handed to bwrap --userns.
_USERNS_HELPER = r"""
import ctypes, sys
if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:
    print("unshare failed: errno %d" % ctypes.get_errno(), flush=True)
    sys.exit(1)
print("ready", flush=True)
sys.stdin.readline()
with open("/proc/sys/user/max_user_namespaces", "w") as f:
    f.write("0")
print("limited", flush=True)
sys.stdin.read()
"""


class SandboxUnavailable(AuditorError):
    """The rerun cannot be set up as asked (no bubblewrap, no namespaces, no GPU, no interpreter)."""


@dataclass(frozen=True)
class Bubblewrap:
    """A bwrap binary and how this host lets it isolate."""

    path: str
    # "own": a user namespace the (root) auditor makes, SANDBOX_UID mapped in it;
    # "bwrap": bwrap's --unshare-user (the auditor's uid mapped to itself);
    # "none": no user namespace (root, or a setuid bwrap).
    userns: str
    drop_root: bool  # the experiment runs as SANDBOX_UID instead of root
    disable_userns: bool
    tmpfs_size: bool
    perms: bool
    seccomp: bool = False  # the syscall filter (:mod:`.seccomp`) is applied

    @property
    def experiment_uid(self) -> int:
        """The uid the experiment has inside its user namespace.

        Outside, it is a fresh host uid per run (:func:`pick_host_id`); with no user
        namespace ("none") that host uid is also what it sees: the run's
        :attr:`Confinement.sandbox_uid` says which.
        """
        return SANDBOX_UID if self.drop_root else os.getuid()

    @property
    def caps_processes(self) -> bool:
        """RLIMIT_NPROC binds (it never does for uid 0)."""
        return self.experiment_uid != 0


@dataclass(frozen=True)
class Limits:
    timeout: float
    memory_bytes: int
    memory_resource: str = "AS"  # "AS" | "DATA"
    max_output_bytes: int = MiB  # tail of each stream kept for findings
    output_limit_bytes: int = GiB  # printed in all before the run is killed
    max_file_bytes: int = MAX_FILE_BYTES
    disk_bytes: int = 2 * GiB  # what the copy may grow by
    max_processes: int = 1024  # processes and threads
    max_report_bytes: int = 16 * MiB

    @property
    def scratch_bytes(self) -> int:
        """Size of /tmp and of /dev/shm: :data:`SCRATCH_BYTES`, or less with a smaller disk cap."""
        return min(SCRATCH_BYTES, self.disk_bytes)


@dataclass(frozen=True)
class Experiment:
    """What to run: the command, the staged copy of the workspace, what to keep visible."""

    python: str
    command: list[str]  # [python, script, *args]
    stage: Path  # a host folder holding the workspace's files, never written by the run
    report_name: str
    device_env: dict[str, str]
    device_nodes: tuple[str, ...] = ()
    keep_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class Confinement:
    """How the run was held beyond the namespaces, and what it used (for the record's ``limits``)."""

    cgroup: str | None = None  # "v1", "v2", or None: no cgroup, the memory cap is RLIMIT_AS only
    memory_total_bytes: int | None = None  # the cgroup's cap on the run's memory in all
    swap_capped: bool = False  # memory and swap capped together
    processes_cap: int | None = None  # the cgroup's cap on the run's tasks (bubblewrap's included)
    syscall_filter: bool = False  # the seccomp filter applied
    keyring: str | None = None  # "fresh": an empty session keyring of its own; else why not
    sandbox_uid: int | None = None  # the experiment's uid as it sees itself
    host_uid: int | None = None  # and on the host
    open_files: int | None = None  # RLIMIT_NOFILE
    note: str | None = None  # what is missing here, e.g. "memory cap: RLIMIT_AS only (...)"
    memory_peak_bytes: int | None = None
    oom_kills: int = 0  # processes the kernel killed at the cgroup's memory cap
    processes_refused: int = 0  # forks refused at the cgroup's process cap

    def to_record(self) -> dict:
        return {
            "cgroup": self.cgroup, "memory_total_bytes": self.memory_total_bytes, "swap_capped": self.swap_capped,
            "processes_cgroup": self.processes_cap, "syscall_filter": self.syscall_filter,
            "keyring": self.keyring, "host_uid": self.host_uid, "open_files": self.open_files,
            "note": self.note,
        }


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None
    signal: str | None
    timed_out: bool
    output_capped: bool  # killed for printing more than the output limit
    seconds: float
    stdout: str  # the last max_output_bytes
    stderr: str
    output_bytes: int  # printed in all (stdout and stderr)
    report: bytes | None  # the report file the run wrote, when it wrote one
    report_problem: str | None  # why there is none ("not written", ...)
    confinement: Confinement = Confinement()

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.output_capped and self.signal is None


# -- finding bubblewrap and what it can do here ---------------------------------------------


@functools.lru_cache(maxsize=1)
def find_bubblewrap() -> Bubblewrap:
    """The host's bwrap in the strongest mode that works, checked by running a sandbox once.

    As root: our own user namespace with the sandbox user mapped (the
    experiment runs unprivileged), else bwrap's user namespace (the experiment
    runs as root of it: no process cap), else no user namespace (root dropped
    to the sandbox user).  As another user: bwrap's user namespace, else a
    setuid bwrap.  Raises :class:`SandboxUnavailable` when none works.
    """
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable(f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}")
    try:
        usage = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bwrap at {path} cannot be run ({exc}): {INSTALL_HINT}") from None
    size, perms = "--size" in usage, "--perms" in usage
    filters = [True, False] if "--seccomp" in usage and seccomp.filter_program() is not None else [False]
    root = os.geteuid() == 0
    modes = [("own", True), ("bwrap", False), ("none", True)] if root else [("bwrap", False), ("none", False)]
    errors = []
    for userns, drop_root in modes:
        if drop_root and not perms:
            continue  # the unprivileged user could not write its own /tmp
        for syscall_filter in filters:  # without the filter only where this host refuses it
            bwrap = Bubblewrap(path, userns, drop_root, userns == "bwrap" and "--disable-userns" in usage, size,
                               perms, syscall_filter)
            error = _smoke_test(bwrap)
            if error is None:
                return bwrap
            errors.append(error)
    raise SandboxUnavailable(
        f"bubblewrap cannot create its namespaces here ({errors[-1] if errors else 'no usable mode'}); in a "
        f"container, allow user namespaces (e.g. a seccomp profile permitting them), or {UNSAFE_HINT}"
    )


def _smoke_test(bwrap: Bubblewrap) -> str | None:
    true = shutil.which("true") or "/bin/true"
    try:
        with _user_namespace(bwrap, pick_host_id()) as userns_fd, _filter(bwrap) as filter_fd:
            argv = bwrap_argv(bwrap, userns_fd=userns_fd, command=[true], env={}, keep_paths=(), device_nodes=(),
                              seccomp_fd=filter_fd)
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
                                  pass_fds=_fds(userns_fd, filter_fd), check=False)
    except (OSError, subprocess.TimeoutExpired, SandboxUnavailable) as exc:
        return str(exc)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit code {done.returncode}")


def pick_host_id() -> int:
    """A uid (and the same gid) for the run's sandbox user on the host that nothing on it uses.

    Random within :data:`HOST_ID_RANGE`, so that concurrent runs do not share per-user kernel
    limits either; never a uid or gid the system knows (passwd, group, NSS) or hands to
    containers (subuid, subgid).
    """
    import grp
    import pwd
    import secrets

    low, high = HOST_ID_RANGE
    taken = _ids_in_use()
    for _ in range(100):
        candidate = low + secrets.randbelow(high - low + 1)
        if any(a <= candidate <= b for a, b in taken):
            continue
        try:
            pwd.getpwuid(candidate)
            continue
        except KeyError:
            pass
        try:
            grp.getgrgid(candidate)
            continue
        except KeyError:
            return candidate
    raise SandboxUnavailable(f"no unused uid found in {low}-{high} for the sandbox user")


def _ids_in_use() -> list[tuple[int, int]]:
    """Ids and id ranges named in /etc/passwd, /etc/group, /etc/subuid and /etc/subgid."""
    taken: list[tuple[int, int]] = []
    for path, column in (("/etc/passwd", 2), ("/etc/group", 2), ("/etc/subuid", None), ("/etc/subgid", None)):
        try:
            lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.strip().split(":")
            try:
                if column is not None:
                    number = int(parts[column])
                    taken.append((number, number))
                else:
                    start, count = int(parts[1]), int(parts[2])
                    taken.append((start, start + count - 1))
            except (IndexError, ValueError):
                continue
    return taken


@contextlib.contextmanager
def _user_namespace(bwrap: Bubblewrap | None, host_id: int) -> Iterator[int | None]:
    """An fd on a fresh user namespace for ``--userns`` in "own" mode, else None."""
    if bwrap is None or bwrap.userns != "own":
        yield None
        return
    fd = _make_user_namespace(host_id)
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def _filter(bwrap: Bubblewrap | None) -> Iterator[int | None]:
    """An fd holding the syscall filter for ``--seccomp``, or None without one."""
    program = seccomp.filter_program() if bwrap is not None and bwrap.seccomp else None
    if program is None:
        yield None
        return
    fd = seccomp.filter_fd(program)
    try:
        yield fd
    finally:
        os.close(fd)


def _make_user_namespace(host_id: int) -> int:
    helper = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _USERNS_HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={"PATH": SYSTEM_PATH}, text=True,
    )
    assert helper.stdin is not None and helper.stdout is not None
    try:
        said = helper.stdout.readline().strip()
        if said != "ready":
            raise SandboxUnavailable(f"cannot make a user namespace: {said or 'the helper died'}")
        # root stays root (to prepare the copy, then drop); the sandbox user is host_id outside.
        for name, inside in (("uid_map", SANDBOX_UID), ("gid_map", SANDBOX_GID)):
            with open(f"/proc/{helper.pid}/{name}", "w") as f:
                f.write(f"0 0 1\n{inside} {host_id} 1\n")
        helper.stdin.write("maps written\n")
        helper.stdin.flush()
        if helper.stdout.readline().strip() != "limited":
            raise SandboxUnavailable("cannot forbid nested user namespaces in the sandbox's user namespace")
        return os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise SandboxUnavailable(f"cannot set up the sandbox's user namespace: {exc}") from None
    finally:
        with contextlib.suppress(OSError):
            helper.stdin.close()
        try:
            helper.wait(timeout=10)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()
        helper.stdout.close()
        if helper.stderr is not None:
            helper.stderr.close()


def _fds(*fds: int | None) -> tuple[int, ...]:
    return tuple(fd for fd in fds if fd is not None)


# -- the bwrap command line -------------------------------------------------------------------


def bwrap_argv(
    bwrap: Bubblewrap,
    *,
    userns_fd: int | None,
    command: list[str],
    env: dict[str, str],
    keep_paths: tuple[str, ...],
    device_nodes: tuple[str, ...],
    stage: Path | None = None,
    work: str | None = None,
    work_bytes: int = 0,
    scratch_bytes: int = SCRATCH_BYTES,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bwrap command line; order matters: later mounts go on top of earlier ones.

    With ``work``, ``stage`` (host) is bound read-only at ``work + ".in"`` and
    ``work`` is a fresh tmpfs of ``work_bytes`` for the supervisor to copy it into.
    """
    argv = [bwrap.path, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if bwrap.userns == "own":
        argv += ["--userns", str(userns_fd)]
    elif bwrap.userns == "bwrap":
        argv += ["--unshare-user"] + (["--disable-userns"] if bwrap.disable_userns else [])
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for cap in DROP_CAPS if bwrap.drop_root else ():
        argv += ["--cap-add", cap]
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += _tmpfs(bwrap, "/dev/shm", scratch_bytes, "1777")
    masks = masked_dirs()
    for mask in masks:
        scratch = mask == SCRATCH_DIR
        argv += _tmpfs(bwrap, mask, scratch_bytes if scratch else READ_ONLY_MASK_BYTES, "1777" if scratch else None)
    made: set[str] = set()
    for path in hidden_keep_paths(keep_paths, masks):
        argv += _parents(path, masks, made) + ["--ro-bind", path, path]
    for node in device_nodes:
        argv += ["--dev-bind", node, node]
    argv += ["--remount-ro", "/dev"]  # after the device nodes' mount points were made in it
    if work is not None and stage is not None:
        argv += _parents(work + ".in", masks, made) + ["--ro-bind", str(stage), work + ".in"]
        argv += _parents(work, masks, made) + _tmpfs(bwrap, work, work_bytes, "0700")
    for mask in masks:
        if mask != SCRATCH_DIR:
            argv += ["--remount-ro", mask]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]  # loaded last, just before the command runs
    argv += ["--chdir", "/", "--clearenv"]
    for name, value in env.items():
        argv += ["--setenv", name, value]
    return argv + ["--", *command]


def _tmpfs(bwrap: Bubblewrap, path: str, size: int, perms: str | None) -> list[str]:
    args = ["--perms", perms] if perms and bwrap.perms else []
    if bwrap.tmpfs_size:
        args += ["--size", str(size)]
    return args + ["--tmpfs", path]


def _parents(path: str, masks: tuple[str, ...], made: set[str]) -> list[str]:
    """``--dir`` for the folders between a mask and ``path``: bwrap would make them 0700."""
    mask = next((m for m in masks if m != path and _under(path, m)), None)
    if mask is None:
        return []
    args, current = [], mask
    for part in Path(path).relative_to(mask).parts[:-1]:
        current = os.path.join(current, part)
        if current not in made:
            made.add(current)
            args += ["--dir", current]
    return args


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


def sandbox_env(python: str, home: str, device_env: dict[str, str]) -> dict[str, str]:
    """The only variables the experiment sees: no tokens or credentials pass."""
    return {
        "PATH": f"{os.path.dirname(python)}:{SYSTEM_PATH}",
        "HOME": home,
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        **device_env,
    }


def launcher_env() -> dict[str, str]:
    """bwrap's own environment: it needs nothing, so it gets nothing to leak."""
    return {"PATH": SYSTEM_PATH}


def work_dir(bwrap: Bubblewrap | None, stage: Path) -> str:
    """Where the experiment runs: a tmpfs under the sandbox's /tmp, or the stage itself unsandboxed."""
    return f"{SCRATCH_DIR}/{stage.name}" if bwrap is not None else str(stage)


def tmpfs_bytes(stage: Path, disk_bytes: int) -> int:
    """Size of the copy's tmpfs: the staged files in whole pages, plus ``disk_bytes``."""
    total = MiB
    for folder, dirnames, filenames in os.walk(stage):
        total += 4096 * (len(dirnames) + 1)
        for name in filenames:
            total += -(-os.lstat(os.path.join(folder, name)).st_size // 4096) * 4096 + 4096
    return total + disk_bytes


# -- running ------------------------------------------------------------------------------------


def run(bwrap: Bubblewrap | None, experiment: Experiment, limits: Limits) -> Outcome:
    """Run ``experiment`` (sandboxed unless ``bwrap`` is None) and collect what it left.

    The timeout and the output cap kill the process group; with bwrap that
    takes the pid namespace, hence every descendant, down with it.  The run
    lives in a cgroup of its own where this host allows one (:mod:`.cgroup`),
    removed afterwards with anything left in it.
    """
    work = work_dir(bwrap, experiment.stage)
    env = sandbox_env(experiment.python, work, experiment.device_env)
    work_bytes = tmpfs_bytes(experiment.stage, limits.disk_bytes) if bwrap is not None else 0
    host_id = pick_host_id() if bwrap is not None and bwrap.drop_root else None
    # With its own user namespace the sandbox user is SANDBOX_UID inside and host_id outside;
    # without one ("none"), host_id on both sides.
    inside_id = None if host_id is None else SANDBOX_UID if bwrap is not None and bwrap.userns == "own" else host_id
    run_cgroup = cgroup.create(memory_total_bytes(limits, bwrap, work_bytes), limits.max_processes + LAUNCHER_TASKS)
    try:
        read_end, write_end = os.pipe()
        try:
            with _user_namespace(bwrap, host_id or 0) as userns_fd, _filter(bwrap) as filter_fd:
                config = {
                    "stage": work + ".in" if bwrap else work, "work": work, "report_fd": write_end,
                    "report_name": experiment.report_name, "max_report_bytes": limits.max_report_bytes,
                    "uid": inside_id, "gid": inside_id,
                    "memory_resource": limits.memory_resource, "memory_bytes": limits.memory_bytes,
                    "max_file_bytes": limits.max_file_bytes, "max_open_files": MAX_OPEN_FILES,
                    # Unsandboxed, RLIMIT_NPROC would count the user's every process on the host.
                    "max_processes": limits.max_processes if bwrap else 0,
                    "keyctl": _keyctl_number(),
                }
                argv = [experiment.python, "-I", "-S", "-c", SUPERVISOR, json.dumps(config), "--",
                        *experiment.command]
                launch_env = env
                if bwrap is not None:
                    argv = bwrap_argv(bwrap, userns_fd=userns_fd, command=argv, env=env,
                                      keep_paths=experiment.keep_paths, device_nodes=experiment.device_nodes,
                                      stage=experiment.stage, work=work, work_bytes=work_bytes,
                                      scratch_bytes=limits.scratch_bytes, seccomp_fd=filter_fd)
                    launch_env = launcher_env()  # bwrap itself; --clearenv gives the experiment only ``env``
                argv = run_cgroup.wrap(argv)  # every process of the run is born in it
                start = time.monotonic()
                proc = subprocess.Popen(
                    argv, cwd="/" if bwrap else experiment.stage, env=launch_env, stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                    pass_fds=_fds(write_end, userns_fd, filter_fd),
                )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        outcome, keyring = _watch(proc, start, read_end, limits, sandboxed=bwrap is not None,
                                  kill_rest=run_cgroup.kill)
    finally:
        usage = run_cgroup.close()
    confinement = Confinement(
        cgroup=run_cgroup.version, memory_total_bytes=run_cgroup.memory_cap_bytes,
        swap_capped=run_cgroup.swap_capped, processes_cap=run_cgroup.processes_cap,
        syscall_filter=bool(bwrap and bwrap.seccomp), keyring=keyring,
        sandbox_uid=inside_id if inside_id is not None else os.getuid(),
        host_uid=host_id if host_id is not None else os.getuid(), open_files=MAX_OPEN_FILES,
        note=run_cgroup.note, memory_peak_bytes=usage.memory_peak_bytes, oom_kills=usage.oom_kills,
        processes_refused=usage.processes_refused,
    )
    return dataclasses.replace(outcome, confinement=confinement)


def memory_total_bytes(limits: Limits, bwrap: Bubblewrap | None, work_bytes: int) -> int:
    """The cgroup's cap on the run's memory in all: ``--memory``, what its tmpfs may hold, and headroom.

    The tmpfs (the copy, /tmp, /dev/shm) are RAM and are charged to the run, but have caps
    of their own (``--disk``); so that a run may fill them and still use ``--memory``, they
    are added.  Everything else (memfd, SysV and POSIX shared memory, kernel memory such as
    inodes and page tables) has no other cap and counts here.
    """
    disks = work_bytes + 2 * limits.scratch_bytes if bwrap is not None else 0
    return limits.memory_bytes + disks + CGROUP_HEADROOM_BYTES


def _keyctl_number() -> int | None:
    arch = seccomp.host_arch()
    return seccomp.SYSCALLS["keyctl"][0 if arch == "x86_64" else 1] if arch else None


def _watch(proc: subprocess.Popen, start: float, channel_fd: int, limits: Limits, *, sandboxed: bool,
           kill_rest: Callable[[], None] = lambda: None) -> tuple[Outcome, str | None]:
    killer = _GroupKiller(proc)
    budget = _OutputBudget(limits.output_limit_bytes, killer.kill)
    stdout = _TailReader(proc.stdout, limits.max_output_bytes, budget)
    stderr = _TailReader(proc.stderr, limits.max_output_bytes, budget)
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


def _parse_channel(data: bytes) -> _Said:
    """The supervisor's lines: ``AUDITOR-STARTED [keyring=...]``, ``AUDITOR-EXIT code|signal N``,
    then ``AUDITOR-REPORT <status>`` and the report's bytes; or ``AUDITOR-SETUP <error>`` alone."""
    said, rest = _Said(), data
    while rest.startswith((b"AUDITOR-STARTED", b"AUDITOR-EXIT ")):
        line, _, rest = rest.partition(b"\n")
        words = line.decode("utf-8", errors="replace").split()
        if words[0] == "AUDITOR-STARTED":
            keyring = next((w[len("keyring="):] for w in words[1:] if w.startswith("keyring=")), None)
            said = dataclasses.replace(said, started=True, keyring=keyring)
        elif len(words) == 3 and words[1] == "code" and words[2].isdigit():
            said = dataclasses.replace(said, exit_code=int(words[2]))
        elif len(words) == 3 and words[1] == "signal" and words[2].isdigit():
            said = dataclasses.replace(said, signal=int(words[2]))
    header, _, body = rest.partition(b"\n")
    text = header.decode("utf-8", errors="replace")
    if text.startswith("AUDITOR-SETUP "):
        return dataclasses.replace(said, setup_error=text[len("AUDITOR-SETUP "):])
    if text.startswith("AUDITOR-REPORT "):
        status = text[len("AUDITOR-REPORT "):]
        if status == "ok":
            return dataclasses.replace(said, report=body)
        return dataclasses.replace(said, problem=status)
    return dataclasses.replace(said, problem="was not received: the run ended before its supervisor could send it")


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

    def __init__(self, limit: int, on_exceeded) -> None:  # type: ignore[no-untyped-def]
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

    def __init__(self, pipe, limit: int, budget: _OutputBudget) -> None:  # type: ignore[no-untyped-def]
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
