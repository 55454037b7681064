"""``--format markdown``: the job summary, through the command line, rendered by a Markdown parser."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from auditor.cli import main
from auditor.formats.markdown import MAX_DETAILED, text

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
HOSTILE = (
    "idea better (significant) <img src=x onerror=alert(1)> <script>alert(2)</script> "
    "[click](https://evil.example/x) **bold** ![i](https://evil.example/i.png) | cell break | "
    "www.evil.example https://evil.example/y `code` $x^2$ :warning: @admin &lt; # heading ~~gone~~"
)


def html_of(markdown: str) -> str:
    """What GitHub shows, near enough: CommonMark with tables and strikethrough (raw HTML allowed)."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(markdown)


def audit_markdown(paths: list[str], capsys, *extra: str) -> tuple[int, str]:
    code = main(["audit", *paths, "-q", "--format", "markdown", *extra])
    return code, capsys.readouterr().out


def test_totals_failures_first_differences_and_rule_links(capsys) -> None:
    paths = [
        str(FIXTURES / "silent/T601_interior_optimum.txt"),
        str(FIXTURES / "defects/P101_no_json.txt"),
        str(FIXTURES / "defects/D505_four_seeds_claim_significance.txt"),
    ]
    code, out = audit_markdown(paths, capsys)
    assert code == 1
    assert out.startswith("## auditor: ✗ 2 of 3 transcripts fail\n")
    assert "| transcripts | pass | fail | error | errors | warnings | infos |" in out
    assert "| 3 | 1 | 1 | 1 |" in out
    # Failures first (fail, then error); the passing one only in the closed list at the end.
    fail_at, error_at = out.index("### ✗ FAIL"), out.index("### ⚠ ERROR")
    assert fail_at < error_at < out.index("passing transcript</summary>")
    assert "D505\\_four\\_seeds" in out[fail_at:error_at]
    # Claimed beside recomputed for what differs; what agrees is not listed.
    assert "| p\\_value | 0\\.01 | 0\\.125 | [A307](docs/rules.md#a307-p-value-inconsistent)" in out
    assert "| verdict | idea better \\(significant\\) | no measurable effect | [V401]" in out
    assert "| n\\_pairs |" not in out
    # Every rule link names a heading of docs/rules.md.
    headings = re.findall(r"^### ([A-Z]\d{3}) (\S+)$", (ROOT / "docs/rules.md").read_text(encoding="utf-8"), re.M)
    anchors = {f"{code} {name}".lower().replace(" ", "-") for code, name in headings}
    linked = set(re.findall(r"\(docs/rules\.md#([a-z0-9-]+)\)", out))
    assert linked and linked <= anchors
    assert "[T601](docs/rules.md#t601-best-config-at-grid-edge) | warning | 2 | 1 |" in out
    page = html_of(out)
    assert "<table>" in page and '<a href="docs/rules.md#a307-p-value-inconsistent">A307</a>' in page


def test_a_batch_that_passes_says_so(capsys) -> None:
    code, out = audit_markdown([str(FIXTURES / "silent/T601_interior_optimum.txt")], capsys)
    assert code == 0
    assert out.startswith("## auditor: ✓ all 1 transcripts pass")
    assert "### ✗" not in out


def test_agent_text_cannot_become_markup(tmp_path: Path, capsys) -> None:
    """A verdict, a message and a file name written to inject HTML, links, images, emphasis, table
    cells, math and mentions are shown as the characters they are."""
    source = (FIXTURES / "defects/D505_four_seeds_claim_significance.txt").read_text(encoding="utf-8")
    hostile = source.replace('"verdict": "idea better (significant)"', f'"verdict": "{HOSTILE}"')
    assert hostile != source
    name = tmp_path / "a <b>x<i> [l](https:evil) *y* |z|.txt"
    name.write_text(hostile, encoding="utf-8")
    code, out = audit_markdown([str(name)], capsys)
    assert code == 1
    page = html_of(out)
    for planted in ("<img", "<script", "<strong>", "<em>", "<b>", "<del>", "<code>code", 'href="https://evil'):
        assert planted not in page, planted
    assert re.findall(r'<a href="([^"]*)"', page) == [
        href for href in re.findall(r'<a href="([^"]*)"', page) if href.startswith("docs/rules.md#")
    ]
    # The claimed verdict is one cell of its row, its text intact as text.
    row = next(line for line in out.splitlines() if line.startswith("| verdict |"))
    assert row.count(" | ") == 3
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "[click](https://evil.example/x)" in page
    assert "a &lt;b&gt;x&lt;i&gt; [l](https:evil) *y* |z|.txt" in page


def test_text_escapes_every_markup_character() -> None:
    assert text("a*b_c[d](e)<f>|g`h`$i$") == "a\\*b\\_c\\[d\\]\\(e\\)\\<f\\>\\|g\\`h\\`\\$i\\$"
    assert text("line one\nline two\r\n\tthree") == "line one line two three"
    assert text("x" * 1000).endswith("…") and len(text("x" * 1000)) == 400


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://github.com/o/auditor/blob/v0.1.0/docs/rules.md",
            "https://github.com/o/auditor/blob/v0.1.0/docs/rules.md#a307-",
        ),
        ("javascript:alert(1)//https://x", "docs/rules.md#a307-"),
        ("https://x.example/a) [evil](https://y", "docs/rules.md#a307-"),
        ("http://plain.example/rules.md", "docs/rules.md#a307-"),
    ],
)
def test_rule_docs_links_follow_a_safe_docs_url_only(monkeypatch, capsys, url: str, expected: str) -> None:
    monkeypatch.setenv("AUDITOR_DOCS_URL", url)
    _, out = audit_markdown([str(FIXTURES / "defects/A307_p_not_a_resample_estimate.txt")], capsys)
    assert f"[A307]({expected}" in out
    assert "evil" not in out


def test_a_large_batch_stays_a_summary(tmp_path: Path, capsys) -> None:
    """Past MAX_DETAILED failing transcripts only a count is written (GitHub shows 1 MiB of a summary)."""
    folder = tmp_path / "answers"
    folder.mkdir()
    for i in range(MAX_DETAILED + 3):
        shutil.copy(FIXTURES / "defects/A307_p_not_a_resample_estimate.txt", folder / f"a{i:03d}.txt")
    code, out = audit_markdown([str(folder)], capsys)
    assert code == 1
    assert out.count("### ✗ FAIL") == MAX_DETAILED
    assert "… and 3 more failing transcripts" in out
