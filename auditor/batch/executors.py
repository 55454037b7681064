"""Where the audits of a batch run: this process and its worker processes
(:class:`AuditPool`), or a dask.distributed cluster (:class:`DaskPool`).

Both are context managers with ``completed() -> Iterator[(index, result)]``
in completion order (workers audit chunks of transcripts, :func:`chunks`); the caller puts results back in the batch's order, so
the output does not depend on where or in which order transcripts ran.
``arrivals()`` yields the same pairs grouped as they arrive (a worker's chunk
at once): a pool waits only between two groups, so a caller can do there
what must not wait (flush a stream).

A pool made with ``finish`` passes each result through it where the result is
made (:func:`audit_one`), so a worker sends back only what ``finish`` returns:
what the caller needs of a result, smaller and cheaper to pickle than the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, Self

from auditor.audit import audit_path
from auditor.errors import UsageError
from auditor.files.paths import STDIN
from auditor.options.models import AuditOptions, RerunOptions
from auditor.result import AuditResult

# A transcript takes ~10 ms once warm and a worker process far longer to
# start, so every worker gets at least this many transcripts.
MIN_TASKS_PER_PROCESS = 8
# Workers get transcripts in chunks: one task per file costs a round trip to the
# worker (pickling, a pipe, a wake-up) that is as long as a warm audit.  Chunks
# stay small enough that every worker gets several (the last one does not run
# alone) and that a progress bar still moves.
CHUNKS_PER_WORKER = 8
MAX_CHUNK = 64


class Task(NamedTuple):
    """One transcript to audit, with its options (a NamedTuple: a batch makes one per file, and
    pickles them to its workers a chunk at a time)."""

    path: str
    options: AuditOptions
    walked: bool = False  # found by a folder walk: skipped when it holds no sign of an answer


def audit_task(task: Task, rerun: RerunOptions | None = None) -> AuditResult:
    """Audit one file (module-level so that worker processes can run it)."""
    return audit_path(task.path, task.options, rerun=rerun, walked=task.walked)


# What a pool hands back for a result: the result itself, or what ``finish(result, task.options)`` made of it.
Finish = Callable[[AuditResult, AuditOptions], Any]


def audit_one(task: Task, rerun: RerunOptions | None = None, finish: Finish | None = None) -> Any:
    """Audit one task, then ``finish`` the result (module-level, so that it can run in a worker)."""
    result = audit_task(task, rerun)
    return result if finish is None else finish(result, task.options)


def audit_chunk(
    chunk: Sequence[tuple[int, Task]], rerun: RerunOptions | None = None, finish: Finish | None = None
) -> list[tuple[int, Any]]:
    """Audit a chunk of ``(index, task)`` pairs in one worker call; ``(index, result)`` pairs back."""
    return [(index, audit_one(task, rerun, finish)) for index, task in chunk]


def chunks(indices: Sequence[int], workers: int) -> list[list[int]]:
    """``indices`` cut into consecutive chunks: about :data:`CHUNKS_PER_WORKER` per worker, at most
    :data:`MAX_CHUNK` long, the last few a quarter as long.

    Workers take chunks in order, so the last ones decide how long one worker waits for the
    other at the end: with 64 transcripts a chunk that is some 20 ms of a core left idle.
    """
    workers = max(1, workers)
    size = max(1, min(MAX_CHUNK, len(indices) // (workers * CHUNKS_PER_WORKER)))
    tail = min(len(indices), 2 * workers * size) if size >= 4 else 0
    head = len(indices) - tail
    small = max(1, size // 4)
    return [list(indices[start : min(start + size, head)]) for start in range(0, head, size)] + [
        list(indices[start : start + small]) for start in range(head, len(indices), small)
    ]


def _start_worker() -> None:
    """Workers ignore Ctrl-C (the whole process group gets it): the parent
    cancels what is queued, so no worker dies halfway and leaves the pool broken.
    A worker collects cyclic garbage as any process does, even when it was forked
    while the parent's collector was paused (:mod:`auditor.batch.session`)."""
    import gc
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.enable()


class AuditPool:
    """Audit tasks with ``jobs`` worker processes; ``jobs=1`` stays in this process.

    Use as a context manager and iterate :meth:`completed` for ``(index, result)``
    pairs in completion order.  Worker processes are started when the pool is
    entered, so a caller that starts threads afterwards (a progress bar) never
    forks a process that holds a thread's lock.
    """

    def __init__(
        self, tasks: Sequence[Task], *, jobs: int = 1, rerun: RerunOptions | None = None, finish: Finish | None = None
    ) -> None:
        self.tasks = list(tasks)
        self.rerun = rerun
        self.finish = finish
        # stdin can only be read here; a single file is not worth a process.
        jobs = min(jobs, len(self.tasks) // MIN_TASKS_PER_PROCESS)
        in_process = jobs <= 1
        self._local = [i for i, t in enumerate(self.tasks) if in_process or t.path == STDIN]
        self._remote = [i for i, t in enumerate(self.tasks) if not (in_process or t.path == STDIN)]
        self._jobs = max(1, min(jobs, len(self._remote)))
        self._warm: tuple[int, Any] | None = None
        self._executor: Any = None
        self._futures: set[Any] = set()

    def __enter__(self) -> Self:
        if not self._remote:
            return self
        from concurrent.futures import ProcessPoolExecutor

        # Audit one transcript here first: it imports every rule module and
        # builds the schema validators, which forked workers then inherit.
        first = self._remote.pop(0)
        self._warm = (first, audit_one(self.tasks[first], self.rerun, self.finish))
        if self._remote:
            self._executor = ProcessPoolExecutor(max_workers=self._jobs, initializer=_start_worker)
            self._futures = {
                self._executor.submit(audit_chunk, [(i, self.tasks[i]) for i in chunk], self.rerun, self.finish)
                for chunk in chunks(self._remote, self._jobs)
            }
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:
            # On an interrupt, drop what has not started and wait for the few
            # transcripts in flight; finished results are already out.
            self._executor.shutdown(wait=True, cancel_futures=exc[0] is not None)

    def completed(self) -> Iterator[tuple[int, Any]]:
        for arrived in self.arrivals():
            yield from arrived

    def arrivals(self) -> Iterator[list[tuple[int, Any]]]:
        for index in self._local:
            yield [(index, audit_one(self.tasks[index], self.rerun, self.finish))]
        if self._warm is not None:
            yield [self._warm]
        if self._futures:
            from concurrent.futures import as_completed

            for future in as_completed(self._futures):
                chunk = future.result()
                self._futures.discard(future)  # a finished chunk's results are the caller's now
                yield chunk


class DaskPool:
    """Audit tasks on a dask.distributed cluster.

    ``scheduler`` is a scheduler address (``tls://host:8786``, with the TLS
    credentials of dask's configuration, or ``tcp://``) or ``local``, which
    starts a cluster of ``jobs`` single-threaded worker processes for this run,
    closed to other local accounts (:mod:`auditor.batch.dask_cluster`). Workers
    open the transcripts (and, with ``--rerun``, the experiment's files) by
    path, so a remote cluster needs the same paths on a shared file system; a
    rerun also needs bubblewrap and torch on the workers.
    Standard input can only be read here, so ``-`` is audited in this process.
    """

    def __init__(
        self,
        tasks: Sequence[Task],
        *,
        scheduler: str,
        jobs: int,
        rerun: RerunOptions | None,
        finish: Finish | None = None,
    ) -> None:
        self.tasks = list(tasks)
        self.scheduler = scheduler
        self.jobs = max(1, jobs)
        self.rerun = rerun
        self.finish = finish
        self._cluster: Any = None
        self._client: Any = None
        self._futures: list[Any] = []

    def __enter__(self) -> Self:
        try:
            from auditor.batch.dask_cluster import connect, start_local_cluster
        except ImportError:
            raise UsageError("--dask needs dask.distributed: pip install 'auditor[dask]'") from None
        if self.scheduler == "local":
            try:
                self._cluster, self._client = start_local_cluster(self.jobs)
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"cannot start the local dask cluster: {exc}") from None
        else:
            self._client = connect(self.scheduler)
        remote = [i for i, t in enumerate(self.tasks) if t.path != STDIN]
        rerun = _without_progress(self.rerun)
        # pure=False: the same path audited twice (a rerun) must run twice, not be deduplicated.
        self._futures = [
            self._client.submit(audit_chunk, [(i, self.tasks[i]) for i in chunk], rerun, self.finish, pure=False)
            for chunk in chunks(remote, self.jobs)
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            if exc and exc[0] is not None and self._futures:
                self._client.cancel(list(self._futures))
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()

    def completed(self) -> Iterator[tuple[int, Any]]:
        for arrived in self.arrivals():
            yield from arrived

    def arrivals(self) -> Iterator[list[tuple[int, Any]]]:
        for index, task in enumerate(self.tasks):
            if task.path == STDIN:
                yield [(index, audit_one(task, self.rerun, self.finish))]
        if self._futures:
            from dask.distributed import as_completed

            for future in as_completed(self._futures):
                chunk = future.result()
                future.release()  # the scheduler may forget it: the results are the caller's now
                yield chunk


def _without_progress(rerun: RerunOptions | None) -> RerunOptions | None:
    """A spinner callback lives in this process; it cannot travel to a worker."""
    if rerun is None or rerun.progress is None:
        return rerun
    return rerun.model_copy(update={"progress": None})


def make_pool(
    tasks: Sequence[Task],
    *,
    jobs: int,
    rerun: RerunOptions | None,
    dask: str | None = None,
    finish: Finish | None = None,
) -> AuditPool | DaskPool:
    """The pool for this batch: a dask cluster when ``dask`` names one, else local processes."""
    if dask:
        return DaskPool(tasks, scheduler=dask, jobs=jobs, rerun=rerun, finish=finish)
    return AuditPool(tasks, jobs=jobs, rerun=rerun, finish=finish)
