"""THE TYPING GATE: mypy (configured in pyproject.toml, [tool.mypy]) passes on the package.

While the modules are brought under mypy one group at a time, the gate holds for the modules in
:data:`GATED`; set it to None to gate the whole package (``python -m mypy`` exits 0).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The modules gated: a path prefix ends in "/", anything else is one file. None: every module (the whole
# package has been under the gate since issue 33's rerun modules were typed).
GATED: tuple[str, ...] | None = None
# Not gated, though under a gated folder (none left).
NOT_GATED: frozenset[str] = frozenset()

# "path:line: error: message  [code]" (a column after the line when one is configured).
_ERROR = re.compile(r"^(?P<path>[^:\n]+?)(?::\d+)+: error: (?P<message>.*)$", re.MULTILINE)


def mypy(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m mypy`` in ``cwd``, with the configuration found there."""
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def errors(output: str) -> list[tuple[str, str]]:
    """(path, line of output) of every error mypy reported."""
    return [(match["path"].replace("\\", "/"), match.group(0)) for match in _ERROR.finditer(output)]


def gated(path: str) -> bool:
    if GATED is None:
        return True
    if path in NOT_GATED:
        return False
    return any(path.startswith(entry) if entry.endswith("/") else path == entry for entry in GATED)


def test_the_typing_gate_mypy_reports_no_error_in_the_gated_modules() -> None:
    done = mypy(ROOT)
    output = done.stdout + done.stderr
    # 0: no error; 1: errors (judged below); anything else is mypy failing to run (a bad config).
    assert done.returncode in (0, 1), output
    found = [line for path, line in errors(output) if gated(path)]
    assert not found, f"{len(found)} mypy errors in gated modules:\n" + "\n".join(found)
    if GATED is None:
        assert done.returncode == 0, output


def test_the_typing_gate_is_live(tmp_path: Path) -> None:
    """The check reads mypy's errors: a copy of the configuration over a package with a type error fails it."""
    package = tmp_path / "auditor"
    package.mkdir()
    (package / "__init__.py").write_text('def f() -> int:\n    return "one"\n', encoding="utf-8")
    (package / "errors.py").write_text("x: int = 1\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8")
    done = mypy(tmp_path, "--cache-dir", str(tmp_path / ".mypy_cache"))
    found = errors(done.stdout)
    assert done.returncode == 1, done.stdout + done.stderr
    assert [path for path, _ in found] == ["auditor/__init__.py"] and "[return-value]" in found[0][1]
    assert all(
        gated(path) for path in ("auditor/__init__.py", "auditor/batch/session.py", "auditor/rerun/probe/hook.py")
    )
