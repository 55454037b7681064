"""Baselines: fingerprints that survive re-formatting, and a gate that fails only on new findings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, SEED_000

from auditor.audit import audit_path
from auditor.batch import baseline
from auditor.cli import main
from auditor.errors import UsageError
from auditor.findings import Finding, Severity, canonical

P = Finding("A307", Severity.ERROR, "m", "/bench_report/comparison/p_value", claimed=0.04, recomputed=0.015625)


def test_fingerprint_ignores_path_spelling_and_message(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    same = Finding("A307", Severity.ERROR, "other words", P.pointer, claimed=0.04, recomputed=0.5)
    assert baseline.fingerprint(P, "answers/a.txt", tmp_path) == baseline.fingerprint(same, "./answers/a.txt", tmp_path)
    assert baseline.fingerprint(P, "answers/a.txt", tmp_path) == baseline.fingerprint(
        P, str(tmp_path / "answers/a.txt"), tmp_path
    )


def test_fingerprint_changes_with_rule_source_pointer_or_claim(tmp_path) -> None:
    base = baseline.fingerprint(P, "a.txt", tmp_path)
    variants = [
        (Finding("A308", P.severity, P.message, P.pointer, P.claimed), "a.txt"),
        (P, "b.txt"),
        (Finding(P.rule, P.severity, P.message, "/bench_report/comparison/mde", P.claimed), "a.txt"),
        (Finding(P.rule, P.severity, P.message, P.pointer, 0.05), "a.txt"),
    ]
    assert all(baseline.fingerprint(f, s, tmp_path) != base for f, s in variants)


def test_canonical_claims() -> None:
    assert canonical({"b": 1.0, "a": [2.0, 0.5]}) == {"a": [2, 0.5], "b": 1}


def test_fingerprints_survive_reformatting_the_answer(tmp_path) -> None:
    original = (FIXTURES / "defects" / "A307_p_not_a_resample_estimate.txt").read_text(encoding="utf-8")
    start = original.index("{")
    document = json.loads(original[start:])
    path = tmp_path / "a.txt"
    path.write_text(original, encoding="utf-8")
    before = {baseline.fingerprint(f, str(path), tmp_path) for f in audit_path(str(path)).findings}
    reordered = json.dumps(dict(reversed(list(document.items()))), indent=8)
    path.write_text(original[:start].replace("\n", "\r\n") + reordered, encoding="utf-8")
    after = {baseline.fingerprint(f, str(path), tmp_path) for f in audit_path(str(path)).findings}
    assert before == after and before


def test_baseline_on_a_folder_blocks_only_new_problems(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "answers", "answers")
    shutil.copy(FIXTURES / "defects" / "P101_no_json.txt", "answers/unparseable.txt")
    assert main(["audit", "-q", "answers"]) == 1
    assert main(["audit", "-q", "answers", "--write-baseline", "baseline.json"]) == 0
    capsys.readouterr()
    assert main(["audit", "-q", "answers", "--baseline", "baseline.json"]) == 0
    assert capsys.readouterr().out == ""  # --quiet: nothing new fails, nothing printed
    assert main(["audit", "answers", "--baseline", "baseline.json"]) == 0
    assert "known findings hidden by the baseline" in capsys.readouterr().out
    shutil.copy(FIXTURES / "defects" / "V401_significance_not_supported.txt", "answers/new.txt")
    assert main(["audit", "-q", "answers", "--baseline", "baseline.json", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    failing = {
        Path(r["source"]).name: {f["rule"] for f in r["findings"]} for r in data["results"] if r["status"] != "pass"
    }
    assert list(failing) == ["new.txt"] and "V401" in failing["new.txt"]


def test_baseline_from_another_working_directory(tmp_path, monkeypatch, capsys) -> None:
    shutil.copytree(FIXTURES / "answers", tmp_path / "answers")
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "-q", "answers", "--write-baseline", "baseline.json"]) == 0
    monkeypatch.chdir(tmp_path / "answers")
    assert main(["audit", "-q", ".", "--baseline", "../baseline.json"]) == 0


@pytest.mark.parametrize(
    "content", [None, "not json", "[]", '{"findings": []}', '{"auditor_baseline": 1, "findings": [1]}']
)
def test_unreadable_baseline_exits_2(tmp_path, content, capsys) -> None:
    path = tmp_path / "b.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError):
        baseline.load(path)
    assert main(["audit", str(SEED_000), "--baseline", str(path)]) == 2
