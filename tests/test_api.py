"""The public Python API: ``from auditor import audit_text, audit_file, audit_paths, ...``."""

from __future__ import annotations

import doctest
import subprocess
import sys

import pydantic
import pytest
from conftest import FIXTURES

import auditor
from auditor import AuditOptions, AuditResult, Finding, Severity, Status, audit_file, audit_paths, audit_text

SEED_000 = FIXTURES / "answers" / "000_28acc42565c7de9b.txt"
SEED_001 = FIXTURES / "answers" / "001_0adda411732ac938.txt"


def test_import_auditor_loads_nothing_else() -> None:
    code = "import sys, auditor; print(sorted(m for m in sys.modules if m.startswith('auditor') or m == 'pydantic'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['auditor']"


def test_every_exported_name_resolves() -> None:
    for name in auditor.__all__:
        assert getattr(auditor, name) is not None
    assert set(dir(auditor)) >= {"audit_text", "audit_file", "audit_paths", "AuditOptions", "Severity"}
    with pytest.raises(AttributeError, match="no attribute 'audit_everything'"):
        auditor.audit_everything  # noqa: B018


def test_audit_text_gives_a_typed_result() -> None:
    result = audit_text(SEED_000.read_text(encoding="utf-8"), source="000.txt")
    assert isinstance(result, AuditResult) and result.status is Status.PASS and result.source == "000.txt"
    assert {f.rule for f in result.findings} == {"E701", "T601"}
    assert all(isinstance(f, Finding) and f.severity is Severity.WARNING for f in result.findings)


def test_audit_text_never_raises_on_garbage() -> None:
    result = audit_text("{{{{{{{{{{}}}")
    assert result.status is Status.ERROR and result.findings[0].rule.startswith("P")


def test_audit_file_and_its_options() -> None:
    result = audit_file(SEED_001)
    assert result.status is Status.FAIL and "D501" in {f.rule for f in result.findings}
    assert audit_file(SEED_001, options=AuditOptions(ignore=("D501",), fail_on="never")).status is Status.PASS


def test_options_are_validated_in_process() -> None:
    with pytest.raises(pydantic.ValidationError, match="A307"):
        AuditOptions(select=("A3O7",))
    with pytest.raises(pydantic.ValidationError):
        AuditOptions(alpha=5)


def test_audit_paths_walks_audits_and_cross_checks(tmp_path) -> None:
    (tmp_path / "a.txt").write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "b.txt").write_text(SEED_001.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "README.md").write_text("We found p = 0.015 last week.\n", encoding="utf-8")
    (tmp_path / "meeting.txt").write_text("Lunch on Friday.\n", encoding="utf-8")
    batch = audit_paths([tmp_path])
    assert [r.status for r in batch.results] == [Status.PASS, Status.FAIL]
    assert batch.failed() and not audit_paths([tmp_path], options=AuditOptions(fail_on="never")).failed()
    assert [p.rsplit("/", 1)[-1] for p in batch.skipped] == ["meeting.txt"]
    assert [p.rsplit("/", 1)[-1] for p in batch.excluded] == ["README.md"]
    assert batch.cross is not None  # two answers: the cross-answer checks ran


def test_the_api_examples_run() -> None:
    import auditor.api

    failures, tried = doctest.testmod(auditor.api)
    assert tried >= 2 and failures == 0


def test_the_example_in_docs_api_md_runs(monkeypatch, capsys) -> None:
    import re

    root = FIXTURES.parent
    text = (root / "docs" / "api.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(root)
    exec(compile(example, "docs/api.md", "exec"), {})  # noqa: S102 -- our own documentation
    out = capsys.readouterr().out
    assert "D501" in out and "2 True" in out
