"""What a result keeps of its answer for the stages after the audit.

* :func:`cross_facts`: what the batch's cross-answer checks (X901, X902)
  compare, always kept (``AuditResult.cross``, also in jsonl records so that
  ``--resume`` can still run them).  The single-answer pipeline stores these
  facts and never imports the cross-answer family.
* :class:`CrossFacts`: the same facts, compact, as a batch keeps them for its
  whole run once each jsonl line is written (:func:`compact_cross`): interned
  strings shared by every answer of a setup, the config as the canonical text
  the checks group by, the per-seed values as one ``array("d")``.
* :func:`figure_data`: what the HTML report's charts draw (both arms'
  per-seed values, the metric direction, sweeps, configs and the agent's
  verdict sentence), kept (``AuditResult.figures``, not part of the JSON
  contract) only when the report will draw them (``AuditOptions.figure_data``),
  so a batch written as jsonl holds no more than it needs; the report never
  reads a transcript again.
"""

from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the parent of a batch compacts facts without loading the audit pipeline
    from auditor.context import AuditContext

# The agent's verdict sentence is quoted, not stored whole (an answer may hold megabytes of prose).
MAX_SENTENCE_CHARS = 2_000


def cross_facts(ctx: AuditContext) -> dict[str, Any]:
    """What the cross-answer checks need from one audited answer (``AuditResult.cross``)."""
    report = ctx.report
    return {
        "track": report.track,
        "model": report.model,
        "baseline_cfg": ctx.baseline.best_cfg,
        "baseline_per_seed": list(ctx.baseline.per_seed),
        "baseline_pointer": ctx.baseline.stats_pointer + "/per_seed",
        "verdict_pointer": ctx.pointer("comparison", "verdict"),
    }


# Where X902 points when an answer's facts do not say where its verdict is.
DEFAULT_VERDICT_POINTER = "/bench_report/comparison/verdict"


@dataclass(frozen=True, slots=True)
class CrossFacts:
    """:func:`cross_facts` as the cross-answer checks read it (:mod:`auditor.rules.cross`).

    ``cfg_text`` is the baseline config as canonical JSON (:func:`config_text`), None when
    the answer has none; ``per_seed`` is None when the facts lack the values.  A jsonl
    record writes the dict form, never this one.
    """

    track: Any
    model: Any
    cfg_text: str | None
    per_seed: Sequence[float] | None
    baseline_pointer: str | None
    verdict_pointer: Any

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # A worker sends kept facts back pickled: as the constructor's arguments (dataclasses' own
        # pickling of slots reads fields() for every object), and shared again once unpickled.
        return _shared_facts, (
            self.track,
            self.model,
            self.cfg_text,
            self.per_seed,
            self.baseline_pointer,
            self.verdict_pointer,
        )


# json.dumps(cfg, sort_keys=True, separators=(", ", ": ")), without a new JSONEncoder per call.
_config_encoder = json.JSONEncoder(sort_keys=True, separators=(", ", ": ")).encode


def config_text(cfg: Any) -> str:
    """A config as the text that groups answers and names it in X901 (keys sorted)."""
    return _config_encoder(cfg)


def shared(value: Any) -> Any:
    """``value``, interned when it is a string: every answer of a setup then holds one copy."""
    return sys.intern(value) if type(value) is str else value


def _shared_facts(
    track: Any, model: Any, cfg_text: str | None, per_seed: Any, baseline_pointer: str | None, verdict_pointer: Any
) -> CrossFacts:
    """Unpickled :class:`CrossFacts`, holding the one copy of each string every answer of a setup shares
    (an unpickled string is a copy of its own)."""
    return CrossFacts(
        shared(track), shared(model), shared(cfg_text), per_seed, shared(baseline_pointer), shared(verdict_pointer)
    )


def _values(per_seed: Any) -> Sequence[float] | None:
    """The per-seed values as one ``array("d")`` when they are all floats (same values, 8 bytes each)."""
    if isinstance(per_seed, list) and all(type(v) is float for v in per_seed):
        return array("d", per_seed)
    values: Sequence[float] | None = per_seed  # anything else (a record edited by hand) is read as it is
    return values


def compact_cross(cross: dict[str, Any] | CrossFacts | None) -> CrossFacts | None:
    """The facts of ``cross`` (a :func:`cross_facts` dict, or a jsonl record's) as :class:`CrossFacts`.

    A missing or empty ``cross`` gives None; a missing key reads as None, and a missing
    verdict pointer as :data:`DEFAULT_VERDICT_POINTER`, as the checks read the dict.
    """
    if isinstance(cross, CrossFacts):
        return cross
    if not cross:
        return None
    cfg = cross.get("baseline_cfg")
    return CrossFacts(
        track=shared(cross.get("track")),
        model=shared(cross.get("model")),
        cfg_text=None if cfg is None else sys.intern(config_text(cfg)),
        per_seed=_values(cross.get("baseline_per_seed")),
        baseline_pointer=shared(cross.get("baseline_pointer")),
        verdict_pointer=shared(cross.get("verdict_pointer", DEFAULT_VERDICT_POINTER)),
    )


def _sweep(entries: Any) -> list[dict[str, Any]]:
    return [{"cfg": entry.cfg, "mean": entry.mean} for entry in entries or ()]


def figure_data(ctx: AuditContext) -> dict[str, Any]:
    """The per-seed values (two lists of n floats), sweeps, configs and verdict sentence of one answer."""
    verdict = ctx.answer.verdict if ctx.answer is not None else None
    return {
        "baseline_per_seed": list(ctx.baseline.per_seed),
        "idea_per_seed": list(ctx.idea.per_seed),
        "lower_is_better": bool(ctx.lower_is_better),
        "baseline_cfg": ctx.baseline.best_cfg,
        "idea_cfg": ctx.idea.best_cfg,
        "baseline_sweep": _sweep(ctx.baseline.sweep),
        "idea_sweep": _sweep(ctx.idea.sweep),
        "answer_verdict": verdict[:MAX_SENTENCE_CHARS] if isinstance(verdict, str) else None,
    }
