"""The Containerfile: built and run where docker or podman works, skipped with the reason elsewhere.

The build takes minutes (torch), so it runs once per session; the runs use the flags
docs/container.md documents, and a rerun inside the image must run its sandbox (bubblewrap in a
user namespace), not fall back to running unsandboxed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "auditor-test:latest"
DOCS = ROOT / "docs" / "container.md"


def _engine() -> tuple[str | None, str]:
    """(docker or podman, "") when one answers ``info``; else (None, why not)."""
    reasons = []
    for name in ("podman", "docker"):
        path = shutil.which(name)
        if path is None:
            reasons.append(f"no {name} on PATH")
            continue
        probe = subprocess.run([path, "info"], capture_output=True, text=True, timeout=60)
        if probe.returncode == 0:
            return path, ""
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        reasons.append(f"`{name} info` fails: {last}")
    return None, "; ".join(reasons)


def _documented_flags(engine: str) -> list[str]:
    """The security flags docs/container.md gives for ``--rerun`` with this engine."""
    name = Path(engine).name
    text = DOCS.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith(f"{name} run ") and "--rerun" in line)
    return re.findall(r"--security-opt \S+|--cap-add \S+", line)


def test_the_docs_give_a_run_line_for_docker_and_podman() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in ("docker", "podman"):
        assert re.search(rf"^{name} run .*--rerun", text, re.M), name
        assert re.search(rf"^{name} build .*-f Containerfile", text, re.M), name
    source = (ROOT / "Containerfile").read_text(encoding="utf-8")
    assert re.search(r"^USER auditor$", source, re.M)  # not root
    assert "bubblewrap" in source and "slim" in source


@pytest.fixture(scope="module")
def engine() -> str:
    found, why = _engine()
    if found is None:
        pytest.skip(f"needs a working docker or podman to build the image: {why}")
    build = subprocess.run(
        [found, "build", "-f", "Containerfile", "-t", IMAGE, "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    return found


def _run(engine: str, *args: str, flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    mount = f"{ROOT / 'fixtures'}:/work/fixtures:ro"
    return subprocess.run(
        [engine, "run", "--rm", *flags, "-v", mount, IMAGE, *args], capture_output=True, text=True, timeout=900
    )


def test_the_image_audits_as_a_non_root_user(engine: str) -> None:
    whoami = subprocess.run([engine, "run", "--rm", "--entrypoint", "id", IMAGE, "-u"], capture_output=True, text=True)
    assert whoami.stdout.strip() == "10001"
    ran = _run(engine, "audit", "fixtures/defects/A307_p_not_a_resample_estimate.txt", "--format", "json")
    assert ran.returncode == 1
    assert any(f["rule"] == "A307" for f in json.loads(ran.stdout)["results"][0]["findings"])


def test_a_rerun_runs_sandboxed_with_the_documented_flags(engine: str) -> None:
    flags = tuple(_documented_flags(engine))
    ran = _run(
        engine,
        "audit",
        "fixtures/experiments/clip_honest/answer.txt",
        "--rerun",
        "--device",
        "cpu",
        "--format",
        "json",
        flags=flags,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    rerun = json.loads(ran.stdout)["results"][0]["rerun"]
    assert rerun["reproduced"] is True
