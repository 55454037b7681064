"""The terminal summary of a batch: a row per transcript, failures first, then
totals, the most frequent rules and the cross-answer figures (used by ``text``).

Every cell is a :class:`~rich.text.Text`: a file named ``[`` or ``[bold]x`` is
shown as named, never parsed as rich markup."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from auditor.files.paths import common_folder, name_in
from auditor.findings import Severity, all_rules
from auditor.formats import Run, disputed, short_verdict
from auditor.parse.strings import plural
from auditor.result import AuditResult, Status

STATUS_STYLE = {Status.PASS: "green", Status.FAIL: "bold red", Status.ERROR: "bold magenta"}
# Failures first, then transcripts that could not be audited, then passes.
STATUS_ORDER = {Status.FAIL: 0, Status.ERROR: 1}
TOP_RULES = 5
MAX_CODES = 3
NARROW = 100
SEVERITY_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "dim"}


def _p(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


def _pair(claimed: str, recomputed: str) -> Text:
    """One cell for a claim and its recomputation: the value once when they agree, ``claimed→recomputed`` (marked) when not."""
    if claimed == recomputed or recomputed == "—":
        return Text(claimed)
    if claimed == "—":
        return Text(recomputed)
    return Text.assemble((f"{claimed}→{recomputed}", "bold red"))


def _codes(result: AuditResult, limit: int) -> Text:
    """Rule codes by severity, errors first (in red), then by first appearance; ``+N`` for the rest."""
    worst: dict[str, Severity] = {}
    for f in result.findings:
        if f.rule not in worst or f.severity.rank > worst[f.rule].rank:
            worst[f.rule] = f.severity
    codes = sorted(worst, key=lambda code: -worst[code].rank)  # stable: keeps first appearance
    text = Text()
    for code in codes[:limit]:
        text.append("" if not text else " ")
        text.append(code, style=SEVERITY_STYLE[worst[code]])
    if len(codes) > limit:
        text.append(f" +{len(codes) - limit}", style="dim")
    if result.baselined:
        text.append(f" (+{result.baselined} known)", style="dim")
    return text


def _rerun(rerun: dict | None) -> Text:
    """The rerun's outcome: reproduced or not, with its own verdict when it has one."""
    if not rerun:
        return Text("—", style="dim")
    verdict = short_verdict(rerun.get("verdict")) if rerun.get("verdict") is not None else ""
    cached = " (cached)" if rerun.get("cached") else ""
    if rerun.get("reproduced"):
        return Text(f"✓ {verdict}{cached}".rstrip(), style="green")
    ran = rerun.get("seconds") is not None or rerun.get("cached")
    return Text(f"✗ {verdict or ('differs' if ran else 'not run')}{cached}", style="bold red")


def _replication(rerun: dict | None) -> Text:
    """The replication on shifted seeds (``--replicate``): replicated, not, or inconclusive."""
    replication = (rerun or {}).get("replication")
    if not replication:
        return Text("—", style="dim")
    replicated = replication.get("replicated")
    if replicated is True:
        return Text("✓ replicated", style="green")
    if replicated is False:
        return Text("✗ contradicted", style="bold red")
    return Text("? inconclusive", style="yellow")


def wrap_path(name: str, width: int) -> str:
    """``name`` on lines of at most ``width`` characters, broken after a ``/``, or inside a
    longer folder or file name after ``_ - .``, where it can be."""
    if width <= 0 or len(name) <= width:
        return name
    pieces = []
    for part in re.findall(r"[^/]+/?|/", name):
        pieces.extend([part] if len(part) <= width else re.findall(r"[^_.-]+[_.-]?|[_.-]", part))
    lines, line = [], ""
    for piece in pieces:
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = ""
        while len(piece) > width:  # one piece longer than a line: cut it
            lines.append(piece[:width])
            piece = piece[width:]
        line += piece
    return "\n".join([*lines, line] if line else lines)


def _p_cell(result: AuditResult) -> Text:
    """The claimed p; ``claimed→recomputed`` (marked) only when a finding says they disagree."""
    claimed, recomputed = _p((result.claimed or {}).get("p_value")), _p((result.recomputed or {}).get("p_value"))
    wrong = any(f.severity is Severity.ERROR for f in disputed(result).get("p_value", ()))
    return _pair(claimed, recomputed) if wrong else Text(claimed if claimed != "—" else recomputed)


def results_table(run: Run, width: int = 120, *, failures_only: bool = False) -> Table:
    """A row per transcript, failures first, the file name last (it takes the room left).

    Claimed and recomputed values share a cell (``better→none`` when they
    differ); below ``NARROW`` columns one rule code is listed (errors first),
    so the table stays readable at 80 columns.
    """
    folder = common_folder([r.source for r in run.results])
    title = plural(len(run.results), "transcript") + (f" in {folder.rstrip('/')}/" if folder else "")
    with_rerun = any(r.rerun for r in run.results)
    with_replication = any((r.rerun or {}).get("replication") for r in run.results)
    limit = MAX_CODES if width >= NARROW else 1
    ordered = sorted(run.results, key=lambda r: STATUS_ORDER.get(r.status, 2))  # stable: keeps file order
    if failures_only:
        ordered = [r for r in ordered if r.status is not Status.PASS]
        title += f", {plural(len(ordered), 'failure')} shown"
    rows = []
    for r in ordered:
        claimed, recomputed = r.claimed or {}, r.recomputed or {}
        rows.append(
            [
                Text(r.status.upper(), style=STATUS_STYLE.get(r.status, "")),
                Text(str(r.count(Severity.ERROR)), style="red" if r.count(Severity.ERROR) else "dim"),
                Text(str(r.count(Severity.WARNING)), style="yellow" if r.count(Severity.WARNING) else "dim"),
                _codes(r, limit),
                _pair(short_verdict(claimed.get("verdict")), short_verdict(recomputed.get("verdict"))),
                _p_cell(r),
                *([_rerun(r.rerun)] if with_rerun else []),
                *([_replication(r.rerun)] if with_replication else []),
            ]
        )
    headers = ["status", "err", "warn", "rules", "verdict", "p", *(["rerun"] if with_rerun else [])]
    headers += ["replication"] if with_replication else []
    # Each column is as wide as its widest cell plus padding; the margin covers the edges and rich's rounding.
    used = sum(max([len(h), *(r[i].cell_len for r in rows)]) + 1 for i, h in enumerate(headers))
    table = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for header in headers:
        table.add_column(header, no_wrap=True, justify="right" if header in ("err", "warn", "p") else "left")
    table.add_column("file", overflow="fold")
    for r, cells in zip(ordered, rows, strict=True):
        table.add_row(*cells, Text(wrap_path(name_in(r.source, folder), width - used - 8)))
    return table


def _totals(run: Run) -> Text:
    s = run.summary
    findings = [f for r in run.results for f in r.findings]
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    warnings = sum(1 for f in findings if f.severity is Severity.WARNING)
    text = Text.assemble(
        (f"{plural(s['files'], 'file')}: ", "bold"),
        (f"{s['pass']} pass", "green"),
        ", ",
        (f"{s['fail']} fail", "red" if s["fail"] else ""),
        ", ",
        (f"{s['error']} error", "magenta" if s["error"] else ""),
        f" · {plural(errors, 'error')}, {plural(warnings, 'warning')}",
    )
    if run.skipped:
        text.append(f" · {plural(run.skipped, 'file')} without an answer skipped", style="dim")
    known = sum(r.baselined for r in run.results)
    if known:
        text.append(f" · {known} known findings hidden by the baseline", style="dim")
    return text


def _top_rules(run: Run) -> Text | None:
    counts = Counter(f.rule for r in run.results for f in r.findings)
    if not counts:
        return None
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_RULES]
    return Text("most frequent: " + ", ".join(f"{code} ×{n}" for code, n in top), style="dim")


def _cross(run: Run) -> Text | None:
    c = run.cross
    if c is None:
        return None
    return Text(
        f"ideas tested: {c.ideas_tested} · significant claims: {c.significant_claims} · "
        f"significant at alpha {c.alpha:g}: {c.significant_recomputed} (≈{c.expected_by_chance:.2f} expected by chance) · "
        f"Benjamini-Hochberg discoveries at FDR {c.fdr:g}: {c.discoveries} "
        f"(expected false positives among them ≤ {c.expected_false_positives:.2f})",
        style="dim",
    )


def batch_report(run: Run, width: int = 120, *, failures_only: bool = False) -> Iterator[Any]:
    yield results_table(run, width, failures_only=failures_only)
    yield _totals(run)
    for line in (_top_rules(run), _cross(run)):
        if line is not None:
            yield line


def statistics_table(run: Run) -> Table:
    """Count, code, severity, name and files for every rule that fired."""
    counts = Counter(f.rule for r in run.results for f in r.findings)
    files = Counter(code for r in run.results for code in {f.rule for f in r.findings})
    names = {rule.code: rule.name for rule in all_rules()}
    severity = {f.rule: f.severity.value for r in run.results for f in r.findings}  # after overrides
    table = Table(box=None, show_header=False, pad_edge=False)
    for column, justify in (
        ("count", "right"),
        ("code", "left"),
        ("severity", "left"),
        ("name", "left"),
        ("files", "right"),
    ):
        table.add_column(column, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        table.add_row(
            Text(str(n)),
            Text(code, style="bold"),
            Text(severity[code]),
            Text(names.get(code, "")),
            Text(f"in {plural(files[code], 'file')}"),
        )
    return table
