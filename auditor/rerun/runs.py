"""One experiment's run: from the cache or the sandbox, the report it regenerated, and its replication.

:class:`Run` is the experiment ready to run (the command on its staged copy,
where and under what limits); :func:`outcome` takes its stored outcome from the
rerun cache or runs it; :func:`rerun_report` reads the report it regenerated;
:func:`replicate` is ``--replicate``'s second run, every seed shifted, judged by
:mod:`.replication`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from auditor.findings import Finding
from auditor.options.models import AuditOptions, RerunOptions
from auditor.rerun import cache, compare, probe, replication, sandbox
from auditor.rerun.device import Device, Interpreter
from auditor.rerun.failure import failure_finding
from auditor.rerun.record import ReportSource, RerunRecord
from auditor.rerun.sandbox import Outcome
from auditor.rerun.workspace import REPORT_NAME

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Run:
    """One experiment ready to run: the command on its staged copy, where and under what limits."""

    python: str
    argv: list[str]  # the command as recorded: python, script, arguments
    probed: list[str]  # the command run: the same under the auditor's probe (auditor.rerun.probe)
    stage: Path
    device: Device
    interpreter: Interpreter
    limits: sandbox.Limits
    bwrap: sandbox.Bubblewrap | None


def outcome(
    run: Run, staged: list[tuple[str, int, str]], rerun: RerunOptions, say: Progress, offset: int = 0
) -> tuple[Outcome, bool]:
    """The run's outcome, from the cache when an intact entry has its key; whether it came from there.

    Without ``use_cache`` (``--no-cache``) the cache is neither read nor written: the experiment runs.
    The key holds the probed command, the probe's own source (:data:`probe.HOOK_DIGEST`: the command
    only names it) and the seed offset: a replication is kept apart from the first run, and each
    offset apart from the others.
    """
    folder = cache.entries_folder(rerun.cache_dir)
    key = None
    if rerun.use_cache:
        key = cache.run_key(
            staged,
            [*run.probed, f"auditor-probe={probe.HOOK_DIGEST}", f"auditor-seed-offset={offset}"],
            run.device.kind,
            cache.interpreter_identity(run.python, run.interpreter.torch_version),
            run.limits,
            sandboxed=run.bwrap is not None,
        )
        stored = cache.load(folder, key)
        if stored is not None:
            say(f"rerun: {' '.join(run.argv[1:])} on {run.device.kind}: unchanged, taken from the cache")
            return stored, True
    experiment = sandbox.Experiment(
        python=run.python,
        command=run.probed,
        stage=run.stage,
        report_name=REPORT_NAME,
        device_env=run.device.env,
        device_nodes=run.device.device_nodes,
        keep_paths=run.interpreter.paths,
        probe_offset=offset,
    )
    say(f"rerun: running {' '.join(run.argv[1:])} on {run.device.kind} (timeout {rerun.timeout:g} s)")
    done = sandbox.run(run.bwrap, experiment, run.limits)
    if key is not None:
        cache.store(folder, key, done)  # best effort: an unwritable cache never fails the audit
    return done, False


@dataclass(frozen=True)
class RegeneratedReport:
    """The report a run regenerated and where it came from, or why there is none."""

    report: dict[str, Any] | None
    source: ReportSource | None  # None: no report (``problem`` says why)
    problem: str = ""


def rerun_report(done: Outcome, options: AuditOptions) -> RegeneratedReport:
    """The regenerated report: the file the run wrote, else a report printed on stdout."""
    value, problem = (
        compare.parse_json_bytes(done.report)
        if done.report is not None
        else (None, done.report_problem or "not written")
    )
    report = compare.as_report(value)
    if report is not None:
        return RegeneratedReport(report, "file")
    report = compare.report_from_stdout(done.stdout, options)
    if report is not None:
        return RegeneratedReport(report, "stdout")
    if problem is None:
        problem = "holds no bench report (no baseline and idea)"
    elif problem == "not written":
        problem = "was not written and no report was printed on stdout"
    return RegeneratedReport(None, None, problem)


def claimed_report(document: dict[str, Any]) -> dict[str, Any]:
    """The answer's embedded bench report ({} when it has none)."""
    claimed = document.get("bench_report")
    return claimed if isinstance(claimed, dict) else {}


def replicate(
    document: dict[str, Any],
    first: Outcome,
    run: Run,
    staged: list[tuple[str, int, str]],
    rerun: RerunOptions,
    options: AuditOptions,
    record: RerunRecord,
    say: Progress,
) -> tuple[list[Finding], RerunRecord]:
    """The second run, every seed shifted (``--replicate``): R809, R810 and the ``replication`` object."""
    offset = rerun.replicate_offset if rerun.replicate_offset is not None else replication.draw_offset()
    say(f"rerun: replicating on fresh seeds (every seed shifted by {offset})")
    done, cached = outcome(run, staged, rerun, say, offset)
    seen = probe.activity(done.activity)
    shifted = seen["seeds_total"] if any(s["seed"] != s["used"] for s in seen["seeds_set"]) else 0
    again = rerun_report(done, options) if done.ok else RegeneratedReport(None, None)
    before = rerun_report(first, options)
    if not done.ok:
        why = failure_finding(done, run.limits, run.bwrap).message
        found, out = replication.unusable(offset, f"the replication failed: {why[:300]}", shifted)
    elif again.report is None:
        found, out = replication.unusable(offset, f"the replication's {REPORT_NAME} {again.problem}", shifted)
    elif before.report is None:  # not reached: a replication follows a first run that gave a report
        found, out = replication.unusable(offset, f"the first run's {REPORT_NAME} {before.problem}", shifted)
    else:
        claimed = claimed_report(document)
        found, out = replication.judge_replication(claimed, before.report, again.report, offset, shifted, options)
    out.update(seconds=round(done.seconds, 3), cached=cached, activity_status=seen["status"])
    return found, replace(record, replication=out)
