"""``--resume`` counts a recorded jsonl line only when this user's auditor wrote it for these bytes and options.

Every result line of a jsonl run ends with one more member::

    "resume": {"sha256": S, "options": O, "mac": M}

``S`` is the SHA-256 (hex) of the transcript's bytes as they were audited (null when
they could not be read), ``O`` the fingerprint of everything else that decides the
line (:func:`fingerprint`: the file's effective audit options, per-file ignores
included, the rerun options, the baseline applied, whether a folder walk found the
file, the auditor's version), and ``M`` an HMAC-SHA256 of ``S``, ``O`` and the line
as it is without this member, under a key only the auditor's user can read
(:func:`load_key`).

On ``--resume`` a line counts only when its ``M`` is right, its ``O`` is this run's
fingerprint for that file and its ``S`` the digest of the file's bytes now; any other
result line (planted, edited, made under other options, or for a transcript changed
since) is audited again and counted as not trusted.  A line whose bytes could not be
read is audited again without being counted.  The file itself must be a regular file
of the auditor's user that group and others cannot write (:func:`auditor.files.atomic.check_owned`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.errors import UsageError
from auditor.files.atomic import UnsafeOutput, check_owned, new_file_mode, open_folder
from auditor.files.paths import STDIN, key
from auditor.options.models import AuditOptions, RerunOptions
from auditor.result import AuditResult, transcript_digest

FORMAT = 1
KEY_FILE = "resume.key"  # in the auditor's cache folder
_KEY_BYTES = 32
_MEMBER = ',"resume":'


class ResumeKeyError(OSError):
    """The resume key cannot be made or read safely."""


def resumable_mode() -> int:
    """Permissions of a new jsonl file: a new file's, less group and other write (resume refuses those)."""
    return new_file_mode() & ~0o022


def cache_folder() -> Path:
    """The user cache folder, as the rerun cache finds it: ``$XDG_CACHE_HOME/auditor``, else ``~/.cache/auditor``."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path(os.path.expanduser("~")) / ".cache"
    return root / "auditor"


def load_key(folder: Path | None = None) -> bytes:
    """The HMAC key in ``folder`` (default :func:`cache_folder`), made there when missing.

    The folder must be this user's and closed to group and others (a new one is made 0700);
    the key a regular 0600 file of this user, never a link.  A new key is written to a
    temporary file and linked into place, so a concurrent run reads a whole key or makes its own.
    """
    folder = folder or cache_folder()
    try:
        os.makedirs(folder.parent, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        folder_fd = open_folder(folder)
    except OSError as exc:
        raise ResumeKeyError(f"cannot use the folder {folder}: {exc}") from None
    try:
        info = os.fstat(folder_fd)
        if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ResumeKeyError(
                f"{folder} belongs to another user or others may write it; the resume key is not kept there"
            )
        for _ in range(3):
            found = _read_key(folder_fd, folder)
            if found is not None:
                return found
            _make_key(folder_fd)
        raise ResumeKeyError(f"cannot make the resume key in {folder}")
    except ResumeKeyError:
        raise
    except OSError as exc:
        raise ResumeKeyError(f"cannot use the resume key in {folder}: {exc}") from None
    finally:
        os.close(folder_fd)


def _read_key(folder_fd: int, folder: Path) -> bytes | None:
    try:
        fd = os.open(KEY_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ResumeKeyError(f"{folder / KEY_FILE} cannot be read safely ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_mode & 0o077
            or info.st_size != _KEY_BYTES
        ):
            raise ResumeKeyError(
                f"{folder / KEY_FILE} is not a private key file of this user (0600, {_KEY_BYTES} bytes)"
            )
        data = f.read(_KEY_BYTES + 1)
    if len(data) != _KEY_BYTES:
        raise ResumeKeyError(f"{folder / KEY_FILE} is not a private key file of this user (0600, {_KEY_BYTES} bytes)")
    return data


def _make_key(folder_fd: int) -> None:
    tmp = f".{KEY_FILE}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(_KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        # link() never replaces: a key another run made first stays, and this one is dropped.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, KEY_FILE, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
    finally:
        os.unlink(tmp, dir_fd=folder_fd)


def _plain(value: Any) -> Any:
    """``value`` as canonical JSON data (sets sorted, enums by value, dataclasses by their compared fields,
    option models by their fields less the excluded ones: a rerun's progress callback)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.compare}
    fields = getattr(type(value), "model_fields", None)  # a pydantic model
    if fields is not None:
        return {name: _plain(getattr(value, name)) for name, f in fields.items() if not f.exclude}
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return sorted(([str(k), _plain(v)] for k, v in value.items()), key=lambda item: item[0])
    return value


def fingerprint(options: AuditOptions, rerun: RerunOptions | None, baseline: str | None, walked: bool) -> str:
    """SHA-256 (hex) of everything besides the transcript's bytes that decides its jsonl line."""
    material = {
        "format": FORMAT,
        "auditor": __version__,
        "options": _plain(options),
        "rerun": _plain(rerun) if rerun is not None else None,
        "baseline": baseline,
        "walked": walked,
    }
    # repr for a value JSON cannot spell: at worst an unstable fingerprint, so lines are audited again.
    text = json.dumps(material, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def baseline_digest(root: Path, fingerprints: Collection[str]) -> str:
    """What a baseline applies, as a digest (its folder and recorded fingerprints)."""
    return hashlib.sha256(json.dumps([str(root), sorted(fingerprints)]).encode("utf-8")).hexdigest()


def _mac(secret: bytes, sha256: str | None, options: str, body: str) -> str:
    head = json.dumps([FORMAT, sha256, options], ensure_ascii=True, separators=(",", ":"))
    return _mac_of(secret, head, body)


def _mac_of(secret: bytes, head: str, body: str) -> str:
    return hmac.digest(secret, (head + "\n" + body).encode("utf-8", "surrogatepass"), "sha256").hex()


def _is_hex_digest(value: str) -> bool:
    return re.fullmatch("[0-9a-f]{64}", value) is not None


class Resumable:
    """The key and fingerprints of one jsonl run: it signs the lines it writes and checks the lines it resumes.

    ``options_for`` gives a file's effective audit options; ``walked`` holds the keys of the files a
    folder walk found.  ``problem`` says why lines go unsigned (no key could be kept); they then
    resume as untrusted lines, audited again.
    """

    def __init__(
        self,
        options_for: Callable[[str], AuditOptions],
        rerun: RerunOptions | None,
        baseline: str | None,
        walked: Collection[str] = frozenset(),
        *,
        folder: Path | None = None,
    ) -> None:
        self.options_for, self.rerun, self.baseline, self.walked = options_for, rerun, baseline, walked
        self._memo: dict[tuple[int, bool], tuple[AuditOptions, str]] = {}
        self.problem: str | None = None
        try:
            self.key: bytes | None = load_key(folder)
        except ResumeKeyError as exc:
            self.key, self.problem = None, str(exc)

    def fingerprint_for(self, path: str) -> str:
        options = self.options_for(path)
        walked = bool(self.walked) and key(path) in self.walked
        # A batch without per-file ignores shares one options object: its fingerprint is made once.
        memo = self._memo.get((id(options), walked))
        if memo is not None and memo[0] is options:
            return memo[1]
        value = fingerprint(options, self.rerun, self.baseline, walked)
        if len(self._memo) >= 256:
            self._memo.clear()
        self._memo[(id(options), walked)] = (options, value)
        return value

    def sign(self, line: str, source: str, sha256: str | None) -> str:
        """The result ``line`` (``{...}\\n``) with its ``resume`` member; as it is when there is no key."""
        if self.key is None or not line.endswith("}\n"):
            return line
        body = line[:-1]
        options = self.fingerprint_for(source)
        sha = sha256 if sha256 is not None and _is_hex_digest(sha256) else None
        digest = f'"{sha}"' if sha is not None else "null"  # a hex digest or null: as json.dumps spells them
        mac = _mac(self.key, sha, options, body)  # the one spelling the check uses
        return f'{body[:-1]}{_MEMBER}{{"sha256":{digest},"options":"{options}","mac":"{mac}"}}}}\n'

    def resume(self, path: str, paths: Sequence[str]) -> tuple[dict[str, AuditResult], int]:
        """The trusted results in the jsonl file ``path`` (by :func:`~auditor.files.paths.key`) and how many
        recorded result lines were not trusted; the file keeps only the trusted lines
        (:func:`auditor.formats.jsonl.resume_from`).  UsageError for a file that cannot be trusted at all."""
        from auditor.formats.jsonl import resume_from

        if self.key is None:
            raise UsageError(f"cannot resume from {path}: {self.problem}")
        try:
            info = check_owned(path, private_write=True)
        except UnsafeOutput as exc:
            raise UsageError(
                f"cannot resume from {path}: {exc}; it is not resumed (move it away to start afresh)"
            ) from None
        except OSError as exc:
            raise UsageError(f"cannot resume from {path}: {exc}") from None
        if info is None:
            return {}, 0
        trust = _Trust(self, paths)
        return resume_from(path, accept=trust), trust.untrusted


class _Trust:
    """Decides each recorded line of a resumed file (:meth:`Resumable.resume`)."""

    def __init__(self, run: Resumable, paths: Sequence[str]) -> None:
        self.run = run
        self.batch = {key(p): p for p in paths}
        self.untrusted = 0

    def __call__(self, line: str, parse: Callable[[str], AuditResult | None]) -> AuditResult | None:
        at = line.rfind(_MEMBER)
        if at < 0 or not line.endswith("}"):
            if parse(line) is not None:  # a result line without its signature (a summary or a torn line is not one)
                self.untrusted += 1
            return None
        body = line[:at] + "}"
        try:
            member = json.loads(line[at + len(_MEMBER) : -1])
        except ValueError:
            member = None
        result = parse(body)
        if result is None or not self._authentic(member, body):
            self.untrusted += int(result is not None or parse(line) is not None)
            return None
        path = self.batch.get(key(result.source))
        if path is None:
            return result  # another batch's line, authentic: kept in the file, not used by this run
        if path == STDIN:
            return None  # stdin cannot be read twice: audited again
        if member["options"] != self.run.fingerprint_for(path):
            self.untrusted += 1
            return None
        if member["sha256"] is None:
            return None  # the file could not be read then: audited again, nothing to distrust
        if member["sha256"] != _digest_now(path, self.run.options_for(path)):
            self.untrusted += 1
            return None
        # Its bytes are still these: a cross-answer finding can be placed in it again (session._placed).
        return result.with_transcript_sha256(member["sha256"])

    def _authentic(self, member: Any, body: str) -> bool:
        if not (
            isinstance(member, dict)
            and set(member) == {"sha256", "options", "mac"}
            and isinstance(member["options"], str)
            and isinstance(member["mac"], str)
            and (member["sha256"] is None or isinstance(member["sha256"], str))
        ):
            return False
        expected = _mac(self.run.key, member["sha256"], member["options"], body)  # type: ignore[arg-type]
        return hmac.compare_digest(expected, member["mac"])


def _digest_now(path: str, options: AuditOptions) -> str | None:
    """SHA-256 of the transcript's bytes as an audit reads them now (None when they cannot be read)."""
    from auditor.parse.source import read_source

    data, _ = read_source(path, max_bytes=options.max_bytes)
    return transcript_digest(data)
