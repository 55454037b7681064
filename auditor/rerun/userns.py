"""The sandbox user's identity and the namespace and filter handed to bubblewrap as file descriptors.

A root auditor's experiment runs as :data:`~.spec.SANDBOX_UID` inside a user
namespace the auditor makes (:func:`user_namespace`), which is a fresh host
uid from :data:`HOST_ID_RANGE` outside it (:func:`pick_host_id`).  The syscall
filter (:mod:`.seccomp`) goes to ``bwrap --seccomp`` as an fd too
(:func:`syscall_filter_fd`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from auditor.rerun import seccomp
from auditor.rerun.spec import SANDBOX_GID, SANDBOX_UID, SYSTEM_PATH, Bubblewrap, SandboxUnavailable

# ... and the ids it has on the host: a fresh one per run from a range no distribution, container
# manager or systemd hands out (systemd's UIDS-GIDS.md: 1879048192-2147352575 unused), never one
# in /etc/passwd, /etc/group, /etc/subuid or /etc/subgid.  So no host file is the sandbox user's:
# host files owned by nobody (NFS root_squash) stay out of reach.
HOST_ID_RANGE = (0x70000000, 0x7FFDFFFF)
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
def user_namespace(bwrap: Bubblewrap | None, host_id: int) -> Iterator[int | None]:
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
def syscall_filter_fd(bwrap: Bubblewrap | None) -> Iterator[int | None]:
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
        [sys.executable, "-I", "-S", "-c", _USERNS_HELPER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": SYSTEM_PATH},
        text=True,
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


def pass_fds(*fds: int | None) -> tuple[int, ...]:
    return tuple(fd for fd in fds if fd is not None)
