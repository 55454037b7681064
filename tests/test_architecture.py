"""The pipeline's import direction, as the import-linter contracts in pyproject.toml state it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"


def _lint() -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LINT], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
        "contracts"
    ]
    assert [c["type"] for c in contracts] == ["layers"]
    done = _lint()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(contracts)} kept, 0 broken." in done.stdout


@pytest.mark.parametrize(
    ("module", "imported"),
    [
        ("rules/effect.py", "auditor.cli"),  # a rule reaching up to the command line
        ("stats/summary.py", "auditor.answer.model"),  # the statistics and the answer are independent
        ("formats/json.py", "auditor.audit"),  # an output format that audits
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path, module, imported) -> None:
    """The check is live: a copy of the package with one import added is reported."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "auditor", copy / "auditor", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    path = copy / "auditor" / module
    path.write_text(path.read_text(encoding="utf-8") + f"\nimport {imported}  # noqa\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", LINT],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode != 0
    dotted = "auditor." + module.removesuffix(".py").replace("/", ".")
    assert f"{dotted} -> {imported}" in done.stdout, done.stdout
