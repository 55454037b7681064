"""``--format jsonl``: one JSON result per line, written as each transcript finishes.

Each line is one result of the JSON contract (``source``, ``status``,
``findings``, ``recomputed``, ...) plus ``cross``, the facts the cross-answer
checks compare, so that ``--resume`` can run them over the whole batch.
Lines come in completion order (``--jobs`` > 1 finishes out of order); every
line names its ``source``.  When the run completes, one last line holds the
summary: ``{"summary": {...}, "cross": {...}, "late_findings": [...]}``, where
``late_findings`` are the cross-answer findings (X9xx) that could only be
known after every line above was written, each with its ``source``, and
``config``, the run's configuration and policy, as in the json format.

A result line written by the command line ends with ``resume``: the SHA-256 of
the transcript's bytes, the fingerprint of the options that decided the line and
an HMAC over both and the line, which ``--resume`` checks before it counts the
line as audited (:mod:`auditor.batch.resume`).  Readers that do not resume ignore it.

The lines are the JSON contract's (:mod:`auditor.formats.contract`): :func:`result_line` and
:func:`from_record` convert a result, and :func:`resume_from` reads the
results of an interrupted run back for ``--resume``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from auditor.errors import UsageError
from auditor.files.atomic import atomic_write, read_owned
from auditor.files.paths import key
from auditor.findings import Finding
from auditor.formats import Run
from auditor.formats.contract import ResultLine, json_text, summary_line_pieces
from auditor.formats.safe import clean, clean_finding
from auditor.result import AuditResult


def from_record(data: dict[str, Any]) -> AuditResult:
    """A result read back from its jsonl line (findings, recomputed, claimed, rerun, cross facts);
    a line that is not the contract's :class:`~auditor.formats.contract.ResultLine` raises ValueError."""
    line = ResultLine.model_validate(data).dump()
    return AuditResult(
        source=line["source"],
        status=line["status"],
        findings=tuple(Finding.from_dict(f) for f in line["findings"]),
        recomputed=line["recomputed"],
        claimed=line.get("claimed"),
        rerun=line.get("rerun"),
        cross=line.get("cross"),
    )


def _parse_line(line: str) -> AuditResult | None:
    try:
        data = json.loads(line)
        if isinstance(data, dict) and isinstance(data.get("source"), str) and "status" in data:
            return from_record(data)
    except (ValueError, KeyError, TypeError):
        pass  # a line cut short by an interrupt, or not a result: audited again
    return None


def resume_from(
    path: str | Path, *, accept: Callable[[str, Callable[[str], AuditResult | None]], AuditResult | None]
) -> dict[str, AuditResult]:
    """Results already in a jsonl file, by normalised source (:func:`auditor.files.paths.key`).

    ``accept(line, parse)`` decides which recorded lines count (the command line's
    :class:`auditor.batch.resume.Resumable` checks each line's ``resume`` member); it is required, so
    that no caller trusts a file's lines by default.  The file is rewritten
    (atomically, with its permissions) with only the lines that count, one per source: a line
    cut short by an interrupt, a line not trusted and the summary line of an earlier run go,
    so appending the rest yields no duplicates.  The file must be a regular file of the
    auditor's user (:func:`auditor.files.atomic.read_owned`).
    """
    try:
        found = read_owned(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot resume from {path}: {exc}") from None
    if found is None:
        return {}
    text, mode = found
    done: dict[str, AuditResult] = {}
    kept: dict[str, str] = {}
    for line in text.split("\n"):  # not splitlines(): U+2028 in a source name is no line end
        result = accept(line, _parse_line)
        if result is not None:
            source = key(result.source)
            done[source], kept[source] = result, line
    try:
        atomic_write(path, "".join(line + "\n" for line in kept.values()), mode=mode)
    except OSError as exc:
        raise UsageError(f"cannot resume from {path}: {exc}") from None
    return done


def result_line(result: AuditResult) -> str:
    """The jsonl line of ``result``, cleaned for display (:class:`~auditor.formats.contract.ResultLine`)."""
    return json_text(ResultLine.of(result)) + "\n"


def summary_line(run: Run, late_findings: Iterable[tuple[str, Finding]] = ()) -> str:
    """The run's last line (:class:`~auditor.formats.contract.SummaryLine`); the Run's strings are clean already."""
    return "".join(_summary_pieces(run, late_findings))


def _summary_pieces(run: Run, late_findings: Iterable[tuple[str, Finding]]) -> Iterator[str]:
    """:func:`summary_line` in pieces, one late finding at a time (:func:`~auditor.formats.contract.summary_line_pieces`)."""
    late = ({"source": clean(source), **clean_finding(f).to_dict()} for source, f in late_findings)
    yield from summary_line_pieces(run, late)
    yield "\n"


class Stream:
    """Writes result lines as they arrive.  The caller calls :meth:`flush` whenever it has written
    every result it holds, before it waits for more, so an interrupt loses nothing finished and a
    reader sees each line as soon as the results that arrived with it are written."""

    def __init__(self, stream: TextIO, sign: Callable[[str, str, str | None], str] | None = None) -> None:
        self.stream = stream
        # sign(line, source, transcript sha256): the line with its "resume" member (auditor.batch.resume).
        self.sign = sign

    def write_result(self, result: AuditResult) -> None:
        self.write_line(result_line(result), result.source, result.transcript_sha256)

    def write_line(self, line: str, source: str = "", sha256: str | None = None) -> None:
        """A result's :func:`result_line`, made where the result was (a worker process), with the
        ``source`` it names and the SHA-256 of the transcript's bytes it was audited from."""
        self.stream.write(line if self.sign is None else self.sign(line, source, sha256))

    def flush(self) -> None:
        self.stream.flush()

    def write_summary(self, run: Run, late_findings: Iterable[tuple[str, Finding]] = ()) -> None:
        self.stream.writelines(_summary_pieces(run, late_findings))
        self.stream.flush()


def write(run: Run, stream: TextIO) -> None:
    """The whole run at once (every result already carries its cross-answer findings)."""
    for result in run.results:
        stream.write(result_line(result))
    stream.write(summary_line(run))
