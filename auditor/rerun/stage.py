"""The stage: a private copy of the workspace's files in the temporary folder.

The copy (the *stage*) is a private folder in the temporary folder, named
``auditor-rerun-<pid>-...`` with a marker file recording the auditor's uid,
pid, process start time, boot and pid namespace.  An auditor killed with
SIGKILL cannot remove its stage; every new stage first removes the stale ones:
real folders (never links) owned by this uid, with a marker (a regular file
owned by this uid) whose process is gone (see :func:`clean_stale_stages`).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

STAGE_PREFIX = "auditor-rerun-"
STAGE_MARKER = "auditor-stage.json"
STAGE_FILES = "workspace"  # the folder inside a stage holding the copy (bound into the sandbox)
MAX_MARKER_BYTES = 4096
# A stage whose owner's liveness cannot be checked (another pid namespace) is
# stale this long after its expected end.
STALE_MARGIN_S = 3600.0


def make_stage(expected_seconds: float = 0.0) -> Path:
    """A fresh private folder for a copy, inside a marked stage; stale stages are removed first."""
    clean_stale_stages()
    outer = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-"))
    try:
        marker = {
            "uid": os.getuid(),
            "pid": os.getpid(),
            "start": _start_time(os.getpid()),
            "boot": _boot_id(),
            "pidns": _pid_namespace(),
            "expires": time.time() + max(expected_seconds, 0.0) + STALE_MARGIN_S,
        }
        fd = os.open(outer / STAGE_MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(marker, f)
        inner = outer / STAGE_FILES
        inner.mkdir(mode=0o700)
    except BaseException:
        shutil.rmtree(outer, ignore_errors=True)
        raise
    return inner


def remove_copy(path: Path) -> None:
    """Delete a run's copy (with its stage), even folders the experiment made read-only.

    Links are never followed: the experiment may have planted a link to a host
    folder (unsandboxed, it runs in the copy), and ``chmod`` follows links.
    """
    if path.name == STAGE_FILES and path.parent.name.startswith(STAGE_PREFIX) and not path.parent.is_symlink():
        path = path.parent
    if not path.is_symlink() and path.is_dir():
        os.chmod(path, 0o700)
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            sub = os.path.join(dirpath, name)
            if not os.path.islink(sub):
                try:
                    os.chmod(sub, 0o700)
                except OSError:
                    pass
    shutil.rmtree(path, ignore_errors=True)


def clean_stale_stages(folder: str | None = None) -> list[str]:
    """Remove the stages that auditors of this uid left behind (killed with SIGKILL); their names.

    Only real folders (never links) named ``auditor-rerun-*``, owned by this
    uid, holding a marker that is a regular file owned by this uid and names
    this uid, are considered.  Such a stage is stale when it was made before
    the last boot, when its auditor (same pid namespace) is gone or its pid now
    belongs to another process, or, when its pid namespace is another one, an
    hour past its expected end.
    """
    folder = folder or tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = os.scandir(folder)
    except OSError:
        return removed
    with entries:
        for entry in entries:
            if not entry.name.startswith(STAGE_PREFIX):
                continue
            path = os.path.join(folder, entry.name)
            try:
                stale = _is_stale_stage(path)
            except (OSError, ValueError):
                continue
            if stale:
                remove_copy(Path(path))  # never follows a link
                removed.append(path)
    return removed


def _is_stale_stage(path: str) -> bool:
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    folder = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        again = os.fstat(folder)
        if (again.st_dev, again.st_ino) != (info.st_dev, info.st_ino):
            return False
        fd = os.open(STAGE_MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as f:
        mark = os.fstat(f.fileno())
        if not stat.S_ISREG(mark.st_mode) or mark.st_uid != os.getuid() or mark.st_size > MAX_MARKER_BYTES:
            return False
        marker = json.loads(f.read(MAX_MARKER_BYTES + 1))
    return _stale(marker)


def _stale(marker: object) -> bool:
    if not isinstance(marker, dict) or marker.get("uid") != os.getuid():
        return False
    pid, expires = marker.get("pid"), marker.get("expires")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or not isinstance(expires, (int, float)):
        return False
    boot = _boot_id()
    if boot is not None and marker.get("boot") not in (None, boot):
        return True  # made before the last reboot: its auditor is gone
    namespace = _pid_namespace()
    if namespace is None or marker.get("pidns") != namespace or marker.get("start") is None:
        return time.time() > expires  # its pid cannot be checked from here
    return _start_time(pid) != marker["start"]  # gone, or the pid was reused


def _start_time(pid: int) -> int | None:
    """The process's start time (clock ticks after boot), None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
        return int(text.rpartition(")")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _pid_namespace() -> str | None:
    try:
        info = os.stat("/proc/self/ns/pid")
    except OSError:
        return None
    return f"{info.st_dev}:{info.st_ino}"
