"""``--format html``: one self-contained page for a person reviewing a batch.

No scripts, no external resources, and a Content-Security-Policy that forbids
both: the page quotes text written by agents (file names, verdicts, messages),
and everything is escaped, so a hostile answer cannot run code in a reviewer's
browser even if an escape were missed.

The page: the options used, filters by status and by rule (CSS ``:target``,
no script), an overview with failures first, the batch's figures and charts,
then one collapsed section per transcript (charts drawn by :mod:`.charts`,
matplotlib imported only here), and the docs of every rule that fired.
"""

from __future__ import annotations

import os
from html import escape
from typing import Any, TextIO

from auditor.files.paths import common_folder, name_in
from auditor.findings import Severity, get_rule
from auditor.formats import Run, disputed, short_verdict
from auditor.formats.html_batch import batch_section, rule_counts
from auditor.formats.html_data import chart_inputs
from auditor.formats.html_markdown import render_markdown
from auditor.formats.html_transcript import (
    RULE_CODE,
    SEVERITY_MARK,
    comparison_table,
    findings_table,
    path_html,
    rerun_outcome,
    rerun_summary,
    rule_link,
    seed_table,
    verdict_quote,
)
from auditor.options.policy import describe, ignored_notes
from auditor.parse.strings import plural
from auditor.result import AuditResult, Status

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
# Failures first, then transcripts that could not be audited, then passes (as the terminal table).
STATUS_ORDER = {Status.FAIL: 0, Status.ERROR: 1, Status.PASS: 2}
MAX_VERDICT_CHARS = 2_000
# Transcripts per worker below which a page's charts are drawn in this process (a worker costs ~0.1 s).
PARALLEL_MIN_TRANSCRIPTS = 8

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#1b1f24;background:#fff;max-width:110rem}
h1{font-size:1.4rem;margin:0 0 .3rem} h2{font-size:1.15rem;margin:1.6rem 0 .4rem} h3{font-size:1rem}
h4,h5{font-size:.95rem;margin:.8rem 0 .2rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;max-width:100%}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa} td.num{font-family:ui-monospace,monospace;text-align:right;white-space:nowrap}
td.text{min-width:12rem} .path{overflow-wrap:anywhere;word-break:normal}
td.name{min-width:12rem;max-width:24rem} table.overview td.num{white-space:normal}
.pass,.ok{color:#1a7f37;font-weight:600} .fail,.bad{color:#cf222e;font-weight:600} .error{color:#8250df;font-weight:600}
.sev-error{color:#cf222e;white-space:nowrap} .sev-warning{color:#9a6700;white-space:nowrap} .sev-info{color:#0969da;white-space:nowrap}
tr.differs{background:#ffebe9} td.mark{white-space:nowrap} .muted{color:#57606a}
code,pre{font-family:ui-monospace,monospace} pre{white-space:pre-wrap;background:#f6f8fa;padding:.6rem;overflow-wrap:anywhere}
details{border:1px solid #d0d7de;border-radius:6px;padding:.4rem .8rem;margin:.5rem 0}
details.seeds{border:0;padding:0} summary{cursor:pointer}
blockquote.verdict{margin:.5rem 0;padding:.4rem .8rem;border-left:4px solid #d0d7de;background:#f6f8fa;overflow-wrap:anywhere}
.charts{display:flex;flex-wrap:wrap;gap:.5rem} figure{margin:0;flex:1 1 26rem;max-width:36rem}
svg.chart{width:100%;height:auto} svg.chart text{font-family:'DejaVu Sans',system-ui,sans-serif} svg.chart *{stroke-linejoin:round;stroke-linecap:butt}
nav.filters a{display:inline-block;margin:.1rem .2rem;padding:.05rem .45rem;border:1px solid #d0d7de;border-radius:1rem;text-decoration:none}
.filter-target{display:block;height:0}
.rules-cell code{margin-right:.3rem}
"""


def _options(run: Run) -> str:
    """The options the run used, as far as the Run carries them."""
    options = getattr(run, "options", None)
    items = []
    alpha = getattr(options, "alpha", None) if options is not None else getattr(run.cross, "alpha", None)
    if alpha is not None:
        items.append(f"alpha {escape(f'{alpha:g}')}")
    if run.cross is not None:
        items.append(f"FDR {escape(f'{run.cross.fdr:g}')}")
    if options is not None:
        fail_on = options.fail_on.value if options.fail_on is not None else "never"
        items.append(f"fail-on {escape(fail_on)}")
        for name in ("select", "ignore"):
            if getattr(options, name, ()):
                items.append(f"{name} {escape(','.join(getattr(options, name)))}")
    config = run.config or {}
    path = config.get("path")
    items.append(f"configuration {path_html(path)}" if path is not None else "no configuration file")
    out = '<p class="muted">Options: ' + " · ".join(items) + "</p>"
    # The policy values that are not the default, each with its source: "alpha = 0.5 (pyproject.toml)".
    values = describe(config)
    if values:
        out += '<p class="policy">Policy not at its default: ' + " · ".join(escape(v) for v in values) + "</p>"
    for note in ignored_notes(config):  # an untrusted file beside the answers, left unread
        out += f'<p class="policy"><strong>⚠ {escape(note)}</strong></p>'
    return out


def _codes(result: AuditResult) -> list[str]:
    """Rule codes safe to use as CSS class names (the auditor's own codes are)."""
    return [code for code in dict.fromkeys(f.rule for f in result.findings) if RULE_CODE.match(code)]


def _item_classes(result: AuditResult) -> str:
    return " ".join(["item", f"s-{result.status.value}", *(f"r-{code}" for code in _codes(result))])


def _rules_cell(result: AuditResult) -> str:
    """The rules that fired, errors first (the findings' own order), each with its severity symbol."""
    seen: dict[str, Severity] = {}
    for f in result.findings:
        seen.setdefault(f.rule, f.severity)
    cells = [
        f'<span class="sev-{sev.value}">{SEVERITY_MARK[sev]}</span>{rule_link(code)}' for code, sev in seen.items()
    ]
    known = f' <span class="muted">(+{result.baselined} known)</span>' if result.baselined else ""
    return f'<td class="rules-cell">{" ".join(cells) or "—"}{known}</td>'


def _marked(value: str, findings: list[Any]) -> str:
    """An overview value, with ✗ and the disputing rule when a finding disputes it."""
    if not findings:
        return escape(value)
    codes = ",".join(f.rule for f in findings)
    return f'<span class="bad">✗ {escape(value)}</span><br><span class="muted">differs ({escape(codes)})</span>'


def _overview_row(index: int, result: AuditResult, folder: str) -> str:
    claimed, recomputed = result.claimed or {}, result.recomputed or {}
    marks = disputed(result)
    cells = [
        f'<td class="name"><a href="#t{index}">{path_html(name_in(result.source, folder))}</a></td>',
        f'<td class="{result.status.value}">{escape(result.status.upper())}</td>',
        f'<td class="num">{result.count(Severity.ERROR)}</td>',
        f'<td class="num">{result.count(Severity.WARNING)}</td>',
        _rules_cell(result),
        f"<td>{_marked(short_verdict(claimed.get('verdict')), marks.get('verdict', []))}</td>",
        f"<td>{escape(short_verdict(recomputed.get('verdict')))}</td>",
        f'<td class="num">{_marked(_p(claimed.get("p_value")), marks.get("p_value", []))}</td>',
        f'<td class="num">{escape(_p(recomputed.get("p_value")))}</td>',
        f"<td>{rerun_outcome(result.rerun)}</td>",
    ]
    return f'<tr class="{_item_classes(result)}">{"".join(cells)}</tr>'


def _p(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


def _ordered(run: Run) -> list[tuple[int, AuditResult]]:
    """(index in the run, result), failures first; stable, so file order within a status."""
    return sorted(enumerate(run.results), key=lambda pair: STATUS_ORDER.get(pair[1].status, 3))


def _overview(run: Run, folder: str) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "transcript",
            "status",
            "errors",
            "warnings",
            "rules (errors first)",
            "claimed verdict",
            "recomputed verdict",
            "claimed p",
            "recomputed p",
            "rerun",
        )
    )
    rows = "".join(_overview_row(i, r, folder) for i, r in _ordered(run))
    title = f"Overview · {plural(len(run.results), 'transcript')}" + (
        f" in {path_html(folder.rstrip('/') + '/')}" if folder else ""
    )
    return f'<h2>{title}</h2><table class="overview"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _figure(chart: Any) -> str:
    return f"<figure>{chart.svg}</figure>"


def _draw(item: tuple[int, AuditResult]) -> tuple[int, list[Any]]:
    """The charts of one transcript (run in a worker process for a batch)."""
    from auditor.formats.charts import transcript_charts  # matplotlib: only when a page is drawn

    index, result = item
    data = chart_inputs(result)
    return index, transcript_charts(index, data, result) if data is not None else []


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def drawn_charts(run: Run) -> dict[int, list[Any]]:
    """Index in the run -> that transcript's charts, drawn by a process per core when the batch is large
    enough to repay starting them (a chart takes some 30 ms to draw; a page of 125 transcripts has 500)."""
    items = [(i, r) for i, r in enumerate(run.results) if chart_inputs(r) is not None]
    workers = min(_cores(), len(items) // PARALLEL_MIN_TRANSCRIPTS)
    if workers < 2:
        return dict(map(_draw, items))
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # fork shares the imported matplotlib; a process with other threads (a dask client) spawns instead.
    method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() else "spawn"
    chunk = max(1, len(items) // (workers * 4))  # a few chunks per worker: an uneven batch still balances
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
            return dict(pool.map(_draw, items, chunksize=chunk))
    except (OSError, BrokenProcessPool):  # no processes to be had (a sandbox's limit): draw them here
        return dict(map(_draw, items))


def _transcript(index: int, result: AuditResult, folder: str, drawn: dict[int, list[Any]]) -> str:
    data = chart_inputs(result)
    charts = ""
    if data is not None:
        charts = f'<div class="charts">{"".join(_figure(c) for c in drawn[index])}</div>'
    elif result.recomputed is not None:
        charts = '<p class="muted">No charts: the transcript could not be read again to draw its per-seed data.</p>'
    codes = " ".join(escape(code) for code in _codes(result))
    summary = (
        f'<summary><span class="{result.status.value}">{escape(result.status.upper())}</span> '
        f'{path_html(name_in(result.source, folder))} <span class="muted">{codes}</span></summary>'
    )
    body = [
        verdict_quote(data, MAX_VERDICT_CHARS),
        comparison_table(result),
        rerun_summary(result.rerun),
        charts,
        findings_table(result),
        seed_table(data, result.rerun) if data is not None else "",
    ]
    opened = " open" if result.status is not Status.PASS else ""  # what needs reading is open
    return f'<details id="t{index}" class="{_item_classes(result)}"{opened}>{summary}{"".join(body)}</details>'


def _filters(run: Run) -> tuple[str, str, str]:
    """(empty anchors the CSS targets, the filter links, the CSS that hides what a filter excludes)."""
    s = run.summary
    statuses = [status for status in Status if status is not Status.SKIPPED and s.get(status.value)]
    codes = [code for code, _, _, _ in rule_counts(run.results) if RULE_CODE.match(code)]
    anchors = "".join(f'<i id="only-{x}" class="filter-target"></i>' for x in [*(st.value for st in statuses), *codes])
    css = "".join(
        f"#only-{x}:target~main .item:not(.{prefix}-{x}){{display:none}}"
        f'#only-{x}:target~main nav a[href="#only-{x}"]{{background:#0969da;color:#fff}}'  # the active filter
        for prefix, x in [*(("s", st.value) for st in statuses), *(("r", code) for code in codes)]
    )
    links = ['<a href="#all">all</a>'] + [
        f'<a href="#only-{st.value}">{escape(st.value)} ({s[st.value]})</a>' for st in statuses
    ]
    rule_links = [f'<a href="#only-{code}"><code>{escape(code)}</code></a>' for code in codes]
    nav = (
        f'<nav class="filters">Show: {"".join(links)}'
        + (f" · rule: {''.join(rule_links)}" if rule_links else "")
        + "</nav>"
    )
    return anchors, nav, css


def _rule_docs(run: Run) -> str:
    sections = []
    for code, severity, count, files in rule_counts(run.results):
        try:
            rule = get_rule(code)
        except KeyError:
            continue
        sections.append(
            f'<section id="rule-{escape(code)}"><h3><code>{escape(code)}</code> {escape(rule.name)} '
            f'<span class="muted">({escape(severity.value)} · {plural(count, "finding")} in {plural(files, "transcript")})</span></h3>'
            f"{render_markdown(rule.doc)}</section>"
        )
    return "<h2>Rules</h2>" + "".join(sections) if sections else ""


def render(run: Run) -> str:
    from auditor import __version__

    s = run.summary
    folder = common_folder([r.source for r in run.results])
    counts = f"{plural(s['files'], 'transcript')}: " + ", ".join(
        f"{s[st.value]} {st.value}" for st in Status if st.value in s
    )
    anchors, nav, filter_css = _filters(run)
    drawn = drawn_charts(run)
    batch = batch_section(run, _figure) if len(run.results) > 1 else ""
    main = (
        f'<h1>auditor report</h1><p class="muted">auditor {escape(__version__)} · {counts}</p>{_options(run)}{nav}'
        f'{_overview(run, folder)}{batch}<h2 id="transcripts">Transcripts</h2>'
        + "".join(_transcript(i, r, folder, drawn) for i, r in _ordered(run))
        + _rule_docs(run)
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>auditor report: {s['fail'] + s['error']} failing of {s['files']}</title>"
        f"<style>{_STYLE}{filter_css}</style></head><body>{anchors}<main>{main}</main></body></html>\n"
    )


def write(run: Run, stream: TextIO) -> None:
    stream.write(render(run))
