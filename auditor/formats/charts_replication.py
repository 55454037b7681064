"""The replication (``--replicate``) on the HTML report's per-seed charts, beside the claimed values.

The replication ran the same experiment with every seed shifted (``rerun.replication``): its
per-seed values are fresh draws, not the claimed seeds again, so they are drawn apart (their own
columns on the paired chart, beside each seed on the differences chart) with a marker of their own
(a hollow diamond), a colour of their own and one legend entry that names the offset.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from auditor.formats.html_data import ReplicationArms

COLOUR = "#009E73"  # Okabe-Ito bluish green: apart from the claimed arms' blue, orange and grey
MARKER = "D"
X_SHIFT = 0.3  # on the differences chart: beside the claimed seed's difference, not on it


def draw_paired(ax: Any, replication: ReplicationArms, x0: int, shown: np.ndarray, colours: list[str]) -> None:
    """Baseline (x0) and idea (x0 + 1) of each shown replicated seed, joined by a dotted line in ``colours``."""
    from matplotlib.collections import LineCollection

    base, idea = replication.baseline[shown], replication.idea[shown]
    segments = [[(x0, b), (x0 + 1, i)] for b, i in zip(base, idea)]
    ax.add_collection(LineCollection(segments, colors=colours, linewidths=0.8, linestyles=":", alpha=0.7))
    for x, values in ((x0, base), (x0 + 1, idea)):
        ax.scatter(
            np.full(values.size, x),
            values,
            s=20,
            marker=MARKER,
            facecolors="none",
            edgecolors=COLOUR,
            linewidths=1.0,
            zorder=3,
            label=replication.label if x == x0 else None,
        )


def draw_differences(ax: Any, replication: ReplicationArms, shown: np.ndarray, mean_text: str) -> None:
    """The replication's per-seed differences beside the claimed ones, and their mean as a dashed line."""
    d = replication.idea - replication.baseline
    ax.axhline(float(d.mean()), color=COLOUR, lw=1.0, ls="--", label=f"replication mean {mean_text}")
    ax.scatter(
        shown + X_SHIFT,
        d[shown],
        s=20,
        marker=MARKER,
        facecolors="none",
        edgecolors=COLOUR,
        linewidths=1.0,
        zorder=3,
        label=replication.label,
    )


def title_note(replication: ReplicationArms) -> str:
    """What the title adds: where the replication is and whether it replicated."""
    said = {True: "replicated", False: "contradicted", None: "inconclusive"}[replication.replicated]
    return f"; {replication.label} ({said}): green diamonds"
