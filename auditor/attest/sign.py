"""Sign a run's results: one DSSE envelope per transcript, one per line of a ``.intoto.jsonl`` file."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from auditor.attest.dsse import sign
from auditor.attest.statement import now, statement_for
from auditor.errors import UsageError
from auditor.formats import contract

if TYPE_CHECKING:
    from auditor.attest.keys import SigningKey
    from auditor.result import AuditResult


def envelope_lines(
    results: Iterable[AuditResult], config: dict[str, Any] | None, key: SigningKey, *, at: str | None = None
) -> tuple[list[str], list[str]]:
    """The envelope lines (each ending in a newline) of ``results``, and the sources left unsigned
    because the audit read no bytes of them (an unreadable file: nothing to bind a digest to)."""
    at = at or now()  # one time for the run: its results were judged together (the cross-answer checks)
    policy = contract.Config.model_validate(config) if config is not None else None  # once, not per result
    lines, unsigned = [], []
    for result in results:
        statement = statement_for(result, policy, at=at)
        if statement is None:
            unsigned.append(result.source)
            continue
        lines.append(sign(statement.payload(), key).line() + "\n")
    return lines, unsigned


def write_attestations(
    path: str, results: Iterable[AuditResult], config: dict[str, Any] | None, key: SigningKey
) -> tuple[int, list[str]]:
    """Write the envelopes of ``results`` to ``path`` (atomically, never through a link); how many
    were written and the sources left unsigned (:func:`envelope_lines`)."""
    from auditor.files.atomic import atomic_write

    lines, unsigned = envelope_lines(results, config, key)
    try:
        atomic_write(path, "".join(lines))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc}") from None
    return len(lines), unsigned
