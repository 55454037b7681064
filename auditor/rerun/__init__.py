"""``--rerun``: run the experiment an answer references again, in a sandbox, and compare.

:func:`run_and_compare` is the only entry point.  It never raises for a bad
answer (every problem is a finding R801-R807); it raises
:class:`SandboxUnavailable` (an :class:`~auditor.errors.AuditorError`) when the
rerun cannot be set up as asked: no bubblewrap, no namespaces, no GPU for
``--device cuda``, no such interpreter.  torch is never imported here; the
experiment and the device probe both run in the sandbox.

Order: the command is parsed and the workspace checked (files the answer's
owner may not read, links, oversized files, refused workspaces: R801/R802),
then the interpreter is refused if it lies in the workspace (R802), probed in
the sandbox, checked again against what it reported, and only then are the
files copied to a stage and the experiment run.

With the rerun cache (:mod:`.cache`, on unless ``use_cache`` is off), an
experiment whose files, command, device, interpreter and limits are unchanged
is not run again: its stored outcome is judged like a live one, and the record
says ``"cached": true``; the probe's answer is remembered too (:mod:`.probe_memo`).
The record (:class:`~.record.RerunRecord`) also carries the rerun's own per-seed
values and the statistics recomputed from them.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from auditor.findings import Finding
from auditor.options.models import AuditOptions, RerunOptions
from auditor.parse.strings import plural
from auditor.rerun import cache, compare, probe, probe_memo, replication, sandbox
from auditor.rerun.command import Command, CommandRefused, parse_how_to_run
from auditor.rerun.device import (
    DeviceUnavailable,
    Interpreter,
    choose_device,
    gpu_device_nodes,
    interpreter_refusal,
    probe_interpreter,
    resolve_python,
)
from auditor.rerun.failure import failure_finding, with_tail
from auditor.rerun.record import RerunRecord
from auditor.rerun.runs import Progress, Run, claimed_report, outcome, replicate, rerun_report
from auditor.rerun.sandbox import Outcome, SandboxUnavailable
from auditor.rerun.spec import MemoryResource
from auditor.rerun.workspace import (
    REPORT_NAME,
    Workspace,
    collect_files,
    copy_for_run,
    owner_of,
    remove_copy,
    workspace_root,
)
from auditor.rules.rerun import R801, R802, R806, R807

__all__ = ["DeviceUnavailable", "RerunRecord", "SandboxUnavailable", "run_and_compare"]


def run_and_compare(
    document: dict,
    transcript_path: str | None,
    rerun: RerunOptions,
    options: AuditOptions,
) -> tuple[list[Finding], dict]:
    """Rerun the answer's ``how_to_run`` on a copy of its ``files``; findings and the ``rerun`` record."""
    say = rerun.progress or (lambda _message: None)
    record = RerunRecord.start(rerun)
    if not isinstance(document, dict) or not document.get("how_to_run"):
        return [
            R802.finding("the answer has no how_to_run: there is no command to rerun", pointer="/how_to_run")
        ], record.to_dict()
    findings: list[Finding] = []
    command = _parse_command(document["how_to_run"], findings)
    ws = _check_workspace(document, transcript_path, rerun, command, findings, options)
    if command is None or ws is None or _blocking(findings):
        return findings, record.to_dict()
    found, record = _execute(document, command, ws, rerun, options, record, say)
    return findings + found, record.to_dict()


def _parse_command(how_to_run: object, findings: list[Finding]) -> Command | None:
    try:
        return parse_how_to_run(how_to_run)
    except CommandRefused as exc:
        findings.append(R802.finding(f"{exc}; nothing was run", pointer="/how_to_run", claimed=how_to_run))
        return None


def _check_workspace(
    document: dict,
    transcript_path: str | None,
    rerun: RerunOptions,
    command: Command | None,
    findings: list[Finding],
    options: AuditOptions,
) -> Workspace | None:
    root = workspace_root(transcript_path, rerun.workspace)
    if root is None:
        findings.append(
            R801.finding(
                "the transcript was read from stdin, so its files cannot be found; pass --workspace", pointer="/files"
            )
        )
        return None
    ws = collect_files(
        root, document.get("files"), command.script if command else None, owner=owner_of(transcript_path, root)
    )
    findings += ws.findings
    if ws.shipped_report is not None:
        shipped = _shipped_report_finding(document, ws, options)
        findings += [shipped] if shipped else []
    return ws


def _shipped_report_finding(document: dict, ws: Workspace, options: AuditOptions) -> Finding | None:
    """R806 for a shipped report unlike the embedded one, read from a private copy of the checked file.

    The copy is made like the run's (re-checked, the same inode), so the file
    compared is the one checked, not whatever the path leads to by then.
    """
    size = ws.sizes.get(REPORT_NAME, 0)
    if isinstance(document.get("bench_report"), dict) and size > options.max_bytes:
        return R806.finding(
            f"the shipped {REPORT_NAME} is {size} bytes, over the {options.max_bytes}-byte limit",
            pointer="/bench_report",
        )
    try:
        stage = copy_for_run(ws, names=[REPORT_NAME])
    except OSError as exc:
        return R801.finding(
            f"the shipped {REPORT_NAME} could not be read: {exc.strerror or exc}", pointer="/files", claimed=REPORT_NAME
        )
    try:
        return compare.shipped_report_finding(document, stage / REPORT_NAME, options)
    finally:
        remove_copy(stage)


def _blocking(findings: list[Finding]) -> bool:
    """Refusals block the run, and so does any missing file but the report the run rewrites."""
    return any(f.rule == R802.code or (f.rule == R801.code and f.claimed != REPORT_NAME) for f in findings)


def _execute(
    document: dict,
    command: Command,
    ws: Workspace,
    rerun: RerunOptions,
    options: AuditOptions,
    record: RerunRecord,
    say: Progress,
) -> tuple[list[Finding], RerunRecord]:
    bwrap = None if rerun.unsafe_no_sandbox else sandbox.find_bubblewrap()
    python = resolve_python(rerun.python)
    record = replace(record, python=python)
    refusal = interpreter_refusal(python, ws.roots)
    if refusal is not None:
        return [R802.finding(refusal, pointer="/how_to_run", claimed=python)], record
    interpreter = _interpreter(python, bwrap, rerun, options, say)
    refusal = interpreter_refusal(python, ws.roots, interpreter)
    if refusal is not None:
        return [R802.finding(refusal, pointer="/how_to_run", claimed=python)], record
    device = choose_device(rerun.device, interpreter)
    argv = command.argv(python)
    limits = _limits(rerun, options, device.memory_resource)
    record = replace(
        record,
        device=device.kind,
        torch_version=interpreter.torch_version,
        python_version=interpreter.python_version,
        command=tuple(argv),
        sandbox_uid=bwrap.experiment_uid if bwrap else os.getuid(),
        limits=_limits_record(limits, bwrap),
    )
    say(f"rerun: copying {plural(len(ws.files), 'file')} to a fresh folder")
    try:
        stage = copy_for_run(ws, rerun.timeout)
    except OSError as exc:
        return [
            R801.finding(
                f"the workspace files could not be copied for the run: {exc.strerror or exc}", pointer="/files"
            )
        ], record
    try:  # the stage is only read (the supervisor copies it into the sandbox): a replication reuses it
        run = Run(
            python,
            argv,
            probe.probed_argv(python, command.script, command.args),
            stage,
            device,
            interpreter,
            limits,
            bwrap,
        )
        # What was run on, hashed once: the cache's key and the record's (and an attestation's) subjects.
        staged = cache.file_digests(stage, [n for n in ws.files if n != REPORT_NAME])
        done, cached = outcome(run, staged, rerun, say)
        activity = probe.activity(done.activity)
        record = replace(_with_outcome(record, done, limits, bwrap, cached), files=tuple(staged), activity=activity)
        if not done.ok:
            return [failure_finding(done, limits, bwrap)], record
        say("rerun: comparing the regenerated report with the claim")
        found, record = _compare(document, done, rerun, options, record)
        seen = replication.activity_finding(activity)
        found += [seen] if seen is not None else []
        if rerun.replicate and record.baseline is not None:
            more, record = replicate(document, done, run, staged, rerun, options, record, say)
            found += more
        return found, record
    finally:
        remove_copy(stage)


def _interpreter(
    python: str, bwrap: sandbox.Bubblewrap | None, rerun: RerunOptions, options: AuditOptions, say: Progress
) -> Interpreter:
    """The probe's answer: remembered with the rerun cache (see :mod:`.probe_memo`), else asked for.

    torch is imported in the probe (a second or more) only where a GPU could be chosen and must be counted.
    """
    gpus = rerun.device == "cuda" or (rerun.device == "auto" and bool(gpu_device_nodes()))
    folder = cache.entries_folder(rerun.cache_dir)
    known = probe_memo.recall(folder, python, bwrap, gpus) if rerun.use_cache else None
    if known is not None:
        return known
    say(f"rerun: asking {python} for torch and its devices (in the sandbox)")
    interpreter = probe_interpreter(python, bwrap, _limits(rerun, options, "AS"), gpus=gpus)
    if rerun.use_cache:
        probe_memo.remember(folder, python, bwrap, interpreter, gpus)
    return interpreter


def _with_outcome(
    record: RerunRecord, outcome: Outcome, limits: sandbox.Limits, bwrap: sandbox.Bubblewrap | None, cached: bool
) -> RerunRecord:
    """The record once the experiment ran (or its stored run was taken): how it ended and was held."""
    held = outcome.confinement
    return replace(
        record,
        seconds=round(outcome.seconds, 3),
        exit_code=outcome.exit_code,
        signal=outcome.signal,
        timed_out=outcome.timed_out,
        output_capped=outcome.output_capped,
        output_bytes=outcome.output_bytes,
        sandbox_uid=held.sandbox_uid if held.sandbox_uid is not None else record.sandbox_uid,
        host_uid=held.host_uid,
        started=True,
        limits={**_limits_record(limits, bwrap, held), **held.to_record()},
        cached=cached,
    )


def _limits(rerun: RerunOptions, options: AuditOptions, memory_resource: MemoryResource) -> sandbox.Limits:
    return sandbox.Limits(
        timeout=rerun.timeout,
        memory_bytes=rerun.memory_bytes,
        memory_resource=memory_resource,
        output_tail_bytes=rerun.output_tail_bytes,
        output_limit_bytes=rerun.output_limit_bytes,
        disk_bytes=rerun.disk_bytes,
        max_processes=rerun.max_processes,
        max_report_bytes=options.max_bytes,
    )


def _limits_record(
    limits: sandbox.Limits, bwrap: sandbox.Bubblewrap | None, held: sandbox.Confinement | None = None
) -> dict[str, Any]:
    """The limits that actually held: None where this host or mode cannot enforce one."""
    by_cgroup = held is not None and held.processes_cap is not None
    return {
        "memory_bytes": limits.memory_bytes,
        "processes": limits.max_processes if by_cgroup or (bwrap and bwrap.caps_processes) else None,
        "disk_bytes": limits.disk_bytes if bwrap and bwrap.tmpfs_size else None,
        "file_bytes": limits.max_file_bytes,
        "output_bytes": limits.output_limit_bytes,
    }


def _compare(
    document: dict, outcome: Outcome, rerun: RerunOptions, options: AuditOptions, record: RerunRecord
) -> tuple[list[Finding], RerunRecord]:
    regenerated = rerun_report(outcome, options)
    report = regenerated.report
    if report is None:
        message = with_tail(f"the rerun exited 0 but {REPORT_NAME} {regenerated.problem}", outcome)
        return [R807.finding(message, pointer="/how_to_run")], record
    claimed = claimed_report(document)
    claim_device = compare.claimed_device(document)
    rtol = compare.choose_rtol(rerun.rtol, claim_device, record.device)
    arms = [compare.compare_arm(arm, claimed, report, rtol) for arm in compare.ARMS]
    statistics = compare.rerun_statistics(claimed, report, options)
    verdict = statistics.verdict if statistics is not None else None
    maybe = [compare.numbers_finding(c, rtol) for c in arms] + [compare.verdict_finding(claimed, verdict)]
    found = [f for f in maybe if f is not None]
    baseline, _ = compare.arm_values(report, "baseline")
    idea, _ = compare.arm_values(report, "idea")
    record = replace(
        record,
        max_rel_diff={c.arm: c.max_rel_diff for c in arms},
        rtol=rtol,
        claimed_device=claim_device,
        verdict=verdict.value if verdict else None,
        report_source=regenerated.source,
        reproduced=not found,
        baseline=tuple(baseline) if baseline is not None else None,
        idea=tuple(idea) if idea is not None else None,
        p_value=statistics.p_value if statistics is not None else None,
        delta_mean=statistics.delta_mean if statistics is not None else None,
    )
    return found, record
