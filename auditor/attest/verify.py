"""Check a ``.intoto.jsonl`` file of verdicts: signatures, transcripts' digests, the required status.

:func:`verify_file` reads every line, opens its envelope with the public key given
(:func:`auditor.attest.dsse.open_envelope`), reads the statement it carries, then checks
each named transcript's bytes against the digest of the statement that names it, and,
with ``require="pass"``, that every statement's verdict is a pass.  Each failure is a
:class:`Problem` (its ``kind`` one of :data:`KINDS`); nothing is printed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from auditor.attest.dsse import PAYLOAD_TYPE, Envelope, Rejected, open_envelope
from auditor.attest.keys import VerifyingKey
from auditor.attest.statement import PREDICATE_TYPE, Statement
from auditor.errors import UsageError

KINDS = ("malformed", "unknown key", "bad signature", "digest mismatch", "not attested", "policy not met")
REQUIREMENTS = ("pass",)
_MAX_FILE_BYTES = 1 << 30


@dataclass(frozen=True)
class Problem:
    """One failed check: where (``FILE:LINE``, or a transcript's path), what kind, and why."""

    where: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: {self.kind}: {self.detail}"


@dataclass(frozen=True)
class Verified:
    """A statement whose signature checked out, and the line it was read from."""

    where: str
    statement: Statement

    @property
    def source(self) -> str:
        return self.statement.predicate.source

    @property
    def sha256(self) -> str:
        return self.statement.subject[0].digest.sha256


@dataclass
class Report:
    """What :func:`verify_file` found: the verified statements and every problem."""

    verified: list[Verified] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.verified)


def _statement(line: str, where: str, key: VerifyingKey) -> Statement:
    """The statement of one envelope line; raises :class:`Rejected`."""
    try:
        envelope = Envelope.model_validate_json(line)
    except ValidationError as exc:
        raise Rejected("malformed", f"not a DSSE envelope ({_first_error(exc)})") from None
    payload = open_envelope(envelope, key)  # the signature first: nothing unsigned is read further
    if envelope.payloadType != PAYLOAD_TYPE:
        raise Rejected("malformed", f"payloadType {envelope.payloadType!r} is not {PAYLOAD_TYPE!r}")
    try:
        statement = Statement.model_validate_json(payload)
    except ValidationError as exc:
        raise Rejected("malformed", f"the payload is not a {PREDICATE_TYPE} statement ({_first_error(exc)})") from None
    if statement.subject[0].name != statement.predicate.source:
        raise Rejected("malformed", "the first subject is not the transcript the predicate judges")
    return statement


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = "/".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def read_lines(path: str) -> list[str]:
    """The lines of the attestation file (a usage error when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > _MAX_FILE_BYTES:
        raise UsageError(f"{path} is over {_MAX_FILE_BYTES} bytes")
    return data.decode("utf-8", "replace").splitlines()


def verify_lines(lines: Sequence[str], name: str, key: VerifyingKey, report: Report) -> None:
    """Check each non-blank line of the file ``name`` into ``report``."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            report.verified.append(Verified(where, _statement(line, where, key)))
        except Rejected as exc:
            report.problems.append(Problem(where, exc.kind, exc.detail))


def _matching(path: str, verified: list[Verified]) -> list[Verified]:
    """The statements naming the transcript ``path``: by its name as audited, else by the same
    normalised path, else by a file name no other statement shares."""
    for same in (
        lambda v: v.source == path,
        lambda v: os.path.normpath(v.source) == os.path.normpath(path),
    ):
        found = [v for v in verified if same(v)]
        if found:
            return found
    by_name = [v for v in verified if os.path.basename(v.source) == os.path.basename(path)]
    return by_name if len({v.source for v in by_name}) == 1 else []


def check_transcript(path: str, report: Report) -> None:
    """That the statements naming ``path`` bind exactly its bytes (a usage error when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as exc:
        raise UsageError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    found = _matching(path, report.verified)
    if not found:
        report.problems.append(Problem(path, "not attested", "no verified statement names this transcript"))
    for v in found:
        if v.sha256 != digest:
            report.problems.append(
                Problem(path, "digest mismatch", f"its sha256 is {digest}, {v.where} attests {v.sha256}")
            )


def verify_file(path: str, key: VerifyingKey, transcripts: Sequence[str] = (), require: str | None = None) -> Report:
    """Verify the attestation file ``path`` with ``key``, the ``transcripts`` named, and ``require``."""
    report = Report()
    verify_lines(read_lines(path), path, key, report)
    if not report.verified and not report.problems:
        report.problems.append(Problem(path, "malformed", "holds no envelope"))
    for transcript in transcripts:
        check_transcript(transcript, report)
    if require == "pass":
        for v in report.verified:
            if v.statement.predicate.status != "pass":
                report.problems.append(
                    Problem(v.where, "policy not met", f"{v.source} is {v.statement.predicate.status}, not pass")
                )
    return report
