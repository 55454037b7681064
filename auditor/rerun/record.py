"""The ``rerun`` object of a result: what was run, how, how it ended and what it gave.

One frozen :class:`RerunRecord` is built when the rerun starts and extended
with :func:`dataclasses.replace` as it proceeds; :meth:`RerunRecord.to_dict`
gives the JSON object, its keys always in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from auditor.options.models import RerunOptions
from auditor.rerun.device import DeviceKind

SandboxMode = Literal["bubblewrap", "none"]
# Where the rerun's report was found: the file it wrote, or what it printed.
ReportSource = Literal["file", "stdout"]


def _no_differences() -> dict[str, float | None]:
    return {"baseline": None, "idea": None}


@dataclass(frozen=True)
class RerunRecord:
    sandbox: SandboxMode
    device: DeviceKind | None = None  # what the experiment ran on
    torch_version: str | None = None
    seconds: float | None = None
    exit_code: int | None = None
    signal: str | None = None
    timed_out: bool = False
    output_capped: bool = False
    output_bytes: int | None = None
    max_rel_diff: Mapping[str, float | None] = field(default_factory=_no_differences)
    rtol: float | None = None
    claimed_device: str | None = None
    verdict: str | None = None  # recomputed from the rerun's per-seed values
    report_source: ReportSource | None = None
    reproduced: bool = False
    command: tuple[str, ...] = ()
    python: str | None = None
    python_version: str | None = None  # the interpreter's own report (its sys.version)
    sandbox_uid: int | None = None
    limits: Mapping[str, Any] | None = None
    # The experiment's uid on the host; recorded (as ``host_uid``) only once the experiment started.
    host_uid: int | None = None
    started: bool = False
    # The rerun's own statistics, from its per-seed values (None without a usable rerun report).
    baseline: tuple[float, ...] | None = None
    idea: tuple[float, ...] | None = None
    p_value: float | None = None
    delta_mean: float | None = None
    cached: bool = False  # served from the rerun cache (auditor.rerun.cache), not run again
    # (name, size, sha256) of each file of the run's private copy: what the experiment ran on.
    files: tuple[tuple[str, int, str], ...] = ()
    activity: Mapping[str, Any] | None = None  # what the probe saw the run do (auditor.rerun.probe)
    replication: Mapping[str, Any] | None = None  # the run on shifted seeds (--replicate; .replication)

    @classmethod
    def start(cls, rerun: RerunOptions) -> RerunRecord:
        return cls(sandbox="none" if rerun.unsafe_no_sandbox else "bubblewrap")

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``rerun`` object (fresh lists and dicts: the caller may keep or change it)."""
        out: dict[str, Any] = {
            "device": self.device,
            "torch_version": self.torch_version,
            "seconds": self.seconds,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "timed_out": self.timed_out,
            "output_capped": self.output_capped,
            "output_bytes": self.output_bytes,
            "max_rel_diff": dict(self.max_rel_diff),
            "rtol": self.rtol,
            "claimed_device": self.claimed_device,
            "verdict": self.verdict,
            "report_source": self.report_source,
            "reproduced": self.reproduced,
            "command": list(self.command),
            "python": self.python,
            "python_version": self.python_version,
            "sandbox": self.sandbox,
            "sandbox_uid": self.sandbox_uid,
            "limits": dict(self.limits) if self.limits is not None else None,
        }
        if self.started:
            out["host_uid"] = self.host_uid
        out.update(
            cached=self.cached,
            baseline=list(self.baseline) if self.baseline is not None else None,
            idea=list(self.idea) if self.idea is not None else None,
            p_value=self.p_value,
            delta_mean=self.delta_mean,
            activity=dict(self.activity) if self.activity is not None else None,
            replication=dict(self.replication) if self.replication is not None else None,
        )
        if self.files:  # only once the files were staged for a run
            out["files"] = [{"name": name, "size": size, "sha256": sha256} for name, size, sha256 in self.files]
        return out
