"""auditor: audit the claims AI research agents make about their own ML experiments.

The public API (imported lazily, so ``import auditor`` stays cheap)::

    from auditor import audit_text, audit_file, audit_paths, AuditOptions, AuditResult, Finding, Severity

    result = audit_file("answer.txt", options=AuditOptions(alpha=0.01))
    if result.status is not Status.PASS:
        for finding in result.findings:
            print(finding.rule, finding.severity.value, finding.pointer, finding.message)

See docs/api.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "audit_text": "auditor.api",
    "audit_file": "auditor.api",
    "audit_paths": "auditor.api",
    "AuditBatch": "auditor.api",
    "AuditOptions": "auditor.options.models",
    "RerunOptions": "auditor.options.models",
    "AuditResult": "auditor.result",
    "Status": "auditor.result",
    "Finding": "auditor.findings",
    "Severity": "auditor.findings",
}
__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from auditor.api import AuditBatch, audit_file, audit_paths, audit_text
    from auditor.findings import Finding, Severity
    from auditor.options.models import AuditOptions, RerunOptions
    from auditor.result import AuditResult, Status


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'auditor' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
