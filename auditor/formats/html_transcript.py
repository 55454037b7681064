"""One transcript's section of the HTML report: verdict sentence, claimed against
recomputed numbers (differences marked by a symbol and words, not by colour
alone), the rerun, four charts, the findings and the per-seed data.

Every string that reaches the page passes through :func:`html.escape` here.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

import numpy as np

from auditor.findings import Severity
from auditor.formats import display, disputed, same_claim
from auditor.formats.html_data import ChartInputs, replication_arms, rerun_arms
from auditor.parse.strings import shorten
from auditor.result import AuditResult

QUANTITIES = ("n_pairs", "delta_mean", "idea_wins", "p_value", "mde", "mde_rel_pct", "verdict")
SEVERITY_MARK = {Severity.ERROR: "✗", Severity.WARNING: "⚠", Severity.INFO: "ℹ"}
_PATH_BREAK = re.compile(r"([/_\-.])")
RULE_CODE = re.compile(r"^[A-Z]\d{3}$")
# Rows of the per-seed table; a 10,000-seed answer lists its first ones (and says so).
MAX_TABLE_SEEDS = 1_000


def path_html(name: str) -> str:
    """A file name, escaped, breakable only after / _ - . (never inside a word)."""
    return '<span class="path">' + _PATH_BREAK.sub(r"\1<wbr>", escape(name)) + "</span>"


def num(value: Any) -> str:
    return escape(display(value))


def severity_badge(severity: Severity) -> str:
    return f'<span class="sev-{severity.value}">{SEVERITY_MARK[severity]} {severity.value}</span>'


def rule_link(code: str) -> str:
    return f'<a href="#rule-{escape(code)}"><code>{escape(code)}</code></a>'


def agreement_cell(quantity: str, claimed: Any, recomputed: Any, findings: list[Any]) -> str:
    """The check column: disputed (symbol, words and rule), accepted within tolerance, equal, or not checked."""
    if findings:
        worst = max(findings, key=lambda f: f.severity.rank)
        codes = " ".join(rule_link(f.rule) for f in findings)
        word = "differs" if worst.severity is Severity.ERROR else "borderline"
        return f'<td class="mark bad">{SEVERITY_MARK[worst.severity]} {word} {codes}</td>'
    if claimed is None or recomputed is None:
        return '<td class="mark muted">— not compared</td>'
    if same_claim(quantity, claimed, recomputed):
        return '<td class="mark ok">✓ same</td>'
    return '<td class="mark ok">≈ accepted (printing or estimation tolerance)</td>'


def comparison_table(result: AuditResult) -> str:
    if not (result.claimed or result.recomputed):
        return ""
    claimed, recomputed = result.claimed or {}, result.recomputed or {}
    marks = disputed(result)
    rows = []
    for q in QUANTITIES:
        c, r = claimed.get(q), recomputed.get(q)
        cls = ' class="differs"' if marks.get(q) else ""
        rows.append(
            f"<tr{cls}><th>{q}</th>{_value_cell(c)}{_value_cell(r)}{agreement_cell(q, c, r, marks.get(q, []))}</tr>"
        )
    head = "<tr><th></th><th>claimed</th><th>recomputed</th><th>check</th></tr>"
    return f'<table class="comparison"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _value_cell(value: Any) -> str:
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    return f'<td class="{"num" if numeric else "text"}">{num(value)}</td>'


def rerun_summary(rerun: dict[str, Any] | None) -> str:
    """The rerun's outcome in words; keys a record may lack are simply not shown."""
    if not rerun:
        return ""
    state = "✓ reproduced" if rerun.get("reproduced") else "✗ NOT reproduced"
    parts = [f'<strong class="{"ok" if rerun.get("reproduced") else "bad"}">{state}</strong>']
    if rerun.get("cached"):
        parts.append("(from the rerun cache)")
    if rerun.get("device"):
        parts.append(f"on {escape(str(rerun['device']))}")
    if isinstance(rerun.get("seconds"), (int, float)):
        parts.append(f"in {num(rerun['seconds'])} s")
    if rerun.get("timed_out"):
        parts.append("· timed out")
    for key, label in (("p_value", "p"), ("delta_mean", "delta_mean")):
        if isinstance(rerun.get(key), (int, float)):
            parts.append(f"· rerun {label} = {num(rerun[key])}")
    if isinstance(rerun.get("verdict"), str):
        parts.append(f"· rerun verdict: {escape(rerun['verdict'])}")
    return f'<p class="rerun">Rerun: {" ".join(parts)}</p>'


def rerun_outcome(rerun: dict[str, Any] | None) -> str:
    """The overview's rerun cell: a symbol and a word."""
    if not rerun:
        return '<span class="muted">—</span>'
    word = "✓ reproduced" if rerun.get("reproduced") else "✗ not reproduced"
    return escape(word) + (" (cached)" if rerun.get("cached") else "")


def findings_table(result: AuditResult) -> str:
    if not result.findings:
        return '<p class="ok">✓ no findings</p>'
    rows = "".join(
        "<tr>"
        f"<td>{rule_link(f.rule)}</td><td>{severity_badge(f.severity)}</td>"
        f'<td class="text"><code class="path">{escape(f.pointer or "(input)")}</code></td>'
        f'<td class="text">{escape(f.message)}</td>{_value_cell(f.claimed)}{_value_cell(f.recomputed)}'
        "</tr>"
        for f in result.findings
    )
    head = "".join(f"<th>{h}</th>" for h in ("rule", "severity", "where", "message", "claimed", "recomputed"))
    return f'<table class="findings"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def seed_table(data: ChartInputs, rerun: dict[str, Any] | None) -> str:
    """The per-seed values, their differences and each seed's outcome (symbol and word)."""
    d = data.idea - data.baseline
    again = rerun_arms(rerun, d.size)
    better = d < 0 if data.lower_is_better else d > 0
    head = ["seed", "baseline", "idea", "idea − baseline", "outcome"]
    if again is not None:
        head += ["rerun baseline", "rerun idea"]
    fresh = replication_arms(rerun)
    fresh = fresh if fresh is not None and fresh.idea.size == d.size else None  # the same seeds, shifted
    if fresh is not None:
        head += [f"{fresh.label}: baseline", f"{fresh.label}: idea"]
    rows = []
    for i in range(min(d.size, MAX_TABLE_SEEDS)):
        outcome = "= tie" if d[i] == 0 else "● win" if better[i] else "▼ loss"
        cells = [str(i), _float(data.baseline[i]), _float(data.idea[i]), _difference(data.baseline[i], data.idea[i])]
        cells.append(outcome)
        if again is not None:
            cells += [_float(again[0][i]), _float(again[1][i])]
        if fresh is not None:
            cells += [_float(fresh.baseline[i]), _float(fresh.idea[i])]
        rows.append("<tr>" + "".join(f'<td class="num">{escape(c)}</td>' for c in cells) + "</tr>")
    direction = "lower is better" if data.lower_is_better else "higher is better"
    listed = f", the first {MAX_TABLE_SEEDS:,} listed" if d.size > MAX_TABLE_SEEDS else ""
    return (
        f'<details class="seeds"><summary>Per-seed data ({d.size} seeds, {direction}{listed})</summary>'
        f"<table><thead><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</details>"
    )


def _float(x: float) -> str:
    return repr(float(x)) if np.isfinite(x) else str(x)


def _difference(baseline: float, idea: float) -> str:
    """``idea - baseline`` to the decimals the two values are written with: the subtraction's float
    noise goes (10.9222 - 10.9309 is -0.0087, not -0.008699999999999264), no digit either value has does."""
    if not (np.isfinite(baseline) and np.isfinite(idea)):
        return _float(idea - baseline)
    from decimal import Decimal

    places = max(0, *(-int(Decimal(repr(float(x))).as_tuple().exponent) for x in (baseline, idea)))
    return repr(round(float(idea) - float(baseline), places) + 0.0)  # + 0.0: no "-0.0" for a tie


def verdict_quote(data: ChartInputs | None, limit: int) -> str:
    """The answer's own verdict sentence (its first ``limit`` characters), quoted."""
    if data is None or not data.verdict_sentence:
        return ""
    return f'<blockquote class="verdict"><strong>The agent\'s verdict:</strong> {escape(shorten(data.verdict_sentence, limit, "…"))}</blockquote>'
