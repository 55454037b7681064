"""``--format html``: a self-contained page, checked by parsing it and by rendering it in headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from auditor.cli import main

from conftest import FIXTURES, as_transcript, seed_answer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(not CHROMIUM and not os.environ.get("CI"), reason="needs chromium (never skipped in CI)")
HOSTILE_VERDICT = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _render(capsys, *paths: str) -> tuple[int, str]:
    code = main(["audit", *paths, "--format", "html", "--quiet"])
    return code, capsys.readouterr().out


@pytest.fixture
def hostile_answer(tmp_path: Path) -> Path:
    answer = seed_answer()
    answer["bench_report"]["comparison"]["verdict"] = HOSTILE_VERDICT
    path = tmp_path / "<b>hostile<img src=x onerror=alert(1)>.txt"
    path.write_text(as_transcript(answer), encoding="utf-8")
    return path


def test_one_section_and_one_overview_row_per_transcript(capsys) -> None:
    paths = sorted(str(p) for p in (FIXTURES / "answers").iterdir())
    code, html = _render(capsys, *paths)
    assert code == 1  # seed 001 fails
    tags = _tags(html)
    assert sum(1 for t, _ in tags if t == "details") == len(paths)
    assert sum(1 for t, a in tags if t == "a" and a.get("href", "").startswith("#t")) == len(paths)
    assert "D501" in html and 'id="rule-D501"' in html
    assert "0.015625" in html


def test_agent_text_is_escaped(capsys, hostile_answer: Path) -> None:
    _, html = _render(capsys, str(hostile_answer))
    tags = _tags(html)
    assert not [t for t, _ in tags if t in ("script", "img", "b")]
    assert not [a for _, a in tags if any(k.startswith("on") for k in a)]
    assert "&lt;script&gt;" in html


def _chromium(*args: str, profile: Path) -> str:
    command = [
        CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@needs_chromium
def test_chromium_renders_the_report_and_runs_no_agent_code(capsys, hostile_answer: Path, tmp_path: Path) -> None:
    _, html = _render(capsys, str(FIXTURES / "answers" / "000_28acc42565c7de9b.txt"), str(hostile_answer))
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    dom = _chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile")
    assert "pwned" not in dom.split("</title>")[0]  # no agent script changed the title
    assert "<script" not in dom.lower()
    assert "auditor report" in dom and "PASS" in dom and "FAIL" in dom
    shot = tmp_path / "report.png"
    _chromium(f"--screenshot={shot}", "--window-size=1280,900", page.as_uri(), profile=tmp_path / "profile2")
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one
    if os.environ.get("AUDITOR_KEEP_SCREENSHOT"):
        shutil.copy(shot, os.environ["AUDITOR_KEEP_SCREENSHOT"])
