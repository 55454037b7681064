"""The in-toto Statement v1 of one audited transcript, and its verdict predicate.

``subject``: the transcript (its name as audited and the SHA-256 of the bytes the audit
read), then, after a ``--rerun``, every file the experiment ran on (its name in the
workspace and the SHA-256 of the staged copy).  ``predicate``: :class:`Verdict`, built from
the output contract's own models (:mod:`auditor.formats.contract`): what ``--format json``
says of the result, the configuration and policy in effect with where each value came
from, the auditor's version and the time.  docs/attestations.md holds its JSON Schema
(:func:`predicate_schema`; a test keeps it current).
"""

from __future__ import annotations

import json
import platform
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from auditor.formats import contract

if TYPE_CHECKING:
    from auditor.result import AuditResult

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
# Versioned: a change to the predicate's meaning gets a new URI (v2), never a silent edit.
# The project publishes no home page yet (pyproject.toml names none): this is the namespace of
# its other published URI, the output schema's $id (auditor.formats.contract.schema).
PREDICATE_TYPE = "https://auditor.example/attestation/verdict/v1"
_HEX64 = "^[0-9a-f]{64}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True, populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        """The JSON object: in-toto's key spellings, optional keys only where given."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class DigestSet(_Model):
    sha256: str = Field(pattern=_HEX64, description="SHA-256 (hex) of the artifact's bytes.")


class Subject(_Model):
    """An artifact the statement is about (in-toto's ResourceDescriptor: name and digest)."""

    name: str
    digest: DigestSet


class AuditorInfo(_Model):
    """Which auditor judged, under which interpreter."""

    name: Literal["auditor"]
    version: str
    python: str = Field(description="The auditor's own Python version.")


class Verdict(_Model):
    """The predicate: one transcript's verdict, how it was reached and under which policy."""

    source: str = Field(description="The transcript as audited; the name of the statement's first subject.")
    status: Literal["pass", "fail", "error"]
    findings: list[contract.Finding] = Field(
        description="Every finding reported: rule, severity, message, pointer, claimed and recomputed values."
    )
    recomputed: contract.Recomputed | None = Field(description="The statistics recomputed from the per-seed values.")
    claimed: contract.Claimed | None = Field(None, description="What the answer states, when it could be read.")
    rerun: contract.Rerun | None = Field(
        None, description="With --rerun: device, interpreter and torch versions, sandbox and limits, the files run on."
    )
    config: contract.Config | None = Field(
        description="The configuration in effect: the policy (alpha, fdr, selection, thresholds...), each "
        "value with where it came from, as --format json reports it."
    )
    auditor: AuditorInfo
    audited_at: str = Field(description="When the statement was made (RFC 3339, UTC).")


class Statement(_Model):
    """An in-toto Statement v1 whose predicate is a :class:`Verdict`."""

    type_: Literal["https://in-toto.io/Statement/v1"] = Field(alias="_type")
    subject: list[Subject] = Field(min_length=1)
    predicateType: Literal["https://auditor.example/attestation/verdict/v1"]  # noqa: N815
    predicate: Verdict

    def payload(self) -> bytes:
        """The statement as the envelope carries it: compact JSON, UTF-8 (pydantic's own writer:
        a quarter of the cost of dumping to dicts for :mod:`json`, and signing is timed per transcript)."""
        return self.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")


@cache
def _auditor() -> AuditorInfo:
    from auditor import __version__

    return AuditorInfo(name="auditor", version=__version__, python=platform.python_version())


def now() -> str:
    """The current time as the predicate writes it: ``2026-05-09T07:35:25Z``."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def statement_for(
    result: AuditResult, config: contract.Config | dict[str, Any] | None, *, at: str | None = None
) -> Statement | None:
    """The statement of ``result`` under ``config`` (the JSON formats' ``config`` object, or its model:
    a run validates it once), made ``at`` (default: now); None when the audit read no bytes to bind
    it to (an unreadable file)."""
    if result.transcript_sha256 is None:
        return None
    # The contract's view, values checked.  Not cleaned again: a run's results are (auditor.formats.Run),
    # and JSON escapes whatever control characters a caller's own results hold.
    typed = contract.Result.model_validate(result.to_dict())
    subjects = [Subject(name=typed.source, digest=DigestSet(sha256=result.transcript_sha256))]
    if typed.rerun is not None and typed.rerun.files:
        subjects += [Subject(name=f.name, digest=DigestSet(sha256=f.sha256)) for f in typed.rerun.files]
    verdict: dict[str, Any] = {
        "source": typed.source,
        "status": typed.status,
        "findings": typed.findings,
        "recomputed": typed.recomputed,
        "config": config,
        "auditor": _auditor(),
        "audited_at": at or now(),
    }
    for optional in ("claimed", "rerun"):
        if optional in typed.model_fields_set:
            verdict[optional] = getattr(typed, optional)
    return Statement(
        type_=STATEMENT_TYPE,
        subject=subjects,
        predicateType=PREDICATE_TYPE,
        predicate=Verdict.model_validate(verdict),
    )


def predicate_schema() -> dict[str, Any]:
    """The JSON Schema of the predicate (:class:`Verdict`), as docs/attestations.md shows it."""
    schema = Verdict.model_json_schema(mode="serialization", ref_template="#/$defs/{model}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": PREDICATE_TYPE,
        **schema,
    }


def predicate_schema_text() -> str:
    return json.dumps(predicate_schema(), indent=2, ensure_ascii=False)


_BEGIN, _END = "<!-- predicate-schema:begin -->\n```json\n", "```\n<!-- predicate-schema:end -->"


def with_schema(doc: str) -> str:
    """``doc`` (docs/attestations.md) with the schema between its markers replaced by the current one."""
    head, rest = doc.split(_BEGIN, 1)
    _, tail = rest.split(_END, 1)
    return f"{head}{_BEGIN}{predicate_schema_text()}\n{_END}{tail}"


if __name__ == "__main__":  # python -m auditor.attest.statement [docs/attestations.md]: print, or update the doc
    import sys
    from pathlib import Path

    if len(sys.argv) > 1:
        doc = Path(sys.argv[1])
        doc.write_text(with_schema(doc.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(predicate_schema_text())
