"""A311: an arm's chosen config against the best entry of its own sweep.

Split from :mod:`.arithmetic` only to keep files short; it shares that
module's number formatting.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from auditor.answer.model import Config, SweepEntry
from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.parse.strings import config_text
from auditor.rules.arithmetic import _arm_label, _fmt
from auditor.stats.summary import RTOL_VALUES, values_close


def _shown(cfg: object) -> str:
    """A config as quoted in a message: ``{lr=0.003, epochs=12}``."""
    return "{" + config_text(cfg) + "}" if isinstance(cfg, dict) else config_text(cfg)


def _same_value(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return values_close(float(a), float(b), rtol=1e-12)
    return a == b


def _same_cfg(a: Config, b: Config) -> bool:
    if a.keys() != b.keys():
        return False
    for key, value in a.items():
        if not _same_value(value, b[key]):
            return False
    return True


def _sweep_index_of(cfg: Config, sweep: list[SweepEntry]) -> int | None:
    """Index of the sweep entry for ``cfg``.

    Exact match first; otherwise the single entry that agrees on every key
    both share (a sweep often records only the swept keys).
    """
    for k, entry in enumerate(sweep):
        if _same_cfg(cfg, entry.cfg):
            return k
    partial = [
        k
        for k, entry in enumerate(sweep)
        if (shared := cfg.keys() & entry.cfg.keys()) and all(_same_value(cfg[key], entry.cfg[key]) for key in shared)
    ]
    return partial[0] if len(partial) == 1 else None


def _best_index(sweep: list[SweepEntry], lower_is_better: bool) -> int:
    means = [e.mean for e in sweep]
    return means.index(min(means) if lower_is_better else max(means))


@check_rule("A311", "best-cfg-not-best", Severity.ERROR)
def A311(ctx: AuditContext) -> Iterator[Finding]:
    """An arm's best_cfg is not the best entry of its own sweep.

    ## What it does
    For each arm that reports both a best config and a sweep, finds the
    sweep entry with that config and fires when another entry is strictly
    better in the metric's direction (ties within a relative 1e-6 are fine),
    or when the best config does not appear in the sweep at all.

    ## Why is this bad?
    The full run is supposed to use the tuned config. Running a worse one
    (for the baseline in particular) makes the idea look better than it is.

    ## Example
    ```json
    "metric_direction": "lower is better",
    "baseline": {"best_cfg": {"lr": 0.003},
                 "sweep": [{"cfg": {"lr": 0.003}, "mean": 13.86}, {"cfg": {"lr": 0.006}, "mean": 10.44}]}
    ```

    ## How to fix
    Run the full comparison with the arm's best sweep entry (the message names
    it) and set `best_cfg` to that config. If the config was chosen on another
    criterion (a validation split, a budget), say so in `protocol_note` and
    report the sweep it was chosen on.
    """
    for arm in ctx.arms():
        if arm.best_cfg is None or not arm.sweep:
            continue
        best = _best_index(arm.sweep, ctx.lower_is_better)
        best_entry = arm.sweep[best]
        chosen = _sweep_index_of(arm.best_cfg, arm.sweep)
        if chosen is None:
            yield A311.finding(
                f"{_arm_label(arm)} best config {_shown(arm.best_cfg)} is not an entry of its sweep; the best "
                f"entry is {_shown(best_entry.cfg)} with mean {_fmt(best_entry.mean)}",
                pointer=arm.cfg_pointer or "",
                claimed=arm.best_cfg,
                recomputed=best_entry.cfg,
            )
            continue
        chosen_mean = arm.sweep[chosen].mean
        if chosen == best and math.isfinite(chosen_mean):
            continue  # values_close of a finite number with itself
        if values_close(chosen_mean, best_entry.mean, rtol=RTOL_VALUES):
            continue
        yield A311.finding(
            f"{_arm_label(arm)} best config {_shown(arm.best_cfg)} has sweep mean {_fmt(chosen_mean)} but "
            f"{_shown(best_entry.cfg)} is better ({ctx.report.metric_direction}) with {_fmt(best_entry.mean)}; "
            f"run the full comparison with {_shown(best_entry.cfg)}",
            pointer=arm.cfg_pointer or "",
            claimed=arm.best_cfg,
            recomputed=best_entry.cfg,
        )
