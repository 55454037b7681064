"""Distinct transcripts for the performance benchmark, generated from the fixtures.

Each transcript is one of the two real answers (``fixtures/answers``, both idea
shapes) with new idea per-seed values and every derived number recomputed
(``fixtures/generators/consistent.py``): honest answers with and without an
effect, as a batch of real runs would hold.  Recomputing costs milliseconds, so
a corpus of N transcripts draws on :data:`VARIANTS` recomputed answers, and
each transcript is made distinct by its own ``how_to_run`` line (a field no
rule reads).  The baseline runs are left as they are: answers of one setup then
share one baseline, and the cross-answer checks compare them as in a real batch.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures" / "generators"))
from consistent import HEADER, load_seed, rewrite_statistics, stats_block

# Recomputed answers a corpus draws on (per seed shape).
VARIANTS = 250


def variants(count: int, seed: int = 0) -> list[dict]:
    """``count`` recomputed answers, alternating the two seed shapes; effects from none to strong."""
    rng = np.random.default_rng(seed)
    out = []
    for index in range(count):
        answer = load_seed(("000", "001")[index % 2])
        baseline = np.array(stats_block(answer["bench_report"], "baseline")["per_seed"])
        shift = rng.uniform(-0.6, 0.3) * float(np.std(baseline) or 1.0)
        idea = np.round(baseline + shift + rng.normal(0.0, 0.4, baseline.size), 4)  # printed to 4 decimals
        out.append(rewrite_statistics(answer, idea=[float(v) for v in idea]))
    return out


def transcript(answer: dict, index: int) -> str:
    """The text of transcript ``index``: ``answer`` with its own ``how_to_run`` line."""
    answer = copy.copy(answer)
    answer["how_to_run"] = f"python bench.py --config configs/run_{index:06d}.yaml"
    return HEADER + json.dumps(answer, ensure_ascii=False, indent=1) + "\n"


def write_corpus(folder: Path, count: int, seed: int = 0) -> list[Path]:
    """Write ``count`` distinct transcripts into ``folder`` (made if missing); their paths in order."""
    folder.mkdir(parents=True, exist_ok=True)
    pool = variants(min(count, 2 * VARIANTS), seed)
    paths = []
    for index in range(count):
        path = folder / f"t{index:06d}.txt"
        path.write_text(transcript(pool[index % len(pool)], index), encoding="utf-8")
        paths.append(path)
    return paths
