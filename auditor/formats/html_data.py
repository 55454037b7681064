"""What the HTML report's charts draw for one transcript, beyond the result's summary numbers.

The audit keeps it on the result when the report is the output
(``AuditResult.figures``, :func:`auditor.extracts.figure_data`): both arms' per-seed values,
the metric direction, both sweeps, the chosen configs and the agent's verdict
sentence.  The report never reads a transcript again, so stdin and a dask
worker's files draw like any other, and what is drawn is what was audited.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auditor.answer.model import is_number


@dataclass(frozen=True)
class SweepPoint:
    lr: float
    mean: float


@dataclass(frozen=True)
class ChartInputs:
    """One transcript's paired per-seed values (shape (n,) each) and its sweeps."""

    baseline: np.ndarray
    idea: np.ndarray
    lower_is_better: bool
    baseline_sweep: tuple[SweepPoint, ...] = ()
    idea_sweep: tuple[SweepPoint, ...] = ()
    baseline_lr: float | None = None
    idea_lr: float | None = None
    verdict_sentence: str | None = None


def _lr(cfg: Any) -> float | None:
    """The config's learning rate when it is a positive finite number (a log axis needs one)."""
    if not isinstance(cfg, dict):
        return None
    lr = cfg.get("lr")
    return float(lr) if is_number(lr) and math.isfinite(lr) and lr > 0 else None


def _sweep(entries: Any) -> tuple[SweepPoint, ...]:
    """The entries of a sweep that have a learning rate and a finite mean, by learning rate."""
    points = []
    for entry in entries or ():
        cfg = entry.get("cfg") if isinstance(entry, dict) else getattr(entry, "cfg", None)
        mean = entry.get("mean") if isinstance(entry, dict) else getattr(entry, "mean", None)
        lr = _lr(cfg)
        if lr is not None and is_number(mean) and math.isfinite(mean):
            points.append(SweepPoint(lr, float(mean)))
    return tuple(sorted(points, key=lambda p: p.lr))


def chart_inputs(result: Any) -> ChartInputs | None:
    """The per-seed data of an audited result (see the module), or None when there is none to draw."""
    figures = result.figures
    if result.recomputed is None or not figures:
        return None
    verdict = figures.get("answer_verdict")
    inputs = ChartInputs(
        baseline=np.asarray(figures["baseline_per_seed"], dtype=np.float64),
        idea=np.asarray(figures["idea_per_seed"], dtype=np.float64),
        lower_is_better=bool(figures["lower_is_better"]),
        baseline_sweep=_sweep(figures.get("baseline_sweep")),
        idea_sweep=_sweep(figures.get("idea_sweep")),
        baseline_lr=_lr(figures.get("baseline_cfg")),
        idea_lr=_lr(figures.get("idea_cfg")),
        verdict_sentence=verdict if isinstance(verdict, str) else None,
    )
    return inputs if inputs.baseline.size == inputs.idea.size else None


def rerun_arms(rerun: dict[str, Any] | None, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The rerun's per-seed baseline and idea values when it recorded ``n`` finite values for each."""
    if not rerun:
        return None
    arms = []
    for name in ("baseline", "idea"):
        values = rerun.get(name)
        if (
            not isinstance(values, list)
            or len(values) != n
            or not all(is_number(v) and math.isfinite(v) for v in values)
        ):
            return None
        arms.append(np.asarray(values, dtype=np.float64))
    return arms[0], arms[1]


@dataclass(frozen=True)
class ReplicationArms:
    """The replication's per-seed values (``rerun.replication``, ``--replicate``): fresh seeds, shifted by ``offset``."""

    baseline: np.ndarray
    idea: np.ndarray
    offset: int | None
    replicated: bool | None

    @property
    def label(self) -> str:
        """The legend's words: which seeds these are."""
        return f"replication, seeds +{self.offset}" if self.offset is not None else "replication, fresh seeds"


def replication_arms(rerun: dict[str, Any] | None) -> ReplicationArms | None:
    """The replication's paired per-seed values when it recorded as many finite ones for each arm (at least one)."""
    replication = rerun.get("replication") if isinstance(rerun, dict) else None
    if not isinstance(replication, dict):
        return None
    arms = []
    for name in ("baseline", "idea"):
        values = replication.get(name)
        if not isinstance(values, list) or not values or not all(is_number(v) and math.isfinite(v) for v in values):
            return None
        arms.append(np.asarray(values, dtype=np.float64))
    if arms[0].size != arms[1].size:
        return None
    offset = replication.get("seed_offset")
    replicated = replication.get("replicated")
    return ReplicationArms(
        baseline=arms[0],
        idea=arms[1],
        offset=offset if isinstance(offset, int) and not isinstance(offset, bool) else None,
        replicated=replicated if isinstance(replicated, bool) else None,
    )
