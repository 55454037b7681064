"""Output files: written atomically, never through a link, never into another user's file.

Every file the auditor writes at a path it was given (a report, the jsonl stream, a
baseline, a rerun cache entry) goes through here.  The audited agent may plant links
and files in folders it can write, and the auditor often runs as another user (root
in CI), so:

* the folder is reached component by component, following only symbolic links owned
  by the auditor's user or by root (a link the agent planted is never followed), and
  every later step works relative to that open folder (no path is looked up twice);
* the file itself must not be a symbolic link (a dangling one included) and, when it
  exists, must be a regular file of the auditor's effective user with a single name
  (not a device, not a hard link to a file elsewhere);
* a whole file is written to a new temporary file beside it and renamed over the old
  one, which replaces the directory entry, never what it pointed to; an appended file
  (jsonl) is opened with ``O_NOFOLLOW`` and checked on its descriptor, or created
  exclusively (``O_EXCL``).

A refusal is an :class:`UnsafeOutput` (an ``OSError``), so callers that turn
``OSError`` into "cannot write PATH: ..." (exit 2) report it the same way.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import TextIO

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_MAX_LINKS = 40  # the kernel's own limit on links followed in one lookup


class UnsafeOutput(OSError):
    """An output path the auditor refuses to write (a link, another user's file, not a regular file)."""


def atomic_write(path: str | Path, text: str, *, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: readers never see half a file.

    ``mode`` is the new file's permissions (default: what any new file gets, 0666 less the umask).
    """
    folder, name = _split(path)
    folder_fd = open_folder(folder)
    tmp = None
    try:
        _check_existing(folder_fd, name, path)
        for _ in range(100):
            candidate = f".{name}.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(
                    candidate,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                    0o600,
                    dir_fd=folder_fd,
                )
            except FileExistsError:
                continue
            tmp = candidate
            break
        else:
            raise FileExistsError(f"no free temporary name beside {path}")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            # Created 0600 (nobody reads half a file); a report gets the permissions asked for.
            os.fchmod(fh.fileno(), new_file_mode() if mode is None else mode)
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=folder_fd)
            except OSError:
                pass
        os.close(folder_fd)


def open_append(path: str | Path, *, mode: int | None = None) -> TextIO:
    """``path`` opened to append text (UTF-8), created with ``mode`` when missing.

    An existing file is opened without following a link and checked on its descriptor
    (:func:`_check_file`); a missing one is created exclusively, so a link planted after
    the first look (a dangling one included) makes the call fail rather than followed.
    """
    folder, name = _split(path)
    folder_fd = open_folder(folder)
    try:
        _check_existing(folder_fd, name, path)  # a clear refusal first; the descriptor is checked again below
        flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=folder_fd)
        except FileNotFoundError:
            fd = os.open(
                name, flags | os.O_CREAT | os.O_EXCL, new_file_mode() if mode is None else mode, dir_fd=folder_fd
            )
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link
                raise UnsafeOutput(f"{path} is a symbolic link; outputs are never written through a link") from None
            raise
    except FileExistsError:  # created between the two opens: whatever it is, it is not ours
        raise UnsafeOutput(f"{path} appeared while it was being created (a link or another process's file)") from None
    finally:
        os.close(folder_fd)
    try:
        _check_file(os.fstat(fd), path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def check_owned(path: str | Path, *, private_write: bool = False) -> os.stat_result | None:
    """The status of the file at ``path`` when it is one the auditor may write; None when there is none.

    Raises :class:`UnsafeOutput` for a link, another user's file or anything but a regular file;
    with ``private_write``, also for a file group or others may write.
    """
    folder, name = _split(path)
    folder_fd = open_folder(folder)
    try:
        info = _check_existing(folder_fd, name, path)
    finally:
        os.close(folder_fd)
    if info is not None and private_write and info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeOutput(f"{path} is writable by group or others (mode {stat.S_IMODE(info.st_mode):04o})")
    return info


def read_owned(path: str | Path) -> tuple[str, int] | None:
    """The text (UTF-8) and permission bits of a file the auditor may write (as :func:`check_owned`
    checks it, on the descriptor it reads); None when there is none."""
    folder, name = _split(path)
    folder_fd = open_folder(folder)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise UnsafeOutput(f"{path} is a symbolic link; outputs are never written through a link") from None
        raise
    finally:
        os.close(folder_fd)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        _check_file(info, path)
        return f.read().decode("utf-8"), stat.S_IMODE(info.st_mode)


def open_folder(folder: str | Path) -> int:
    """A descriptor of ``folder``, reached without following any link owned by another user.

    Each component is opened with ``O_NOFOLLOW`` relative to the one before; a symbolic link
    is followed (its target resolved the same way) only when the auditor's user or root owns it,
    and only if it did not change while it was read.
    """
    text = os.fspath(folder)
    start = "/" if text.startswith("/") else "."
    pending = [part for part in text.split("/") if part not in ("", ".")]
    fd = os.open(start, _FOLDER_FLAGS)
    links = 0
    try:
        while pending:
            part = pending.pop(0)
            try:
                next_fd = os.open(part, _FOLDER_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                raise FileNotFoundError(f"folder {folder} does not exist") from None
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                target = _trusted_link(fd, part, folder)
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(f"too many symbolic links in {folder}") from None
                if target.startswith("/"):
                    os.close(fd)
                    fd = os.open("/", _FOLDER_FLAGS)
                pending[:0] = [p for p in target.split("/") if p not in ("", ".")]
                continue
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _trusted_link(folder_fd: int, name: str, folder: str | Path) -> str:
    """The target of the link ``name``, when the auditor's user or root owns it; else UnsafeOutput."""
    info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    if not stat.S_ISLNK(info.st_mode):
        raise NotADirectoryError(f"{folder}: {name} is not a folder")
    if info.st_uid not in (os.geteuid(), 0):
        raise UnsafeOutput(
            f"{name}, on the way to {folder}, is a symbolic link owned by uid {info.st_uid}; "
            "outputs are never written through another user's link"
        )
    target = os.readlink(name, dir_fd=folder_fd)
    again = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    if (again.st_ino, again.st_uid) != (info.st_ino, info.st_uid):
        raise UnsafeOutput(f"{folder}: the link {name} changed while it was read")
    return target


def _split(path: str | Path) -> tuple[str, str]:
    text = os.fspath(path)
    folder, _, name = text.rpartition("/")
    if name in ("", ".", ".."):
        raise IsADirectoryError(f"{path} names a folder, not a file")
    return (folder or ("/" if text.startswith("/") else ".")), name


def _check_existing(folder_fd: int, name: str, path: str | Path) -> os.stat_result | None:
    """What is at ``name`` in the folder, checked (:func:`_check_file`) without following it; None if nothing."""
    try:
        info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    _check_file(info, path)
    return info


def _check_file(info: os.stat_result, path: str | Path) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeOutput(f"{path} is a symbolic link; outputs are never written through a link")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeOutput(f"{path} is not a regular file")
    if info.st_uid != os.geteuid():
        raise UnsafeOutput(f"{path} belongs to uid {info.st_uid}, not to the auditor's user (uid {os.geteuid()})")
    if info.st_nlink != 1:  # a hard link planted beside the answers could name a file elsewhere
        raise UnsafeOutput(f"{path} has {info.st_nlink} names (hard links); outputs are written to a file of one name")


def new_file_mode() -> int:
    """What a new file gets: 0666 less the umask (read without changing it for long)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
