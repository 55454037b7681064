"""The pipeline's import direction, as the import-linter contracts in pyproject.toml state it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"


def _lint() -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LINT], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    assert len(contracts) >= 3
    done = _lint()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(contracts)} kept, 0 broken." in done.stdout


def test_a_forbidden_import_breaks_a_contract(tmp_path) -> None:
    """The check is live: a rule that imports the CLI is reported (a copy of the package, the import added)."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "auditor", copy / "auditor", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    rule = copy / "auditor" / "rules" / "effect.py"
    rule.write_text(rule.read_text(encoding="utf-8") + "\nfrom ..cli import main  # noqa\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", LINT], cwd=copy, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"})
    assert done.returncode != 0
    assert "auditor.rules is not allowed to import auditor.cli" in done.stdout
