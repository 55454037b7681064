"""Baselines: accept the findings a pile of answers already has, block only new ones.

``--write-baseline FILE`` records every current finding by a *fingerprint*;
``--baseline FILE`` then drops the findings whose fingerprint is recorded, and
the gate fails only on what is left.

A fingerprint is the SHA-256 of ``[rule, source, pointer, claimed]``:

* ``source`` is the transcript's path relative to the baseline file's folder,
  with forward slashes, so ``answers/a.txt`` and ``./answers/a.txt`` (or the
  same file reached from another working directory) agree;
* ``pointer`` is the JSON Pointer into the answer, which re-indenting,
  re-ordering keys or changing line ends leaves unchanged;
* ``claimed`` is the claimed value in a canonical spelling (sorted keys,
  ``1.0`` written as ``1``), so a formatter that rewrites numbers does not
  make an old finding look new, while an edit that changes the claimed value
  (a different p, a different verdict) does.

The message is deliberately left out: wording changes between auditor
versions must not invalidate a baseline.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from auditor.errors import UsageError
from auditor.findings import Finding, Severity, canonical, fingerprint, source_key
from auditor.options.models import AuditOptions
from auditor.result import AuditResult, settle

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Baseline:
    """Recorded fingerprints; sources are relative to ``root`` (the baseline file's folder)."""

    root: Path
    fingerprints: frozenset[str]

    def known(self, finding: Finding, source: str) -> bool:
        return fingerprint(finding, source, self.root) in self.fingerprints

    def new_findings(self, findings: Iterable[Finding], source: str) -> list[Finding]:
        return [f for f in findings if not self.known(f, source)]

    def apply(self, result: AuditResult, options: AuditOptions) -> AuditResult:
        """``result`` without its known findings, its status derived from the new ones only.

        A transcript that could not be audited (status ``error``) whose every
        problem is recorded passes: the baseline accepted it as known.
        """
        kept = self.new_findings(result.findings, result.source)
        if len(kept) == len(result.findings):
            return result
        auditable = result.recomputed is not None or not any(f.severity is Severity.ERROR for f in kept)
        findings, status = settle(kept, options, auditable=auditable)
        return replace(result, findings=findings, status=status, baselined=len(result.findings) - len(kept))


def load(path: str | Path) -> Baseline:
    """Read a baseline file; anything unreadable is a usage error (exit 2)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"cannot read baseline {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("auditor_baseline") != FORMAT_VERSION:
        raise UsageError(f'{path} is not an auditor baseline (expected "auditor_baseline": {FORMAT_VERSION})')
    entries = data.get("findings")
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in entries
    ):
        raise UsageError(f'{path}: "findings" must be a list of objects with a "fingerprint"')
    return Baseline(_root(path), frozenset(e["fingerprint"] for e in entries))


def _root(path: Path) -> Path:
    return Path(os.path.abspath(path)).parent


def render(results: Iterable[AuditResult], path: str | Path) -> str:
    """The baseline document for every finding of ``results``, as written to ``path``."""
    from auditor import __version__

    root = _root(Path(path))
    entries = {}
    for result in results:
        for f in result.findings:
            fp = fingerprint(f, result.source, root)
            entries[fp] = {
                "fingerprint": fp,
                "rule": f.rule,
                "source": source_key(result.source, root),
                "pointer": f.pointer,
                "claimed": canonical(f.claimed),
            }
    ordered = sorted(entries.values(), key=lambda e: (e["source"], e["rule"], e["pointer"], e["fingerprint"]))
    document = {"auditor_baseline": FORMAT_VERSION, "auditor_version": __version__, "findings": ordered}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
