"""``[tool.auditor]``: discovery upward, validation, and the command line over it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SEED_000, SEED_001, experiment_workspace

from auditor.cli import main
from auditor.errors import UsageError
from auditor.findings import Severity
from auditor.options import config


def _pyproject(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_discovered_upward_and_nearest_table_wins(tmp_path) -> None:
    outer = _pyproject(tmp_path, "[tool.auditor]\nalpha = 0.01\n")
    _pyproject(tmp_path / "proj", "[project]\nname = 'x'\n")  # no table: keep looking upward
    deep = tmp_path / "proj" / "a" / "b"
    deep.mkdir(parents=True)
    assert config.discover(deep) == outer
    inner = _pyproject(tmp_path / "proj" / "a", "[tool.auditor]\nalpha = 0.02\n")
    assert config.discover(deep) == inner
    assert config.load(start=deep).options.alpha == 0.02


def test_every_key_is_read(tmp_path) -> None:
    path = _pyproject(
        tmp_path,
        """
[tool.auditor]
select = ["A", "V"]
ignore = "T601, E7"
fail-on = "warning"
alpha = 0.01
mc-resamples = 20000
fdr = 0.1
include = ["*.txt"]
exclude = ["drafts"]
[tool.auditor.thresholds]
negligible-rel = 0.02
mechanism-factor = 3
[tool.auditor.per-file-ignores]
"legacy/*" = ["D5"]
[tool.auditor.severity]
t601 = "error"
""",
    )
    settings = config.resolve(config.load(path))
    o = settings.options
    assert (o.select, o.ignore, o.fail_on, o.alpha, o.mc_resamples) == (
        ("A", "V"),
        ("T601", "E7"),
        Severity.WARNING,
        0.01,
        20000,
    )
    assert (o.negligible_rel, o.mechanism_factor, o.severity_overrides) == (0.02, 3.0, {"T601": Severity.ERROR})
    assert (settings.fdr, settings.include, settings.exclude) == (0.1, ("*.txt",), ("drafts",))
    assert settings.options_for(str(tmp_path / "legacy" / "x.txt")).ignore == ("T601", "E7", "D5")


@pytest.mark.parametrize(
    "body, named",
    [
        ("[tool.auditor]\nfial-on = 'error'\n", "fial-on"),
        ("[tool.auditor.thresholds]\nnegligible = 0.1\n", "negligible"),
        ("[tool.auditor]\nalpha = 'high'\n", "alpha"),
        ("[tool.auditor]\nalpha = 2\n", "alpha"),
        ("[tool.auditor]\nfail-on = 'sometimes'\n", "fail-on"),
        ("[tool.auditor.severity]\nZ999 = 'error'\n", "Z999"),
        ("[tool.auditor\n", "pyproject.toml"),
    ],
)
def test_bad_config_is_a_usage_error_naming_the_key(tmp_path, body, named) -> None:
    _pyproject(tmp_path, body)
    with pytest.raises(UsageError, match=named):
        config.load(start=tmp_path)


def test_unknown_key_exits_2_through_the_cli(tmp_path, monkeypatch, capsys) -> None:
    _pyproject(tmp_path, "[tool.auditor]\nselekt = ['A']\n")
    monkeypatch.chdir(tmp_path)
    assert main(["audit", str(SEED_000)]) == 2
    assert "selekt" in capsys.readouterr().err


def test_config_applies_and_the_command_line_overrides_it(tmp_path, monkeypatch, capsys) -> None:
    _pyproject(tmp_path, "[tool.auditor]\nfail-on = 'warning'\nignore = ['D501']\n")
    monkeypatch.chdir(tmp_path)
    assert main(["audit", str(SEED_000)]) == 1  # its warnings fail under the config
    assert main(["audit", str(SEED_000), "--fail-on", "error"]) == 0
    assert main(["audit", str(SEED_001), "--fail-on", "error"]) == 0  # D501 ignored by the config
    assert main(["audit", str(SEED_001), "--fail-on", "error", "--ignore", "T6"]) == 1  # the CLI list replaces it
    assert main(["audit", str(SEED_000), "--isolated"]) == 0
    capsys.readouterr()


def test_explicit_config_file(tmp_path, capsys) -> None:
    path = _pyproject(tmp_path / "cfg", "[tool.auditor]\nselect = ['T601']\n")
    assert main(["audit", str(SEED_001), "--config", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {f["rule"] for f in data["results"][0]["findings"]} == {"T601"}


# -- a discovered config cannot silence the rerun (R801-R807) --------------------------------

SILENCING = """
[tool.auditor]
select = ["A", "V", "R"]
ignore = ["R", "ALL"]
extend-ignore = ["R80"]
fail-on = "never"
[tool.auditor.per-file-ignores]
"*" = ["R8"]
[tool.auditor.severity]
R802 = "info"
R804 = "warning"
R805 = "info"
"""


def _agent_folder(tmp_path: Path, experiment: str) -> Path:
    """A copy of an experiment below a folder holding a pyproject.toml the agent wrote (as in its
    pull request: not beside the answer, so it is trusted and discovered, and guarded)."""
    folder = experiment_workspace(experiment, tmp_path / "repo" / "agent")
    _pyproject(tmp_path / "repo", SILENCING)
    return folder


def _rerun_json(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["audit", *argv, "--rerun", "--device", "cpu", "--format", "json", "--quiet"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_discovered_config_cannot_ignore_or_pass_rerun_findings(tmp_path, monkeypatch, capsys) -> None:
    folder = _agent_folder(tmp_path, "injected_command")  # R802: refused, so nothing runs
    monkeypatch.chdir(folder)
    code, data, err = _rerun_json(capsys, "answer.txt", "--unsafe-no-sandbox")
    result = data["results"][0]
    r802 = [f for f in result["findings"] if f["rule"] == "R802"]
    assert code == 1 and result["status"] == "fail"
    assert r802 and r802[0]["severity"] == "error"
    config_path = str(folder.resolve().parent / "pyproject.toml")
    assert data["config"]["path"] == config_path and data["config"]["trusted"]
    assert "pyproject.toml" in err  # the note says what the discovered file could not do
    # Static rules stay under the discovered config's control.
    assert not any(f["rule"].startswith(("D", "T", "E")) for f in result["findings"])
    # The command line, or a config file named on it, may still decide.
    code, data, _ = _rerun_json(capsys, "answer.txt", "--unsafe-no-sandbox", "--fail-on", "never")
    assert code == 0 and data["results"][0]["status"] == "pass"
    assert "R802" in {f["rule"] for f in data["results"][0]["findings"]}
    code, data, _ = _rerun_json(capsys, "answer.txt", "--unsafe-no-sandbox", "--ignore", "R802")
    assert "R802" not in {f["rule"] for f in data["results"][0]["findings"]}
    code, data, _ = _rerun_json(capsys, "answer.txt", "--unsafe-no-sandbox", "--config", "../pyproject.toml")
    assert code == 0 and "R802" not in {f["rule"] for f in data["results"][0]["findings"]}
    assert data["config"]["path"] == config_path and not data["config"]["discovered"]


def test_json_and_text_name_the_config_file(tmp_path, monkeypatch, capsys) -> None:
    path = _pyproject(tmp_path, "[tool.auditor]\nalpha = 0.05\n")
    monkeypatch.chdir(tmp_path)
    assert main(["audit", str(SEED_000), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["path"] == str(path.resolve())
    assert main(["audit", str(SEED_000), "--format", "json", "--isolated"]) == 0
    isolated = json.loads(capsys.readouterr().out)["config"]
    assert isolated["path"] is None and isolated["trusted"] and isolated["ignored"] == []
    assert {entry["source"] for entry in isolated["policy"].values()} == {"default"}
    assert main(["audit", str(SEED_000)]) == 0
    assert str(path.resolve()) in capsys.readouterr().err


def test_resolve_protects_rerun_rules_from_a_discovered_config_only(tmp_path) -> None:
    path = _pyproject(tmp_path, SILENCING)
    discovered = config.load(start=tmp_path)
    explicit = config.load(path)
    assert discovered.discovered and not explicit.discovered
    guarded = config.resolve(discovered)
    free = config.resolve(explicit)
    from auditor.findings import matches

    for code in ("R801", "R804", "R805", "R807"):
        assert matches(code, guarded.options.select) and not matches(code, guarded.options.ignore)
        assert guarded.options.severity_overrides.get(code, Severity.ERROR) is Severity.ERROR
        assert not matches(code, guarded.options_for(str(tmp_path / "answer.txt")).ignore)
        assert matches(code, free.options.ignore)
    # Every other rule is ignored as the file says.
    assert matches("A307", guarded.options.ignore) and matches("V401", guarded.options.ignore)


def test_discovered_config_cannot_pass_a_real_rerun(tmp_path, monkeypatch, capsys) -> None:
    import importlib.util
    import os
    import shutil

    if not (shutil.which("bwrap") and importlib.util.find_spec("torch")) and not os.environ.get("CI"):
        pytest.skip("needs bwrap and torch (never skipped in CI)")
    folder = _agent_folder(tmp_path, "edited_numbers")
    monkeypatch.chdir(folder)
    code, data, _ = _rerun_json(capsys, "answer.txt", "--timeout", "120")
    result = data["results"][0]
    assert result["rerun"]["reproduced"] is False
    assert code == 1 and result["status"] == "fail"
    assert "R804" in {f["rule"] for f in result["findings"]}


def test_the_policy_names_where_each_value_came_from(tmp_path) -> None:
    from auditor.options.keys import validate_command_line

    path = _pyproject(
        tmp_path,
        """
[tool.auditor]
select = ["A", "V"]
ignore = ["T601"]
alpha = 0.01
[tool.auditor.thresholds]
negligible-rel = 0.02
[tool.auditor.per-file-ignores]
"legacy/*" = ["D5"]
[tool.auditor.severity]
T602 = "error"
""",
    )
    cli = validate_command_line({"extend_select": ["D"], "ignore": ["E7"], "fdr": 0.1})
    policy = config.resolve(config.load(path), cli).policy
    where = str(path.resolve())
    assert policy["alpha"] == {"value": 0.01, "source": where}
    assert policy["select"] == {"value": ["A", "V", "D"], "source": f"{where} + command line"}
    assert policy["ignore"] == {"value": ["E7"], "source": "command line"}  # --ignore replaces the file's
    assert policy["fdr"] == {"value": 0.1, "source": "command line"}
    assert policy["negligible-rel"] == {"value": 0.02, "source": where}
    assert policy["negligible-std"] == {"value": 0.1, "source": "default"}
    assert policy["per-file-ignores"] == {"value": {"legacy/*": ["D5"]}, "source": where}
    assert policy["severity"] == {"value": {"T602": "error"}, "source": where}
    assert policy["fail-on"] == {"value": "error", "source": "default"}
    from auditor.options.policy import describe

    shown = describe(config.resolve(config.load(path), cli).report())
    assert any(s.startswith("negligible-rel = 0.02 (") for s in shown)
    assert not any(s.startswith(("negligible-std", "fail-on", "resamples")) for s in shown)
