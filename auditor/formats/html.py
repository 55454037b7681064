"""``--format html``: one self-contained page for a person reviewing a batch.

No scripts, no external resources, and a Content-Security-Policy that forbids
both: the page quotes text written by agents (file names, verdicts, messages),
and everything is escaped, so a hostile answer cannot run code in a reviewer's
browser even if an escape were missed.
"""

from __future__ import annotations

from html import escape
from typing import Any, TextIO

from ..findings import Severity, get_rule
from ..result import AuditResult, Status
from . import Run, display

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1f24;background:#fff}
h1{font-size:1.4rem;margin:0 0 .3rem} h2{font-size:1.1rem;margin:1.6rem 0 .4rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;max-width:100%} th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{white-space:nowrap} td.text{overflow-wrap:anywhere;min-width:10rem}
th{background:#f6f8fa} td.num{font-family:ui-monospace,monospace;text-align:right}
.pass{color:#1a7f37;font-weight:600} .fail{color:#cf222e;font-weight:600} .error{color:#8250df;font-weight:600}
.sev-error{color:#cf222e} .sev-warning{color:#9a6700} .sev-info{color:#0969da}
code,pre{font-family:ui-monospace,monospace} pre{white-space:pre-wrap;background:#f6f8fa;padding:.6rem}
details{border:1px solid #d0d7de;border-radius:6px;padding:.4rem .8rem;margin:.5rem 0}
summary{cursor:pointer} .muted{color:#57606a}
"""


def _num(value: Any) -> str:
    return escape(display(value))


def _value_cell(value: Any) -> str:
    """A claimed or recomputed value: numbers right-aligned, text as text."""
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    return _cell(_num(value), "num" if numeric else "text")


def _cell(value: Any, cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<td{attr}>{value}</td>"


def _overview(run: Run) -> str:
    rows = []
    for index, r in enumerate(run.results):
        claimed, recomputed = r.claimed or {}, r.recomputed or {}
        rows.append(
            "<tr>"
            + _cell(f'<a href="#t{index}">{escape(r.source)}</a>', "text")
            + _cell(escape(r.status.upper()), r.status)
            + _cell(r.count(Severity.ERROR), "num")
            + _cell(r.count(Severity.WARNING), "num")
            + _cell(escape(str(claimed.get("verdict", "—"))), "text")
            + _cell(escape(str(recomputed.get("verdict", "—"))), "text")
            + _value_cell(claimed.get("p_value"))
            + _value_cell(recomputed.get("p_value"))
            + "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("transcript", "status", "errors", "warnings", "claimed verdict", "recomputed verdict", "claimed p", "recomputed p")
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


_QUANTITIES = ("n_pairs", "delta_mean", "idea_wins", "p_value", "mde", "mde_rel_pct", "verdict")


def _comparison(result: AuditResult) -> str:
    if not (result.claimed or result.recomputed):
        return ""
    claimed, recomputed = result.claimed or {}, result.recomputed or {}
    rows = "".join(
        f"<tr><th>{q}</th>{_value_cell(claimed.get(q))}{_value_cell(recomputed.get(q))}</tr>"
        for q in _QUANTITIES
    )
    return f"<table><thead><tr><th></th><th>claimed</th><th>recomputed</th></tr></thead><tbody>{rows}</tbody></table>"


def _findings(result: AuditResult) -> str:
    if not result.findings:
        return '<p class="pass">no findings</p>'
    rows = "".join(
        "<tr>"
        + _cell(f'<a href="#rule-{escape(f.rule)}"><code>{escape(f.rule)}</code></a>')
        + _cell(escape(f.severity.value), f"sev-{f.severity.value}")
        + _cell(f"<code>{escape(f.pointer or '(input)')}</code>")
        + _cell(escape(f.message), "text")
        + _value_cell(f.claimed)
        + _value_cell(f.recomputed)
        + "</tr>"
        for f in result.findings
    )
    head = "".join(f"<th>{h}</th>" for h in ("rule", "severity", "where", "message", "claimed", "recomputed"))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _transcript(index: int, result: AuditResult) -> str:
    opened = " open" if result.status is not Status.PASS else ""
    rerun = ""
    if result.rerun:
        rr = result.rerun
        state = "reproduced" if rr.get("reproduced") else "NOT reproduced"
        rerun = f"<p>rerun: <b>{state}</b> on {escape(str(rr.get('device')))} in {_num(rr.get('seconds'))} s</p>"
    return (
        f'<details id="t{index}"{opened}><summary><span class="{result.status}">{result.status.upper()}</span> '
        f"{escape(result.source)}</summary>{_comparison(result)}{rerun}{_findings(result)}</details>"
    )


def _rule_docs(run: Run) -> str:
    codes = sorted({f.rule for r in run.results for f in r.findings})
    sections = []
    for code in codes:
        try:
            rule = get_rule(code)
        except KeyError:
            continue
        sections.append(
            f'<section id="rule-{escape(code)}"><h3><code>{escape(code)}</code> {escape(rule.name)} '
            f'<span class="muted">({rule.severity.value})</span></h3><pre>{escape(rule.doc)}</pre></section>'
        )
    return "<h2>Rules</h2>" + "".join(sections) if sections else ""


def render(run: Run) -> str:
    from .. import __version__

    s = run.summary
    counts = f"{s['files']} transcripts: {s['pass']} pass, {s['fail']} fail, {s['error']} error"
    if run.config is not None:
        counts += f" · configuration <code>{escape(run.config)}</code>"
    body = (
        f"<h1>auditor report</h1><p class=\"muted\">auditor {escape(__version__)} · {counts}</p>"
        f"<h2>Overview</h2>{_overview(run)}<h2>Transcripts</h2>"
        + "".join(_transcript(i, r) for i, r in enumerate(run.results))
        + _rule_docs(run)
    )
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>auditor report: {s['fail'] + s['error']} failing of {s['files']}</title>"
        f"<style>{_STYLE}</style></head><body>{body}</body></html>\n"
    )


def write(run: Run, stream: TextIO) -> None:
    stream.write(render(run))
