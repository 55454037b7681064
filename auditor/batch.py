"""Batches: find the transcripts under some paths, audit them (in parallel), and
run the cross-answer checks over the whole batch.

Nothing here prints: callers pass ``on_result`` to see each result as it
finishes (a progress bar, a jsonl stream) and render the batch themselves.
"""

from __future__ import annotations

import fnmatch
import json
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from .audit import STATUS_ERROR, AuditResult, audit_path, status_of
from .errors import UsageError
from .findings import Finding, Severity, matches
from .options import AuditOptions, RerunOptions

DEFAULT_INCLUDE = ("*.txt", "*.md", "*.json")
# Never walked into or picked up from a directory: an experiment workspace's
# own report (``bench_report.json`` beside its answer), hidden folders such as
# .git, and tool caches.  Paths named explicitly are always audited.
DEFAULT_EXCLUDE = ("bench_report.json", ".*", "__pycache__", "node_modules")
# A folder holding this file is an experiment's workspace: its other .json
# files (configs, metrics) are the experiment's, while the agent's answer beside
# them is stored as text (.txt, .md), the way the pipeline writes answers.
WORKSPACE_MARKER = "bench_report.json"
MIN_TASKS_PER_PROCESS = 8


# --------------------------------------------------------------------------- discovery


def _matches_any(name: str, relative: str, patterns: Iterable[str]) -> bool:
    """A glob matches a file or folder by its name or by its path below the walk root."""
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(relative, p) for p in patterns)


def _walk(root: str, include: Sequence[str], exclude: Sequence[str]) -> list[str]:
    """Transcripts below ``root``, following symlinks but never entering a folder twice."""
    seen: set[tuple[int, int]] = set()
    found: list[str] = []
    for folder, dirs, files in os.walk(root, followlinks=True):
        try:
            stat = os.stat(folder)
        except OSError:
            dirs[:] = []
            continue
        if (stat.st_dev, stat.st_ino) in seen:  # a symlink loop, or two links to one folder
            dirs[:] = []
            continue
        seen.add((stat.st_dev, stat.st_ino))
        prefix = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if prefix == "." else prefix + "/"
        dirs[:] = sorted(d for d in dirs if not _matches_any(d, prefix + d, exclude))
        workspace = WORKSPACE_MARKER in files
        for name in files:
            relative = prefix + name
            if workspace and name.lower().endswith(".json"):
                continue
            if _matches_any(name, relative, include) and not _matches_any(name, relative, exclude):
                path = os.path.join(folder, name)
                if os.path.isfile(path):
                    found.append(path)
    return sorted(found, key=lambda p: Path(p).parts)


def discover(
    paths: Sequence[str], include: Sequence[str] = DEFAULT_INCLUDE, exclude: Sequence[str] = ()
) -> list[str]:
    """Files to audit, in a deterministic order: arguments in the order given, each
    directory walked recursively and sorted; ``-`` is stdin.  A path named twice
    is audited once.  ``exclude`` adds to :data:`DEFAULT_EXCLUDE`.
    """
    exclude = (*DEFAULT_EXCLUDE, *exclude)
    out: list[str] = []
    for raw in paths:
        if raw == "-":
            out.append(raw)
        elif os.path.isdir(raw):
            out.extend(_walk(raw, include, exclude))
        elif os.path.exists(raw):
            out.append(raw)
        else:
            raise UsageError(f"no such file or directory: {raw}")
    unique: dict[str, str] = {}
    for path in out:
        unique.setdefault(os.path.normpath(path), path)
    return list(unique.values())


def options_for(
    path: str, options: AuditOptions, per_file_ignores: dict[str, tuple[str, ...]], root: Path | None
) -> AuditOptions:
    """``options`` plus the per-file ignores whose glob matches ``path``.

    Globs are matched against the path relative to ``root`` (the configuration
    file's folder) and, when they hold no ``/``, against the file name too.
    """
    if not per_file_ignores or path == "-":
        return options
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, root) if root is not None else path
    relative = relative.replace(os.sep, "/")
    extra: list[str] = []
    for glob, codes in per_file_ignores.items():
        if fnmatch.fnmatchcase(relative, glob) or ("/" not in glob and fnmatch.fnmatchcase(os.path.basename(path), glob)):
            extra.extend(codes)
    return replace(options, ignore=(*options.ignore, *extra)) if extra else options


# --------------------------------------------------------------------------- auditing


@dataclass(frozen=True)
class Task:
    path: str
    options: AuditOptions


def audit_task(task: Task, rerun: RerunOptions | None = None) -> AuditResult:
    """Audit one file (module-level so that worker processes can run it)."""
    return audit_path(task.path, task.options, rerun=rerun)


def _leave_interrupts_to_the_parent() -> None:
    """Workers ignore Ctrl-C (the whole process group gets it): the parent
    cancels what is queued, so no worker dies halfway and leaves the pool broken."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class AuditPool:
    """Audit tasks with ``jobs`` worker processes; ``jobs=1`` stays in this process.

    Use as a context manager and iterate :meth:`completed` for ``(index, result)``
    pairs in completion order.  Worker processes are started when the pool is
    entered, so a caller that starts threads afterwards (a progress bar) never
    forks a process that holds a thread's lock.
    """

    def __init__(self, tasks: Sequence[Task], *, jobs: int = 1, rerun: RerunOptions | None = None) -> None:
        self.tasks = list(tasks)
        self.rerun = rerun
        # stdin can only be read here; a single file is not worth a process.
        # A transcript takes ~10 ms once warm and a worker process far longer to
        # start, so every worker gets at least this many transcripts.
        jobs = min(jobs, len(self.tasks) // MIN_TASKS_PER_PROCESS)
        in_process = jobs <= 1
        self._local = [i for i, t in enumerate(self.tasks) if in_process or t.path == "-"]
        self._remote = [i for i, t in enumerate(self.tasks) if not (in_process or t.path == "-")]
        self._jobs = max(1, min(jobs, len(self._remote)))
        self._warm: tuple[int, AuditResult] | None = None
        self._executor: Any = None
        self._futures: dict[Any, int] = {}

    def __enter__(self) -> "AuditPool":
        if not self._remote:
            return self
        from concurrent.futures import ProcessPoolExecutor

        # Audit one transcript here first: it imports every rule module and
        # builds the schema validators, which forked workers then inherit.
        first = self._remote.pop(0)
        self._warm = (first, audit_task(self.tasks[first], self.rerun))
        if self._remote:
            self._executor = ProcessPoolExecutor(max_workers=self._jobs, initializer=_leave_interrupts_to_the_parent)
            self._futures = {self._executor.submit(audit_task, self.tasks[i], self.rerun): i for i in self._remote}
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:
            # On an interrupt, drop what has not started and wait for the few
            # transcripts in flight; finished results are already out.
            self._executor.shutdown(wait=True, cancel_futures=exc[0] is not None)

    def completed(self) -> Iterator[tuple[int, AuditResult]]:
        for index in self._local:
            yield index, audit_task(self.tasks[index], self.rerun)
        if self._warm is not None:
            yield self._warm
        if self._futures:
            from concurrent.futures import as_completed

            for future in as_completed(self._futures):
                yield self._futures[future], future.result()


def audit_all(
    tasks: Sequence[Task],
    *,
    jobs: int = 1,
    rerun: RerunOptions | None = None,
    on_result: Callable[[AuditResult], None] | None = None,
) -> list[AuditResult]:
    """Results in the order of ``tasks`` whatever ``jobs`` is; ``on_result`` sees each as it finishes."""
    results: list[AuditResult | None] = [None] * len(tasks)
    with AuditPool(tasks, jobs=jobs, rerun=rerun) as pool:
        for index, result in pool.completed():
            results[index] = result
            if on_result is not None:
                on_result(result)
    return [r for r in results if r is not None]


# --------------------------------------------------------------------------- cross-answer pass


def _select(findings: Iterable[Finding], options: AuditOptions) -> list[Finding]:
    """The rule selection and severity overrides :func:`auditor.audit.finish` applies."""
    out = []
    for f in findings:
        if (options.select and not matches(f.rule, options.select)) or (options.ignore and matches(f.rule, options.ignore)):
            continue
        if f.rule in options.severity_overrides:
            f = replace(f, severity=options.severity_overrides[f.rule])
        out.append(f)
    return out


def add_findings(result: AuditResult, new: Sequence[Finding], options: AuditOptions) -> AuditResult:
    """``result`` with ``new`` findings merged in (same order as ``finish``) and its status updated."""
    if not new:
        return result
    merged = sorted([*result.findings, *new], key=lambda f: (-f.severity.rank, f.rule, f.pointer))
    status = status_of(merged, options, recomputed=result.status != STATUS_ERROR)
    return replace(result, findings=tuple(merged), status=status)


def cross_check(
    results: Sequence[AuditResult],
    options_of: Callable[[str], AuditOptions],
    *,
    fdr: float,
    alpha: float,
    keep: Callable[[list[Finding], str], list[Finding]] = lambda findings, source: findings,
) -> tuple[list[AuditResult], Any]:
    """Run X901/X902 over a batch; returns the updated results and the
    :class:`~auditor.rules.cross.CrossSummary` (None for fewer than two results,
    where no cross-answer check applies).  ``keep`` filters new findings (a baseline).
    """
    if len(results) < 2:
        return list(results), None
    from .rules.cross import cross_findings

    found, summary = cross_findings(results, fdr=fdr, alpha=alpha)
    out = list(results)
    for index, findings in found.items():
        result = results[index]
        options = options_of(result.source)
        out[index] = add_findings(result, keep(_select(findings, options), result.source), options)
    return out, summary


# --------------------------------------------------------------------------- jsonl and resume


def record(result: AuditResult) -> dict[str, Any]:
    """One jsonl line: the JSON contract's result, plus the facts the cross checks
    need so that ``--resume`` can still run them over the whole batch."""
    data = result.to_dict()
    if result.extra.get("cross") is not None:
        data["cross"] = result.extra["cross"]
    return data


def from_record(data: dict[str, Any]) -> AuditResult:
    """The inverse of :func:`record` (findings, recomputed, claimed, rerun, cross facts)."""
    extra = {"cross": data["cross"]} if data.get("cross") is not None else {}
    return AuditResult(
        source=data["source"],
        status=data["status"],
        findings=tuple(Finding.from_dict(f) for f in data.get("findings", [])),
        recomputed=data.get("recomputed"),
        claimed=data.get("claimed"),
        rerun=data.get("rerun"),
        extra=extra,
    )


def _parse_line(line: str) -> AuditResult | None:
    try:
        data = json.loads(line)
        if isinstance(data, dict) and isinstance(data.get("source"), str) and "status" in data:
            return from_record(data)
    except (ValueError, KeyError, TypeError):
        pass  # a line cut short by an interrupt, or not a result: audited again
    return None


def resume_from(path: str | Path) -> dict[str, AuditResult]:
    """Results already in a jsonl file, by normalised source.

    The file is rewritten (atomically) with only its complete result lines,
    one per source: a line cut short by an interrupt and the summary line of
    an earlier run go, so appending the rest yields no duplicates.
    """
    path = Path(path)
    if not path.exists():
        return {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot resume from {path}: {exc}") from None
    done: dict[str, AuditResult] = {}
    kept: dict[str, str] = {}
    for line in lines:
        result = _parse_line(line)
        if result is not None:
            key = os.path.normpath(result.source)
            done[key], kept[key] = result, line
    atomic_write(path, "".join(line + "\n" for line in kept.values()))
    return done


def atomic_write(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: readers never see half a file."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        # mkstemp creates 0600; a report gets the permissions any new file would (0666 less umask).
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def failing(results: Iterable[AuditResult], fail_on: Severity | None) -> bool:
    """Whether the gate fails: a result failed, or one could not be audited (unless ``never``)."""
    return any(r.status != "pass" for r in results) if fail_on is not None else False
