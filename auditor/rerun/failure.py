"""What a rerun that did not finish cleanly is told: the R803 finding, with the cap its output points to."""

from __future__ import annotations

from auditor.findings import Finding
from auditor.rerun.sandbox import Bubblewrap, Confinement, Limits, Outcome
from auditor.rules.rerun import R803

LOG_TAIL_CHARS = 1500


def failure_finding(outcome: Outcome, limits: Limits, bwrap: Bubblewrap | None) -> Finding:
    if outcome.timed_out:
        what = f"ran past the {limits.timeout:g} s timeout; the whole process tree was killed"
    elif outcome.output_capped:
        what = (
            f"printed more than {_size(limits.output_limit_bytes)} (the output cap, --max-output); "
            "the whole process tree was killed"
        )
    elif outcome.signal == "SIGXFSZ":
        what = f"was killed by SIGXFSZ: a file reached the {_size(limits.max_file_bytes)} file size cap"
    elif outcome.signal:
        what = f"was killed by {outcome.signal}"
    else:
        what = f"exited with code {outcome.exit_code}"
    what += _cap_hint(_log_tail(outcome), limits, bwrap, outcome.confinement)
    return R803.finding(
        with_tail(f"the rerun {what} after {outcome.seconds:.1f} s", outcome),
        pointer="/how_to_run",
        claimed=outcome.exit_code,
        recomputed=outcome.signal,
    )


def _cap_hint(tail: str, limits: Limits, bwrap: Bubblewrap | None, held: Confinement | None = None) -> str:
    """Which cap the run's own error messages (or the cgroup's counters) point to, if any."""
    hints = []
    if held is not None and held.oom_kills > 0 and held.memory_total_bytes:
        hints.append(
            f"the kernel killed {held.oom_kills} process(es) at the run's memory cap of "
            f"{_size(held.memory_total_bytes)} in all (--memory plus its tmpfs, memfd and kernel memory "
            "included)"
        )
    elif any(sign in tail for sign in ("MemoryError", "bad_alloc", "Cannot allocate memory", "out of memory")):
        hints.append(f"the memory cap is {_size(limits.memory_bytes)}, --memory")
    if "No space left on device" in tail or "File too large" in tail:
        disk = f"{_size(limits.disk_bytes)} on top of its files, --disk" if bwrap else "not capped unsandboxed"
        hints.append(
            f"the run's copy may grow by {disk}; /tmp and /dev/shm hold "
            f"{_size(limits.scratch_bytes)} each; one file at most {_size(limits.max_file_bytes)}"
        )
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


def with_tail(message: str, outcome: Outcome) -> str:
    tail = _log_tail(outcome)
    return f"{message}; output tail:\n{tail}" if tail else message
