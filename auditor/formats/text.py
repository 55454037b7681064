"""``--format text``: one rich panel per transcript, for a person at a terminal.

Colours follow rich's rules (NO_COLOR, non-tty output gets plain text).  Data
(file names, verdicts, messages) always goes to rich as :class:`~rich.text.Text`,
never as a string rich would parse for markup: ``[/bold]`` in a verdict is shown,
not interpreted.  Terminal controls are already gone (:mod:`.safe`).
"""

from __future__ import annotations

import os
from typing import Any, TextIO

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from auditor.files.paths import STDIN, STDIN_NAME
from auditor.findings import Severity
from auditor.formats import DETAILED_FAILURES, Run, display, disputed, place, same_claim
from auditor.parse.strings import plural
from auditor.result import AuditResult, Status

_STATUS_STYLE = {Status.PASS: "bold green", Status.FAIL: "bold red", Status.ERROR: "bold magenta"}
_SEVERITY_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}

# (label, the comparison field: its claimed and recomputed key, and what a disputing finding points at)
_ROWS = (
    ("delta_mean", "delta_mean"),
    ("wins", "idea_wins"),
    ("p_value", "p_value"),
    ("mde", "mde"),
    ("verdict", "verdict"),
)


def _comparison_table(result: AuditResult) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("quantity")
    table.add_column("claimed", overflow="fold")
    table.add_column("recomputed", overflow="fold")
    table.add_column("", justify="center")
    claimed, recomputed = result.claimed or {}, result.recomputed or {}
    marks = disputed(result)
    for label, field in _ROWS:
        c, r = claimed.get(field), recomputed.get(field)
        # The wins row shows two fields (idea_wins/n_pairs): a finding on either disputes it.
        fields = (field, "n_pairs") if label == "wins" else (field,)
        same = all(same_claim(k, claimed.get(k), recomputed.get(k)) for k in fields)
        mark = _mark([f for k in fields for f in marks.get(k, ())], compared=c is not None and r is not None, same=same)
        if label == "wins":
            c = None if c is None else f"{c}/{claimed.get('n_pairs', '?')}"
            r = None if r is None else f"{r}/{recomputed.get('n_pairs', '?')}"
        if label == "p_value" and r is not None:
            r = f"{display(r)} ({recomputed.get('p_value_method', 'exact')})"
        table.add_row(label, Text(display(c)), Text(display(r)), mark)
    return table


def _mark(findings: list, *, compared: bool, same: bool) -> Text:
    """✗ disputed, ⚠ borderline, ✓ equal, ≈ accepted within printing or estimation tolerance."""
    if any(f.severity is Severity.ERROR for f in findings):
        return Text("✗", style="red")
    if findings:
        return Text("⚠", style="yellow")
    if not compared:
        return Text("")
    return Text("✓", style="green") if same else Text("≈", style="cyan")


def _findings_table(result: AuditResult) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False, expand=True)
    table.add_column("rule", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("where / what", ratio=1, overflow="fold")
    for f in result.findings:
        at = place(result.source, f)
        where = Text((f"{at}: " if at else "") + (f.pointer or "(input)"), style="dim")
        table.add_row(
            Text(f.rule, style="bold"),
            Text(f.severity.value, style=_SEVERITY_STYLE[f.severity]),
            Text.assemble(where, "\n", f.message),
        )
    return table


def _panel(result: AuditResult) -> Panel:
    parts: list[Any] = []
    errors, warnings = result.count(Severity.ERROR), result.count(Severity.WARNING)
    status = Text.assemble(
        (result.status.upper(), _STATUS_STYLE.get(result.status, "bold")),
        f"  {plural(errors, 'error')}, {plural(warnings, 'warning')}, {result.count(Severity.INFO)} info",
    )
    parts.append(status)
    if result.claimed or result.recomputed:
        parts.append(_comparison_table(result))
    if result.rerun:
        parts.append(Text(rerun_line(result.rerun), style="green" if result.rerun.get("reproduced") else "red"))
        parts += [Text(line, style="dim") for line in probe_lines(result.rerun)]
    if result.findings:
        parts.append(_findings_table(result))
    else:
        parts.append(Text("no findings", style="green"))
    name = STDIN_NAME if result.source == STDIN else result.source
    return Panel(Group(*parts), title=Text(name, style="bold"), title_align="left", expand=True)


def rerun_line(rerun: dict[str, Any]) -> str:
    """The rerun's outcome in one line: reproduced or not, where and how long it ran, and
    what the rerun's own numbers say (keys a record lacks are left out).

    ``rerun: reproduced (cpu, 12.3 s) — verdict better, p = 0.0078``
    """
    outcome = "reproduced" if rerun.get("reproduced") else "NOT reproduced"
    if rerun.get("seconds") is None and not rerun.get("cached"):
        return f"rerun: {outcome} (nothing was run)"
    ran = [str(rerun.get("device") or "?")]
    if rerun.get("seconds") is not None:
        ran.append(f"{display(rerun['seconds'])} s")
    if rerun.get("exit_code") not in (None, 0):
        ran.append(f"exit {rerun['exit_code']}")
    text = f"rerun: {outcome} ({', '.join(ran)})"
    numbers = [f"{label}{display(rerun[key])}" for key, label in _RERUN_NUMBERS if rerun.get(key) is not None]
    if numbers:
        text += " — " + ", ".join(numbers)
    return text + (" (cached)" if rerun.get("cached") else "")


def probe_lines(rerun: dict[str, Any]) -> list[str]:
    """What the probe saw (``rerun.activity``) and the replication on shifted seeds, a line each when present.

    ``training: trained (120 optimizer steps, 480 forward calls, 120 backward passes on cpu)``
    ``replication (seeds +1000): replicated — verdict worse, delta_mean = 0.29, p = 0.016``
    """
    lines = []
    activity = rerun.get("activity")
    if activity:
        if activity.get("status") in ("not observed", "undone"):
            lines.append(f"training: {activity.get('status')} ({activity.get('why')})")
        else:
            counts = (
                f"{activity.get('optimizer_steps')} optimizer steps, {activity.get('forward_calls')} forward calls, "
                f"{activity.get('backward_calls')} backward passes"
            )
            devices = ", ".join(activity.get("devices") or []) or "no device"
            lines.append(f"training: {activity.get('status')} ({counts} on {devices})")
    replication = rerun.get("replication")
    if replication:
        word = {True: "replicated", False: "NOT replicated"}.get(replication.get("replicated"), "inconclusive")
        numbers = [
            f"{label}{display(replication[key])}" for key, label in _RERUN_NUMBERS if replication.get(key) is not None
        ]
        text = f"replication (seeds +{replication.get('seed_offset')}): {word}"
        lines.append(text + (" — " + ", ".join(numbers) if numbers else f" — {replication.get('why')}"))
    return lines


# The rerun's own statistics, as the record names them, and how the line shows them.
_RERUN_NUMBERS = (("verdict", "verdict "), ("delta_mean", "delta_mean = "), ("p_value", "p = "))


def make_console(stream: TextIO) -> Console:
    is_tty = hasattr(stream, "isatty") and stream.isatty()
    width = None if is_tty else int(os.environ.get("COLUMNS", "120"))
    return Console(file=stream, width=width, highlight=False, soft_wrap=False)


def write(run: Run, stream: TextIO, *, details: int | None = DETAILED_FAILURES, failures_only: bool = False) -> None:
    """One transcript: its detailed panel.  Several: the panels of the first
    ``details`` failing ones (None: all), then one table, failures first, then totals.

    ``failures_only`` (``--quiet``): passing transcripts are left out of the
    table, and a run without a failure prints nothing, as ruff's ``--quiet`` does.
    """
    console = make_console(stream)
    failing = [r for r in run.results if r.status is not Status.PASS]
    if failures_only and not failing:
        return
    if len(run.results) == 1:
        console.print(_panel(run.results[0]))
        return
    from auditor.formats.batch_table import batch_report

    shown = failing if details is None else failing[:details]
    for result in shown:
        console.print(_panel(result))
    if len(failing) > len(shown):
        console.print(
            f"… and {len(failing) - len(shown)} more failing transcripts in the table below; "
            "`--details all` shows every one, `auditor audit FILE` one in detail"
        )
    for renderable in batch_report(run, console.width, failures_only=failures_only):
        console.print(renderable)


def write_statistics(run: Run, stream: TextIO) -> None:
    """``--statistics``: how often each rule fired, most frequent first (as ruff prints it)."""
    from auditor.formats.batch_table import statistics_table

    make_console(stream).print(statistics_table(run))
