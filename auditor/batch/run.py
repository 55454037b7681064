"""A batch: audit its transcripts (in parallel) and run the cross-answer checks
over the whole of it.

Which files form a batch is :mod:`auditor.files.discovery`; where each audit runs is
:mod:`auditor.batch.executors` (``make_pool``); one run over a batch is :mod:`auditor.batch.session`.  Nothing here prints: callers pass ``on_result`` to
see each result as it finishes (a progress bar, a jsonl stream) and render the
batch themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from auditor.findings import Finding
from auditor.options.models import AuditOptions
from auditor.result import AuditResult, Status, select, settle


def add_findings(result: AuditResult, new: Sequence[Finding], options: AuditOptions) -> AuditResult:
    """``result`` with ``new`` findings merged in and its status derived again."""
    if not new:
        return result
    findings, status = settle([*result.findings, *new], options, auditable=result.status is not Status.ERROR)
    return replace(result, findings=findings, status=status)


def cross_check(
    results: Sequence[AuditResult],
    options_of: Callable[[str], AuditOptions],
    *,
    fdr: float,
    alpha: float,
    keep: Callable[[list[Finding], str], list[Finding]] = lambda findings, source: findings,
) -> tuple[list[AuditResult], Any]:
    """Run X901/X902 over a batch; returns the updated results and the
    :class:`~auditor.rules.cross.CrossSummary` (None for fewer than two results,
    where no cross-answer check applies).  ``keep`` filters new findings (a baseline).
    """
    if len(results) < 2:
        return list(results), None
    from auditor.rules.cross import cross_findings

    found, summary = cross_findings(results, fdr=fdr, alpha=alpha)
    out = list(results)
    for index, findings in found.items():
        result = results[index]
        options = options_of(result.source)
        out[index] = add_findings(result, keep(select(findings, options), result.source), options)
    return out, summary
