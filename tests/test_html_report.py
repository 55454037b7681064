"""``--format html``: a self-contained page, checked by parsing it and by rendering it in headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, as_transcript, seed_answer

from auditor.audit import audit_bytes, audit_path
from auditor.cli import main
from auditor.formats import Run
from auditor.formats.charts import null_chart, null_means, transcript_charts
from auditor.formats.html import render
from auditor.formats.html_data import ChartInputs, chart_inputs
from auditor.formats.html_markdown import render_markdown
from auditor.options.models import AuditOptions

# The HTML format asks the audit to keep what its charts draw (auditor.figures).
FIGURES = AuditOptions(figure_data=True)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM and not os.environ.get("CI"), reason="needs chromium (never skipped in CI)"
)
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
    answer["verdict"] = HOSTILE_VERDICT + " $\\frac{1}{0}$"
    path = tmp_path / "<b>hostile<img src=x onerror=alert(1)>.txt"
    path.write_text(as_transcript(answer), encoding="utf-8")
    return path


DEFECTS = FIXTURES / "defects"
ANSWERS = sorted(str(p) for p in (FIXTURES / "answers").iterdir())  # 000 passes, 001 fails (D501)
BATCH = [*ANSWERS, str(DEFECTS / "A307_p_not_a_resample_estimate.txt"), str(DEFECTS / "P101_no_json.txt")]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    """One report of a small batch through the CLI, shared by the structure tests (drawing takes seconds)."""
    out = tmp_path_factory.mktemp("html") / "report.html"
    assert main(["audit", *BATCH, "--format", "html", "--quiet", "-o", str(out)]) == 1
    return out.read_text(encoding="utf-8")


def _section(html: str, name: str) -> str:
    """The transcript section (<details id="tK">) whose file name contains ``name``."""
    chunks = [c for c in html.split('<details id="t')[1:] if name in c.split("</summary>")[0].replace("<wbr>", "")]
    assert len(chunks) == 1, name
    return chunks[0]


def _row(html: str, header: str) -> str:
    start = html.index(f"<th>{header}</th>")
    return html[html.rindex("<tr", 0, start) : html.index("</tr>", start)]


def test_one_section_and_one_overview_row_per_transcript(page: str) -> None:
    tags = _tags(page)
    assert sum(1 for t, a in tags if t == "details" and a.get("id", "").startswith("t")) == len(BATCH)
    assert sum(1 for t, a in tags if t == "a" and a.get("href", "").startswith("#t")) == len(BATCH)
    assert "D501" in page and 'id="rule-D501"' in page
    assert "0.015625" in page


def test_agent_text_is_escaped(capsys, hostile_answer: Path) -> None:
    _, html = _render(capsys, str(hostile_answer))
    tags = _tags(html)
    assert not [t for t, _ in tags if t in ("script", "img", "b")]
    assert not [a for _, a in tags if any(k.startswith("on") for k in a)]
    assert "&lt;script&gt;" in html
    assert "The agent's verdict:</strong> &lt;script&gt;" in html  # the answer's own sentence, quoted and escaped
    assert "&lt;b&gt;hostile&lt;img" in html  # the file name


def _chromium(*args: str, profile: Path) -> str:
    command = [
        CHROMIUM or "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
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


DEFECTS = FIXTURES / "defects"


def _svg_charts(tags: list[tuple[str, dict]]) -> list[dict]:
    return [a for t, a in tags if t == "svg" and a.get("role") == "img"]


def test_four_titled_charts_per_transcript_and_batch_charts(page: str) -> None:
    html = page
    charts = _svg_charts(_tags(html))
    labels = [a["aria-label"] for a in charts]
    assert len(charts) >= 4 * 3 + 2  # three transcripts with per-seed data (P101 has none), FDR and rules charts
    assert all(label and f"<title>{label}</title>" in html for label in labels)
    assert sum("Per-seed values" in label for label in labels) == 3
    for name in ("000_", "001_", "A307_"):
        assert _section(html, name).count('role="img"') == 4
    assert 'role="img"' not in _section(html, "P101_")
    assert any("Benjamini-Hochberg" in label for label in labels)
    assert any("Findings per rule" in label for label in labels)
    # D501: the idea's points lie on the baseline's, and the title says so.
    assert any("idea = baseline on all 8 seeds (points overlap)" in label for label in labels)
    assert "<script" not in html.lower()


def test_failures_first_with_their_rules(page: str) -> None:
    html = page
    overview = html[
        html.index('<table class="overview">') : html.index("</table>", html.index('<table class="overview">'))
    ]
    assert overview.index("001_") < overview.index("A307_") < overview.index("P101_") < overview.index("000_")
    first_row = overview[overview.index("<tbody>") : overview.index("</tr>", overview.index("<tbody>"))]
    assert "FAIL" in first_row and "D501" in first_row
    assert first_row.index("D501") < first_row.index("T601")  # errors before warnings


def test_disputed_numbers_are_marked_by_symbol_and_words(page: str) -> None:
    row = _row(_section(page, "A307_"), "p_value")
    assert 'class="differs"' in row and "✗ differs" in row and "#rule-A307" in row
    assert "differs" not in _row(_section(page, "A307_"), "delta_mean")
    assert "✗ 0.0462" in page  # the overview's claimed p too


def test_an_accepted_estimate_is_not_marked(page: str) -> None:
    section = _section(page, "000_")
    row = _row(section, "p_value")
    assert "differs" not in row and "≈ accepted" in row  # 0.01475 is an honest Monte-Carlo estimate of 0.015625
    assert "✓ same" in _row(section, "n_pairs")


def test_filters_by_status_and_rule_are_css_only(page: str) -> None:
    html = page
    assert "#only-fail:target~main .item:not(.s-fail){display:none}" in html
    assert "#only-D501:target~main .item:not(.r-D501){display:none}" in html
    assert 'href="#only-fail"' in html and 'href="#only-D501"' in html
    tags = _tags(html)
    failing = [a["class"].split() for t, a in tags if t == "tr" and "s-fail" in a.get("class", "").split()]
    assert len(failing) == 2 and "r-D501" in failing[0] and "r-A307" in failing[1]
    assert "<script" not in html.lower()


def test_rule_docs_are_rendered_not_raw_markdown(page: str) -> None:
    docs = page[page.index('id="rule-D501"') :]
    assert "<h4>What it does</h4>" in docs and "## What it does" not in docs


def test_markdown_subset_escapes_everything() -> None:
    out = render_markdown("Title\n\n## Head <b>\n- item `<i>`\n```json\n<script>x</script>\n```\ntext & <img>")
    assert "<h4>Head &lt;b&gt;</h4>" in out
    assert "<li>item <code>&lt;i&gt;</code></li>" in out
    assert "<pre><code>&lt;script&gt;x&lt;/script&gt;</code></pre>" in out
    assert "text &amp; &lt;img&gt;" in out


def test_the_null_is_the_exact_enumeration_the_p_value_counts() -> None:
    result = audit_path(str(FIXTURES / "answers" / "000_28acc42565c7de9b.txt"), FIGURES)
    data = chart_inputs(result)
    assert data is not None
    d = data.idea - data.baseline
    null, exact = null_means(d)
    assert exact and null.size == 2**8
    share = np.mean(np.abs(null) >= abs(d.mean()) * (1 - 1e-12))
    assert share == result.recomputed["p_value"] == 0.015625


def test_above_twenty_seeds_the_null_is_drawn_and_the_title_says_so() -> None:
    rng = np.random.default_rng(1)
    baseline = rng.normal(10, 1, 25)
    data = ChartInputs(baseline=baseline, idea=baseline - 0.1, lower_is_better=True)
    chart = null_chart(data, {"p_value": 6e-8}, {"p_value": 0.01}, "t")
    assert "randomized, 20,000 draws" in chart.title and 'role="img"' in chart.svg


def test_ten_thousand_seeds_draw_a_subset_and_say_so() -> None:
    from dataclasses import replace

    n = 10_000
    baseline = np.random.default_rng(2).normal(10, 1, n)
    data = ChartInputs(baseline=baseline, idea=baseline + np.where(np.arange(n) % 3, -0.01, 0.02), lower_is_better=True)
    charts = transcript_charts(
        0,
        data,
        replace(
            audit_path(str(FIXTURES / "answers" / "000_28acc42565c7de9b.txt"), FIGURES),
            recomputed={"mde": 0.001, "p_value": 1e-5},
        ),
    )
    assert "(100 of 10000 drawn)" in charts[0].title and "(100 of 10000 drawn)" in charts[1].title
    assert "randomized, 2,000 draws" in charts[2].title
    assert all(len(chart.svg) < 40_000 for chart in charts)  # bounded whatever n is


def test_rerun_values_are_drawn_and_tabled_when_recorded() -> None:
    from dataclasses import replace

    result = audit_path(str(FIXTURES / "answers" / "000_28acc42565c7de9b.txt"), FIGURES)
    data = chart_inputs(result)
    rerun = {
        "reproduced": True,
        "device": "cpu",
        "seconds": 3.0,
        "cached": True,
        "baseline": list(data.baseline + 0.001),
        "idea": list(data.idea + 0.001),
        "p_value": 0.0078125,
    }
    html = render(Run((replace(result, rerun=rerun),)))
    assert "rerun hollow, dashed" in html and "<th>rerun idea</th>" in html
    assert "✓ reproduced" in html and "(from the rerun cache)" in html and "rerun p = 0.0078125" in html
    # A record without the per-seed lists (an older rerun) still renders, without them.
    bare = {"reproduced": False, "device": "cpu", "seconds": 1.0}
    html = render(Run((replace(result, rerun=bare),)))
    assert "✗ NOT reproduced" in html and "<th>rerun idea</th>" not in html and "rerun hollow" not in html


def test_file_names_break_only_after_separators(page: str) -> None:
    assert "000_<wbr>28acc42565c7de9b.<wbr>txt" in page
    assert "A307_<wbr>p_<wbr>not_<wbr>a_<wbr>resample_<wbr>estimate.<wbr>txt" in page


def test_charts_draw_what_was_audited_never_the_file_again(tmp_path: Path) -> None:
    assert (
        chart_inputs(audit_path(str(DEFECTS / "S203_unknown_key.txt"), FIGURES)) is not None
    )  # a warning is no obstacle
    answer = seed_answer()
    path = tmp_path / "answer.txt"
    path.write_text(as_transcript(answer), encoding="utf-8")
    result = audit_path(str(path), FIGURES)
    audited = chart_inputs(result)
    answer["bench_report"]["baseline"]["full"]["per_seed"][0] += 1.0  # edited after the audit
    path.write_text(as_transcript(answer), encoding="utf-8")
    assert np.array_equal(chart_inputs(result).baseline, audited.baseline)  # the audited numbers, not the file's
    # Text with no file behind it (stdin, a dask worker's copy) draws alike.
    from_text = audit_bytes(as_transcript(seed_answer()), "-", FIGURES)
    assert np.array_equal(chart_inputs(from_text).idea, audited.idea)
    # Other formats keep nothing for charts.
    assert audit_path(str(path)).figures is None and chart_inputs(audit_path(str(path))) is None
