"""A control group per rerun: the run's memory in all and its process count, capped by the kernel.

``RLIMIT_AS`` caps each process's address space, but memory the kernel keeps
for a process outside it is not counted there: memfd and tmpfs files, SysV and
POSIX shared memory, inodes and dentries (a million empty files), page tables.
A memory cgroup counts all of that, for every process of the run together.

Where this host allows it, :func:`create` makes a fresh cgroup for the run
under the auditor's own one:

* cgroup v2, where the auditor may write to its cgroup (or its parent) and the
  ``memory`` and ``pids`` controllers are enabled for children there (a
  delegated subtree): ``memory.max``, ``memory.swap.max`` = 0 and ``pids.max``;
* else cgroup v1, as root: a child in the ``memory`` hierarchy with
  ``memory.limit_in_bytes`` and, where swap accounting exists,
  ``memory.memsw.limit_in_bytes`` (memory and swap together), and one in the
  ``pids`` hierarchy with ``pids.max``.  Kernel memory (slab) is charged to
  ``memory.limit_in_bytes`` on every kernel this package supports; the
  deprecated ``memory.kmem.limit_in_bytes`` is left alone.

The run's first process moves itself in (:data:`JOIN`, a shell, before it
executes bubblewrap), so every process of the run is born inside.  :meth:`RunCgroup.close`
reads what the run used, kills whatever is left in the cgroup and removes it.
Where no cgroup can be made, :func:`create` returns a :class:`RunCgroup` with
no paths and a note saying why; the run then has ``RLIMIT_AS`` only.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import time
from dataclasses import dataclass, field

from auditor.rerun.spec import CgroupVersion

CGROUP_ROOT = "/sys/fs/cgroup"
# The run's first process: joins the cgroups (writing 0 to cgroup.procs moves the writer), then
# executes the run; a shell, as it starts in a millisecond or two (a Python interpreter: 20-50 ms).
SHELL = "/bin/sh"
JOIN_NAME = "auditor-cgroup-join"  # the shell's $0: its error messages start with it
# $1 is the auditor's pid: a first process whose parent already died (the auditor was killed
# between the fork and setpriv's prctl) exits instead of running an orphaned sandbox.
JOIN = (
    '[ "$PPID" = "$1" ] || exit 125; shift; '
    'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; exec "$@"'
)
# util-linux's setpriv sets the parent-death signal, which survives the exec into the shell and
# bwrap: from its first instruction the run dies with the auditor (bwrap's own --die-with-parent
# is set only once bwrap has started, too late for an auditor killed in between).
SETPRIV = "setpriv"
REMOVE_SECONDS = 5.0
PREFIX = "auditor-rerun-"
# A run cgroup whose auditor died (SIGKILL: no cleanup) is removed by the next run beside it once
# it is empty, its auditor's pid is gone and it is older than this (never one being set up).
STALE_SECONDS = 60.0


@dataclass
class Usage:
    """What the run used, read from its cgroup before it is removed."""

    memory_peak_bytes: int | None = None
    oom_kills: int = 0  # processes the kernel killed at the memory cap
    memory_cap_hits: int = 0  # allocations that hit the cap (reclaimed, refused or killed)
    processes_refused: int = 0  # forks and threads refused at the process cap


@dataclass
class RunCgroup:
    """The run's cgroup(s); ``version`` None when there are none (``note`` says why)."""

    version: CgroupVersion | None = None
    memory_dir: str | None = None
    pids_dir: str | None = None
    memory_cap_bytes: int | None = None
    swap_capped: bool = False
    processes_cap: int | None = None
    note: str | None = None
    usage: Usage = field(default_factory=Usage)
    closed: bool = False

    @property
    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files the run's first process writes itself into."""
        dirs = dict.fromkeys(d for d in (self.memory_dir, self.pids_dir) if d)
        return [os.path.join(d, "cgroup.procs") for d in dirs]

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run by a first process that dies with the auditor and joins the cgroups
        before it executes it."""
        setpriv = shutil.which(SETPRIV, path="/usr/bin:/bin")  # the system's, never a folder the run can write
        die_with_auditor = [setpriv, "--pdeathsig", "KILL"] if setpriv else []
        return [*die_with_auditor, SHELL, "-c", JOIN, JOIN_NAME, str(os.getpid()), *self.procs_files, "--", *argv]

    def kill(self) -> None:
        """SIGKILL every process still in the run's cgroups (daemons that left its process group)."""
        for path in dict.fromkeys(d for d in (self.memory_dir, self.pids_dir) if d):
            _kill_all(path)

    def close(self) -> Usage:
        """Read the usage, kill what is left, remove the cgroups; safe to call twice."""
        if self.closed:
            return self.usage
        self.closed = True
        with contextlib.suppress(OSError, ValueError):
            self.usage = self._read_usage()
        for path in dict.fromkeys(d for d in (self.memory_dir, self.pids_dir) if d):
            _remove(path)
        return self.usage

    def _read_usage(self) -> Usage:
        usage = Usage()
        if self.version == "v2" and self.memory_dir:
            events = _keyed(os.path.join(self.memory_dir, "memory.events"))
            usage.oom_kills = events.get("oom_kill", 0)
            usage.memory_cap_hits = events.get("max", 0)
            usage.memory_peak_bytes = _int_file(os.path.join(self.memory_dir, "memory.peak"))
        elif self.memory_dir:
            usage.oom_kills = _keyed(os.path.join(self.memory_dir, "memory.oom_control")).get("oom_kill", 0)
            usage.memory_cap_hits = _int_file(os.path.join(self.memory_dir, "memory.failcnt")) or 0
            usage.memory_peak_bytes = _int_file(os.path.join(self.memory_dir, "memory.max_usage_in_bytes"))
        if self.pids_dir:
            usage.processes_refused = _keyed(os.path.join(self.pids_dir, "pids.events")).get("max", 0)
        return usage


def create(memory_bytes: int, processes: int | None) -> RunCgroup:
    """A fresh cgroup capping the run's memory (and swap) at ``memory_bytes`` and its tasks at ``processes``."""
    tag = f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    mounts = _mounts()
    notes = []
    v2 = mounts.get("cgroup2")
    if v2 is not None:
        made = _create_v2(v2, tag, memory_bytes, processes)
        if isinstance(made, RunCgroup):
            return made
        notes.append(f"cgroup v2: {made}")
    if "memory" in mounts:
        made = _create_v1(mounts, tag, memory_bytes, processes)
        if isinstance(made, RunCgroup):
            return made
        notes.append(f"cgroup v1: {made}")
    elif not notes:
        notes.append("no cgroup file system is mounted")
    return RunCgroup(note="memory cap: RLIMIT_AS only (" + "; ".join(notes) + ")")


# -- cgroup v2 -----------------------------------------------------------------------------------


def _create_v2(mount: tuple[str, str], tag: str, memory_bytes: int, processes: int | None) -> RunCgroup | str:
    mount_point, mount_root = mount
    own = _own_path("0", "")
    if own is None:
        return "the auditor's cgroup is unknown"
    here = _under_mount(mount_point, mount_root, own)
    problems = []
    # Our own cgroup holds our process, so it can enable controllers for children only as the
    # root; the parent can hold a sibling for the run where it is delegated to us.
    for parent in dict.fromkeys((here, os.path.dirname(here) if here != mount_point else here)):
        if not parent.startswith(mount_point):
            continue
        enabled = _words(os.path.join(parent, "cgroup.subtree_control"))
        if not {"memory", "pids"} <= enabled:
            with contextlib.suppress(OSError):
                _write(os.path.join(parent, "cgroup.subtree_control"), "+memory +pids")
            enabled = _words(os.path.join(parent, "cgroup.subtree_control"))
        if "memory" not in enabled:
            problems.append(f"the memory controller is not delegated at {parent}")
            continue
        path = os.path.join(parent, tag)
        _sweep(parent)
        try:
            os.mkdir(path, 0o755)
        except OSError as exc:
            problems.append(f"cannot create a cgroup in {parent} ({exc.strerror})")
            continue
        try:
            _write(os.path.join(path, "memory.max"), str(memory_bytes))
            swap = os.path.exists(os.path.join(path, "memory.swap.max"))
            if swap:
                _write(os.path.join(path, "memory.swap.max"), "0")
            pids = processes is not None and "pids" in enabled
            if pids:
                _write(os.path.join(path, "pids.max"), str(processes))
        except OSError as exc:
            _remove(path)
            problems.append(f"cannot set the limits in {path} ({exc.strerror})")
            continue
        notes = [] if swap else ["swap is not accounted (memory.swap.max): memory swapped out is not counted"]
        if processes is not None and not pids:
            notes.append(f"process cap: the pids controller is not delegated at {parent}")
        return RunCgroup(
            "v2",
            path,
            path if pids else None,
            memory_bytes,
            swap,
            processes if pids else None,
            note="; ".join(notes) or None,
        )
    return "; ".join(problems) or "no writable cgroup"


# -- cgroup v1 -----------------------------------------------------------------------------------


def _create_v1(mounts: dict, tag: str, memory_bytes: int, processes: int | None) -> RunCgroup | str:
    memory = _v1_dir(mounts["memory"], "memory", tag)
    _sweep(os.path.dirname(memory))
    try:
        os.mkdir(memory, 0o755)
    except OSError as exc:
        return f"cannot create {memory} ({exc.strerror})"
    cgroup = RunCgroup("v1", memory_dir=memory, memory_cap_bytes=memory_bytes)
    try:
        _write(os.path.join(memory, "memory.limit_in_bytes"), str(memory_bytes))
        memsw = os.path.join(memory, "memory.memsw.limit_in_bytes")
        if os.path.exists(memsw):
            _write(memsw, str(memory_bytes))
            cgroup.swap_capped = True
    except OSError as exc:
        cgroup.close()
        return f"cannot set the memory limit in {memory} ({exc.strerror})"
    notes = []
    if processes is not None and "pids" in mounts:
        pids = _v1_dir(mounts["pids"], "pids", tag)
        _sweep(os.path.dirname(pids))
        try:
            os.mkdir(pids, 0o755)
            cgroup.pids_dir = pids
            _write(os.path.join(pids, "pids.max"), str(processes))
            cgroup.processes_cap = processes
        except OSError as exc:
            notes.append(f"process cap: none in the pids cgroup ({exc.strerror})")
    elif processes is not None:
        notes.append("process cap: the pids controller is not mounted")
    if not cgroup.swap_capped:
        notes.append("swap is not accounted (memory.memsw): memory swapped out is not counted")
    cgroup.note = "; ".join(notes) or None
    return cgroup


def _v1_dir(mount: tuple[str, str], controller: str, tag: str) -> str:
    mount_point, mount_root = mount
    own = _own_path(None, controller)
    base = _under_mount(mount_point, mount_root, own) if own is not None else mount_point
    return os.path.join(base, tag)


# -- /proc and cgroupfs ------------------------------------------------------------------------------


def _mounts() -> dict[str, tuple[str, str]]:
    """controller (or "cgroup2") -> (mount point, root of the hierarchy it shows), from mountinfo."""
    found: dict[str, tuple[str, str]] = {}
    try:
        lines = _read("/proc/self/mountinfo").splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split()
        if " - " not in line or len(fields) < 10:
            continue
        pre, post = line.split(" - ", 1)
        pre_fields, post_fields = pre.split(), post.split()
        if len(post_fields) < 3:
            continue
        fstype, options = post_fields[0], post_fields[2].split(",")
        root, mount_point = _unescape(pre_fields[3]), _unescape(pre_fields[4])
        if fstype == "cgroup2":
            found.setdefault("cgroup2", (mount_point, root))
        elif fstype == "cgroup":
            for controller in ("memory", "pids"):
                if controller in options:
                    found.setdefault(controller, (mount_point, root))
    return found


def _own_path(hierarchy_id: str | None, controller: str) -> str | None:
    """The auditor's cgroup in one hierarchy, from /proc/self/cgroup."""
    try:
        lines = _read("/proc/self/cgroup").splitlines()
    except OSError:
        return None
    for line in lines:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if hierarchy_id is not None and number == hierarchy_id and controllers == "":
            return path
        if hierarchy_id is None and controller in controllers.split(","):
            return path
    return None


def _under_mount(mount_point: str, mount_root: str, path: str) -> str:
    """Where cgroup ``path`` (as /proc/self/cgroup names it) appears under a mount of ``mount_root``."""
    if mount_root not in ("", "/"):
        if path == mount_root or path.startswith(mount_root.rstrip("/") + "/"):
            path = path[len(mount_root.rstrip("/")) :]
        else:
            return mount_point  # a cgroup namespace or a foreign root: the mount's top
    relative = path.strip("/")
    if ".." in relative.split("/"):
        return mount_point
    return os.path.join(mount_point, relative) if relative else mount_point


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _remove(path: str) -> None:
    """Kill every process left in the cgroup, then remove it (retrying while the kernel reaps)."""
    deadline = time.monotonic() + REMOVE_SECONDS
    while True:
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return  # left behind empty of limits' effect; the kernel frees it with its last task
        _kill_all(path)
        time.sleep(0.01)


def _sweep(parent: str) -> None:
    """Remove run cgroups left behind by auditors that died; rmdir refuses any that holds a process."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    now = time.time()
    for name in names:
        match = re.fullmatch(re.escape(PREFIX) + r"(\d+)-[0-9a-f]{8}", name)
        if match is None or _alive(int(match.group(1))):
            continue
        path = os.path.join(parent, name)
        with contextlib.suppress(OSError):
            if now - os.stat(path).st_mtime > STALE_SECONDS and not _pids(path):
                os.rmdir(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _kill_all(path: str) -> None:
    kill_file = os.path.join(path, "cgroup.kill")  # v2, Linux 5.14+: the whole subtree at once
    if os.path.exists(kill_file):
        with contextlib.suppress(OSError):
            _write(kill_file, "1")
            return
    for pid in _pids(path):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _pids(path: str) -> list[int]:
    try:
        return [int(p) for p in _read(os.path.join(path, "cgroup.procs")).split()]
    except (OSError, ValueError):
        return []


def _words(path: str) -> set[str]:
    try:
        return set(_read(path).split())
    except OSError:
        return set()


def _keyed(path: str) -> dict[str, int]:
    values = {}
    with contextlib.suppress(OSError):
        for line in _read(path).splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                values[key] = int(value)
    return values


def _int_file(path: str) -> int | None:
    try:
        return int(_read(path).strip())
    except (OSError, ValueError):
        return None


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(value)
