"""T6xx: how the baseline and the idea were tuned."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from auditor.answer.model import SweepEntry
from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.parse.pointers import join_pointer
from auditor.parse.strings import canonical_json, config_text, grid_text


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _grid(sweep: list[SweepEntry], keys: set[str]) -> set[str]:
    """The swept points: each entry's values of the swept keys (null and missing alike are left out)."""
    return {canonical_json({k: v for k, v in e.cfg.items() if k in keys and v is not None}) for e in sweep}


def _points(points: list[str]) -> str:
    """Grid points (canonical JSON configs) as people write them: ``{lr=0.001}; {lr=0.003}``."""
    if not points:
        return "nothing extra"
    return "; ".join("{" + config_text(json.loads(point)) + "}" for point in points)


def _numeric_values(sweep: list[SweepEntry], keys: frozenset[str]) -> dict[str, list[float]]:
    """The sorted finite numbers each of ``keys`` takes in the sweep.

    One pass over the entries' items: the cost is the sweep's size, whatever the number of keys.
    """
    found: dict[str, list[Any]] = {k: [] for k in keys}
    for entry in sweep:
        for key, value in entry.cfg.items():
            if key in found:
                found[key].append(value)
    return {k: sorted(_finite_numbers(v)) for k, v in found.items()}


def _finite_numbers(values: list[Any]) -> set[float]:
    """The finite numbers among ``values``, as floats (what :func:`_number` keeps)."""
    return {number for value in values if (number := _number(value)) is not None}


@check_rule("T601", "best-config-at-grid-edge", Severity.WARNING)
def T601(ctx: AuditContext) -> Iterator[Finding]:
    """The chosen config sits at the edge of the swept grid.

    ## What it does
    For each arm with a sweep and a chosen config, and each numeric key the
    sweep varies (usually the learning rate), fires when the chosen value is
    the smallest or the largest value swept.

    ## Why is this bad?
    When the best learning rate is the largest one tried, the optimum may lie
    beyond the grid. A baseline tuned at the edge is possibly under-tuned, and
    an idea that "beats" an under-tuned baseline may only be compensating for
    it (for instance clipping that lets a too-small learning rate act larger).
    Extend the grid until the optimum is interior.

    ## Example
    ```json
    "best_cfg": {"lr": 0.006},
    "sweep": [{"cfg": {"lr": 0.001}}, {"cfg": {"lr": 0.003}}, {"cfg": {"lr": 0.006}}]
    ```

    ## How to fix
    Extend the arm's sweep beyond the edge the message names (for example,
    add twice the largest learning rate) until the chosen value is an interior
    point, then rerun the full comparison with the new best config.
    """
    for arm, keys in zip(ctx.arms(), ctx.swept_keys, strict=True):
        if not arm.sweep or arm.best_cfg is None:
            continue
        grids = _numeric_values(arm.sweep, keys)
        for key in sorted(grids):
            grid = grids[key]
            chosen = _number(arm.best_cfg.get(key))
            if len(grid) < 2 or chosen is None or chosen not in grid:
                continue
            if chosen in (grid[0], grid[-1]):
                side = "largest" if chosen == grid[-1] else "smallest"
                yield T601.finding(
                    f"the {arm.name}'s chosen {key}={chosen:g} is the {side} value of its grid "
                    f"{grid_text(grid)}: the optimum may lie outside the swept range",
                    pointer=join_pointer(arm.cfg_pointer or "", key),
                    claimed=chosen,
                    recomputed=grid,
                )


@check_rule("T602", "different-grids", Severity.ERROR)
def T602(ctx: AuditContext) -> Iterator[Finding]:
    """The baseline and the idea were swept over different grids.

    ## What it does
    Fires when both arms report a sweep and the sets of swept points (the
    values of the keys either sweep varies) are not the same.

    ## Why is this bad?
    A fair comparison tunes both arms with the same budget over the same grid.
    An idea swept over more or better-placed learning rates than its baseline
    wins by tuning, not by the idea.

    ## Example
    ```json
    "baseline": {"sweep": [{"cfg": {"lr": 0.001}}, {"cfg": {"lr": 0.003}}]},
    "idea":     {"sweep": [{"cfg": {"lr": 0.003}}, {"cfg": {"lr": 0.01}}]}
    ```

    ## How to fix
    Sweep both arms over the same grid with the same budget, take each arm's
    best config from it, and rerun the full comparison.
    """
    b, i = ctx.baseline, ctx.idea
    if not b.sweep or not i.sweep:
        return
    keys = set().union(*ctx.swept_keys)
    b_grid, i_grid = _grid(b.sweep, keys), _grid(i.sweep, keys)
    if b_grid == i_grid:
        return
    only_b, only_i = sorted(b_grid - i_grid), sorted(i_grid - b_grid)
    yield T602.finding(
        f"the arms were swept over different grids: only the baseline tried {_points(only_b)}, "
        f"only the idea tried {_points(only_i)}",
        pointer=i.sweep_pointer or "",
        claimed=only_i,
        recomputed=only_b,
    )


@check_rule("T603", "config-differs-beyond-sweep", Severity.WARNING)
def T603(ctx: AuditContext) -> Iterator[Finding]:
    """The idea's config differs from the baseline's in keys that were not swept.

    ## What it does
    Compares the baseline's chosen config with the idea's, ignoring the keys
    either sweep varies, and fires for every other key whose value differs
    (or that only one of them sets).

    ## Why is this bad?
    The claim is about one intervention. If the idea also trains for more
    epochs or with another weight decay, the comparison confounds the idea
    with that change.

    ## Example
    ```json
    "baseline": {"best_cfg": {"lr": 0.006, "epochs": 12}},
    "idea":     {"best_cfg": {"lr": 0.006, "epochs": 18}}
    ```

    ## How to fix
    Set the keys the message lists to the baseline's values in the idea's
    config (or sweep them for both arms), so that the two arms differ only by
    the intervention, and rerun.
    """
    b_cfg, i_cfg = ctx.baseline.best_cfg, ctx.idea.best_cfg
    if b_cfg is None or i_cfg is None:
        return
    swept = set().union(*ctx.swept_keys)
    for key in sorted((set(b_cfg) | set(i_cfg)) - swept):
        missing = object()
        b_val, i_val = b_cfg.get(key, missing), i_cfg.get(key, missing)
        if b_val is not missing and i_val is not missing and canonical_json(b_val) == canonical_json(i_val):
            continue
        shown_b = "unset" if b_val is missing else canonical_json(b_val)
        shown_i = "unset" if i_val is missing else canonical_json(i_val)
        yield T603.finding(
            f"the idea's config sets {key}={shown_i} but the baseline's {key}={shown_b}, and {key} was "
            "not swept: the comparison confounds the idea with this change",
            pointer=join_pointer(ctx.idea.cfg_pointer or "", key),
            claimed=None if i_val is missing else i_val,
            recomputed=None if b_val is missing else b_val,
        )
