"""Which files a run audits: named files always, walked files unless they are a repository's
ordinary files (excluded by name) or hold no sign of an answer (skipped); broken answers fail P1xx,
and whatever is left out is named on stderr and in the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SEED_000, SEED_001

from auditor.cli import main


def _pyproject(folder: Path, body: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


# -- ordinary files are excluded or skipped; named files and broken answers always fail -----------

ORDINARY = {
    "README.md": "# Answers\n\nThe best run of the sweep reached p = 0.015; run `auditor audit .` on it.\n",
    "NOTES.md": "Seed sweep: 7/8 wins, looks promising.\n",
    "requirements.txt": "numpy>=1.24\ntorch==2.13.0\n",
    "package.json": '{"name": "answers", "version": "1.0.0", "scripts": {"test": "auditor audit ."}}\n',
}
REPLIES = {
    "prose_claim.txt": "Agent's answer:\n\nThe idea worked: test MSE went from 10.931 to 10.922 (p=0.01475, 7/8 wins).\n",
    "p_only.txt": "The clipping rule helps (p = 0.003).\n",
    "wins_only.txt": "Idea beat the baseline on 7 of 8 seeds: 7/8 wins.\n",
    "traceback.txt": 'Traceback (most recent call last):\n  File "bench.py", line 3, in <module>\nValueError: nan\n',
    "truncated.txt": 'Answer:\n{ "worked": true, "confidence": 8, "verdict": "Across 8 paired seeds',
}
# What an agent controls: answers that no decoder reads, each with a sign of being an answer.
BROKEN = {
    "braces.txt": "{{{{{{{{{{}}}",
    "header_braces.txt": "Ответ агента:\n\n{{{{{{{{{{}}}\n",
    "header_garbage.txt": "Ответ агента:\n\nthe idea worked, trust me\n",
    "deep.txt": "Answer:\n" + "{" * 200_000 + "}" * 200_000,
    "fence.md": "```json\nworked: yes\n```\n",
}
SIGNAL_LESS = "Meeting notes\n- rerun the sweep with 16 seeds\n- ask about the cluster quota\n"


def _json_run(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["audit", *argv, "--format", "json", "--isolated"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _statuses(data: dict) -> dict[str, tuple[str, list[str]]]:
    return {Path(r["source"]).name: (r["status"], [f["rule"] for f in r["findings"]]) for r in data["results"]}


def _write(folder: Path, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in files]


def test_a_walk_excludes_ordinary_files_by_name_and_names_them(tmp_path, capsys) -> None:
    _write(tmp_path, ORDINARY)
    (tmp_path / "answer.txt").write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    code, data, err = _json_run(capsys, str(tmp_path))
    # README quoting "p = 0.015" and NOTES with "7/8 wins" no longer fail P101: excluded by name, and said so.
    assert code == 0 and {name: status for name, (status, _) in _statuses(data).items()} == {"answer.txt": "pass"}
    names = ["NOTES.md", "README.md", "package.json", "requirements.txt"]
    assert data["summary"]["excluded"] == 4
    assert [Path(p).name for p in data["summary"]["excluded_paths"]] == names
    assert "4 paths excluded by include/exclude" in err and all(name in err for name in names)


def test_a_walk_skips_files_without_any_sign_of_an_answer_and_audits_the_rest(tmp_path, capsys) -> None:
    _write(tmp_path, {**REPLIES, **BROKEN, "meeting.txt": SIGNAL_LESS, "data.json": '["a.csv", "b.csv"]'})
    code, data, err = _json_run(capsys, str(tmp_path))
    statuses = _statuses(data)
    assert code == 1
    assert {name: statuses[name] for name in REPLIES} == {
        "prose_claim.txt": ("error", ["P101"]),
        "p_only.txt": ("error", ["P101"]),
        "wins_only.txt": ("error", ["P101"]),
        "traceback.txt": ("error", ["P101"]),
        "truncated.txt": ("error", ["P102"]),
    }
    # Broken answers are audited and fail with a parse finding, never skipped.
    for name in BROKEN:
        status, rules = statuses[name]
        assert status == "error" and rules and all(rule.startswith("P1") for rule in rules), (name, statuses[name])
    assert "meeting.txt" not in statuses and "data.json" not in statuses
    assert data["summary"]["skipped"] == 2
    assert sorted(Path(p).name for p in data["summary"]["skipped_paths"]) == ["data.json", "meeting.txt"]
    assert "2 files without an answer skipped" in err and "meeting.txt" in err
    # The same notes named notes.txt are a repository's ordinary file (NOTES*, any case): excluded by name.
    _write(tmp_path, {"notes.txt": SIGNAL_LESS})
    assert any(p.endswith("/notes.txt") for p in _json_run(capsys, str(tmp_path))[1]["summary"]["excluded_paths"])


@pytest.mark.parametrize("name", [*BROKEN, "meeting.txt", "README.md", "NOTES.md"])
def test_a_named_file_is_always_audited(tmp_path, capsys, name) -> None:
    text = {**BROKEN, **ORDINARY, "meeting.txt": SIGNAL_LESS}[name]
    (path,) = _write(tmp_path, {name: text})
    code, data, err = _json_run(capsys, path)
    (result,) = data["results"]
    assert code == 1 and result["status"] == "error" and result["findings"][0]["rule"].startswith("P1")
    assert "skipped" not in data["summary"] and "skipped" not in err


def test_force_exclude_applies_the_excludes_to_named_files(tmp_path, capsys) -> None:
    """The pre-commit hook names staged files one by one: --force-exclude leaves README/NOTES out."""
    ordinary = _write(tmp_path, ORDINARY)
    assert main(["audit", "--quiet", "--force-exclude", "--isolated", *ordinary]) == 0
    assert capsys.readouterr() == ("", "")  # quiet: nothing to gate, nothing said
    assert main(["audit", "--force-exclude", "--isolated", *ordinary]) == 0
    assert "nothing to audit: every path given is excluded (4)" in capsys.readouterr().err
    honest = tmp_path / "honest.txt"
    honest.write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    code, data, _ = _json_run(capsys, "--force-exclude", *ordinary, str(honest))
    assert code == 0 and {name: status for name, (status, _) in _statuses(data).items()} == {"honest.txt": "pass"}
    assert sorted(Path(p).name for p in data["summary"]["excluded_paths"]) == sorted(ORDINARY)
    # Broken answers and failing ones are named too: they fail the hook.
    broken = _write(tmp_path, {"braces.txt": BROKEN["braces.txt"]})
    assert main(["audit", "--quiet", "--force-exclude", "--isolated", *ordinary, *broken]) == 1
    assert main(["audit", "--quiet", "--force-exclude", "--isolated", *ordinary, str(SEED_001)]) == 1
    capsys.readouterr()
    # A folder walked and found empty is still a usage error: the gate was given nothing to read.
    (tmp_path / "drafts").mkdir()
    assert main(["audit", "--force-exclude", "--isolated", str(tmp_path / "drafts")]) == 2


def test_force_exclude_and_exclude_from_a_named_config(tmp_path, capsys) -> None:
    answers = tmp_path / "answers"
    (answers / "fabricated").mkdir(parents=True)
    (answers / "fabricated" / "answer.txt").write_text(SEED_001.read_text(encoding="utf-8"), encoding="utf-8")
    (answers / "honest.txt").write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    config = _pyproject(tmp_path, '[tool.auditor]\nexclude = ["fabricated"]\nforce-exclude = true\n')
    # A config that leaves an answer out cannot do so without trace: the folder is named, in every summary.
    assert main(["audit", str(answers), "--config", str(config), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)["summary"]
    assert summary["excluded"] == 1 and summary["excluded_paths"] == [f"{(answers / 'fabricated').as_posix()}/"]
    assert "1 path excluded by include/exclude" in err and "fabricated" in err
    out_file = tmp_path / "run.jsonl"
    main(["audit", str(answers), "--config", str(config), "--format", "jsonl", "-o", str(out_file)])
    last = json.loads(out_file.read_text(encoding="utf-8").splitlines()[-1])
    assert last["summary"]["excluded"] == 1 and last["summary"]["excluded_paths"][0].endswith("fabricated/")
    # force-exclude = true applies it to the named file too; without it the named file is audited (and fails).
    named = str(answers / "fabricated" / "answer.txt")
    assert main(["audit", "--quiet", named, "--config", str(config)]) == 0
    assert main(["audit", "--quiet", named, "--isolated"]) == 1
    capsys.readouterr()


def test_a_discovered_config_cannot_force_exclude_named_files(tmp_path, capsys, monkeypatch) -> None:
    """A trusted repository-root file (one a pull request could add) with force-exclude and an exclude
    matching the answers' folder: the named answer is still audited and fails, with or without --rerun's guard."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "answer.txt").write_text(SEED_001.read_text(encoding="utf-8"), encoding="utf-8")
    _pyproject(tmp_path, '[tool.auditor]\nexclude = ["runs"]\nforce-exclude = true\n')
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "--quiet", "runs/answer.txt"]) == 1
    capsys.readouterr()
    code, data, _ = _json_run(capsys, "runs/answer.txt")
    assert code == 1 and data["config"]["policy"]["force-exclude"] == {"value": False, "source": "default"}
    assert main(["audit", "--quiet", "runs/answer.txt", "--force-exclude"]) == 0  # the command line may
    capsys.readouterr()


def test_an_answer_saved_under_an_ordinary_name_is_still_audited(tmp_path, capsys, monkeypatch) -> None:
    """NOTES* and README* are left out by name, unless the file holds a bench report: an agent cannot hide
    its failing answer by calling it notes_run2.txt, in a walk or in a hook run (--force-exclude)."""
    (tmp_path / "honest.txt").write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "notes_run2.txt").write_text(SEED_001.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "README.md").write_text('We quote p = 0.015 and "verdict": in prose.\n', encoding="utf-8")
    code, data, _ = _json_run(capsys, str(tmp_path))
    assert code == 1 and _statuses(data)["notes_run2.txt"][0] == "fail"
    assert [p.rsplit("/", 1)[-1] for p in data["summary"]["excluded_paths"]] == ["README.md"]
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "--quiet", "--force-exclude", "notes_run2.txt", "README.md"]) == 1
    capsys.readouterr()


def test_names_in_a_summary_are_capped_and_the_count_is_whole(tmp_path, capsys) -> None:
    from auditor.formats import NAMED_PATHS

    _write(tmp_path, {f"notes_{i:03}.md": "x" for i in range(NAMED_PATHS + 20)})
    _write(tmp_path, {f"data_{i:03}.txt": "plain words" for i in range(NAMED_PATHS + 5)})
    (tmp_path / "answer.txt").write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    code, data, err = _json_run(capsys, str(tmp_path), "--quiet")
    summary = data["summary"]
    assert code == 0 and summary["excluded"] == NAMED_PATHS + 20 and len(summary["excluded_paths"]) == NAMED_PATHS
    assert summary["skipped"] == NAMED_PATHS + 5 and len(summary["skipped_paths"]) == NAMED_PATHS
    assert err == ""  # --quiet with results: the notes stay in the summary
