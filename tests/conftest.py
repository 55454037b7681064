from __future__ import annotations

import importlib.util
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.audit import AuditResult, audit_bytes, audit_path
from auditor.options.models import AuditOptions

# The text format's width off a terminal (formats/text.py); pytest-xdist's workers inherit COLUMNS=80.
os.environ["COLUMNS"] = "120"

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SEED_000 = FIXTURES / "answers" / "000_28acc42565c7de9b.txt"
SEED_001 = FIXTURES / "answers" / "001_0adda411732ac938.txt"
# Test data shipped with the repository (the official SARIF 2.1.0 schema): a fresh clone is self-contained.
SHARED = ROOT / "tests" / "data"
EXPERIMENTS = FIXTURES / "experiments"
# The one bench script every torch experiment runs (regenerate.py's source of truth).  The other
# workspaces that run it carry no copy of it: experiment_workspace() completes them.
BENCH_SCRIPT = EXPERIMENTS / "clip_honest" / "bench.py"
MiB = 1024 * 1024


@pytest.fixture(autouse=True)
def _private_rerun_cache(tmp_path_factory, monkeypatch) -> None:
    """Each test reruns against an empty cache of its own: never the user's ~/.cache/auditor,
    and never a result another test left (subprocesses inherit the variable)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


# --rerun for real needs bubblewrap (and torch for the torch experiments); in CI these never skip.
needs_bubblewrap = pytest.mark.skipif(
    shutil.which("bwrap") is None and not os.environ.get("CI"), reason="needs bubblewrap (never skipped in CI)"
)
_SANDBOX_MISSING = [
    name
    for name, found in {"bwrap": shutil.which("bwrap"), "torch": importlib.util.find_spec("torch")}.items()
    if not found
]
needs_sandbox_and_torch = pytest.mark.skipif(
    bool(_SANDBOX_MISSING) and not os.environ.get("CI"),
    reason=f"needs {' and '.join(_SANDBOX_MISSING)} (never skipped in CI)",
)


def sandbox_findings(outcome: tuple[list, dict]) -> tuple[list, dict]:
    """A rerun's findings without R808's info "training not observed": the sandbox tests' scripts
    never import torch (tests/test_probe.py and tests/test_replication.py judge the probe)."""
    findings, record = outcome
    return [f for f in findings if not (f.rule == "R808" and f.severity.value == "info")], record


def codes(result: AuditResult) -> set[str]:
    return {f.rule for f in result.findings}


@pytest.fixture
def audit():
    """audit(text_or_path, **option_overrides) -> AuditResult."""

    def run(target, **overrides) -> AuditResult:
        options = AuditOptions(**overrides)
        if isinstance(target, Path):
            return audit_path(str(target), options)
        return audit_bytes(target, "<test>", options)

    return run


HEADER = "Стенд-проверка (stage-2) · промт оператора:\n\n(универсальный)\n\nОтвет агента:\n\n"


def answer_in(path: Path) -> dict:
    """A fresh, mutable copy of the JSON object of the stored transcript at ``path`` (header skipped)."""
    text = path.read_text(encoding="utf-8")
    return json.loads(text[text.index("{") :])


def seed_answer(which: str = "000") -> dict:
    """A fresh, mutable copy of a seed answer's JSON object ("000" or "001")."""
    return answer_in(SEED_000 if which == "000" else SEED_001)


def load_answer(name: str) -> dict:
    """A fresh, mutable copy of the answer of the experiment ``fixtures/experiments/<name>``."""
    return answer_in(EXPERIMENTS / name / "answer.txt")


def as_transcript(document: dict, header: str = HEADER) -> str:
    """Render a JSON object the way the pipeline stores answers."""
    return header + json.dumps(document, ensure_ascii=False)


def experiment_workspace(name: str, folder: Path) -> Path:
    """``folder``: a complete copy of the workspace ``fixtures/experiments/<name>``, ready for --rerun.

    The torch workspaces in the repository carry no copy of the bench script they
    run; the shared one (:data:`BENCH_SCRIPT`) is added where the answer names
    ``bench.py`` and the workspace has none of its own.
    """
    shutil.copytree(EXPERIMENTS / name, folder)
    if "bench.py" in load_answer(name).get("files", []) and not (folder / "bench.py").exists():
        shutil.copyfile(BENCH_SCRIPT, folder / "bench.py")
    return folder


def rules_of(findings: list) -> list[str]:
    """The rule codes of ``findings``, sorted (repeats kept)."""
    return sorted(f.rule for f in findings)


def everything_said(findings: list, record: dict) -> str:
    """All the text the auditor hands on after a rerun: the findings and the rerun record, as JSON."""
    return json.dumps([f.to_dict() for f in findings], ensure_ascii=False) + json.dumps(record, ensure_ascii=False)


@pytest.fixture(scope="module")
def warm_sandbox() -> None:
    """Find bubblewrap and probe the interpreter (it imports torch) once per module, outside the runs."""
    from auditor.rerun.device import probe_interpreter, resolve_python
    from auditor.rerun.sandbox import find_bubblewrap

    find_bubblewrap()
    probe_interpreter(resolve_python(None))


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A fresh folder on the host outside the sandbox's masked folders (in the repository), removed afterwards."""
    folder = ROOT / f".host-dir-{uuid.uuid4().hex[:8]}"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker`` (leak checks after a rerun)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


def audit_tasks(tasks: list, *, jobs: int = 1) -> list[AuditResult]:
    """Results of a pool over ``tasks``, in the order of ``tasks`` whatever ``jobs`` is."""
    from auditor.batch.executors import AuditPool

    results: list = [None] * len(tasks)
    with AuditPool(tasks, jobs=jobs) as pool:
        for index, result in pool.completed():
            results[index] = result
    return results
