"""The sandbox's vocabulary: its constants and error, what a run is given and what it gives back.

A run is given the bubblewrap binary and what it can do on this host
(:class:`Bubblewrap`), its caps (:class:`Limits`) and what to run
(:class:`Experiment`); it gives back how it ended (:class:`Outcome`) and how
it was held (:class:`Confinement`).  :mod:`.sandbox` says what the sandbox
guarantees.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from auditor.errors import AuditorError

MiB = 1024 * 1024
GiB = 1024 * MiB
# The unprivileged user a root auditor's experiment runs as, as it sees itself inside its user
# namespace (nobody/nogroup, so that getpwuid() still answers) ...
SANDBOX_UID = SANDBOX_GID = 65534
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
# How a rlimit caps the run's memory: the address space, or (on GPU, where CUDA reserves huge
# virtual ranges) private writable memory only.
MemoryResource = Literal["AS", "DATA"]
# Which user namespace the sandbox runs in (see :class:`Bubblewrap`).
UsernsMode = Literal["own", "bwrap", "none"]
CgroupVersion = Literal["v1", "v2"]


class SandboxUnavailable(AuditorError):
    """The rerun cannot be set up as asked (no bubblewrap, no namespaces, no GPU, no interpreter)."""


@dataclass(frozen=True)
class Bubblewrap:
    """A bwrap binary and how this host lets it isolate."""

    path: str
    # "own": a user namespace the (root) auditor makes, SANDBOX_UID mapped in it;
    # "bwrap": bwrap's --unshare-user (the auditor's uid mapped to itself);
    # "none": no user namespace (root, or a setuid bwrap).
    userns: UsernsMode
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
    memory_resource: MemoryResource = "AS"
    output_tail_bytes: int = MiB  # the last bytes of each stream kept for findings
    output_limit_bytes: int = GiB  # the output cap: printed in all (both streams) before the kill
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
    # The seed offset of the auditor's probe (auditor.rerun.probe); None: the command runs unprobed.
    probe_offset: int | None = None


@dataclass(frozen=True)
class Confinement:
    """How the run was held beyond the namespaces, and what it used (for the record's ``limits``)."""

    cgroup: CgroupVersion | None = None  # None: no cgroup, the memory cap is RLIMIT_AS only
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
            "cgroup": self.cgroup,
            "memory_total_bytes": self.memory_total_bytes,
            "swap_capped": self.swap_capped,
            "processes_cgroup": self.processes_cap,
            "syscall_filter": self.syscall_filter,
            "keyring": self.keyring,
            "host_uid": self.host_uid,
            "open_files": self.open_files,
            "note": self.note,
        }


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None
    signal: str | None
    timed_out: bool
    output_capped: bool  # killed for printing more than the output limit
    seconds: float
    stdout: str  # the last output_tail_bytes
    stderr: str
    output_bytes: int  # printed in all (stdout and stderr)
    report: bytes | None  # the report file the run wrote, when it wrote one
    report_problem: str | None  # why there is none ("not written", ...)
    confinement: Confinement = Confinement()
    activity: dict | None = None  # the probe's checked record, as the supervisor said it (None: unprobed)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.output_capped and self.signal is None
