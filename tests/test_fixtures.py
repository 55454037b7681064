"""Every rule has a fixture where it must fire and fixtures where it must stay silent.

``fixtures/defects/<CODE>_<slug>.*`` must raise CODE; ``fixtures/silent/<CODE>_<slug>.*``
must not; the real answers in ``fixtures/answers`` have pinned expectations.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, SEED_000, SEED_001, codes

from auditor.audit import audit_path
from auditor.findings import Severity, all_rules
from auditor.options.models import AuditOptions

DEFECTS = sorted(p for p in (FIXTURES / "defects").iterdir() if p.is_file())
SILENT = sorted(p for p in (FIXTURES / "silent").iterdir() if p.is_file())
# Families whose rules are exercised by transcript fixtures; R8xx need a
# workspace (tests/test_rerun*.py), X9xx a batch (tests/test_batch*.py).
STATIC_FAMILIES = tuple("PSAVDTE")


def _code(path: Path) -> str:
    return path.name.split("_", 1)[0].upper()


@pytest.mark.parametrize("path", DEFECTS, ids=lambda p: p.name)
def test_planted_defect_is_reported(path: Path) -> None:
    result = audit_path(str(path), AuditOptions())
    assert _code(path) in codes(result), [f.to_dict() for f in result.findings]


@pytest.mark.parametrize("path", SILENT, ids=lambda p: p.name)
def test_near_miss_stays_silent(path: Path) -> None:
    result = audit_path(str(path), AuditOptions())
    assert _code(path) not in codes(result), [f.to_dict() for f in result.findings]


def test_every_static_rule_has_a_firing_fixture() -> None:
    covered = {_code(p) for p in DEFECTS}
    static = {r.code for r in all_rules() if r.code.startswith(STATIC_FAMILIES)}
    assert static, "no rules registered"
    assert static <= covered, f"rules without a defect fixture: {sorted(static - covered)}"


def test_seed_000_passes_with_the_expected_warnings() -> None:
    result = audit_path(str(SEED_000), AuditOptions())
    assert result.status == "pass"
    assert result.recomputed["p_value"] == 0.015625
    assert result.recomputed["idea_wins"] == 7
    assert result.recomputed["verdict"] == "idea better (significant)"
    assert codes(result) == {"E701", "T601"}
    assert all(f.severity is Severity.WARNING for f in result.findings)


def test_seed_001_fails_with_the_noop_idea() -> None:
    result = audit_path(str(SEED_001), AuditOptions())
    assert result.status == "fail"
    errors = {f.rule for f in result.findings if f.severity is Severity.ERROR}
    assert errors == {"D501"}
    assert result.recomputed["p_value"] == 1.0
    assert result.recomputed["delta_mean"] == 0.0
