"""What an audit returns, and the one path from findings to a status.

:class:`AuditResult` is what every output format renders; :class:`Status` its
outcome.  Every place that decides which findings count and what they mean for
the gate goes through three functions here:

* :func:`select`: the rule selection (``select``/``ignore``) and the
  severity overrides; :func:`is_selected` is its test for one code;
* :func:`finding_order`: how a result's findings are ordered;
* :func:`status_of`: pass, fail or error, including ``always_fail`` (a
  discovered configuration cannot pass R801-R807, :mod:`auditor.options.config`).

:func:`settle` orders findings and derives their status in one call: the
single-answer pipeline (:func:`auditor.audit.finish`), the baseline
(:meth:`auditor.batch.baseline.Baseline.apply`) and the cross-answer pass
(:func:`auditor.batch.run.add_findings`) all use it.

This module imports nothing but the findings and the options, so the output
formats and the gate can use results without the audit pipeline.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from auditor.findings import Finding, Severity, matches
from auditor.options.models import AuditOptions

if TYPE_CHECKING:
    from auditor.extracts import CrossFacts
    from auditor.formats import contract


class Status(enum.StrEnum):
    """A result's outcome; a ``str``, so it compares and serialises as ``"pass"`` etc."""

    PASS = "pass"  # nothing at or above --fail-on
    FAIL = "fail"  # a finding at or above --fail-on, or an error the guard always fails
    ERROR = "error"  # the transcript could not be audited (nothing recomputed)
    # An ordinary file (a README, a package.json) with no answer in it: counted, never reported
    # as a result (auditor.parse.candidates.holds_an_answer).
    SKIPPED = "skipped"


@dataclass(frozen=True)
class AuditResult:
    """The outcome of auditing one transcript; every output format renders these."""

    source: str
    status: Status
    findings: tuple[Finding, ...]
    recomputed: dict[str, Any] | None = None
    # What the answer itself claims for the headline numbers (for the terminal table).
    claimed: dict[str, Any] | None = None
    rerun: dict[str, Any] | None = None
    # The facts the batch's cross-answer checks (X9xx) compare (auditor.extracts.cross_facts);
    # kept in jsonl records so that --resume can still run them.  Not in to_dict().
    cross: dict[str, Any] | CrossFacts | None = None  # compact (CrossFacts) once a batch keeps it
    # X000: the file holding the traceback of the auditor's internal error.
    log: str | None = None
    # How many findings a baseline hid (shown by the terminal table).
    baselined: int = 0
    # Wall-clock seconds the audit took, rerun included (JUnit's time=); not in to_dict(), so the
    # JSON output stays the same from run to run.
    seconds: float | None = field(default=None, compare=False)
    # What the HTML report draws (auditor.extracts.figure_data), kept only with AuditOptions.figure_data.
    # Not in to_dict().
    figures: dict[str, Any] | None = None
    # SHA-256 (hex) of the transcript's bytes as the audit read them (auditor.audit.audit_path): what
    # a jsonl line's "resume" member binds it to (auditor.batch.resume).  Not in to_dict(), never compared.
    transcript_sha256: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if type(self.status) is not Status:  # "pass" from a jsonl record reads as Status.PASS
            object.__setattr__(self, "status", Status(self.status))

    def with_findings(self, findings: tuple[Finding, ...]) -> AuditResult:
        """This result with ``findings`` instead of its own.

        Its status is a :class:`Status` already, so the copy skips ``__init__``
        and ``__post_init__`` (``dataclasses.replace`` would run both: every
        audit's findings are placed once, after the checks).
        """
        return self._copy(findings=findings)

    def with_claimed(self, claimed: dict[str, Any] | None) -> AuditResult:
        """This result with ``claimed`` instead of its own, copied as :meth:`with_findings` copies."""
        return self._copy(claimed=claimed)

    def with_seconds(self, seconds: float) -> AuditResult:
        """This result with the seconds its audit took, copied as :meth:`with_findings` copies."""
        return self._copy(seconds=seconds)

    def with_transcript_sha256(self, digest: str | None) -> AuditResult:
        """This result bound to the digest of the bytes it was audited from, copied as :meth:`with_findings` copies."""
        return self._copy(transcript_sha256=digest)

    def _copy(self, **fields: Any) -> AuditResult:
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **fields)
        return copy

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    def typed(self) -> contract.Result:
        """This result as the JSON contract's typed model (its strings cleaned for display).

        >>> from auditor import audit_file
        >>> audit_file("fixtures/answers/000_28acc42565c7de9b.txt").typed().recomputed.p_value
        0.015625
        """
        from auditor.formats.contract import Result

        return Result.of(self)

    def to_dict(self) -> dict[str, Any]:
        """The pipeline's own values as a dict (the contract's keys; :meth:`typed` validates them)."""
        out: dict[str, Any] = {
            "source": self.source,
            "status": self.status.value,
            "findings": [f.to_dict() for f in self.findings],
            "recomputed": self.recomputed,
        }
        if self.claimed is not None:
            out["claimed"] = self.claimed
        if self.rerun is not None:
            out["rerun"] = self.rerun
        return out


def is_selected(code: str, options: AuditOptions) -> bool:
    """Whether rule ``code`` is checked and reported under ``select``/``ignore``."""
    if options.select and not matches(code, options.select):
        return False
    return not (options.ignore and matches(code, options.ignore))


def reports_failing(code: str, severity: Severity, options: AuditOptions) -> bool:
    """Rule ``code``, found at ``severity``, is reported and fails the run: selected, and at or above
    ``fail_on`` after the severity overrides (or always failing).  A rule that other rules stay silent
    for must be one, or lowering it would silence them too.  Under ``fail-on = never`` nothing fails,
    so being reported is enough."""
    if not is_selected(code, options):
        return False
    if options.fail_on is None or code in options.always_fail:
        return True
    return options.severity_overrides.get(code, severity).rank >= options.fail_on.rank


def gate_fails(results: Iterable[AuditResult], options: AuditOptions) -> bool:
    """The gate's decision, for the CLI's exit status and the API alike: a result fails ``fail_on``, or
    holds an error of a rule that always fails (a discovered config's ``fail-on = never`` cannot pass it)."""
    results = list(results)
    if failing(results, options.fail_on):
        return True
    return any(f.severity is Severity.ERROR and f.rule in options.always_fail for r in results for f in r.findings)


def select(findings: Iterable[Finding], options: AuditOptions) -> list[Finding]:
    """The findings of selected rules, with the severity overrides applied."""
    out = []
    for f in findings:
        if not is_selected(f.rule, options):
            continue
        if f.rule in options.severity_overrides:
            f = replace(f, severity=options.severity_overrides[f.rule])
        out.append(f)
    return out


def finding_order(f: Finding) -> tuple[int, str, str]:
    """Sort key of a result's findings: most severe first, then by rule and pointer."""
    return (-f.severity.rank, f.rule, f.pointer)


def status_of(findings: Iterable[Finding], options: AuditOptions, *, auditable: bool) -> Status:
    """The status of a result holding ``findings``.

    ``auditable`` is False when the transcript could not be audited (nothing
    was recomputed): the status is then ``error`` whatever the findings are.
    """
    if not auditable:
        return Status.ERROR
    findings = tuple(findings)
    if options.fail_on is not None and any(f.severity.rank >= options.fail_on.rank for f in findings):
        return Status.FAIL
    if any(f.severity is Severity.ERROR and f.rule in options.always_fail for f in findings):
        return Status.FAIL  # a discovered config's fail-on cannot pass these (auditor.options.config)
    return Status.PASS


def settle(
    findings: Iterable[Finding], options: AuditOptions, *, auditable: bool
) -> tuple[tuple[Finding, ...], Status]:
    """``findings`` in :func:`finding_order` and their :func:`status_of` (selection is the caller's)."""
    ordered = tuple(sorted(findings, key=finding_order))
    return ordered, status_of(ordered, options, auditable=auditable)


def failing(results: Iterable[AuditResult], fail_on: Severity | None) -> bool:
    """Whether the gate fails: a result failed, or one could not be audited (unless ``never``)."""
    return any(r.status is not Status.PASS for r in results) if fail_on is not None else False


def transcript_digest(data: bytes | None) -> str | None:
    """What a result records of the bytes it was audited from (:attr:`AuditResult.transcript_sha256`)."""
    return hashlib.sha256(data).hexdigest() if data is not None else None
