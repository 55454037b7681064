"""The batch progress bar: files done/total, failures so far, rate and ETA on stderr.

Transient (it disappears when the batch ends) and shown only when stderr is a
terminal, so logs and pipes never receive control sequences.  The rerun
spinner's messages quote the answer's command line: they are cleaned of
terminal controls (:func:`auditor.formats.safe.clean`) and shown without
parsing rich markup.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from auditor.result import AuditResult, Status

Advance = Callable[[AuditResult], None]


def wanted(*, quiet: bool) -> bool:
    return not quiet and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()


@contextmanager
def progress_bar(total: int, *, enabled: bool) -> Iterator[Advance]:
    """Yields ``advance(result)``, to be called once per finished transcript."""
    if not enabled or total <= 1:
        yield lambda result: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text(f"{task.speed:.1f} files/s" if task.speed else "", style="progress.data.speed")

    columns = (
        TextColumn("auditing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[red]{task.fields[failures]} failing"),
        RateColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(file=sys.stderr), transient=True) as progress:
        task = progress.add_task("audit", total=total, failures=0)
        failures = 0

        def advance(result: AuditResult) -> None:
            nonlocal failures
            failures += result.status is not Status.PASS
            progress.update(task, advance=1, failures=failures)

        yield advance


@contextmanager
def rerun_spinner(*, enabled: bool) -> Iterator[Callable[[str], None] | None]:
    """A spinner with elapsed time on stderr while experiments rerun.

    Yields ``say(message)`` that replaces the spinner's text, or None when
    disabled (stderr not a terminal, ``--quiet``).
    """
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from auditor.formats.safe import clean

    columns = (SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn())
    with Progress(*columns, console=Console(file=sys.stderr), transient=True) as progress:
        task = progress.add_task("rerun: preparing", total=None)

        def say(message: str) -> None:
            progress.update(task, description=clean(message))

        yield say
