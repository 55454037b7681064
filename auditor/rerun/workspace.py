"""Find the files an answer names, refuse the ones it may not have, copy the rest to a stage.

The workspace is ``--workspace`` or, by default, the folder of the transcript
*as named* (a symlinked transcript does not move it to its target's folder).
The file system root, the folders the sandbox masks (``/tmp``, ``/home``, ...),
the folders above them, home folders and kernel file systems are refused as
workspaces: an answer could name anything that lies there.

The auditor copies on the host, with its own rights (often root's), so every
file is checked against the rights of the answer's owner (:mod:`.access`)
before it is copied to a private stage (:mod:`.stage`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from auditor.files.paths import REPORT_NAME  # the report the script writes
from auditor.findings import Finding
from auditor.rerun.access import (
    MAX_WORKSPACE_BYTES,
    Owner,
    Refused,
    file_cost,
    open_checked,
    owner_of,
)
from auditor.rerun.bwrap import masked_dirs
from auditor.rerun.command import CommandRefused, relative_name
from auditor.rerun.spec import MASKED_DIRS
from auditor.rerun.stage import STAGE_MARKER, clean_stale_stages, make_stage, remove_copy
from auditor.rules.rerun import R801, R802

__all__ = [
    "MAX_WORKSPACE_BYTES",
    "REPORT_NAME",
    "STAGE_MARKER",
    "Owner",
    "Workspace",
    "clean_stale_stages",
    "collect_files",
    "copy_for_run",
    "file_cost",
    "make_stage",
    "open_checked",
    "owner_of",
    "refused_workspace",
    "remove_copy",
    "workspace_root",
]


# The shipped REPORT_NAME is left out of the run's copy, so a script that
# writes nothing cannot pass off the old file as new.
MAX_FILES = 10_000
# Never a workspace, nor any folder below them: pseudo file systems whose
# "regular files" are the auditor's own process state (/proc/self/environ).
KERNEL_FOLDERS = ("/proc", "/sys", "/dev")
SHARED_FOLDERS = ("/dev/shm",)  # shared scratch space besides MASKED_DIRS

_COPY_CHUNK = 1 << 30


@dataclass
class Workspace:
    """The validated files of one answer: relative name -> real source path."""

    root: Path  # the real workspace folder
    files: dict[str, Path] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    owner: Owner | None = None
    given: Path | None = None  # the workspace as named, before symlinks were resolved
    identities: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (st_dev, st_ino) checked
    sizes: dict[str, int] = field(default_factory=dict)  # name -> apparent size when checked

    @property
    def shipped_report(self) -> Path | None:
        return self.files.get(REPORT_NAME)

    @property
    def roots(self) -> tuple[str, ...]:
        """The workspace as named and as resolved (an interpreter may lie in neither)."""
        named = os.path.abspath(self.given) if self.given is not None else str(self.root)
        return tuple(dict.fromkeys((named, str(self.root))))


# -- where the workspace is and whose it is ---------------------------------------------------


def workspace_root(transcript_path: str | None, workspace: str | None) -> Path | None:
    """``workspace`` if given, else the folder of the transcript as named; None for stdin without one.

    Never the folder of a symlinked transcript's target: a link in the
    agent's folder to ``/tmp/x`` would make ``/tmp`` the workspace.
    """
    if workspace:
        return Path(workspace)
    if transcript_path:
        return Path(os.path.abspath(transcript_path)).parent
    return None


def _home_folders(owner: Owner | None) -> set[str]:
    homes = {os.path.realpath(os.path.expanduser("~"))}
    for uid in {os.getuid(), owner.uid if owner else os.getuid()}:
        with contextlib.suppress(KeyError):
            homes.add(os.path.realpath(pwd.getpwuid(uid).pw_dir))
    return {h for h in homes if h and h != "/"}


def refused_workspace(given: Path, real: Path, owner: Owner | None) -> str | None:
    """Why ``given`` (resolved: ``real``) may not be a workspace, or None."""
    shared = {*MASKED_DIRS, *masked_dirs(), *SHARED_FOLDERS}
    homes = _home_folders(owner)
    for path in dict.fromkeys((os.path.abspath(given), str(real))):
        if path == "/":
            return "the file system root"
        kernel = next((k for k in KERNEL_FOLDERS if _under(path, k)), None)
        if kernel is not None:
            return f"under {kernel}, a kernel file system"
        if path in shared:
            return f"{path}, a folder shared by every user (the sandbox hides it)"
        if path in homes:
            return f"{path}, a home folder"
        held = sorted(f for f in shared | homes if _under(f, path))
        if held:
            return f"{path}, which holds {held[0]}"
    return None


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


# -- collecting and checking the files -------------------------------------------------------


def collect_files(root: Path, names: object, script: str | None, *, owner: Owner | None = None) -> Workspace:
    """Validate ``names`` (the answer's ``files``) plus ``script`` against ``root``.

    Problems become findings: R802 for names (or a workspace) that are refused,
    R801 for names that do not exist.  ``script`` was already validated by the
    command parser.  ``owner`` defaults to the workspace folder's owner.
    """
    ws = Workspace(root=root, given=root)
    try:
        real_root = root.resolve(strict=True)
    except OSError:
        ws.findings.append(R801.finding(f"workspace folder {str(root)!r} does not exist", pointer="/files"))
        return ws
    ws.root = real_root
    ws.owner = owner = owner or owner_of(None, real_root)
    why = refused_workspace(root, real_root, owner)
    if why is not None:
        ws.findings.append(
            R802.finding(
                f"the workspace {str(root)!r} is {why}: an answer's files are never looked up there, and "
                "nothing was run; pass --workspace with the experiment's own folder",
                pointer="/files",
                claimed=str(root),
                recomputed=str(real_root),
            )
        )
        return ws
    entries = _named_entries(names, ws)
    if script is not None and script not in {name for name, _ in entries}:
        entries.append((script, "/how_to_run"))
    total = 0
    for name, pointer in entries:
        if name in ws.files:
            continue
        source = _resolve_inside(real_root, name, pointer, ws)
        if source is None:
            continue
        try:
            fd, info = open_checked(real_root, source, owner, name)
        except Refused as exc:
            ws.findings.append(R802.finding(str(exc), pointer=pointer, claimed=name))
            continue
        except FileNotFoundError:  # a dangling symlink inside the workspace
            ws.findings.append(R801.finding(f"{name!r} is a broken link", pointer=pointer, claimed=name))
            continue
        except OSError as exc:
            ws.findings.append(
                R801.finding(f"{name!r} cannot be opened ({exc.strerror or exc})", pointer=pointer, claimed=name)
            )
            continue
        os.close(fd)
        ws.files[name] = source
        ws.identities[name] = (info.st_dev, info.st_ino)
        ws.sizes[name] = info.st_size
        total += file_cost(info)
    if total > MAX_WORKSPACE_BYTES:
        ws.findings.append(
            R802.finding(
                f"the files add up to {total} bytes (apparent size or allocated blocks, whichever is "
                f"larger), over the {MAX_WORKSPACE_BYTES}-byte limit",
                pointer="/files",
                claimed=total,
                recomputed=MAX_WORKSPACE_BYTES,
            )
        )
    return ws


def _named_entries(names: object, ws: Workspace) -> list[tuple[str, str]]:
    """(normalised name, JSON pointer) for each acceptable entry of ``files``."""
    if names is None:
        return []
    if not isinstance(names, list):
        ws.findings.append(R802.finding("files is not a list of file names", pointer="/files"))
        return []
    if len(names) > MAX_FILES:
        ws.findings.append(
            R802.finding(f"files lists {len(names)} entries; at most {MAX_FILES} are copied", pointer="/files")
        )
        return []
    entries: list[tuple[str, str]] = []
    for index, name in enumerate(names):
        pointer = f"/files/{index}"
        try:
            entries.append((relative_name(name), pointer))
        except CommandRefused as exc:
            ws.findings.append(R802.finding(str(exc), pointer=pointer, claimed=name))
    return entries


def _resolve_inside(root: Path, name: str, pointer: str, ws: Workspace) -> Path | None:
    """The real path of ``root/name`` if it lies inside ``root`` (not yet opened)."""
    candidate = root / name
    if not os.path.lexists(candidate):
        ws.findings.append(
            R801.finding(f"{name!r} is not in the workspace {str(root)!r}", pointer=pointer, claimed=name)
        )
        return None
    real = candidate.resolve()
    if real == root:
        ws.findings.append(
            R802.finding(f"{name!r} is not a regular file; list the files themselves", pointer=pointer, claimed=name)
        )
        return None
    if not real.is_relative_to(root):
        ws.findings.append(
            R802.finding(
                f"{name!r} leads outside the workspace (to {str(real)!r})",
                pointer=pointer,
                claimed=name,
                recomputed=str(real),
            )
        )
        return None
    return real


# -- copying the checked files to a stage ----------------------------------------------------


def copy_for_run(ws: Workspace, expected_seconds: float = 0.0, names: Iterable[str] | None = None) -> Path:
    """Copy the checked files (all but the shipped report, or ``names``) to a fresh stage; its path.

    Every file is opened and checked again, and must be the very file that
    :func:`collect_files` checked.  Raises OSError when one changed or cannot
    be read; the stage is then removed.
    """
    target = make_stage(expected_seconds)
    owner = ws.owner or owner_of(None, ws.root)
    wanted = [n for n in ws.files if n != REPORT_NAME] if names is None else list(names)
    total = 0
    try:
        for name in wanted:
            try:
                fd, info = open_checked(ws.root, ws.files[name], owner, name)
            except Refused as exc:
                raise OSError(errno.EPERM, str(exc)) from None
            try:
                if (info.st_dev, info.st_ino) != ws.identities.get(name):
                    raise OSError(errno.ESTALE, f"{name!r} was replaced after it was checked")
                total += file_cost(info)
                if total > MAX_WORKSPACE_BYTES:
                    raise OSError(errno.EFBIG, f"the files grew past the {MAX_WORKSPACE_BYTES}-byte limit")
                dest = target / name
                dest.parent.mkdir(parents=True, exist_ok=True)
                _copy_fd(fd, info.st_size, dest)
            finally:
                os.close(fd)
    except BaseException:
        remove_copy(target)
        raise
    return target


def _copy_fd(source: int, size: int, dest: Path) -> None:
    """Copy the first ``size`` bytes of ``source`` to a new file; holes stay holes."""
    out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.ftruncate(out, size)
        position = 0
        while position < size:
            try:
                start = os.lseek(source, position, os.SEEK_DATA)
                end = min(os.lseek(source, start, os.SEEK_HOLE), size)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # only a hole is left
                    break
                start, end = position, size  # no SEEK_DATA here: copy it all
            if start >= size:
                break
            _send(source, out, start, end - start)
            position = end
    finally:
        os.close(out)


def _send(source: int, out: int, offset: int, count: int) -> None:
    os.lseek(out, offset, os.SEEK_SET)
    while count > 0:
        sent = os.sendfile(out, source, offset, min(count, _COPY_CHUNK))
        if sent == 0:  # the file shrank: the rest stays a hole
            return
        offset += sent
        count -= sent
