"""The public Python API: audit an answer, a file or a batch in-process and read typed results.

Everything here is importable from the package itself (``from auditor import audit_text``);
the CLI is a thin layer over the same functions.  Nothing here prints or exits.

>>> from auditor import AuditOptions, audit_text
>>> result = audit_text('{"bench_report": {}}', options=AuditOptions(alpha=0.01))
>>> result.status.value, result.findings[0].rule
('error', 'S201')
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from auditor.audit import audit_bytes, audit_path
from auditor.files.discovery import DEFAULT_INCLUDE, survey
from auditor.files.paths import key
from auditor.options.models import DEFAULT_FDR, AuditOptions, RerunOptions
from auditor.result import AuditResult, Status, gate_fails


def audit_text(text: str | bytes, *, source: str = "<text>", options: AuditOptions | None = None) -> AuditResult:
    """Audit the text of one transcript (an agent's reply: any header, fences or prose around the JSON).

    ``source`` names it in findings and outputs.  Never raises for a bad answer: a transcript
    without a readable answer is a result with status ``error`` and a P1xx finding.

    >>> audit_text("no answer here").findings[0].rule
    'P101'
    """
    return audit_bytes(text, source, options or AuditOptions())


def audit_file(
    path: str | os.PathLike[str], *, options: AuditOptions | None = None, rerun: RerunOptions | None = None
) -> AuditResult:
    """Audit the transcript at ``path``; with ``rerun``, also run its experiment again in the sandbox.

    A file named here is always audited, as on the command line: one without an answer fails P101.
    """
    return audit_path(os.fspath(path), options or AuditOptions(), rerun=rerun)


@dataclass(frozen=True)
class AuditBatch:
    """What :func:`audit_paths` found: a result per audited transcript, in a deterministic order, the
    cross-answer summary (None for fewer than two), and the paths it did not audit."""

    results: tuple[AuditResult, ...]
    options: AuditOptions  # what the batch was audited with
    cross: Any = None  # auditor.rules.cross.CrossSummary
    skipped: tuple[str, ...] = ()  # walked files with no sign of an answer
    excluded: tuple[str, ...] = ()  # files and folders include/exclude left out

    def failed(self) -> bool:
        """Whether the batch fails the gate, as ``auditor audit`` decides its exit status."""
        return gate_fails(self.results, self.options)


def audit_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    options: AuditOptions | None = None,
    include: Iterable[str] = DEFAULT_INCLUDE,
    exclude: Iterable[str] = (),
    fdr: float = DEFAULT_FDR,
) -> AuditBatch:
    """Audit files and folders as one batch, as ``auditor audit PATHS`` does (without a config file).

    Folders are walked (hidden folders and a repository's ordinary files left out, a walked file
    without any sign of an answer skipped); named files are always audited.  The cross-answer
    checks (X901, X902 at ``fdr``) run over the whole batch.
    """
    from auditor.batch.run import cross_check

    options = options or AuditOptions()
    found = survey([os.fspath(p) for p in paths], tuple(include), tuple(exclude))
    results, skipped = [], []
    for path in found.paths:
        result = audit_path(path, options, walked=key(path) in found.walked)
        if result.status is Status.SKIPPED:
            skipped.append(path)
        else:
            results.append(result)
    checked, cross = cross_check(results, lambda source: options, fdr=fdr, alpha=options.alpha)
    return AuditBatch(tuple(checked), options, cross, tuple(skipped), tuple(found.excluded))
