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
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..findings import Finding
from ..options import AuditOptions, RerunOptions
from ..rules.rerun import R801, R802, R803, R806, R807
from . import compare, sandbox
from .command import Command, CommandRefused, parse_how_to_run
from .device import DeviceUnavailable, choose_device, interpreter_refusal, probe_interpreter, resolve_python
from .sandbox import Outcome, SandboxUnavailable
from .workspace import (
    REPORT_NAME,
    Workspace,
    collect_files,
    copy_for_run,
    owner_of,
    remove_copy,
    workspace_root,
)

__all__ = ["DeviceUnavailable", "SandboxUnavailable", "run_and_compare"]

Progress = Callable[[str], None]
LOG_TAIL_CHARS = 1500


def run_and_compare(
    document: dict,
    transcript_path: str | None,
    rerun: RerunOptions,
    options: AuditOptions,
) -> tuple[list[Finding], dict]:
    """Rerun the answer's ``how_to_run`` on a copy of its ``files``; findings and the ``rerun`` record."""
    say = rerun.progress or (lambda _message: None)
    record = _empty_record(rerun)
    if not isinstance(document, dict) or not document.get("how_to_run"):
        return [R802.finding("the answer has no how_to_run: there is no command to rerun",
                             pointer="/how_to_run")], record
    findings: list[Finding] = []
    command = _parse_command(document["how_to_run"], findings)
    ws = _check_workspace(document, transcript_path, rerun, command, findings, options)
    if command is None or ws is None or _blocking(findings):
        return findings, record
    findings += _execute(document, command, ws, rerun, options, record, say)
    return findings, record


def _empty_record(rerun: RerunOptions) -> dict[str, Any]:
    return {
        "device": None,
        "torch_version": None,
        "seconds": None,
        "exit_code": None,
        "signal": None,
        "timed_out": False,
        "output_capped": False,
        "output_bytes": None,
        "max_rel_diff": {"baseline": None, "idea": None},
        "rtol": None,
        "claimed_device": None,
        "verdict": None,
        "report_source": None,
        "reproduced": False,
        "command": [],
        "python": None,
        "sandbox": "none" if rerun.unsafe_no_sandbox else "bubblewrap",
        "sandbox_uid": None,
        "limits": None,
    }


def _parse_command(how_to_run: object, findings: list[Finding]) -> Command | None:
    try:
        return parse_how_to_run(how_to_run)
    except CommandRefused as exc:
        findings.append(R802.finding(f"{exc}; nothing was run", pointer="/how_to_run", claimed=how_to_run))
        return None


def _check_workspace(document: dict, transcript_path: str | None, rerun: RerunOptions, command: Command | None,
                     findings: list[Finding], options: AuditOptions) -> Workspace | None:
    root = workspace_root(transcript_path, rerun.workspace)
    if root is None:
        findings.append(R801.finding("the transcript was read from stdin, so its files cannot be found; "
                                     "pass --workspace", pointer="/files"))
        return None
    ws = collect_files(root, document.get("files"), command.script if command else None,
                       owner=owner_of(transcript_path, root))
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
        return R806.finding(f"the shipped {REPORT_NAME} is {size} bytes, over the {options.max_bytes}-byte limit",
                            pointer="/bench_report")
    try:
        stage = copy_for_run(ws, names=[REPORT_NAME])
    except OSError as exc:
        return R801.finding(f"the shipped {REPORT_NAME} could not be read: {exc.strerror or exc}",
                            pointer="/files", claimed=REPORT_NAME)
    try:
        return compare.shipped_report_finding(document, stage / REPORT_NAME, options)
    finally:
        remove_copy(stage)


def _blocking(findings: list[Finding]) -> bool:
    """Refusals block the run, and so does any missing file but the report the run rewrites."""
    return any(f.rule == R802.code or (f.rule == R801.code and f.claimed != REPORT_NAME) for f in findings)


def _execute(document: dict, command: Command, ws: Workspace, rerun: RerunOptions, options: AuditOptions,
             record: dict[str, Any], say: Progress) -> list[Finding]:
    bwrap = None if rerun.unsafe_no_sandbox else sandbox.find_bubblewrap()
    python = resolve_python(rerun.python)
    record.update(python=python)
    refusal = interpreter_refusal(python, ws.roots)
    if refusal is not None:
        return [R802.finding(refusal, pointer="/how_to_run", claimed=python)]
    say(f"rerun: asking {python} for torch and its devices (in the sandbox)")
    interpreter = probe_interpreter(python, bwrap, _limits(rerun, options, "AS"))
    refusal = interpreter_refusal(python, ws.roots, interpreter)
    if refusal is not None:
        return [R802.finding(refusal, pointer="/how_to_run", claimed=python)]
    device = choose_device(rerun.device, interpreter)
    argv = command.argv(python)
    limits = _limits(rerun, options, device.memory_resource)
    record.update(device=device.kind, torch_version=interpreter.torch_version, command=argv, python=python,
                  sandbox_uid=bwrap.experiment_uid if bwrap else os.getuid(), limits=_limits_record(limits, bwrap))
    say(f"rerun: copying {len(ws.files)} file(s) to a fresh folder")
    try:
        stage = copy_for_run(ws, rerun.timeout)
    except OSError as exc:
        return [R801.finding(f"the workspace files could not be copied for the run: {exc.strerror or exc}",
                             pointer="/files")]
    try:
        experiment = sandbox.Experiment(
            python=python, command=argv, stage=stage, report_name=REPORT_NAME, device_env=device.env,
            device_nodes=device.device_nodes, keep_paths=interpreter.paths,
        )
        say(f"rerun: running {' '.join(argv[1:])} on {device.kind} (timeout {rerun.timeout:g} s)")
        outcome = sandbox.run(bwrap, experiment, limits)
        held = outcome.confinement
        record.update(seconds=round(outcome.seconds, 3), exit_code=outcome.exit_code, signal=outcome.signal,
                      timed_out=outcome.timed_out, output_capped=outcome.output_capped,
                      output_bytes=outcome.output_bytes)
        if held.sandbox_uid is not None:
            record["sandbox_uid"] = held.sandbox_uid
        record["host_uid"] = held.host_uid
        record["limits"] = {**_limits_record(limits, bwrap, held), **held.to_record()}
        if not outcome.ok:
            return [_failure_finding(outcome, limits, bwrap)]
        say("rerun: comparing the regenerated report with the claim")
        return _compare(document, outcome, rerun, options, record)
    finally:
        remove_copy(stage)


def _limits(rerun: RerunOptions, options: AuditOptions, memory_resource: str) -> sandbox.Limits:
    return sandbox.Limits(
        timeout=rerun.timeout, memory_bytes=rerun.memory_bytes, memory_resource=memory_resource,
        max_output_bytes=rerun.max_output_bytes, output_limit_bytes=rerun.output_limit_bytes,
        disk_bytes=rerun.disk_bytes, max_processes=rerun.max_processes, max_report_bytes=options.max_bytes,
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


def _failure_finding(outcome: Outcome, limits: sandbox.Limits, bwrap: sandbox.Bubblewrap | None) -> Finding:
    if outcome.timed_out:
        what = f"ran past the {limits.timeout:g} s timeout; the whole process tree was killed"
    elif outcome.output_capped:
        what = (f"printed more than {_size(limits.output_limit_bytes)} (the output cap, --max-output); "
                "the whole process tree was killed")
    elif outcome.signal == "SIGXFSZ":
        what = f"was killed by SIGXFSZ: a file reached the {_size(limits.max_file_bytes)} file size cap"
    elif outcome.signal:
        what = f"was killed by {outcome.signal}"
    else:
        what = f"exited with code {outcome.exit_code}"
    what += _cap_hint(_log_tail(outcome), limits, bwrap, outcome.confinement)
    return R803.finding(_with_tail(f"the rerun {what} after {outcome.seconds:.1f} s", outcome),
                        pointer="/how_to_run", claimed=outcome.exit_code, recomputed=outcome.signal)


def _cap_hint(
    tail: str, limits: sandbox.Limits, bwrap: sandbox.Bubblewrap | None, held: sandbox.Confinement | None = None
) -> str:
    """Which cap the run's own error messages (or the cgroup's counters) point to, if any."""
    hints = []
    if held is not None and held.oom_kills > 0 and held.memory_total_bytes:
        hints.append(f"the kernel killed {held.oom_kills} process(es) at the run's memory cap of "
                     f"{_size(held.memory_total_bytes)} in all (--memory plus its tmpfs, memfd and kernel memory "
                     "included)")
    elif any(sign in tail for sign in ("MemoryError", "bad_alloc", "Cannot allocate memory", "out of memory")):
        hints.append(f"the memory cap is {_size(limits.memory_bytes)}, --memory")
    if "No space left on device" in tail or "File too large" in tail:
        disk = f"{_size(limits.disk_bytes)} on top of its files, --disk" if bwrap else "not capped unsandboxed"
        hints.append(f"the run's copy may grow by {disk}; /tmp and /dev/shm hold "
                     f"{_size(limits.scratch_bytes)} each; one file at most {_size(limits.max_file_bytes)}")
    if (held is not None and held.processes_refused > 0) or (
        bwrap is not None and ("Resource temporarily unavailable" in tail or "can't start new thread" in tail)
    ):
        hints.append(f"the process cap is {limits.max_processes} processes and threads, --max-processes")
    return f" ({'; '.join(hints)})" if hints else ""


def _size(count: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if count >= size:
            return f"{count / size:g} {unit}"
    return f"{count} bytes"


def _log_tail(outcome: Outcome) -> str:
    text = outcome.stderr.strip() or outcome.stdout.strip()
    return text[-LOG_TAIL_CHARS:]


def _with_tail(message: str, outcome: Outcome) -> str:
    tail = _log_tail(outcome)
    return f"{message}; output tail:\n{tail}" if tail else message


def _rerun_report(outcome: Outcome, options: AuditOptions) -> tuple[dict | None, str]:
    """The regenerated report and where it came from, or (None, why there is none)."""
    value, problem = (compare.parse_json_bytes(outcome.report) if outcome.report is not None
                      else (None, outcome.report_problem or "not written"))
    report = compare.as_report(value)
    if report is not None:
        return report, "file"
    report = compare.report_from_stdout(outcome.stdout, options)
    if report is not None:
        return report, "stdout"
    if problem is None:
        problem = "holds no bench report (no baseline and idea)"
    elif problem == "not written":
        problem = "was not written and no report was printed on stdout"
    return None, problem


def _compare(document: dict, outcome: Outcome, rerun: RerunOptions, options: AuditOptions,
             record: dict[str, Any]) -> list[Finding]:
    report, source = _rerun_report(outcome, options)
    if report is None:
        message = _with_tail(f"the rerun exited 0 but {REPORT_NAME} {source}", outcome)
        return [R807.finding(message, pointer="/how_to_run")]
    claimed = document.get("bench_report") if isinstance(document.get("bench_report"), dict) else {}
    claim_device = compare.claimed_device(document)
    rtol = compare.choose_rtol(rerun.rtol, claim_device, record["device"])
    arms = [compare.compare_arm(arm, claimed, report, rtol) for arm in compare.ARMS]
    verdict = compare.rerun_verdict(claimed, report, options)
    found = [compare.numbers_finding(c, rtol) for c in arms] + [compare.verdict_finding(claimed, verdict)]
    found = [f for f in found if f is not None]
    record.update(
        max_rel_diff={c.arm: c.max_rel_diff for c in arms}, rtol=rtol, claimed_device=claim_device,
        verdict=verdict.value if verdict else None, report_source=source, reproduced=not found,
    )
    return found
