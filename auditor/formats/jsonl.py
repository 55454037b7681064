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
line as audited (:mod:`auditor.resume`).  Readers that do not resume ignore it.

The module owns the line format both ways: :func:`record` and
:func:`from_record` convert a result, and :func:`resume_from` reads the
results of an interrupted run back for ``--resume``.
"""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from ..atomic import atomic_write, read_owned
from ..errors import UsageError
from ..findings import Finding
from ..paths import key
from ..result import AuditResult
from ..strings import json_encoder
from . import Run
from .safe import clean, clean_finding, clean_result, json_is_clean


def record(result: AuditResult) -> dict[str, Any]:
    """One jsonl line: the JSON contract's result, plus the facts the cross checks
    need so that ``--resume`` can still run them over the whole batch."""
    data = result.to_dict()
    if result.cross is not None:
        data["cross"] = result.cross
    return data


def from_record(data: dict[str, Any]) -> AuditResult:
    """The inverse of :func:`record` (findings, recomputed, claimed, rerun, cross facts)."""
    return AuditResult(
        source=data["source"],
        status=data["status"],
        findings=tuple(Finding.from_dict(f) for f in data.get("findings", [])),
        recomputed=data.get("recomputed"),
        claimed=data.get("claimed"),
        rerun=data.get("rerun"),
        cross=data.get("cross"),
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
    path: str | Path, accept: Callable[[str, Callable[[str], AuditResult | None]], AuditResult | None] | None = None
) -> dict[str, AuditResult]:
    """Results already in a jsonl file, by normalised source (:func:`auditor.paths.key`).

    ``accept(line, parse)`` decides which recorded lines count (the command line's
    :class:`auditor.resume.Resumable` checks each line's ``resume`` member); without it every
    complete result line does, for a file the caller wrote itself.  The file is rewritten
    (atomically, with its permissions) with only the lines that count, one per source: a line
    cut short by an interrupt, a line not trusted and the summary line of an earlier run go,
    so appending the rest yields no duplicates.  The file must be a regular file of the
    auditor's user (:func:`auditor.atomic.read_owned`).
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
    for line in text.splitlines():
        result = _parse_line(line) if accept is None else accept(line, _parse_line)
        if result is not None:
            source = key(result.source)
            done[source], kept[source] = result, line
    try:
        atomic_write(path, "".join(line + "\n" for line in kept.values()), mode=mode)
    except OSError as exc:
        raise UsageError(f"cannot resume from {path}: {exc}") from None
    return done


# One encoder for every line, built once (see json_encoder).
_dumps = json_encoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def result_line(result: AuditResult) -> str:
    return checked_result_line(result)[0]


def checked_result_line(result: AuditResult) -> tuple[str, bool]:
    """:func:`result_line`, and whether ``result`` held nothing to clean (every string of its record as it was)."""
    # Lines are written before the Run exists, so they are cleaned here (see .safe); a line
    # with nothing to clean in it (nearly every line) is serialised once and written as it is.
    # Cleaning changes strings only, so a value JSON refuses (NaN) is refused either way.
    line = _encoded(result)
    if json_is_clean(line):
        return line + "\n", True
    return _dumps(record(clean_result(result))) + "\n", False


def _encoded(result: AuditResult) -> str:
    """``_dumps(record(result))``, its cross facts' per-seed values spelled once per batch.

    The answers of one setup share their baseline, so their lines repeat its per-seed
    values, and the shortest spelling of a float is most of what writing a line costs.
    """
    data = result.to_dict()
    cross = result.cross
    spelled = _cross_json(cross) if data and type(cross) is dict else None
    if spelled is None:
        return _dumps(record(result))
    return _dumps(data)[:-1] + ',"cross":' + spelled + "}"  # "cross" is the record's last member


# The members of cross_facts (auditor.extracts), in their order.
_CROSS_KEYS = ("track", "model", "baseline_cfg", "baseline_per_seed", "baseline_pointer", "verdict_pointer")
# The spelling of recent per-seed lists, by their values' bits (-0.0 is not 0.0 here).
_PER_SEED_JSON: dict[bytes, str] = {}
_MAX_PER_SEED_JSON = 256


def _cross_json(cross: dict[str, Any]) -> str | None:
    """``_dumps(cross)`` for the cross facts of an answer whose per-seed values are floats; else None."""
    per_seed = cross.get("baseline_per_seed")
    if tuple(cross) != _CROSS_KEYS or type(per_seed) is not list or not all(type(v) is float for v in per_seed):
        return None
    key = array("d", per_seed).tobytes()
    values = _PER_SEED_JSON.get(key)
    if values is None:
        values = _dumps(per_seed)  # a non-finite value raises here, as in the whole record
        if len(_PER_SEED_JSON) >= _MAX_PER_SEED_JSON:
            _PER_SEED_JSON.clear()
        _PER_SEED_JSON[key] = values
    head = _dumps({"track": cross["track"], "model": cross["model"], "baseline_cfg": cross["baseline_cfg"]})
    tail = _dumps({"baseline_pointer": cross["baseline_pointer"], "verdict_pointer": cross["verdict_pointer"]})
    return head[:-1] + ',"baseline_per_seed":' + values + "," + tail[1:]


def summary_line(run: Run, late_findings: Iterable[tuple[str, Finding]] = ()) -> str:
    data: dict[str, Any] = {"summary": run.summary}
    if run.cross is not None:
        data["cross"] = run.cross.to_dict()
    data["late_findings"] = [{"source": clean(source), **clean_finding(f).to_dict()} for source, f in late_findings]
    data["config"] = run.config
    return _dumps(data) + "\n"


class Stream:
    """Writes result lines as they arrive.  The caller calls :meth:`flush` whenever it has written
    every result it holds, before it waits for more, so an interrupt loses nothing finished and a
    reader sees each line as soon as the results that arrived with it are written."""

    def __init__(self, stream: TextIO, sign: Callable[[str, str, str | None], str] | None = None) -> None:
        self.stream = stream
        # sign(line, source, transcript sha256): the line with its "resume" member (auditor.resume).
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
        self.stream.write(summary_line(run, late_findings))
        self.stream.flush()


def write(run: Run, stream: TextIO) -> None:
    """The whole run at once (every result already carries its cross-answer findings)."""
    for result in run.results:
        stream.write(result_line(result))
    stream.write(summary_line(run))
