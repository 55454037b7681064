"""The shipped pre-commit hook, run by the real pre-commit client on a scratch repository.

``pre-commit try-repo`` clones the hook repository at a commit and installs it into a fresh
virtualenv, as a user's ``pre-commit run`` does.  The hook repository is a committed copy of
this working tree's package, manifest and build files: try-repo on the working tree itself
would take HEAD plus tracked changes only (its shadow repository runs ``git add -u``), not a
module added but not yet committed.  The hook's virtualenv sees the installed dependencies
(``VIRTUALENV_SYSTEM_SITE_PACKAGES``) and builds without isolation, so no wheel is fetched.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SEED_000, SEED_001

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("pre_commit") is None, reason="needs pre-commit (pip install -e '.[test]' installs it)"
    ),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

GIT = ["git", "-c", "user.name=auditor-test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]

FILES = {
    "answers/honest.txt": SEED_000.read_text(encoding="utf-8"),
    "answers/failing.txt": SEED_001.read_text(encoding="utf-8"),  # D501: fails the gate
    "answers/garbage.txt": "Ответ агента:\n\n{{{{{{{{{{}}}\n",  # an answer no decoder reads
    "README.md": "# Sweep\n\nThe best run reached p = 0.015.\n",
    "NOTES.md": "Seed sweep: 7/8 wins, looks promising.\n",
    "requirements.txt": "numpy>=1.24\n",
}


def _commit_all(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run([*GIT, "-C", str(folder), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(folder), "commit", "-q", "-m", "scratch"], check=True)


def _hook_repository(folder: Path) -> Path:
    """A committed copy of what the hook installs: the package, its build files and the manifest."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "auditor", folder / "auditor", ignore=ignore)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, folder / name)
    _commit_all(folder)
    return folder


@pytest.fixture(scope="module")
def repositories(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("precommit")
    hook = _hook_repository(base / "hook")
    scratch = base / "scratch"
    for name, text in FILES.items():
        (scratch / name).parent.mkdir(parents=True, exist_ok=True)
        (scratch / name).write_text(text, encoding="utf-8")
    _commit_all(scratch)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(base / "pre-commit-home"),
        "VIRTUALENV_SYSTEM_SITE_PACKAGES": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip reads this negated option inverted: 0 turns isolation off
        "NO_COLOR": "1",
    }
    env.pop("PRE_COMMIT_ALLOW_NO_CONFIG", None)
    return hook, scratch, env


def _try_repo(repositories, *selection: str) -> subprocess.CompletedProcess[str]:
    hook, scratch, env = repositories
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook), "auditor", "--color", "never", *selection],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_hook_fails_on_failing_and_broken_answers_only(repositories) -> None:
    run = _try_repo(repositories, "--all-files")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "Failed" in out and "garbage.txt" in out and "P101" in out and "failing.txt" in out, out
    # README quoting "p = 0.015" and NOTES with "7/8 wins" are excluded by name (--force-exclude).
    assert "README.md" not in out and "NOTES.md" not in out and "requirements.txt" not in out, out


def test_the_hook_passes_an_honest_answer_beside_ordinary_files(repositories) -> None:
    run = _try_repo(repositories, "--files", "answers/honest.txt", "README.md", "NOTES.md", "requirements.txt")
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "Passed" in out, out
