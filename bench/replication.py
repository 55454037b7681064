"""Error rates of the replication test (``--replicate``, R810), measured by simulation.

Usage: ``python bench/replication.py [--sims 1000] [--write]``.

Paired per-seed differences are drawn as N(effect, 1) at n = 8 seeds (the
benchmark's usual count).  A claim is the auditor's verdict on a first draw; a
replication is an independent draw of the same experiment, judged by the same
code as ``--replicate`` (:func:`auditor.rerun.replication.judge_replication`).
Scenarios: a real effect claimed after a significant first draw; a null effect
claimed significant after a lucky first draw, or after keeping the best 8 of 40
seeds; an honest null claimed as such.  ``--write`` puts the table into
docs/rerun.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from auditor.options.models import AuditOptions
from auditor.rerun.replication import judge_replication
from auditor.stats.summary import recompute

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- replication-rates:begin -->", "<!-- replication-rates:end -->"
N = 8


def report(diffs: np.ndarray, verdict: str | None = None) -> dict:
    # The baseline's own values differ per draw (as per-seed results do); only the differences matter.
    baseline = 10.0 + np.random.default_rng(abs(hash(diffs.tobytes())) % 2**32).normal(0.0, 1.0, len(diffs))
    out = {
        "metric_direction": "higher is better",
        "baseline": {"per_seed": list(map(float, baseline))},
        "idea": {"per_seed": list(map(float, baseline + diffs))},
    }
    if verdict is not None:
        out["comparison"] = {"verdict": verdict}
    return out


def claim_of(diffs: np.ndarray) -> str:
    return recompute([10.0] * len(diffs), list(10.0 + diffs), lower_is_better=False).verdict.value


def scenario(rng: np.random.Generator, effect: float, kind: str, sims: int, options: AuditOptions) -> dict:
    """Shares of replicated true / false / null among ``sims`` claims of ``kind``."""
    counts = {True: 0, False: 0, None: 0}
    done = 0
    while done < sims:
        if kind == "best 8 of 40":
            pool = rng.normal(effect, 1.0, 40)
            first = np.sort(pool)[-N:]
        else:
            first = rng.normal(effect, 1.0, N)
        claim = claim_of(first)
        significant = claim != "no measurable effect"
        if kind in ("significant first draw", "best 8 of 40") and not significant:
            continue  # only significant draws become such claims
        if kind == "honest null claim" and significant:
            continue
        replica = rng.normal(effect, 1.0, N)
        _, out = judge_replication(report(first, claim), report(first), report(replica), 1, 1, options)
        counts[out["replicated"]] += 1
        done += 1
    return {k: v / sims for k, v in counts.items()}


ROWS = (
    ("real effect 0.5 sd", 0.5, "significant first draw"),
    ("real effect 1 sd", 1.0, "significant first draw"),
    ("real effect 1.5 sd", 1.5, "significant first draw"),
    ("null, lucky draw", 0.0, "significant first draw"),
    ("null, best 8 of 40 seeds", 0.0, "best 8 of 40"),
    ("null, honest null claim", 0.0, "honest null claim"),
)


def table(sims: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    options = AuditOptions()
    lines = [
        f"| truth (n = {N}, {sims} claims each) | claim | replicated | contradicted (R810 error) | "
        "inconclusive (R810 warning) |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for label, effect, kind in ROWS:
        rates = scenario(rng, effect, kind, sims, options)
        lines.append(f"| {label} | {kind} | {rates[True]:.1%} | {rates[False]:.1%} | {rates[None]:.1%} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    text = table(args.sims)
    print(text)
    if args.write:
        doc = ROOT / "docs" / "rerun.md"
        body = doc.read_text(encoding="utf-8")
        start, end = body.index(BEGIN) + len(BEGIN), body.index(END)
        doc.write_text(body[:start] + "\n" + text + "\n" + body[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
