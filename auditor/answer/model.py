"""Typed access to a validated answer, and the normalised view the rules read.

Models are built only after JSON Schema validation passed, so they never see
wrong types: building one only gives each JSON value its Python type (a number
of a float field becomes a float, an integral number of an integer field an
int).  Unknown keys are kept in ``extra`` because agents add fields freely.
These are plain read-only classes rather than pydantic models: the schema has
already checked everything a validating model would, and importing pydantic and
building its validators cost a cold ``auditor audit`` about a fifth of its time.

Two idea shapes exist in real answers and both are valid:

* seed 000: ``idea: {cfg, mean, std, per_seed, n}`` plus a top-level
  ``bench_report.idea_sweep``;
* seed 001: ``idea: {best_cfg, sweep, full: {mean, std, per_seed, n}}``.

:func:`arm_view` turns either into one :class:`ArmView` with JSON pointers, so
no rule needs to know which shape it got.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from auditor.parse.strings import canonical_json

Convert = Callable[[Any], Any]

_new = object.__new__


class _Model:
    """A read-only, typed view of one object of a schema-valid answer.

    ``FIELDS`` maps each property the schema declares for the object to how its
    JSON value becomes a Python value; an absent property reads as None, as does
    a null one.  ``REQUIRED`` names the properties the schema requires (never None).
    Every other key of the object is kept, as written, in ``extra``.

    A model's values live in its instance dict, filled by one C call: setting
    them one by one past the refusing ``__setattr__`` (``object.__setattr__``, a
    slot wrapper) cost most of building an answer's dozen models.
    """

    FIELDS: ClassVar[dict[str, Convert]] = {}
    REQUIRED: ClassVar[frozenset[str]] = frozenset()
    extra: dict[str, Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Each model class gets its own builder (a subclass declares other FIELDS),
        # written on its first use so that importing the models stays cheap.
        cls.from_json = classmethod(_build_on_first_use)  # type: ignore[assignment]

    @classmethod
    def from_json(cls, data: dict[str, Any]):
        """The model of ``data``, a JSON object the schema accepted."""
        return _build_on_first_use(cls, data)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS if getattr(self, name) is not None)
        return f"{type(self).__name__}({shown})"


def _build_on_first_use(cls: type[_Model], data: dict[str, Any]) -> _Model:
    """Install ``cls``'s generated ``from_json`` in place of this stub, then build with it."""
    build = _builder(cls)
    cls.from_json = staticmethod(build)  # type: ignore[assignment]
    return build(data)


def _builder(cls: type[_Model]) -> Callable[[dict[str, Any]], _Model]:
    """``from_json`` for ``cls``, written out field by field.

    A loop over the fields cost a dozen bytecodes per field and per model.  The
    generated function reads each required key by subscript (an object without
    one was not accepted by the schema: :func:`_read_loosely` builds it), each
    other key with ``get``, converts what is neither null nor kept as written,
    and fills the new instance's dict in one call.  ``extra`` is known to be
    empty, without looking at the keys, when the object holds no more keys than
    the fields found in it.
    """
    namespace: dict[str, Any] = {"cls": cls, "_read_loosely": _read_loosely, "_extra": _extra}
    fields = list(cls.FIELDS.items())
    required = [(index, name) for index, (name, _) in enumerate(fields) if name in cls.REQUIRED]
    lines = ["def from_json(data):"]
    if required:
        lines.append("    try:")
        lines += [f"        v{index} = data[{name!r}]" for index, name in required]
        lines += ["    except KeyError:", "        return _read_loosely(cls, data)"]
    lines += ["    get = data.get", f"    found = {len(required)}"]
    for index, (name, convert) in enumerate(fields):
        if name in cls.REQUIRED:
            conversion = [] if convert is _as_written else [f"v{index} = _convert{index}(v{index})"]
        else:
            lines.append(f"    v{index} = get({name!r})")
            conversion = ["found += 1"] + ([] if convert is _as_written else [f"v{index} = _convert{index}(v{index})"])
        if conversion:
            namespace[f"_convert{index}"] = convert
            lines += [f"    if v{index} is not None:"] + [f"        {line}" for line in conversion]
    entries = [f"{name!r}: v{index}" for index, (name, _) in enumerate(fields)]
    entries.append("'extra': {} if len(data) == found else _extra(cls, data)")
    # cls() is a bare instance (models have no __init__), made without object.__new__'s argument tuples.
    lines += ["    model = cls()", f"    model.__dict__.update({{{', '.join(entries)}}})", "    return model"]
    exec("\n".join(lines), namespace)  # noqa: S102 -- our own field names, written as literals
    build = namespace["from_json"]
    build.__qualname__ = f"{cls.__qualname__}.from_json"
    build.__module__ = cls.__module__
    build.__doc__ = _Model.from_json.__doc__
    return build


def _read_loosely(cls: type[_Model], data: dict[str, Any]) -> _Model:
    """The model of any JSON object, missing required fields reading as None."""
    values = {}
    for name, convert in cls.FIELDS.items():
        value = data.get(name)
        values[name] = value if value is None or convert is _as_written else convert(value)
    values["extra"] = _extra(cls, data)
    model = _new(cls)
    model.__dict__.update(values)
    return model


def _extra(cls: type[_Model], data: dict[str, Any]) -> dict[str, Any]:
    fields = cls.FIELDS
    return {} if data.keys() <= fields.keys() else {key: value for key, value in data.items() if key not in fields}


# A JSON integer in a float field converts exactly as Python does (the schema bounds it);
# the schema lets only integral values into an integer field (3.0 is the integer 3).
_int, _object, _strings = int, dict, list


def _float(value: Any) -> float:
    """A float field's value: an int becomes a float; a float (one that keeps its literal too) stays."""
    return float(value) if type(value) is int else value


def _floats(values: list[Any]) -> list[float]:
    return [float(value) if type(value) is int else value for value in values]


def _as_written(value: Any) -> Any:
    return value


def _flag(value: bool | int | float) -> bool | int:
    return value if isinstance(value, bool) else int(value)  # 0/1 or a boolean; 1.0 is the integer 1


def _sweep(entries: list[dict[str, Any]]) -> list[SweepEntry]:
    return [SweepEntry.from_json(entry) for entry in entries]


def _seed_stats(data: dict[str, Any]) -> SeedStats:
    return SeedStats.from_json(data)


def _tuned_arm(data: dict[str, Any]) -> TunedArm:
    return TunedArm.from_json(data)


def _idea(data: dict[str, Any]) -> TunedArm | FlatIdea:
    return (TunedArm if idea_shape(data) == "tuned" else FlatIdea).from_json(data)


def _comparison(data: dict[str, Any]) -> Comparison:
    return Comparison.from_json(data)


def _bench_report(data: dict[str, Any]) -> BenchReport:
    return BenchReport.from_json(data)


class SweepEntry(_Model):
    FIELDS = {"cfg": _object, "mean": _float}
    REQUIRED = frozenset(FIELDS)
    cfg: dict[str, Any]
    mean: float


class SeedStats(_Model):
    FIELDS = {"mean": _float, "std": _float, "per_seed": _floats, "n": _int}
    REQUIRED = frozenset(FIELDS)
    mean: float
    std: float
    per_seed: list[float]
    n: int


class TunedArm(_Model):
    """An arm that was tuned: the best config of its sweep, then a full run."""

    FIELDS = {"best_cfg": _object, "sweep": _sweep, "full": _seed_stats}
    REQUIRED = frozenset({"full"})
    best_cfg: dict[str, Any] | None
    sweep: list[SweepEntry] | None
    full: SeedStats


class FlatIdea(SeedStats):
    """The idea shape of seed 000: a config and the full-run statistics inline."""

    FIELDS = {**SeedStats.FIELDS, "cfg": _object}
    cfg: dict[str, Any] | None


def idea_shape(idea: Any) -> str:
    """``"tuned"`` or ``"flat"``: decided by the presence of ``full``, as the schema's
    ``if``/``then``/``else`` on ``idea`` decides it (a test checks that both agree).

    Both shapes may fit one object (flat fields next to ``full``); the key decides,
    never which model happens to accept it.
    """
    if isinstance(idea, dict):
        return "tuned" if "full" in idea else "flat"
    return "tuned" if isinstance(idea, TunedArm) else "flat"


class Comparison(_Model):
    FIELDS = {
        "delta_mean": _float,
        "idea_wins": _int,
        "n_pairs": _int,
        "p_value": _float,
        "verdict": _as_written,
        "per_seed_diffs": _floats,
        "mde": _float,
        "mde_rel_pct": _float,
        "system_worked": _as_written,
    }
    REQUIRED = frozenset({"delta_mean", "idea_wins", "n_pairs", "p_value", "verdict"})
    delta_mean: float
    idea_wins: int
    n_pairs: int
    p_value: float
    verdict: str
    per_seed_diffs: list[float] | None
    mde: float | None
    mde_rel_pct: float | None
    system_worked: bool | None


class BenchReport(_Model):
    FIELDS = {
        "bench_version": _int,
        "metric_direction": _as_written,
        "baseline": _tuned_arm,
        "idea": _idea,
        "comparison": _comparison,
        "track": _as_written,
        "model": _as_written,
        "n_seeds": _int,
        "idea_sweep": _sweep,
        "mechanism_signature": _object,
        "device": _as_written,
        # Free-form, not audited as such (the schema gives them no type).
        "math_check": _as_written,
        "protocol_note": _as_written,
    }
    REQUIRED = frozenset({"bench_version", "metric_direction", "baseline", "idea", "comparison"})
    bench_version: int
    metric_direction: Literal["lower is better", "higher is better"]
    baseline: TunedArm
    idea: TunedArm | FlatIdea
    comparison: Comparison
    track: str | None
    model: str | None
    n_seeds: int | None
    idea_sweep: list[SweepEntry] | None
    mechanism_signature: dict[str, Any] | None
    device: str | None
    math_check: Any
    protocol_note: Any

    @property
    def lower_is_better(self) -> bool:
        return self.metric_direction == "lower is better"


class Answer(_Model):
    FIELDS = {
        "bench_report": _bench_report,
        "worked": _as_written,
        "confidence": _float,
        "verdict": _as_written,
        "metrics": _object,
        "how_to_run": _as_written,
        "files": _strings,
        "limitations": _as_written,
        "system_verdict": _as_written,
        "practical_verdict": _as_written,
        "mechanism_ok": _flag,
        "system_judged": _as_written,
    }
    REQUIRED = frozenset({"bench_report"})
    bench_report: BenchReport
    worked: bool | None
    confidence: float | None
    verdict: str | None
    metrics: dict[str, Any] | None
    how_to_run: str | None
    files: list[str] | None
    limitations: str | None
    system_verdict: str | None
    practical_verdict: str | None
    mechanism_ok: int | bool | None
    system_judged: bool | None


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
