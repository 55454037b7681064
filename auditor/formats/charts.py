"""The HTML report's per-transcript charts, drawn with matplotlib as inline SVG.

Imported only by ``--format html`` (matplotlib costs about a second to import).
Four charts per transcript with per-seed data (:func:`transcript_charts`):
the paired per-seed values, the per-seed differences, the sign-flip null
distribution and the learning-rate sweeps.  A degenerate case is drawn and
named in the title, never left blank.

No text written by an agent is drawn: the charts show numbers and the
auditor's own words.  Mathtext and TeX are off all the same, so a ``$`` could
never be interpreted (:mod:`auditor.formats.figures`, which also fits each SVG
to inline).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from auditor.formats import charts_replication
from auditor.formats.figures import (
    LOSS,
    TIE,
    WIN,
    Chart,
    legend_below,
    new_axes,
    nothing_to_draw,
    style,
    to_svg,
    wrap_title,
)
from auditor.formats.html_data import ChartInputs, ReplicationArms, replication_arms, rerun_arms

BASELINE_COLOUR, IDEA_COLOUR = "#6e7781", "#0072B2"
# The exact null is enumerated up to this many seeds (2^20 sums, 8 MiB); above, it is sampled.
EXACT_NULL_MAX_N = 20
NULL_DRAWS = 20_000
NULL_MAX_CELLS = 20_000_000  # draws x seeds: the sampled null stays quick for any n
NULL_CHUNK_CELLS = 1_000_000
# Seeds drawn as points: beyond this, an evenly spaced subset (the title says so) keeps
# a 10,000-seed answer's chart the size of a 100-seed one.
MAX_DRAWN_SEEDS = 100
NULL_BINS = 41


def _direction(lower_is_better: bool) -> str:
    return "lower is better ↓" if lower_is_better else "higher is better ↑"


def _outcomes(d: np.ndarray, lower_is_better: bool) -> list[dict[str, str]]:
    better = d < 0 if lower_is_better else d > 0
    return [TIE if x == 0 else WIN if b else LOSS for x, b in zip(d, better)]


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def drawn_seeds(n: int) -> np.ndarray:
    """Indices of the seeds drawn as points: all, or :data:`MAX_DRAWN_SEEDS` evenly spaced."""
    if n <= MAX_DRAWN_SEEDS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, MAX_DRAWN_SEEDS).round().astype(int))


def _subset_note(shown: int, n: int) -> str:
    return f" ({shown} of {n} drawn)" if shown < n else ""


def paired_chart(data: ChartInputs, rerun: dict[str, Any] | None, chart_id: str) -> Chart:
    """Baseline and idea of each seed joined by a line; wins and losses by colour and marker; the rerun's
    and the replication's (fresh seeds, :mod:`.charts_replication`) in columns of their own."""
    with style(chart_id):
        fig, ax = new_axes()
        d_all = data.idea - data.baseline
        shown = drawn_seeds(d_all.size)
        d = d_all[shown]
        outcomes = _outcomes(d, data.lower_is_better)
        arms = [(0, 1, data.baseline[shown], data.idea[shown], "-", "full")]
        again = rerun_arms(rerun, d_all.size)
        if again is not None:
            arms.append((2, 3, again[0][shown], again[1][shown], "--", "none"))
        from matplotlib.collections import LineCollection

        for x0, x1, base, idea, dashes, fill in arms:
            # One collection for all seeds' lines: one artist, not one per seed.
            segments = [[(x0, b), (x1, i)] for b, i in zip(base, idea)]
            ax.add_collection(
                LineCollection(
                    segments, colors=[o["color"] for o in outcomes], linewidths=0.8, linestyles=dashes, alpha=0.7
                )
            )
            ax.scatter(np.full(base.size, x0), base, s=14, color=BASELINE_COLOUR, marker="o", zorder=3)
            for o in (WIN, LOSS, TIE):
                mask = np.array([x is o for x in outcomes])
                if mask.any():
                    face = o["color"] if fill == "full" else "none"
                    ax.scatter(
                        np.full(mask.sum(), x1),
                        idea[mask],
                        s=22,
                        marker=o["marker"],
                        facecolors=face,
                        edgecolors=o["color"],
                        zorder=3,
                        label=o["label"] if x1 == 1 else None,
                    )
        labels = ["baseline", "idea"] + (["rerun\nbaseline", "rerun\nidea"] if again is not None else [])
        replication = replication_arms(rerun)
        if replication is not None:
            fresh = drawn_seeds(replication.idea.size)
            fresh_d = replication.idea[fresh] - replication.baseline[fresh]
            colours = [o["color"] for o in _outcomes(fresh_d, data.lower_is_better)]
            charts_replication.draw_paired(ax, replication, len(labels), fresh, colours)
            labels += ["replication\nbaseline", "replication\nidea"]
        ax.set_xticks(range(len(labels)), labels)
        ax.set_xlim(-0.3, len(labels) - 0.7)
        ax.set_ylabel(f"metric ({_direction(data.lower_is_better)})")
        legend_below(fig, ax, ncols=3)
        better = d_all < 0 if data.lower_is_better else d_all > 0
        wins, losses = int(np.count_nonzero(better)), int(np.count_nonzero(~better & (d_all != 0)))
        if not d_all.any():
            title = f"Per-seed values: idea = baseline on all {d_all.size} seeds (points overlap)"
        else:
            title = f"Per-seed values: {_count(wins, 'win')}, {_count(losses, 'loss', 'losses')} of {d_all.size} seeds"
        title += _subset_note(shown.size, d_all.size)
        if again is not None:
            title += "; rerun hollow, dashed"
        if replication is not None:
            title += charts_replication.title_note(replication)
        ax.set_title(wrap_title(title))
        return to_svg(fig, title, chart_id)


def _count(k: int, one: str, many: str = "") -> str:
    return f"{k} {one if k == 1 else many or one + 's'}"


def differences_chart(
    data: ChartInputs, recomputed: dict[str, Any], chart_id: str, replication: ReplicationArms | None = None
) -> Chart:
    """Per-seed differences with their mean, the 95% interval (the MDE) and zero; the replication's beside them."""
    with style(chart_id):
        fig, ax = new_axes()
        d_all = data.idea - data.baseline
        seeds = drawn_seeds(d_all.size)
        d = d_all[seeds]
        mean = float(d_all.mean())
        mde = recomputed.get("mde")
        if isinstance(mde, (int, float)) and math.isfinite(mde) and mde > 0:
            ax.axhspan(mean - mde, mean + mde, color="#0072B2", alpha=0.12, lw=0, label=f"95% interval ±{_fmt(mde)}")
        side = "below" if data.lower_is_better else "above"
        ax.axhline(0, color="black", lw=0.8, ls=":", label=f"zero ({side}: idea better)")
        ax.axhline(mean, color="#0072B2", lw=1.2, label=f"mean {_fmt(mean)}")
        outcomes = _outcomes(d, data.lower_is_better)
        ax.vlines(seeds, 0, d, color="#afb8c1", lw=0.8)
        for o in (WIN, LOSS, TIE):
            mask = np.array([x is o for x in outcomes])
            if mask.any():
                ax.scatter(seeds[mask], d[mask], s=22, marker=o["marker"], color=o["color"], zorder=3, label=o["label"])
        if replication is not None:
            fresh_mean = float((replication.idea - replication.baseline).mean())
            charts_replication.draw_differences(ax, replication, drawn_seeds(replication.idea.size), _fmt(fresh_mean))
        if d_all.size <= 20:
            ax.set_xticks(seeds)
        ax.set_xlabel("seed")
        ax.set_ylabel("idea − baseline")  # the direction is in the legend: a longer label is clipped
        legend_below(fig, ax, ncols=3)
        if not d_all.any():
            title = f"Per-seed differences: all {d_all.size} are zero (the idea changed nothing)"
        else:
            interval = (
                f" ± {_fmt(mde)} (95%)" if isinstance(mde, (int, float)) and mde else " (no interval: under 2 seeds)"
            )
            title = f"Per-seed differences: mean {_fmt(mean)}{interval}" + _subset_note(seeds.size, d_all.size)
        if replication is not None:
            title += charts_replication.title_note(replication)
        ax.set_title(wrap_title(title))
        return to_svg(fig, title, chart_id)


def null_means(d: np.ndarray, seed: int = 0) -> tuple[np.ndarray, bool]:
    """Mean differences under the sign-flip null: all 2^n (exact, True) or :data:`NULL_DRAWS` drawn (False)."""
    from auditor.stats.signflip import signed_sums  # the enumeration the exact test itself counts

    if d.size <= EXACT_NULL_MAX_N:
        return signed_sums(d) / d.size, True
    rng = np.random.default_rng(seed)
    draws = max(1, min(NULL_DRAWS, NULL_MAX_CELLS // d.size))
    rows = max(1, NULL_CHUNK_CELLS // d.size)  # sign matrices of at most 8 MB at a time
    means = [
        rng.choice(np.array([-1.0, 1.0]), size=(min(rows, draws - start), d.size)) @ d / d.size
        for start in range(0, draws, rows)
    ]
    return np.concatenate(means), False


def _claimed_threshold(null: np.ndarray, claimed_p: Any) -> float | None:
    """The |mean difference| an observation needs for the null to give the claimed two-sided p."""
    if not isinstance(claimed_p, (int, float)) or isinstance(claimed_p, bool) or not 0 < claimed_p < 1:
        return None
    return float(np.quantile(np.abs(null), 1 - claimed_p))


def null_chart(data: ChartInputs, recomputed: dict[str, Any], claimed: dict[str, Any], chart_id: str) -> Chart:
    """The sign-flip null of the mean difference, the observed value, recomputed and claimed p."""
    with style(chart_id):
        fig, ax = new_axes()
        d = data.idea - data.baseline
        null, exact = null_means(d)
        observed = float(d.mean())
        spread = float(np.abs(null).max())
        if spread == 0:
            ax.vlines([0.0], 0, 1, color="#afb8c1", lw=8, label="null: every pattern gives 0")
            ax.set_xlim(-1, 1)
        else:
            edges = np.linspace(-spread, spread, NULL_BINS + 1)
            counts, _ = np.histogram(null, bins=edges)
            ax.stairs(counts / null.size, edges, fill=True, color="#afb8c1", label="null distribution")
        p, claimed_p = recomputed.get("p_value"), claimed.get("p_value")
        ax.axvline(observed, color="#0072B2", lw=1.4, label=f"observed mean {_fmt(observed)}")
        if observed:
            ax.axvline(-observed, color="#0072B2", lw=0.8, ls="--", label="mirror (two-sided)")
        threshold = _claimed_threshold(null, claimed_p) if spread else None
        if threshold is not None:
            ax.axvline(
                threshold, color="#D55E00", lw=1, ls=(0, (1, 1)), label=f"|mean| the claimed p needs: {_fmt(threshold)}"
            )
            ax.axvline(-threshold, color="#D55E00", lw=1, ls=(0, (1, 1)))
        ax.set_xlabel("mean idea − baseline under random sign flips")
        ax.set_ylabel("fraction of sign patterns" if exact else "fraction of draws")
        legend_below(fig, ax)
        how = f"exact, 2^{d.size} patterns" if exact else f"randomized, {null.size:,} draws as n > {EXACT_NULL_MAX_N}"
        title = f"Sign-flip null ({how}): p recomputed {_p(p)}, claimed {_p(claimed_p)}"
        if spread == 0:
            title += "; all differences 0: one point"
        ax.set_title(wrap_title(title))
        return to_svg(fig, title, chart_id)


def _p(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


def sweep_chart(data: ChartInputs, chart_id: str) -> Chart:
    """Both arms' learning-rate sweeps on one axis, best configs marked, beyond the grid shaded."""
    with style(chart_id):
        fig, ax = new_axes()
        arms = (
            ("baseline", data.baseline_sweep, data.baseline_lr, BASELINE_COLOUR, "s"),
            ("idea", data.idea_sweep, data.idea_lr, IDEA_COLOUR, "o"),
        )
        lrs = sorted({p.lr for _, sweep, _, _, _ in arms for p in sweep})
        if not lrs:
            return nothing_to_draw(
                fig, ax, "no learning-rate sweep reported", "Learning-rate sweeps: none reported", chart_id
            )
        from matplotlib.ticker import NullLocator

        ax.set_xscale("log")
        low, high = lrs[0], lrs[-1]
        margin = 1.6
        ax.set_xlim(low / margin, high * margin)
        ax.set_xticks(lrs, [_fmt(lr) for lr in lrs])  # the grid itself, plain numbers (no mathtext)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.axvspan(low / margin, low, color="#d0d7de", alpha=0.5, lw=0, label="outside the grid")
        ax.axvspan(high, high * margin, color="#d0d7de", alpha=0.5, lw=0)
        at_edge = []
        for (name, sweep, best, colour, marker), width in zip(arms, (3.0, 1.0)):
            if not sweep:
                continue
            # The baseline wide and pale under the idea: identical sweeps (D504) stay visible.
            ax.plot(
                [p.lr for p in sweep],
                [p.mean for p in sweep],
                "-" + marker,
                color=colour,
                ms=3 + width,
                lw=width,
                alpha=0.6 if width > 1 else 1.0,
                label=f"{name} sweep",
            )
            chosen = [p for p in sweep if best is not None and math.isclose(p.lr, best)]
            if chosen:
                ax.scatter(
                    [chosen[0].lr],
                    [chosen[0].mean],
                    s=110,
                    marker="*",
                    color=colour,
                    edgecolors="black",
                    linewidths=0.6,
                    zorder=4,
                    label=f"{name} best lr {_fmt(chosen[0].lr)}",
                )
                if chosen[0].lr in (low, high):
                    at_edge.append(name)
        ax.set_xlabel("learning rate (log scale)")
        ax.set_ylabel(f"sweep mean ({_direction(data.lower_is_better)})")
        legend_below(fig, ax)
        title = f"Learning-rate sweeps over {len(lrs)} values"
        title += f"; best at the grid edge: {', '.join(at_edge)}" if at_edge else ""
        ax.set_title(wrap_title(title))
        return to_svg(fig, title, chart_id)


def transcript_charts(index: int, data: ChartInputs, result: Any) -> list[Chart]:
    """The four charts of one transcript; ids prefixed ``c<index>-``."""
    recomputed, claimed = result.recomputed or {}, result.claimed or {}
    return [
        paired_chart(data, result.rerun, f"c{index}-paired"),
        differences_chart(data, recomputed, f"c{index}-diff", replication_arms(result.rerun)),
        null_chart(data, recomputed, claimed, f"c{index}-null"),
        sweep_chart(data, f"c{index}-sweep"),
    ]
