"""Run the experiment on a copy of its workspace inside bubblewrap, with limits.

What the sandbox gives the experiment (docs/security.md says the same):

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

Not guaranteed (see docs/security.md):

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

import dataclasses
import json
import os
import subprocess
import time
from pathlib import Path

from auditor.rerun import cgroup, seccomp
from auditor.rerun.bwrap import bwrap_argv, find_bubblewrap, masked_dirs
from auditor.rerun.probe import HOOK
from auditor.rerun.spec import (
    CGROUP_HEADROOM_BYTES,
    LAUNCHER_TASKS,
    MAX_OPEN_FILES,
    SANDBOX_UID,
    SCRATCH_DIR,
    SUPERVISOR,
    SYSTEM_PATH,
    Bubblewrap,
    Confinement,
    Experiment,
    GiB,
    Limits,
    MiB,
    Outcome,
    SandboxUnavailable,
)
from auditor.rerun.userns import (
    HOST_ID_RANGE,
    pass_fds,
    pick_host_id,
    syscall_filter_fd,
    user_namespace,
)
from auditor.rerun.watch import watch

# The sandbox's vocabulary and its helpers, importable from here as before the split.
__all__ = [
    "HOST_ID_RANGE",
    "LAUNCHER_TASKS",
    "Bubblewrap",
    "Confinement",
    "Experiment",
    "GiB",
    "Limits",
    "MiB",
    "Outcome",
    "SandboxUnavailable",
    "find_bubblewrap",
    "masked_dirs",
    "pick_host_id",
    "run",
]


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
        source_fd = _probe_source_fd() if experiment.probe_offset is not None else None
        read_end, write_end = os.pipe()
        try:
            with user_namespace(bwrap, host_id or 0) as userns_fd, syscall_filter_fd(bwrap) as filter_fd:
                config = {
                    "stage": work + ".in" if bwrap else work,
                    "work": work,
                    "report_fd": write_end,
                    "report_name": experiment.report_name,
                    "max_report_bytes": limits.max_report_bytes,
                    "uid": inside_id,
                    "gid": inside_id,
                    "memory_resource": limits.memory_resource,
                    "memory_bytes": limits.memory_bytes,
                    "max_file_bytes": limits.max_file_bytes,
                    "max_open_files": MAX_OPEN_FILES,
                    # Unsandboxed, RLIMIT_NPROC would count the user's every process on the host.
                    "max_processes": limits.max_processes if bwrap else 0,
                    "keyctl": _keyctl_number(),
                    "probe": None
                    if experiment.probe_offset is None
                    else {"offset": experiment.probe_offset, "source_fd": source_fd},
                }
                argv = [experiment.python, "-I", "-S", "-c", SUPERVISOR, json.dumps(config), "--", *experiment.command]
                launch_env = env
                if bwrap is not None:
                    argv = bwrap_argv(
                        bwrap,
                        userns_fd=userns_fd,
                        command=argv,
                        env=env,
                        keep_paths=experiment.keep_paths,
                        device_nodes=experiment.device_nodes,
                        stage=experiment.stage,
                        work=work,
                        work_bytes=work_bytes,
                        scratch_bytes=limits.scratch_bytes,
                        seccomp_fd=filter_fd,
                    )
                    launch_env = launcher_env()  # bwrap itself; --clearenv gives the experiment only ``env``
                argv = run_cgroup.wrap(argv)  # every process of the run is born in it
                start = time.monotonic()
                proc = subprocess.Popen(
                    argv,
                    cwd="/" if bwrap else experiment.stage,
                    env=launch_env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    pass_fds=pass_fds(write_end, userns_fd, filter_fd, source_fd),
                )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
            if source_fd is not None:
                os.close(source_fd)
        outcome, keyring = watch(proc, start, read_end, limits, sandboxed=bwrap is not None, kill_rest=run_cgroup.kill)
    finally:
        usage = run_cgroup.close()
    confinement = Confinement(
        cgroup=run_cgroup.version,
        memory_total_bytes=run_cgroup.memory_cap_bytes,
        swap_capped=run_cgroup.swap_capped,
        processes_cap=run_cgroup.processes_cap,
        syscall_filter=bool(bwrap and bwrap.seccomp),
        keyring=keyring,
        sandbox_uid=inside_id if inside_id is not None else os.getuid(),
        host_uid=host_id if host_id is not None else os.getuid(),
        open_files=MAX_OPEN_FILES,
        note=run_cgroup.note,
        memory_peak_bytes=usage.memory_peak_bytes,
        oom_kills=usage.oom_kills,
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


def _probe_source_fd() -> int:
    """A pipe's read end holding the probe's source (the supervisor reads it): the command only names it."""
    source = HOOK.encode("utf-8")
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # the source (~15 KB) fits a pipe; a smaller pipe fails, never hangs
    try:
        written = os.write(write_end, source)
    except BlockingIOError:
        written = 0
    finally:
        os.close(write_end)
    if written != len(source):
        os.close(read_end)
        raise SandboxUnavailable(f"the probe's source ({len(source)} bytes) does not fit in a pipe")
    return read_end


def _keyctl_number() -> int | None:
    arch = seccomp.host_arch()
    return seccomp.SYSCALLS["keyctl"][0 if arch == "x86_64" else 1] if arch else None
