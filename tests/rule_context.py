"""Run one check rule on a JSON document without the parse and schema stages.

Rule tests build the :class:`AuditContext` straight from a seed-based dict, so
they test the rule alone: a planted defect reaches the rule even when another
stage would also complain about it.
"""

from __future__ import annotations

from typing import Any

from auditor.audit import build_context
from auditor.context import AuditContext
from auditor.findings import Finding, get_rule
from auditor.options.models import AuditOptions


def context_for(document: dict[str, Any], **overrides: Any) -> AuditContext:
    """The context every check gets for ``document`` (an answer or a bare report)."""
    ctx, _ = build_context(document, AuditOptions(**overrides))
    return ctx


def run_rule(code: str, document: dict[str, Any], **overrides: Any) -> list[Finding]:
    """Findings of rule ``code`` alone on ``document``."""
    rule = get_rule(code)
    return list(rule.check(context_for(document, **overrides)))  # type: ignore[misc]
