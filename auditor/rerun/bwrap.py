"""Find bubblewrap, learn what it can do on this host, and build its command line."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from auditor.rerun import seccomp
from auditor.rerun.spec import (
    DROP_CAPS,
    MASKED_DIRS,
    READ_ONLY_MASK_BYTES,
    SCRATCH_BYTES,
    SCRATCH_DIR,
    UNSAFE_HINT,
    Bubblewrap,
    SandboxUnavailable,
    UsernsMode,
)
from auditor.rerun.userns import pass_fds, pick_host_id, syscall_filter_fd, user_namespace

INSTALL_HINT = f"install the Debian/Ubuntu package `bubblewrap` (apt-get install -y bubblewrap), or {UNSAFE_HINT}"


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
    modes: list[tuple[UsernsMode, bool]] = (
        [("own", True), ("bwrap", False), ("none", True)] if root else [("bwrap", False), ("none", False)]
    )
    errors = []
    for userns, drop_root in modes:
        if drop_root and not perms:
            continue  # the unprivileged user could not write its own /tmp
        for syscall_filter in filters:  # without the filter only where this host refuses it
            bwrap = Bubblewrap(
                path, userns, drop_root, userns == "bwrap" and "--disable-userns" in usage, size, perms, syscall_filter
            )
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
        with user_namespace(bwrap, pick_host_id()) as userns_fd, syscall_filter_fd(bwrap) as filter_fd:
            argv = bwrap_argv(
                bwrap, userns_fd=userns_fd, command=[true], env={}, keep_paths=(), device_nodes=(), seccomp_fd=filter_fd
            )
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=30,
                stdin=subprocess.DEVNULL,
                pass_fds=pass_fds(userns_fd, filter_fd),
                check=False,
            )
    except (OSError, subprocess.TimeoutExpired, SandboxUnavailable) as exc:
        return str(exc)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit code {done.returncode}")


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
