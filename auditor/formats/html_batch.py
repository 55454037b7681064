"""The HTML report's batch section: the cross-answer figures and two charts.

* the recomputed p-values, sorted, against the Benjamini-Hochberg line
  (what X902 applies), claimed-significant answers marked by shape;
* the findings per rule, errors first.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from auditor.findings import Severity
from auditor.formats.figures import (
    LOSS,
    WIN,
    Chart,
    legend_below,
    new_axes,
    nothing_to_draw,
    style,
    to_svg,
    wrap_title,
)
from auditor.stats.verdicts import Verdict, classify_verdict

SEVERITY_COLOUR = {Severity.ERROR: "#cf222e", Severity.WARNING: "#9a6700", Severity.INFO: "#0969da"}
SEVERITY_HATCH = {Severity.ERROR: "", Severity.WARNING: "///", Severity.INFO: "..."}
# The smallest p drawn on the log axis (an exact test never gives 0; a bound keeps the axis finite).
P_FLOOR = 1e-12
MAX_RULE_BARS = 25


def _tested(results: Any) -> list[tuple[float, bool]]:
    """(recomputed p, claims significance) of every result with a recomputed p."""
    out = []
    for r in results:
        p = (r.recomputed or {}).get("p_value")
        if isinstance(p, (int, float)) and not isinstance(p, bool):
            claimed = classify_verdict((r.claimed or {}).get("verdict"))
            out.append((float(p), claimed in (Verdict.BETTER, Verdict.WORSE)))
    return out


def fdr_chart(results: Any, fdr: float, alpha: float) -> Chart:
    """Sorted recomputed p-values against the Benjamini-Hochberg line i/m·q."""
    from auditor.stats.summary import benjamini_hochberg

    tested = sorted(_tested(results))
    m = len(tested)
    with style("c-fdr"):
        fig, ax = new_axes()
        if not m:
            return nothing_to_draw(
                fig, ax, "no recomputed p-value in this batch", "Benjamini-Hochberg: no p-value to test", "c-fdr"
            )
        ranks = np.arange(1, m + 1)
        p = np.maximum([t[0] for t in tested], P_FLOOR)
        claims = np.array([t[1] for t in tested])
        ax.set_yscale("log")
        _plain_log_labels(ax.yaxis)
        ax.plot(ranks, ranks / m * fdr, color="black", lw=1, label=f"Benjamini-Hochberg line i/m·{fdr:g}")
        ax.axhline(alpha, color="#6e7781", lw=0.8, ls="--", label=f"alpha {alpha:g}")
        for mask, look, label in ((claims, WIN, "claims significance"), (~claims, LOSS, "claims no effect")):
            if mask.any():
                ax.scatter(
                    ranks[mask], p[mask], s=18, marker=look["marker"], color=look["color"], zorder=3, label=label
                )
        cutoff = benjamini_hochberg([t[0] for t in tested], fdr)
        discoveries = sum(1 for t in tested if cutoff is not None and t[0] <= cutoff)
        ax.set_xlabel("rank of the recomputed p-value")
        ax.set_ylabel("recomputed p (log scale)")
        legend_below(fig, ax)
        lost = sum(1 for t in tested if t[1] and (cutoff is None or t[0] > cutoff))
        title = (
            f"{m} p-values against Benjamini-Hochberg at FDR {fdr:g}: {discoveries} discoveries, "
            f"{lost} significant claims lost (X902)"
        )
        ax.set_title(wrap_title(title))
        return to_svg(fig, title, "c-fdr")


def _plain_log_labels(axis: Any) -> None:
    """Decades as plain numbers (1, 0.1, 0.001, 1e-05): mathtext is off (no agent text is ever parsed
    as math), so matplotlib's log labels would print their TeX source, ``$\\mathdefault{10^{-1}}$``."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, numticks=6))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def rule_counts(results: Any) -> list[tuple[str, Severity, int, int]]:
    """(code, severity, findings, files) per rule that fired: errors first, then by count."""
    counts = Counter(f.rule for r in results for f in r.findings)
    files = Counter(code for r in results for code in {f.rule for f in r.findings})
    severity = {f.rule: f.severity for r in results for f in r.findings}
    rows = [(code, severity[code], n, files[code]) for code, n in counts.items()]
    return sorted(rows, key=lambda row: (-row[1].rank, -row[2], row[0]))


def rules_chart(results: Any) -> Chart:
    """Findings per rule as horizontal bars; severity by colour, hatching and the label's words."""
    every = rule_counts(results)
    # The most frequent rules of any severity (T601, a warning, is often the commonest), drawn errors first.
    kept = {row[0] for row in sorted(every, key=lambda row: (-row[2], row[0]))[:MAX_RULE_BARS]}
    rows = [row for row in every if row[0] in kept]
    with style("c-rules"):
        fig, ax = new_axes()
        if not rows:
            return nothing_to_draw(fig, ax, "no findings", "Findings per rule: none", "c-rules")
        fig.set_size_inches(4.4, max(2.2, 0.9 + 0.16 * len(rows)))
        fig.subplots_adjust(left=0.22)  # room for the "D505 warning" labels
        positions = np.arange(len(rows))[::-1]
        for y, (_code, severity, n, _) in zip(positions, rows):
            ax.barh(y, n, color=SEVERITY_COLOUR[severity], hatch=SEVERITY_HATCH[severity], edgecolor="white", lw=0)
            ax.text(n, y, f" {n}", va="center", fontsize=6.5)
        ax.set_yticks(positions, [f"{code} {severity.value}" for code, severity, _, _ in rows], fontsize=6.5)
        ax.set_xlabel("findings")
        shown = (
            f"the {len(rows)} most frequent of {len(every)} rules" if len(rows) < len(every) else f"{len(rows)} rules"
        )
        title = f"Findings per rule ({shown}, errors first)"
        ax.set_title(wrap_title(title))
        return to_svg(fig, title, "c-rules")


def cross_figures(cross: Any) -> str:
    """The batch's multiple-testing figures as a sentence (HTML)."""
    return (
        f"<p>Ideas tested: <strong>{cross.ideas_tested}</strong> · significant claims: <strong>{cross.significant_claims}</strong> · "
        f"significant at alpha {cross.alpha:g}: <strong>{cross.significant_recomputed}</strong> "
        f"(≈{cross.expected_by_chance:.2f} expected by chance alone) · Benjamini-Hochberg discoveries at FDR "
        f"{cross.fdr:g}: <strong>{cross.discoveries}</strong> (expected false positives among them ≤ "
        f"{cross.expected_false_positives:.2f})</p>"
    )


def batch_section(run: Any, figure: Any) -> str:
    """The batch's figures and charts; ``figure`` wraps a :class:`Chart` as HTML."""
    figures = cross_figures(run.cross) if run.cross is not None else ""
    charts = [rules_chart(run.results)]
    if run.cross is not None:
        charts.insert(0, fdr_chart(run.results, run.cross.fdr, run.cross.alpha))
    body = "".join(figure(chart) for chart in charts)
    return f'<section id="batch"><h2>Batch</h2>{figures}<div class="charts">{body}</div></section>'
