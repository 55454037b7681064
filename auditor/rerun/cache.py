"""The rerun cache: an unchanged experiment is not trained again.

The key is a SHA-256 over everything the run's result depends on that the
auditor can see: the bytes of every file copied for the run (hashed from the
private copy, so where the files are read, a dask worker included), the parsed
command, the device kind, the interpreter (its path, real path and file) and
its torch version, the limits the run gets and the auditor's version.

The value is the run's :class:`~.sandbox.Outcome` (exit status, output tails,
the report it wrote, how it was held), not the findings: the findings and the
``rerun`` record are rebuilt from it exactly as after a live run, against the
answer being audited now.  Two answers sharing a workspace, or an answer whose
claims were edited, are therefore judged on their own claims.  A failed, killed
or timed-out run is stored as what it was, and replays as that failure.

Entries are JSON files ``<key>.json`` in a folder only the user may enter
(0700, files 0600), written atomically.  Each carries a SHA-256 of its own
content: an entry that does not match it (or its key, or the format) is
ignored, and the run's fresh result replaces it.  That hash catches corruption,
not forgery: whoever may write the cache folder can make up results, which is
why a folder of another user, or one others may write to, is never used.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.files.atomic import atomic_write
from auditor.rerun.spec import Confinement, Limits, Outcome

FORMAT = 1
CACHE_SUBDIR = "rerun"  # inside the auditor's cache folder
_READ_CHUNK = 1 << 20
_PRIVATE_DIR = 0o700
_PRIVATE_FILE = 0o600
_UNSAFE_DIR_BITS = stat.S_IWGRP | stat.S_IWOTH


def default_folder() -> Path:
    """The user cache folder: ``$XDG_CACHE_HOME/auditor``, else ``~/.cache/auditor``."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path(os.path.expanduser("~")) / ".cache"
    return root / "auditor"


def entries_folder(cache_dir: str | None) -> Path:
    """Where the rerun entries live: ``rerun/`` under ``cache_dir`` (default: :func:`default_folder`)."""
    return (Path(cache_dir) if cache_dir else default_folder()) / CACHE_SUBDIR


# -- the key ------------------------------------------------------------------------------------


def file_digests(stage: Path, names: Iterable[str]) -> list[tuple[str, int, str]]:
    """(name, size, sha256) of each file of the run's private copy, by name."""
    out = []
    for name in sorted(names):
        hasher = hashlib.sha256()
        fd = os.open(stage / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            size = 0
            while chunk := f.read(_READ_CHUNK):
                hasher.update(chunk)
                size += len(chunk)
        out.append((name, size, hasher.hexdigest()))
    return out


def interpreter_identity(python: str, torch_version: str | None) -> dict[str, Any]:
    """The interpreter as named and resolved, its file's size and change time, and its torch."""
    real = os.path.realpath(python)
    try:
        info = os.stat(real)
        file = [info.st_size, info.st_mtime_ns, info.st_ino]
    except OSError:
        file = None
    return {"python": python, "real": real, "file": file, "torch": torch_version}


def run_key(
    files: list[tuple[str, int, str]],
    command: list[str],
    device_kind: str,
    interpreter: dict[str, Any],
    limits: Limits,
    sandboxed: bool,
) -> str:
    """The SHA-256 (hex) naming the result of running ``command`` on ``files``."""
    material = {
        "format": FORMAT,
        "auditor": __version__,
        "files": files,
        "command": command,
        "device": device_kind,
        "interpreter": interpreter,
        # A run cut short by a cap is only what it was under that cap.
        "limits": dataclasses.asdict(limits),
        "sandboxed": sandboxed,
    }
    return digest(material)


# -- reading and writing entries ----------------------------------------------------------------


def load(folder: Path, key: str) -> Outcome | None:
    """The stored outcome for ``key``; None when there is none or it is not intact."""
    value = load_entry(folder, key)
    return outcome_from_json(value) if value is not None else None


def store(folder: Path, key: str, outcome: Outcome) -> bool:
    """Store ``outcome`` under ``key``; False when the cache cannot be written."""
    return store_entry(folder, key, outcome_to_json(outcome))


def load_entry(folder: Path, key: str) -> Any:
    """The value stored under ``key`` (a JSON value), or None when there is none or it is not intact."""
    if not _private_folder(folder, create=False):
        return None
    try:
        fd = os.open(folder / f"{key}.json", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                return None
            entry = json.loads(f.read())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or set(entry) != {"format", "key", "value", "sha256"}:
        return None
    body = {name: entry[name] for name in ("format", "key", "value")}
    if entry["format"] != FORMAT or entry["key"] != key or entry["sha256"] != digest(body):
        return None
    return entry["value"]


def store_entry(folder: Path, key: str, value: Any) -> bool:
    """Store the JSON ``value`` under ``key`` (atomically, 0600); False when the cache cannot be written."""
    if not _private_folder(folder, create=True):
        return False
    body = {"format": FORMAT, "key": key, "value": value}
    entry = {**body, "sha256": digest(body)}
    path = folder / f"{key}.json"
    try:
        atomic_write(path, json.dumps(entry, sort_keys=True))
        # The folder is 0700: the moment the file had the umask's mode, nobody else could reach it.
        os.chmod(path, _PRIVATE_FILE)
    except OSError:
        return False
    return True


def _private_folder(folder: Path, *, create: bool) -> bool:
    """Whether ``folder`` is a real folder of this user that no one else may write (made 0700 if asked)."""
    if create:
        try:
            # The auditor's own cache folder is made private too; a --cache-dir that exists is left as it is.
            os.makedirs(folder.parent.parent, exist_ok=True)
            for made in (folder.parent, folder):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(made, _PRIVATE_DIR)
        except OSError:
            return False
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & _UNSAFE_DIR_BITS:
        return False
    if create and stat.S_IMODE(info.st_mode) != _PRIVATE_DIR:
        try:
            os.chmod(folder, _PRIVATE_DIR)
        except OSError:
            return False
    return True


def digest(value: Any) -> str:
    """SHA-256 (hex) of a JSON value in canonical form."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


# -- an outcome as JSON -------------------------------------------------------------------------


def outcome_to_json(outcome: Outcome) -> dict[str, Any]:
    fields = {f.name: getattr(outcome, f.name) for f in dataclasses.fields(Outcome)}
    fields["report"] = base64.b64encode(outcome.report).decode("ascii") if outcome.report is not None else None
    fields["confinement"] = dataclasses.asdict(outcome.confinement)
    return fields


def outcome_from_json(value: object) -> Outcome | None:
    """The outcome ``value`` describes, or None when it does not have exactly the fields of one."""
    names = {f.name for f in dataclasses.fields(Outcome)}
    if not isinstance(value, dict) or set(value) != names:
        return None
    held = value["confinement"]
    if not isinstance(held, dict) or set(held) != {f.name for f in dataclasses.fields(Confinement)}:
        return None
    try:
        report = base64.b64decode(value["report"], validate=True) if value["report"] is not None else None
        return Outcome(**{**value, "report": report, "confinement": Confinement(**held)})
    except (TypeError, ValueError):
        return None
