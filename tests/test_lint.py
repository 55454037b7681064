"""ruff's lint and format checks hold for the whole repository (configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_passes(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_reports_a_violation(tmp_path) -> None:
    """The check is live: an unused import and unformatted code in a copy are reported."""
    bad = tmp_path / "auditor" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("import os\nx=( 1,\n  2)\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8")
    lint = subprocess.run([sys.executable, "-m", "ruff", "check"], cwd=tmp_path, capture_output=True, text=True)
    fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check"], cwd=tmp_path, capture_output=True, text=True
    )
    assert lint.returncode == 1 and "F401" in lint.stdout
    assert fmt.returncode == 1 and "bad.py" in fmt.stdout + fmt.stderr
