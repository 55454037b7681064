"""The answer and its bench report as pydantic models, and the normalised view the rules read.

The models are the typed contract of an answer; ``schemas/answer.schema.json`` and
``schemas/bench_report.schema.json`` stay the published definition, and
``tests/test_schema_models.py`` keeps both in agreement (the same properties, the same required
ones, the same verdict on any edited answer).  Validation is strict, as JSON Schema is: a string is
never read as a number, a boolean never as a count; a JSON integer in a float field becomes a float,
and an integral number in an integer field (``3.0``) the integer.  Unknown keys are kept
(``model_extra``) because agents add fields freely; S203 names them.

Two idea shapes exist in real answers and both are valid:

* seed 000: ``idea: {cfg, mean, std, per_seed, n}`` plus a top-level
  ``bench_report.idea_sweep``;
* seed 001: ``idea: {best_cfg, sweep, full: {mean, std, per_seed, n}}``.

:func:`arm_view` turns either into one :class:`ArmView` with JSON pointers, so
no rule needs to know which shape it got.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeGuard

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from auditor.parse.literals import PrintedFloat
from auditor.parse.strings import canonical_json

# JSON's exact integers (the schemas' bound): 1e300 is integral, yet no count.
MAX_SAFE_INTEGER = 9007199254740991
# Squares of differences of per-seed values beyond this overflow a 64-bit float.
PER_SEED_BOUND = 1e150


def _integral(value: Any) -> Any:
    """JSON Schema's integer: an integral number (``3.0``) is the integer 3."""
    return int(value) if type(value) is float and value.is_integer() else value


def _keep_literal(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate as a float, and keep a :class:`PrintedFloat` (its printed digits count)."""
    checked = handler(value)
    return value if type(value) is PrintedFloat else checked


def _bounded_list(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    """Refuse an array longer than ``--max-seeds`` before its items are validated; keep the
    items' printed digits."""
    limit = info.context.get("max_items") if info.context else None
    if limit is not None and isinstance(value, list) and len(value) > limit:
        raise PydanticCustomError(
            "too_long", "holds {n} items, more than the limit of {limit}", {"n": len(value), "limit": limit}
        )
    checked = handler(value)
    if any(type(item) is PrintedFloat for item in value):
        return [item if type(item) is PrintedFloat else out for item, out in zip(value, checked)]
    return checked


def _confirmed_is_boolean(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is not None and "confirmed" in value and type(value["confirmed"]) is not bool:
        raise PydanticCustomError("bool_type", "Input should be a valid boolean")
    return value


Number = Annotated[float, WrapValidator(_keep_literal)]
NonNegative = Annotated[float, Field(ge=0), WrapValidator(_keep_literal)]
Probability = Annotated[float, Field(ge=0, le=1), WrapValidator(_keep_literal)]
Count = Annotated[int, BeforeValidator(_integral), Field(ge=0, le=MAX_SAFE_INTEGER)]
PerSeed = Annotated[list[Annotated[float, Field(ge=-PER_SEED_BOUND, le=PER_SEED_BOUND)]], WrapValidator(_bounded_list)]
Diffs = Annotated[list[float], WrapValidator(_bounded_list)]
Config = dict[str, Any]


class _Model(BaseModel):
    """A read-only model of one object of an answer, validated as its schema object is."""

    model_config = ConfigDict(strict=True, frozen=True, extra="allow")


class SweepEntry(_Model):
    cfg: Config
    mean: Number


Sweep = Annotated[list[SweepEntry], WrapValidator(_bounded_list)]


class SeedStats(_Model):
    """Statistics of the full run over all seeds."""

    mean: Number
    std: NonNegative
    per_seed: PerSeed
    n: Count


class TunedArm(_Model):
    """An arm that was tuned: the best config of its sweep, then a full run."""

    best_cfg: Config | None = None
    sweep: Sweep | None = None
    full: SeedStats


class FlatIdea(SeedStats):
    """The idea shape of seed 000: a config and the full-run statistics inline."""

    cfg: Config | None = None


def idea_shape(idea: Any) -> str:
    """``"tuned"`` or ``"flat"``: decided by the presence of ``full``, as the schema's
    ``if``/``then``/``else`` on ``idea`` decides it (a test checks that both agree).

    Both shapes may fit one object (flat fields next to ``full``); the key decides,
    never which model happens to accept it.
    """
    if isinstance(idea, dict):
        return "tuned" if "full" in idea else "flat"
    return "tuned" if isinstance(idea, TunedArm) else "flat"


Idea = Annotated[Annotated[TunedArm, Tag("tuned")] | Annotated[FlatIdea, Tag("flat")], Discriminator(idea_shape)]


class Comparison(_Model):
    """The paired comparison of idea and baseline."""

    delta_mean: Number
    idea_wins: Count
    n_pairs: Count
    p_value: Probability
    verdict: str
    per_seed_diffs: Diffs | None = None
    mde: Number | None = None
    mde_rel_pct: Number | None = None
    system_worked: bool | None = None


class BenchReport(_Model):
    """A tuned baseline and an idea over N paired seeds, and their comparison."""

    bench_version: Annotated[int, BeforeValidator(_integral), Field(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
    metric_direction: Literal["lower is better", "higher is better"]
    baseline: TunedArm
    idea: Idea
    comparison: Comparison
    track: str | None = None
    model: str | None = None
    n_seeds: Count | None = None
    idea_sweep: Sweep | None = None
    mechanism_signature: Annotated[Config | None, AfterValidator(_confirmed_is_boolean)] = None
    device: str | None = None
    # Free-form, not audited as such (the schema gives them no type).
    math_check: Any = None
    protocol_note: Any = None

    @property
    def lower_is_better(self) -> bool:
        return self.metric_direction == "lower is better"


class Answer(_Model):
    """An agent's answer: verdicts in words, prose, and the bench report."""

    bench_report: BenchReport
    worked: bool | None = None
    confidence: Number | None = None
    verdict: str | None = None
    metrics: Config | None = None
    how_to_run: str | None = None
    files: Annotated[list[str], WrapValidator(_bounded_list)] | None = None
    limitations: str | None = None
    system_verdict: str | None = None
    practical_verdict: str | None = None
    mechanism_ok: Annotated[bool | Literal[0, 1] | None, BeforeValidator(_integral)] = None
    system_judged: bool | None = None


def is_number(value: Any) -> TypeGuard[int | float]:
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
    per_seed: tuple[float, ...]  # the n per-seed values, in seed order
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
        per_seed=tuple(stats.per_seed),
        stats_pointer=stats_pointer,
        best_cfg=cfg,
        cfg_pointer=cfg_pointer if cfg is not None else None,
        sweep=sweep,
        sweep_pointer=sweep_pointer if sweep is not None else None,
    )


def swept_keys(sweep: list[SweepEntry]) -> set[str]:
    """Config keys whose value differs between sweep entries (a missing key reads as null).

    One pass over the entries: the cost grows with the sweep's size, not with
    entries times keys.
    """
    values: dict[str, set[Any]] = {}
    present: dict[str, int] = {}
    for entry in sweep:
        for key, value in entry.cfg.items():
            seen = values.get(key)
            if seen is None:
                values[key] = {canonical_json(value)}
                present[key] = 1
            else:
                seen.add(canonical_json(value))
                present[key] += 1
    entries = len(sweep)
    swept = set()
    for key, seen in values.items():
        if len(seen) > 1 or (present[key] < entries and "null" not in seen):
            swept.add(key)
    return swept
