from __future__ import annotations

from pathlib import Path

import pytest

from auditor.audit import AuditResult, audit_bytes, audit_path
from auditor.options import AuditOptions

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SEED_000 = FIXTURES / "answers" / "000_28acc42565c7de9b.txt"
SEED_001 = FIXTURES / "answers" / "001_0adda411732ac938.txt"
# Test data shipped with the repository (the official SARIF 2.1.0 schema): a fresh clone is self-contained.
SHARED = ROOT / "tests" / "data"


def codes(result: AuditResult) -> set[str]:
    return {f.rule for f in result.findings}


@pytest.fixture
def audit():
    """audit(text_or_path, **option_overrides) -> AuditResult."""

    def run(target, **overrides) -> AuditResult:
        options = AuditOptions(**overrides)
        if isinstance(target, Path):
            return audit_path(str(target), options)
        return audit_bytes(target, "<test>", options)

    return run


HEADER = "Стенд-проверка (stage-2) · промт оператора:\n\n(универсальный)\n\nОтвет агента:\n\n"


def seed_answer(which: str = "000") -> dict:
    """A fresh, mutable copy of a seed answer's JSON object ("000" or "001")."""
    import json

    path = SEED_000 if which == "000" else SEED_001
    text = path.read_text(encoding="utf-8")
    return json.loads(text[text.index("{") :])


def as_transcript(document: dict, header: str = HEADER) -> str:
    """Render a JSON object the way the pipeline stores answers."""
    import json

    return header + json.dumps(document, ensure_ascii=False)


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker`` (leak checks after a rerun)."""
    import os

    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found
