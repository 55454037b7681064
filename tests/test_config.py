"""``[tool.auditor]``: discovery upward, validation, and the command line over it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor import config
from auditor.cli import main
from auditor.errors import UsageError
from auditor.findings import Severity

from conftest import SEED_000, SEED_001


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
    assert config.load(start=deep).alpha == 0.02


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
    assert (o.select, o.ignore, o.fail_on, o.alpha, o.mc_resamples) == (("A", "V"), ("T601", "E7"), Severity.WARNING, 0.01, 20000)
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
