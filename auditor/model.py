"""Typed access to a validated answer (pydantic), and the normalised view the rules read.

Models are built only after JSON Schema validation passed, so they never see
wrong types; unknown keys are kept (``extra="allow"``) because agents add
fields freely.

Two idea shapes exist in real answers and both are valid:

* seed 000: ``idea: {cfg, mean, std, per_seed, n}`` plus a top-level
  ``bench_report.idea_sweep``;
* seed 001: ``idea: {best_cfg, sweep, full: {mean, std, per_seed, n}}``.

:func:`arm_view` turns either into one :class:`ArmView` with JSON pointers, so
no rule needs to know which shape it got.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Discriminator, Tag


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class SweepEntry(_Model):
    cfg: dict[str, Any]
    mean: float


class SeedStats(_Model):
    mean: float
    std: float
    per_seed: list[float]
    n: int


class TunedArm(_Model):
    """An arm that was tuned: the best config of its sweep, then a full run."""

    best_cfg: dict[str, Any] | None = None
    sweep: list[SweepEntry] | None = None
    full: SeedStats


class FlatIdea(SeedStats):
    """The idea shape of seed 000: a config and the full-run statistics inline."""

    cfg: dict[str, Any] | None = None


def idea_shape(idea: Any) -> str:
    """``"tuned"`` or ``"flat"``: decided by the presence of ``full``, as the schema's
    ``if``/``then``/``else`` on ``idea`` decides it (a test checks that both agree).

    Both shapes may fit one object (flat fields next to ``full``); the key decides,
    never which model happens to accept it.
    """
    if isinstance(idea, dict):
        return "tuned" if "full" in idea else "flat"
    return "tuned" if isinstance(idea, TunedArm) else "flat"


Idea = Annotated[
    Annotated[TunedArm, Tag("tuned")] | Annotated[FlatIdea, Tag("flat")],
    Discriminator(idea_shape),
]


class Comparison(_Model):
    delta_mean: float
    idea_wins: int
    n_pairs: int
    p_value: float
    verdict: str
    per_seed_diffs: list[float] | None = None
    mde: float | None = None
    mde_rel_pct: float | None = None
    system_worked: bool | None = None


class BenchReport(_Model):
    bench_version: int
    metric_direction: Literal["lower is better", "higher is better"]
    baseline: TunedArm
    idea: Idea
    comparison: Comparison
    track: str | None = None
    model: str | None = None
    n_seeds: int | None = None
    idea_sweep: list[SweepEntry] | None = None
    mechanism_signature: dict[str, Any] | None = None
    device: str | None = None
    # Free-form, not audited as such (the schema gives them no type).
    math_check: Any = None
    protocol_note: Any = None

    @property
    def lower_is_better(self) -> bool:
        return self.metric_direction == "lower is better"


class Answer(_Model):
    bench_report: BenchReport
    worked: bool | None = None
    confidence: float | None = None
    verdict: str | None = None
    metrics: dict[str, Any] | None = None
    how_to_run: str | None = None
    files: list[str] | None = None
    limitations: str | None = None
    system_verdict: str | None = None
    practical_verdict: str | None = None
    mechanism_ok: int | bool | None = None
    system_judged: bool | None = None


def escape_pointer_token(token: str | int) -> str:
    text = str(token)
    if "~" in text or "/" in text:
        return text.replace("~", "~0").replace("/", "~1")
    return text


def join_pointer(base: str, *tokens: str | int) -> str:
    """RFC 6901 pointer ``base`` extended by ``tokens``."""
    for token in tokens:
        base += "/" + escape_pointer_token(token)
    return base


def is_number(value: Any) -> bool:
    """A JSON number: an int or a float, never a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class ArmView:
    """One arm, whatever shape it was written in.

    ``stats_pointer`` points at the object holding mean/std/per_seed/n;
    ``cfg_pointer`` at its best config; ``sweep_pointer`` at its sweep list.
    """

    name: str  # "baseline" | "idea"
    stats: SeedStats
    per_seed: np.ndarray  # shape (n,), float64
    stats_pointer: str
    best_cfg: dict[str, Any] | None
    cfg_pointer: str | None
    sweep: list[SweepEntry] | None
    sweep_pointer: str | None


def arm_view(report: BenchReport, name: str, report_pointer: str) -> ArmView:
    """The arm ``name`` (``"baseline"`` or ``"idea"``) of ``report``, found at ``report_pointer``."""
    arm = getattr(report, name)
    # Every token here is a fixed field name: nothing to escape.
    arm_pointer = f"{report_pointer}/{name}"
    if isinstance(arm, TunedArm):
        stats, stats_pointer = arm.full, f"{arm_pointer}/full"
        cfg, cfg_pointer = arm.best_cfg, f"{arm_pointer}/best_cfg"
        sweep, sweep_pointer = arm.sweep, f"{arm_pointer}/sweep"
    else:  # FlatIdea
        stats, stats_pointer = arm, arm_pointer
        cfg, cfg_pointer = arm.cfg, f"{arm_pointer}/cfg"
        sweep, sweep_pointer = report.idea_sweep, f"{report_pointer}/idea_sweep"
    return ArmView(
        name=name,
        stats=stats,
        per_seed=np.array(stats.per_seed, dtype=np.float64),
        stats_pointer=stats_pointer,
        best_cfg=cfg,
        cfg_pointer=cfg_pointer if cfg is not None else None,
        sweep=sweep,
        sweep_pointer=sweep_pointer if sweep is not None else None,
    )
