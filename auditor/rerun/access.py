"""Whose rights the host-side copy uses, and opening a file only as its owner could.

The auditor copies on the host, with its own rights (often root's), so every
file is checked against the rights of the answer's owner (the transcript's
owner: the owner of the transcript file as named, a symlink's own owner; or the
workspace folder's owner when there is no transcript file).  A name must lead,
once symlinks inside the workspace are resolved, to a regular file inside the
workspace that:

* the owner may read, and whose folders from the workspace down the owner may
  enter (mode bits against the owner's uid, its groups and the transcript's
  group, and POSIX ACLs);
* is not a hard link to a file of another user (``st_nlink > 1``);
* is not bigger than :data:`MAX_WORKSPACE_BYTES` (its apparent size: a sparse
  file expands when copied), all files together counted by the larger of their
  apparent size and their allocated blocks.

Each file is reached by ``openat`` one component at a time from ``/`` without
following any link, and read from that descriptor, so a link swapped in after
the check changes nothing; the copy checks everything again and requires the
same file (device and inode) it checked.  Ancestors of the workspace are not
checked against the owner.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# A file bigger than this is refused unread; all files together may not weigh more either.
MAX_WORKSPACE_BYTES = 2 * 1024**3

_DIR = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LEAF = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
_ACL_XATTR = "system.posix_acl_access"
_ACL_USER_OBJ, _ACL_USER, _ACL_GROUP_OBJ, _ACL_GROUP, _ACL_MASK, _ACL_OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_READ, _SEARCH = 4, 1


@dataclass(frozen=True)
class Owner:
    """Whose rights the host-side copy uses: the answer's owner."""

    uid: int
    gids: frozenset[int]
    what: str  # "the transcript's owner", "the workspace's owner"

    @property
    def label(self) -> str:
        return f"{self.what} (uid {self.uid})"


class Refused(Exception):
    """A file the answer names but may not have; the message is the finding's."""


def owner_of(transcript_path: str | None, root: Path | None) -> Owner:
    """The transcript's owner (the file as named: a symlink's own owner), else the workspace folder's."""
    if transcript_path:
        with contextlib.suppress(OSError):
            return _owner(os.lstat(transcript_path), "the transcript's owner")
    if root is not None:
        with contextlib.suppress(OSError):
            return _owner(os.stat(root), "the workspace's owner")
    return Owner(os.getuid(), frozenset({os.getgid(), *os.getgroups()}), "the auditor")


def _owner(info: os.stat_result, what: str) -> Owner:
    gids = {info.st_gid}
    try:
        entry = pwd.getpwuid(info.st_uid)
        gids |= {entry.pw_gid, *os.getgrouplist(entry.pw_name, entry.pw_gid)}
    except (KeyError, OSError):
        pass  # a uid without a passwd entry: its file's group only
    return Owner(info.st_uid, frozenset(gids), what)


def file_cost(info: os.stat_result) -> int:
    """What a file weighs: its apparent size (what a copy writes) or its allocated blocks, the larger."""
    return max(info.st_size, info.st_blocks * 512)


def open_checked(root: Path, source: Path, owner: Owner, name: str) -> tuple[int, os.stat_result]:
    """A read-only fd on ``source`` (a real path inside the real ``root``) and its stat, once checked.

    Every component from ``/`` is opened with ``O_NOFOLLOW``, so no link is
    followed (one swapped in since ``source`` was resolved fails with ELOOP);
    the folders from ``root`` down must let ``owner`` in and the file must be
    a regular file ``owner`` may read, not a hard link to another user's file,
    and not over the size cap.  Raises :class:`Refused` (R802) or OSError.
    """
    relative = source.relative_to(root).parts
    fd = os.open("/", _DIR)
    try:
        for part in root.parts[1:]:
            fd = _step(fd, part, _DIR)
        shown = PurePosixPath(".")
        _check_folder(fd, owner, name, shown)
        for part in relative[:-1]:
            fd = _step(fd, part, _DIR)
            shown = shown / part
            _check_folder(fd, owner, name, shown)
        fd = _step(fd, relative[-1], _LEAF)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            # Folders would need their own walk and checks; FIFOs and devices
            # would block or leak the host's data, so only plain files are copied.
            raise Refused(f"{name!r} is not a regular file; list the files themselves")
        _check_file(fd, info, owner, name)
        data = _reopen(fd, info)
    finally:
        os.close(fd)
    return data, info


def _step(fd: int, part: str, flags: int) -> int:
    try:
        new = os.open(part, flags, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Refused(
                f"a link appeared on the path of {part!r} after it was resolved; "
                "the workspace changed while it was checked"
            ) from None
        raise
    os.close(fd)
    return new


def _reopen(fd: int, info: os.stat_result) -> int:
    """An O_RDONLY fd on the very inode the O_PATH ``fd`` points at."""
    data = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    again = os.fstat(data)
    if (again.st_dev, again.st_ino) != (info.st_dev, info.st_ino):  # pragma: no cover -- /proc lies
        os.close(data)
        raise OSError(errno.ESTALE, "the file changed while it was opened")
    return data


def _check_folder(fd: int, owner: Owner, name: str, shown: PurePosixPath) -> None:
    info = os.fstat(fd)
    if not _allowed(owner, info, fd, _SEARCH):
        where = "the workspace folder" if str(shown) == "." else f"the folder {str(shown)!r}"
        raise Refused(
            f"{name!r} lies in {where}, which {owner.label} may not enter (owner uid {info.st_uid}, "
            f"mode {stat.S_IMODE(info.st_mode):04o}); only what the answer's owner may read is copied"
        )


def _check_file(fd: int, info: os.stat_result, owner: Owner, name: str) -> None:
    if info.st_nlink > 1 and info.st_uid != owner.uid:
        raise Refused(
            f"{name!r} is a hard link ({info.st_nlink} names) to a file of uid {info.st_uid}, not of "
            f"{owner.label}; hard links to other users' files are not copied"
        )
    if not _allowed(owner, info, fd, _READ):
        raise Refused(
            f"{name!r} may not be read by {owner.label}: it belongs to uid {info.st_uid} with mode "
            f"{stat.S_IMODE(info.st_mode):04o}; only what the answer's owner may read is copied"
        )
    if info.st_size > MAX_WORKSPACE_BYTES:
        allocated = info.st_blocks * 512
        sparse = ", a sparse file" if allocated < info.st_size // 2 else ""
        raise Refused(
            f"{name!r} is {info.st_size} bytes ({allocated} allocated{sparse}), over the "
            f"{MAX_WORKSPACE_BYTES}-byte limit; it was not read"
        )


def _allowed(owner: Owner, info: os.stat_result, fd: int, want: int) -> bool:
    """Whether ``owner`` may read (4) or enter (1) the file ``info`` describes: mode bits and POSIX ACLs."""
    if owner.uid == 0:
        return True  # CAP_DAC_READ_SEARCH: root reads every file and enters every folder
    mode = info.st_mode
    acl = _access_acl(fd) if info.st_uid != owner.uid else None
    if acl is None:
        if info.st_uid == owner.uid:
            return bool((mode >> 6) & want)
        if info.st_gid in owner.gids:
            return bool((mode >> 3) & want)
        return bool(mode & want)
    if not acl:
        return False  # an ACL we cannot read: only the file's owner gets in
    # POSIX.1e: a named user entry, else any matching group entry, else other; masked.
    mask = next((perm for tag, perm, _ in acl if tag == _ACL_MASK), 7)
    for tag, perm, ident in acl:
        if tag == _ACL_USER and ident == owner.uid:
            return bool(perm & mask & want)
    groups = [
        perm
        for tag, perm, ident in acl
        if (tag == _ACL_GROUP_OBJ and info.st_gid in owner.gids) or (tag == _ACL_GROUP and ident in owner.gids)
    ]
    if groups:
        return any(perm & mask & want for perm in groups)
    return any(perm & want for tag, perm, _ in acl if tag == _ACL_OTHER)


def _access_acl(fd: int) -> list[tuple[int, int, int]] | None:
    """The access ACL's (tag, perm, id) entries; None without one, [] for one that cannot be read."""
    try:
        blob = os.getxattr(f"/proc/self/fd/{fd}", _ACL_XATTR)
    except OSError as exc:
        if exc.errno in (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOENT):
            return None
        return []
    if len(blob) < 4 or (len(blob) - 4) % 8 or int.from_bytes(blob[:4], "little") != 2:
        return []
    return [
        (
            int.from_bytes(blob[i : i + 2], "little"),
            int.from_bytes(blob[i + 2 : i + 4], "little"),
            int.from_bytes(blob[i + 4 : i + 8], "little"),
        )
        for i in range(4, len(blob), 8)
    ]
