"""Where the audits of a batch run: this process and its worker processes
(:class:`auditor.batch.AuditPool`), or a dask.distributed cluster.

Both are context managers with ``completed() -> Iterator[(index, result)]``
in completion order; the session puts results back in the batch's order, so
the output does not depend on where or in which order transcripts ran.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from .audit import AuditResult
from .batch import AuditPool, Task, audit_task
from .errors import UsageError
from .options import RerunOptions

# How long to wait for a remote scheduler before calling the address wrong.
CONNECT_TIMEOUT_S = 10


class DaskPool:
    """Audit tasks on a dask.distributed cluster.

    ``scheduler`` is a scheduler address (``tcp://host:8786``) or ``local``,
    which starts a LocalCluster of ``jobs`` single-threaded worker processes
    for this run. Workers open the transcripts (and, with ``--rerun``, the
    experiment's files) by path, so a remote cluster needs the same paths on a
    shared file system; a rerun also needs bubblewrap and torch on the workers.
    Standard input can only be read here, so ``-`` is audited in this process.
    """

    def __init__(self, tasks: Sequence[Task], *, scheduler: str, jobs: int, rerun: RerunOptions | None) -> None:
        self.tasks = list(tasks)
        self.scheduler = scheduler
        self.jobs = max(1, jobs)
        self.rerun = rerun
        self._cluster: Any = None
        self._client: Any = None
        self._futures: dict[Any, int] = {}

    def __enter__(self) -> "DaskPool":
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("--dask needs dask.distributed: pip install 'auditor[dask]'") from None
        try:
            if self.scheduler == "local":
                self._cluster = LocalCluster(
                    n_workers=self.jobs, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._client = Client(self._cluster)
            else:
                self._client = Client(self.scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            self.__exit__(None, None, None)
            raise UsageError(f"cannot reach the dask scheduler at {self.scheduler}: {exc}") from None
        remote = [i for i, t in enumerate(self.tasks) if t.path != "-"]
        # pure=False: the same path audited twice (a rerun) must run twice, not be deduplicated.
        self._futures = {
            self._client.submit(audit_task, self.tasks[i], _without_progress(self.rerun), pure=False): i
            for i in remote
        }
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            if exc and exc[0] is not None and self._futures:
                self._client.cancel(list(self._futures))
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()

    def completed(self) -> Iterator[tuple[int, AuditResult]]:
        for index, task in enumerate(self.tasks):
            if task.path == "-":
                yield index, audit_task(task, self.rerun)
        if self._futures:
            from dask.distributed import as_completed

            for future in as_completed(list(self._futures)):
                yield self._futures[future], future.result()


def _without_progress(rerun: RerunOptions | None) -> RerunOptions | None:
    """A spinner callback lives in this process; it cannot travel to a worker."""
    if rerun is None or rerun.progress is None:
        return rerun
    from dataclasses import replace

    return replace(rerun, progress=None)


def make_pool(
    tasks: Sequence[Task], *, jobs: int, rerun: RerunOptions | None, dask: str | None = None
) -> AuditPool | DaskPool:
    """The pool for this batch: a dask cluster when ``dask`` names one, else local processes."""
    if dask:
        return DaskPool(tasks, scheduler=dask, jobs=jobs, rerun=rerun)
    return AuditPool(tasks, jobs=jobs, rerun=rerun)
