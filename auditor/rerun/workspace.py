"""Find the files an answer names, refuse the ones it may not have, copy the rest to a stage.

The workspace is ``--workspace`` or, by default, the folder of the transcript
*as named* (a symlinked transcript does not move it to its target's folder).
The file system root, the folders the sandbox masks (``/tmp``, ``/home``, ...),
the folders above them, home folders and kernel file systems are refused as
workspaces: an answer could name anything that lies there.

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

The copy (the *stage*) is a private folder in the temporary folder, named
``auditor-rerun-<pid>-...`` with a marker file recording the auditor's uid,
pid, process start time, boot and pid namespace.  An auditor killed with
SIGKILL cannot remove its stage; every new stage first removes the stale ones:
real folders (never links) owned by this uid, with a marker (a regular file
owned by this uid) whose process is gone (see :func:`clean_stale_stages`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pwd
import shutil
import stat
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..findings import Finding
from ..paths import REPORT_NAME  # the report the script writes
from ..rules.rerun import R801, R802
from .command import CommandRefused, relative_name
from .sandbox import MASKED_DIRS, masked_dirs

# The shipped REPORT_NAME is left out of the run's copy, so a script that
# writes nothing cannot pass off the old file as new.
MAX_FILES = 10_000
MAX_WORKSPACE_BYTES = 2 * 1024**3
# Never a workspace, nor any folder below them: pseudo file systems whose
# "regular files" are the auditor's own process state (/proc/self/environ).
KERNEL_FOLDERS = ("/proc", "/sys", "/dev")
SHARED_FOLDERS = ("/dev/shm",)  # shared scratch space besides MASKED_DIRS

STAGE_PREFIX = "auditor-rerun-"
STAGE_MARKER = "auditor-stage.json"
STAGE_FILES = "workspace"  # the folder inside a stage holding the copy (bound into the sandbox)
MAX_MARKER_BYTES = 4096
# A stage whose owner's liveness cannot be checked (another pid namespace) is
# stale this long after its expected end.
STALE_MARGIN_S = 3600.0

_DIR = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LEAF = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
_ACL_XATTR = "system.posix_acl_access"
_ACL_USER_OBJ, _ACL_USER, _ACL_GROUP_OBJ, _ACL_GROUP, _ACL_MASK, _ACL_OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_READ, _SEARCH = 4, 1
_COPY_CHUNK = 1 << 30


@dataclass(frozen=True)
class Owner:
    """Whose rights the host-side copy uses: the answer's owner."""

    uid: int
    gids: frozenset[int]
    what: str  # "the transcript's owner", "the workspace's owner"

    @property
    def label(self) -> str:
        return f"{self.what} (uid {self.uid})"


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


class _Refused(Exception):
    """A file the answer names but may not have; the message is the finding's."""


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
        ws.findings.append(R802.finding(
            f"the workspace {str(root)!r} is {why}: an answer's files are never looked up there, and "
            "nothing was run; pass --workspace with the experiment's own folder",
            pointer="/files", claimed=str(root), recomputed=str(real_root)))
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
        except _Refused as exc:
            ws.findings.append(R802.finding(str(exc), pointer=pointer, claimed=name))
            continue
        except FileNotFoundError:  # a dangling symlink inside the workspace
            ws.findings.append(R801.finding(f"{name!r} is a broken link", pointer=pointer, claimed=name))
            continue
        except OSError as exc:
            ws.findings.append(R801.finding(f"{name!r} cannot be opened ({exc.strerror or exc})",
                                            pointer=pointer, claimed=name))
            continue
        os.close(fd)
        ws.files[name] = source
        ws.identities[name] = (info.st_dev, info.st_ino)
        ws.sizes[name] = info.st_size
        total += file_cost(info)
    if total > MAX_WORKSPACE_BYTES:
        ws.findings.append(
            R802.finding(f"the files add up to {total} bytes (apparent size or allocated blocks, whichever is "
                         f"larger), over the {MAX_WORKSPACE_BYTES}-byte limit", pointer="/files", claimed=total,
                         recomputed=MAX_WORKSPACE_BYTES)
        )
    return ws


def file_cost(info: os.stat_result) -> int:
    """What a file weighs: its apparent size (what a copy writes) or its allocated blocks, the larger."""
    return max(info.st_size, info.st_blocks * 512)


def _named_entries(names: object, ws: Workspace) -> list[tuple[str, str]]:
    """(normalised name, JSON pointer) for each acceptable entry of ``files``."""
    if names is None:
        return []
    if not isinstance(names, list):
        ws.findings.append(R802.finding("files is not a list of file names", pointer="/files"))
        return []
    if len(names) > MAX_FILES:
        ws.findings.append(R802.finding(f"files lists {len(names)} entries; at most {MAX_FILES} are copied",
                                        pointer="/files"))
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
        ws.findings.append(R801.finding(f"{name!r} is not in the workspace {str(root)!r}", pointer=pointer,
                                        claimed=name))
        return None
    real = candidate.resolve()
    if real == root:
        ws.findings.append(R802.finding(f"{name!r} is not a regular file; list the files themselves",
                                        pointer=pointer, claimed=name))
        return None
    if not real.is_relative_to(root):
        ws.findings.append(R802.finding(f"{name!r} leads outside the workspace (to {str(real)!r})",
                                        pointer=pointer, claimed=name, recomputed=str(real)))
        return None
    return real


def open_checked(root: Path, source: Path, owner: Owner, name: str) -> tuple[int, os.stat_result]:
    """A read-only fd on ``source`` (a real path inside the real ``root``) and its stat, once checked.

    Every component from ``/`` is opened with ``O_NOFOLLOW``, so no link is
    followed (one swapped in since ``source`` was resolved fails with ELOOP);
    the folders from ``root`` down must let ``owner`` in and the file must be
    a regular file ``owner`` may read, not a hard link to another user's file,
    and not over the size cap.  Raises :class:`_Refused` (R802) or OSError.
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
            raise _Refused(f"{name!r} is not a regular file; list the files themselves")
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
            raise _Refused(f"a link appeared on the path of {part!r} after it was resolved; "
                           "the workspace changed while it was checked") from None
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
        raise _Refused(f"{name!r} lies in {where}, which {owner.label} may not enter (owner uid {info.st_uid}, "
                       f"mode {stat.S_IMODE(info.st_mode):04o}); only what the answer's owner may read is copied")


def _check_file(fd: int, info: os.stat_result, owner: Owner, name: str) -> None:
    if info.st_nlink > 1 and info.st_uid != owner.uid:
        raise _Refused(f"{name!r} is a hard link ({info.st_nlink} names) to a file of uid {info.st_uid}, not of "
                       f"{owner.label}; hard links to other users' files are not copied")
    if not _allowed(owner, info, fd, _READ):
        raise _Refused(f"{name!r} may not be read by {owner.label}: it belongs to uid {info.st_uid} with mode "
                       f"{stat.S_IMODE(info.st_mode):04o}; only what the answer's owner may read is copied")
    if info.st_size > MAX_WORKSPACE_BYTES:
        allocated = info.st_blocks * 512
        sparse = ", a sparse file" if allocated < info.st_size // 2 else ""
        raise _Refused(f"{name!r} is {info.st_size} bytes ({allocated} allocated{sparse}), over the "
                       f"{MAX_WORKSPACE_BYTES}-byte limit; it was not read")


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
    groups = [perm for tag, perm, ident in acl
              if (tag == _ACL_GROUP_OBJ and info.st_gid in owner.gids) or (tag == _ACL_GROUP and ident in owner.gids)]
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
    return [(int.from_bytes(blob[i:i + 2], "little"), int.from_bytes(blob[i + 2:i + 4], "little"),
             int.from_bytes(blob[i + 4:i + 8], "little")) for i in range(4, len(blob), 8)]


# -- the stage: a private copy in the temporary folder ----------------------------------------


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
            except _Refused as exc:
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


def make_stage(expected_seconds: float = 0.0) -> Path:
    """A fresh private folder for a copy, inside a marked stage; stale stages are removed first."""
    clean_stale_stages()
    outer = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-"))
    try:
        marker = {
            "uid": os.getuid(), "pid": os.getpid(), "start": _start_time(os.getpid()), "boot": _boot_id(),
            "pidns": _pid_namespace(), "expires": time.time() + max(expected_seconds, 0.0) + STALE_MARGIN_S,
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
    removed = []
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
