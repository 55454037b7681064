"""Issue 30, break 2: a discovered ``pyproject.toml`` the audited agent could have written is not read.

The answer below claims "idea better (significant)" with an exact p of 0.156: V401 fails it at the
default alpha 0.05 and it passes at alpha 0.5, so a planted ``alpha = 0.5`` decides the verdict
unless the file is ignored.  Every test drives the real CLI over real files, uids and modes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SEED_000, as_transcript, seed_answer

from auditor.cli import main
from auditor.options.trust import BESIDE, INSIDE, Audited, untrusted

sys.path.insert(0, str(ROOT / "fixtures" / "generators"))
from consistent import rewrite_statistics, stats_block  # noqa: E402

NOBODY = 65534


def _significant_only_at_half() -> str:
    """Seed 000 with two seeds turned into losses (5/8 wins, p = 0.156), still claiming significance."""
    answer = seed_answer()
    report = answer["bench_report"]
    baseline, idea = stats_block(report, "baseline")["per_seed"], list(stats_block(report, "idea")["per_seed"])
    idea[0], idea[2] = baseline[0] + 0.006, baseline[2] + 0.004
    answer = rewrite_statistics(answer, idea=idea)
    answer["bench_report"]["comparison"].update(verdict="idea better (significant)", system_worked=True)
    answer.update(worked=True, system_verdict="worked", practical_verdict="helps")
    return as_transcript(answer)


CLAIM = _significant_only_at_half()


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _answers(tmp_path: Path, config: str = "[tool.auditor]\nalpha = 0.5\n") -> Path:
    """``repo/answers/claim.txt`` with the agent's ``pyproject.toml`` beside it."""
    answers = tmp_path / "repo" / "answers"
    _write(answers / "claim.txt", CLAIM)
    _write(answers / "pyproject.toml", config)
    return answers


def _json(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["audit", *argv, "--format", "json", "--quiet"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _rules(data: dict) -> set[str]:
    return {f["rule"] for r in data["results"] for f in r["findings"]}


@pytest.mark.parametrize(
    "cwd, argv, reason",
    [
        (".", ["claim.txt"], BESIDE),  # run in the answer's folder
        (".", ["."], BESIDE),  # the answers folder named
        ("work", ["../claim.txt"], BESIDE),  # found upward from a folder below the answers
        ("work", [".."], INSIDE),  # planted below the folder named for audit
        ("work", ["../claim.txt"], INSIDE),  # planted below the named answer's folder (its workspace)
    ],
    ids=["answer-folder", "folder-named", "found-upward", "below-named-folder", "below-named-file"],
)
def test_a_planted_alpha_is_ignored_and_the_verdict_still_fails(
    tmp_path, monkeypatch, capsys, cwd, argv, reason
) -> None:
    answers = _answers(tmp_path)
    (answers / "work").mkdir()
    planted = answers / "pyproject.toml"
    if reason == INSIDE:  # in a folder with no transcript, below the one named or the named file's
        planted = planted.rename(answers / "work" / "pyproject.toml")
    monkeypatch.chdir(answers / cwd)
    code, data, err = _json(capsys, *argv)
    assert code == 1 and data["results"][0]["status"] == "fail" and "V401" in _rules(data)
    config = data["config"]
    assert config["trusted"] is False and config["path"] is None
    assert config["ignored"] == [{"path": str(planted.resolve()), "reason": reason}]
    assert config["policy"]["alpha"] == {"value": 0.05, "source": "default"}
    assert f"auditor: ignoring {planted.resolve()}: {reason}; name it with --config to use it" in err


def test_the_same_file_named_with_config_applies(tmp_path, monkeypatch, capsys) -> None:
    answers = _answers(tmp_path)
    monkeypatch.chdir(answers)
    code, data, err = _json(capsys, "claim.txt", "--config", "pyproject.toml")
    assert code == 0 and data["results"][0]["status"] == "pass" and "V401" not in _rules(data)
    config = data["config"]
    assert config["path"] == str(answers.resolve() / "pyproject.toml")
    assert (config["discovered"], config["trusted"], config["ignored"]) == (False, True, [])
    assert config["policy"]["alpha"] == {"value": 0.5, "source": str(answers.resolve() / "pyproject.toml")}
    assert "ignoring" not in err
    # The text format's header names the file and its non-default values.
    assert main(["audit", "claim.txt", "--config", "pyproject.toml"]) == 0
    assert "alpha = 0.5 (pyproject.toml)" in capsys.readouterr().err


def test_a_planted_exclude_does_not_hide_a_fabricated_answer(tmp_path, monkeypatch, capsys) -> None:
    answers = _answers(tmp_path, '[tool.auditor]\nexclude = ["fabricated"]\n')
    _write(answers / "honest.txt", SEED_000.read_text(encoding="utf-8"))
    _write(answers / "fabricated" / "answer.txt", CLAIM)
    (answers / "claim.txt").unlink()
    monkeypatch.chdir(answers)
    code, data, err = _json(capsys, ".")
    sources = {Path(r["source"]).as_posix(): r["status"] for r in data["results"]}
    assert sources == {"fabricated/answer.txt": "fail", "honest.txt": "pass"}
    assert code == 1 and data["config"]["policy"]["exclude"] == {"value": [], "source": "default"}
    assert "ignoring" in err and data["config"]["trusted"] is False


def _elsewhere(tmp_path: Path) -> tuple[Path, Path]:
    """A config in the working directory and the answer in another folder: trusted by place."""
    config = _write(tmp_path / "cwd" / "pyproject.toml", "[tool.auditor]\nalpha = 0.5\n")
    answer = _write(tmp_path / "answers" / "claim.txt", CLAIM)
    return config, answer


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_a_config_owned_by_another_user_is_ignored(tmp_path, monkeypatch, capsys) -> None:
    config, answer = _elsewhere(tmp_path)
    monkeypatch.chdir(config.parent)
    assert _json(capsys, str(answer))[0] == 0  # the auditor's own file applies
    os.chown(config, NOBODY, NOBODY)
    code, data, err = _json(capsys, str(answer))
    assert code == 1 and "V401" in _rules(data)
    why = data["config"]["ignored"][0]["reason"]
    assert f"owned by uid {NOBODY}" in why and why in err


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_a_link_owned_by_another_user_is_ignored(tmp_path, monkeypatch, capsys) -> None:
    config, answer = _elsewhere(tmp_path)
    real = config.rename(tmp_path / "real.toml")
    config.symlink_to(real)
    os.lchown(config, NOBODY, NOBODY)
    monkeypatch.chdir(config.parent)
    code, data, _ = _json(capsys, str(answer))
    assert code == 1 and "the link to it is owned by uid 65534" in data["config"]["ignored"][0]["reason"]


@pytest.mark.parametrize(
    "file_mode, folder_mode, ignored",
    [
        (0o644, 0o755, None),
        (0o666, 0o755, "group or others can write to it (mode 0666)"),
        (0o664, 0o755, "group or others can write to it (mode 0664)"),
        (0o644, 0o777, "group or others can write to its folder (mode 0777)"),
        (0o644, 0o1777, None),  # sticky, as /tmp: others cannot replace a file they do not own
    ],
    ids=["private", "file-0666", "file-0664", "folder-0777", "folder-sticky"],
)
def test_a_config_others_can_write_is_ignored(tmp_path, monkeypatch, capsys, file_mode, folder_mode, ignored) -> None:
    config, answer = _elsewhere(tmp_path)
    config.chmod(file_mode)
    config.parent.chmod(folder_mode)
    monkeypatch.chdir(config.parent)
    code, data, err = _json(capsys, str(answer))
    if ignored is None:
        assert code == 0 and data["config"]["trusted"] and data["config"]["policy"]["alpha"]["value"] == 0.5
        assert "ignoring" not in err
    else:
        assert code == 1 and ignored in data["config"]["ignored"][0]["reason"] and ignored in err


def test_the_repository_root_config_applies_to_a_run_there(tmp_path, monkeypatch, capsys) -> None:
    repo = tmp_path / "repo"
    root_config = _write(repo / "pyproject.toml", "[tool.auditor]\nalpha = 0.1\nfail-on = 'warning'\n")
    _write(repo / "answers" / "claim.txt", CLAIM)
    _write(repo / "README.md", "# experiments\n")  # a repository's ordinary files: no transcripts
    _write(repo / "requirements.txt", "torch\n")
    monkeypatch.chdir(repo)
    code, data, err = _json(capsys, ".")
    config = data["config"]
    assert code == 1 and (config["path"], config["discovered"], config["trusted"]) == (
        str(root_config.resolve()),
        True,
        True,
    )
    assert config["policy"]["alpha"] == {"value": 0.1, "source": str(root_config.resolve())}
    assert config["policy"]["fail-on"] == {"value": "warning", "source": str(root_config.resolve())}
    assert config["policy"]["fdr"] == {"value": 0.05, "source": "default"}
    assert "ignoring" not in err
    # The command line over the file, and the text header naming both.
    code, data, _ = _json(capsys, ".", "--alpha", "0.2")
    assert data["config"]["policy"]["alpha"] == {"value": 0.2, "source": "command line"}
    main(["audit", ".", "--extend-ignore", "T601"])
    assert (
        "alpha = 0.1 (pyproject.toml), fail-on = warning (pyproject.toml), ignore = [T601] (command line)"
        in capsys.readouterr().err
    )
    # A transcript at the root itself puts the root's file beside the answers.
    _write(repo / "late_answer.txt", CLAIM)
    code, data, _ = _json(capsys, ".")
    assert data["config"]["ignored"][0]["path"] == str(root_config.resolve())
    assert data["config"]["policy"]["alpha"] == {"value": 0.05, "source": "default"}


def test_an_ignored_file_leaves_the_trusted_one_above_in_effect(tmp_path, monkeypatch, capsys) -> None:
    answers = _answers(tmp_path)
    root_config = _write(answers.parent / "pyproject.toml", "[tool.auditor]\nfail-on = 'warning'\n")
    monkeypatch.chdir(answers)
    code, data, _ = _json(capsys, "claim.txt")
    config = data["config"]
    assert code == 1 and config["path"] == str(root_config.resolve()) and config["trusted"] is False
    assert config["policy"]["fail-on"]["source"] == str(root_config.resolve())
    assert config["policy"]["alpha"]["source"] == "default"


def test_untrusted_files_that_are_no_config_are_passed_over(tmp_path, monkeypatch, capsys) -> None:
    # An experiment's own pyproject.toml beside the answer is not a configuration: no note.
    answers = _answers(tmp_path, "[project]\nname = 'experiment'\n")
    monkeypatch.chdir(answers)
    code, data, err = _json(capsys, "claim.txt")
    assert code == 1 and data["config"]["trusted"] and "ignoring" not in err
    # A broken one beside the answer is left unread: no usage error the agent could cause.
    _write(answers / "pyproject.toml", "[tool.auditor\nalpha = 0.5\n")
    code, data, err = _json(capsys, "claim.txt")
    assert code == 1 and "V401" in _rules(data) and "ignoring" in err
    # The same broken file where it is trusted is a usage error, as ever.
    (answers / "pyproject.toml").rename(answers.parent / "pyproject.toml")
    assert main(["audit", "claim.txt", "--quiet"]) == 2
    assert "cannot read config" in capsys.readouterr().err


def test_a_rerun_workspace_holds_no_trusted_config(tmp_path) -> None:
    config, answer = _elsewhere(tmp_path)
    assert untrusted(config, Audited([str(answer)])) is None
    assert untrusted(config, Audited([str(answer)], workspace=str(config.parent))) == BESIDE


def test_every_machine_format_records_the_policy(tmp_path, monkeypatch, capsys) -> None:
    answers = _answers(tmp_path)
    monkeypatch.chdir(answers)
    # Discovered and ignored: SARIF run properties and the jsonl summary line say so.
    main(["audit", "claim.txt", "--format", "sarif", "--quiet"])
    props = json.loads(capsys.readouterr().out)["runs"][0]["properties"]
    assert props["config"]["trusted"] is False and props["config"]["policy"]["alpha"]["value"] == 0.05
    main(["audit", "claim.txt", "--format", "jsonl", "--quiet"])
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["config"]["ignored"][0]["path"] == str(answers.resolve() / "pyproject.toml")
    # Named with --config: the policy and its source in SARIF, and in the HTML header.
    main(["audit", "claim.txt", "--config", "pyproject.toml", "--format", "sarif", "--quiet"])
    props = json.loads(capsys.readouterr().out)["runs"][0]["properties"]
    assert props["config"]["policy"]["alpha"] == {"value": 0.5, "source": str(answers.resolve() / "pyproject.toml")}
    pytest.importorskip("matplotlib")
    main(["audit", "claim.txt", "--config", "pyproject.toml", "--format", "html", "--quiet"])
    assert "Policy not at its default: alpha = 0.5 (pyproject.toml)" in capsys.readouterr().out
    main(["audit", "claim.txt", "--format", "html", "--quiet"])
    page = capsys.readouterr().out
    assert "⚠ ignoring " in page and "it sits beside the transcripts under audit" in page
