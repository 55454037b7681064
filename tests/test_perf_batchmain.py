"""The batch's parent process takes shortcuts on its per-result path; each gives what the general path gives.

* X901 compares equal compact values in C, and the kept findings are those at or above one severity
  threshold;
* lines are flushed once per arrival from the pool, before it is waited on again.
"""

from __future__ import annotations

import math
from array import array

from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.batch.executors import audit_task
from auditor.batch.session import SessionOptions, _kept_after_streaming, run_session
from auditor.findings import Finding, Severity
from auditor.options.config import Config, resolve
from auditor.options.models import AuditOptions
from auditor.result import AuditResult, Status
from auditor.rules.cross import _first_difference

_VALUES = st.lists(st.floats() | st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-300]), max_size=6)


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.data())
def test_equal_compact_values_compare_as_the_loop_does(a, data) -> None:
    other = data.draw(st.lists(st.floats(), min_size=len(a), max_size=len(a)))
    one_changed = list(a)
    if a:  # the same values but one, anywhere (the last one too)
        at = data.draw(st.integers(0, len(a) - 1))
        one_changed[at] = data.draw(st.floats())
    b = data.draw(st.sampled_from([list(a), [v * (1 + 1e-7) for v in a], one_changed, other]))
    compact = _first_difference(array("d", a), array("d", b))
    assert compact == _first_difference(list(a), list(b))  # lists take the loop


def test_kept_findings_are_those_that_can_decide_the_status() -> None:
    findings = tuple(Finding(f"A30{i}", severity, "m") for i, severity in enumerate(Severity))
    result = AuditResult("a.txt", Status.FAIL, findings, recomputed={}, claimed={})
    for fail_on in (None, *Severity):
        options = AuditOptions(fail_on=fail_on)
        kept = _kept_after_streaming(result, options).findings
        # The rule as _kept_after_streaming documents it: at or above fail-on, and every error.
        assert kept == tuple(
            f
            for f in findings
            if f.severity is Severity.ERROR or (fail_on is not None and f.severity.rank >= fail_on.rank)
        )


def _pool_in_this_process(arrivals):  # noqa: ANN001, ANN202
    """A stand-in for ``make_pool`` whose ``arrivals()`` is ``arrivals(tasks)``, run in this process."""

    class Pool:
        def __init__(self, tasks, **_) -> None:  # noqa: ANN001
            self.tasks = tasks

        def __enter__(self) -> Pool:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def arrivals(self):  # noqa: ANN201
            return arrivals(self.tasks)

    return Pool


def test_lines_are_in_the_file_before_the_pool_is_waited_on(tmp_path, monkeypatch) -> None:
    import auditor.batch.session as session

    out = tmp_path / "out.jsonl"
    seen: list[int] = []

    def one_arrival_at_a_time(tasks):  # noqa: ANN001, ANN202
        """Two arrivals (two results, then one); it notes the file's lines when it would wait."""
        results = [(i, audit_task(task)) for i, task in enumerate(tasks)]
        for arrived in (results[:2], results[2:]):
            yield arrived
            seen.append(len(out.read_text(encoding="utf-8").splitlines()))

    monkeypatch.setattr(session, "make_pool", _pool_in_this_process(one_arrival_at_a_time))
    paths = sorted(str(p) for p in (FIXTURES / "batches" / "x901").glob("*.txt"))
    run_session(paths, resolve(Config()), SessionOptions(format="jsonl", output=str(out), quiet=True))
    assert seen == [2, 3]
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4  # and the summary line


def test_workers_send_back_the_lines_and_kept_results_a_run_in_this_process_makes(tmp_path) -> None:
    """jobs=2 (worker processes make each line and kept result) against jobs=1 (this process does)."""
    import pickle

    from auditor.files.discovery import discover

    paths = discover([str(FIXTURES / "batches"), str(FIXTURES / "defects"), str(FIXTURES / "answers")])
    assert len(paths) >= 16  # enough for two worker processes (executors.MIN_TASKS_PER_PROCESS)
    settings = resolve(Config())
    runs, lines = [], []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}.jsonl"
        runs.append(
            run_session(paths, settings, SessionOptions(format="jsonl", output=str(out), jobs=jobs, quiet=True))
        )
        lines.append(out.read_text(encoding="utf-8").splitlines())
    one, two = lines
    assert sorted(one[:-1]) == sorted(two[:-1]) and one[-1] == two[-1]  # lines come in completion order
    assert runs[0].results == runs[1].results
    # Unpickled kept results share their strings again, as _kept_after_streaming made them.
    first: dict[str, str] = {}
    for result in runs[1].results:
        strings = [result.cross.track, result.cross.cfg_text] if result.cross is not None else []
        strings += [v for v in (result.claimed or {}).values() if isinstance(v, str)]
        assert all(first.setdefault(text, text) is text for text in strings)
    assert len(first) < len(runs[1].results)
    facts = next(r.cross for r in runs[1].results if r.cross is not None)
    again = pickle.loads(pickle.dumps(facts))
    assert again == facts and again.track is facts.track and again.cfg_text is facts.cfg_text


def test_a_result_json_cannot_write_reaches_the_parent_whole() -> None:
    """The parent then fails on it where it always did, writing its line (json refuses NaN)."""
    from auditor.batch.session import _ready_to_stream

    broken = AuditResult("a.txt", Status.PASS, (), recomputed={"p_value": math.nan})
    assert _ready_to_stream(broken, AuditOptions()) is broken
    skipped = AuditResult("README.txt", Status.SKIPPED, ())
    assert _ready_to_stream(skipped, AuditOptions()) is skipped


def test_cycle_collection_pauses_while_results_arrive_and_comes_back(tmp_path, monkeypatch) -> None:
    """Paused while the run gathers results (a full collection walks every kept result again),
    enabled again afterwards, after an interrupt too, and left off for a caller that turned it off."""
    import gc

    import auditor.batch.session as session

    enabled_while_arriving: list[bool] = []

    def one_by_one(tasks):  # noqa: ANN001, ANN202
        for i, task in enumerate(tasks):
            enabled_while_arriving.append(gc.isenabled())
            if task.path.endswith("interrupt"):
                raise KeyboardInterrupt
            yield [(i, audit_task(task))]

    monkeypatch.setattr(session, "make_pool", _pool_in_this_process(one_by_one))
    paths = sorted(str(p) for p in (FIXTURES / "batches" / "x901").glob("*.txt"))
    options = SessionOptions(format="jsonl", output=str(tmp_path / "out.jsonl"), quiet=True)
    assert gc.isenabled()
    gc.unfreeze()
    run = run_session(paths, resolve(Config()), options)
    assert enabled_while_arriving == [False] * len(paths) and gc.isenabled()
    # What the run holds was frozen when it was done: no later collection walks it again.
    walked = {id(o) for o in gc.get_objects()}
    assert gc.get_freeze_count() > 0 and not any(id(result) in walked for result in run.results)
    gc.unfreeze()

    enabled_while_arriving.clear()
    try:
        run_session([*paths, "interrupt"], resolve(Config()), options)
    except KeyboardInterrupt:
        pass
    assert enabled_while_arriving[-1] is False and gc.isenabled()

    gc.disable()
    try:
        run_session(paths, resolve(Config()), options)
        assert not gc.isenabled()
    finally:
        gc.enable()

    # A dask client's event loop and sandboxed reruns make cyclic garbage: collected as usual.
    from dataclasses import replace

    from auditor.options.models import RerunOptions

    for rerun, dask in ((RerunOptions(), None), (None, "tcp://127.0.0.1:1")):
        enabled_while_arriving.clear()
        run_session(paths, resolve(Config()), replace(options, dask=dask), rerun=rerun)
        assert enabled_while_arriving == [True] * len(paths)


def _collecting(result: AuditResult, options: AuditOptions) -> tuple[str, bool]:
    """A pool's ``finish``: whether the process that made ``result`` collects cyclic garbage."""
    import gc

    return result.source, gc.isenabled()


def test_workers_forked_while_collection_is_paused_collect_as_usual() -> None:
    """The parent pauses its collector around the pool (session); its workers are long-lived and collect."""
    import gc

    from auditor.batch.executors import AuditPool, Task

    paths = sorted(str(p) for p in (FIXTURES / "answers").glob("*.txt")) * 10  # enough for two workers
    gc.disable()
    try:
        with AuditPool([Task(p, AuditOptions()) for p in paths], jobs=2, finish=_collecting) as pool:
            seen = [collects for _, (_, collects) in pool.completed()]
    finally:
        gc.enable()
    assert len(seen) == len(paths)
    assert seen[1:] == [True] * (len(paths) - 1)  # the first is the parent's own warm-up audit
