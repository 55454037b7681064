"""The terminal summary of a batch: a row per transcript, failures first, then
totals, the most frequent rules and the cross-answer figures (used by ``text``).

Every cell is a :class:`~rich.text.Text`: a file named ``[`` or ``[bold]x`` is
shown as named, never parsed as rich markup."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, Iterator

from rich import box
from rich.table import Table
from rich.text import Text

from ..findings import Severity, all_rules
from ..result import AuditResult, Status
from ..verdicts import Verdict, classify_verdict
from . import Run

STATUS_STYLE = {Status.PASS: "green", Status.FAIL: "bold red", Status.ERROR: "bold magenta"}
# Failures first, then transcripts that could not be audited, then passes.
STATUS_ORDER = {Status.FAIL: 0, Status.ERROR: 1}
# "better"/"worse" are always the significant verdicts; "none" is "no measurable effect".
SHORT_VERDICT = {Verdict.BETTER: "better", Verdict.WORSE: "worse", Verdict.NONE: "none"}
TOP_RULES = 5
MAX_CODES = 3
NARROW = 100


def _verdict(text: Any) -> str:
    if text is None:
        return "—"
    verdict = classify_verdict(text)
    if verdict is not None:
        return SHORT_VERDICT[verdict]
    return "?" if isinstance(text, str) else str(text)


def _p(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


def _codes(result: AuditResult) -> str:
    codes = list(dict.fromkeys(f.rule for f in result.findings))
    shown = " ".join(codes[:MAX_CODES])
    return shown + (f" +{len(codes) - MAX_CODES}" if len(codes) > MAX_CODES else "")


def _rules_cell(result: AuditResult) -> str:
    known = result.baselined
    return f"{_codes(result)} (+{known} known)".lstrip() if known else _codes(result)


def _common_folder(sources: list[str]) -> str:
    """The folder every source lies in, shown once in the title instead of on every row."""
    folders = [os.path.dirname(s) for s in sources if s != "-"]
    if len(folders) != len(sources) or not folders:
        return ""
    try:
        return os.path.commonpath(folders)
    except ValueError:  # absolute and relative paths mixed
        return ""


def _row_name(source: str, folder: str) -> str:
    return os.path.relpath(source, folder) if folder else source


def results_table(run: Run, width: int = 120) -> Table:
    folder = _common_folder([r.source for r in run.results])
    title = f"{len(run.results)} transcripts" + (f" in {folder}/" if folder else "")
    table = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("file", overflow="fold", min_width=16)
    table.add_column("status", no_wrap=True)
    table.add_column("err", justify="right", no_wrap=True)
    table.add_column("warn", justify="right", no_wrap=True)
    with_rules = width >= NARROW  # on a narrow terminal the codes give way to the numbers
    if with_rules:
        table.add_column("rules", overflow="fold", max_width=19)
    table.add_column("verdict\nclaimed", no_wrap=True)
    table.add_column("verdict\nrecomp.", no_wrap=True)
    table.add_column("p\nclaimed", justify="right", no_wrap=True)
    table.add_column("p\nrecomp.", justify="right", no_wrap=True)
    ordered = sorted(run.results, key=lambda r: STATUS_ORDER.get(r.status, 2))  # stable: keeps file order
    for r in ordered:
        claimed, recomputed = r.claimed or {}, r.recomputed or {}
        verdicts_differ = claimed and recomputed and _verdict(claimed.get("verdict")) != _verdict(recomputed.get("verdict"))
        table.add_row(
            Text(_row_name(r.source, folder)),
            Text(r.status.upper(), style=STATUS_STYLE.get(r.status, "")),
            Text(str(r.count(Severity.ERROR)), style="red" if r.count(Severity.ERROR) else "dim"),
            Text(str(r.count(Severity.WARNING)), style="yellow" if r.count(Severity.WARNING) else "dim"),
            *([Text(_rules_cell(r))] if with_rules else []),
            Text(_verdict(claimed.get("verdict")), style="red" if verdicts_differ else ""),
            Text(_verdict(recomputed.get("verdict"))),
            Text(_p(claimed.get("p_value"))),
            Text(_p(recomputed.get("p_value"))),
        )
    return table


def _totals(run: Run) -> Text:
    s = run.summary
    findings = [f for r in run.results for f in r.findings]
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    warnings = sum(1 for f in findings if f.severity is Severity.WARNING)
    text = Text.assemble(
        (f"{s['files']} files: ", "bold"),
        (f"{s['pass']} pass", "green"), ", ",
        (f"{s['fail']} fail", "red" if s["fail"] else ""), ", ",
        (f"{s['error']} error", "magenta" if s["error"] else ""),
        f" · {errors} errors, {warnings} warnings",
    )
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


def batch_report(run: Run, width: int = 120) -> Iterator[Any]:
    yield results_table(run, width)
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
    for column, justify in (("count", "right"), ("code", "left"), ("severity", "left"), ("name", "left"), ("files", "right")):
        table.add_column(column, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        table.add_row(
            Text(str(n)), Text(code, style="bold"), Text(severity[code]), Text(names.get(code, "")),
            Text(f"in {files[code]} file(s)"),
        )
    return table
