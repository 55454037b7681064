"""Distinct transcripts for the performance benchmark, shaped like real answers.

Each transcript is one of the two real answers (``fixtures/answers``, both idea
shapes) with new per-seed values for both arms and every derived number
recomputed (``fixtures/generators/consistent.py``): honest answers with and
without an effect.  Like real answers, they hold 5 to 48 seeds (a quarter more
than 16), per-seed values are float32 metrics printed in full
(``14.058874130249023``), statistics are numpy's float64 values, and the JSON is
one line with json's default separators.  Recomputing costs milliseconds (up to
a tenth of a second at 40 seeds), so a corpus of N transcripts draws on
:data:`VARIANTS` recomputed answers, and each transcript is made distinct by its
own ``how_to_run`` line (a field no rule reads); the auditor keeps no cache of
answers, so each is audited in full.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures" / "generators"))
from consistent import HEADER, load_seed, rewrite_statistics, stats_block  # noqa: E402 (after the path)

# Recomputed answers a corpus draws on.
VARIANTS = 500
# Seed counts: most answers hold 5 to 16 seeds, a quarter hold 17 to 48.
FEW_SEEDS, MANY_SEEDS, MAX_SEEDS, SHARE_ABOVE = 5, 17, 48, 0.25


def seed_count(rng: np.random.Generator) -> int:
    """How many paired seeds an answer holds: 5-16, or 17-48 for a quarter of them."""
    if rng.random() < SHARE_ABOVE:
        return int(rng.integers(MANY_SEEDS, MAX_SEEDS + 1))
    return int(rng.integers(FEW_SEEDS, MANY_SEEDS))


def variants(count: int, seed: int = 0) -> list[dict]:
    """``count`` recomputed answers, alternating the two seed shapes; effects from none to strong."""
    rng = np.random.default_rng(seed)
    out = []
    for index in range(count):
        answer = load_seed(("000", "001")[index % 2])
        real = np.array(stats_block(answer["bench_report"], "baseline")["per_seed"])
        n = seed_count(rng)
        spread = float(np.std(real)) or 1.0
        baseline = rng.normal(float(np.mean(real)), spread, n).astype(np.float32)
        shift = rng.uniform(-0.6, 0.3) * spread
        idea = (baseline + np.float32(shift) + rng.normal(0.0, 0.4, n).astype(np.float32)).astype(np.float32)
        out.append(rewrite_statistics(answer, baseline=baseline.tolist(), idea=idea.tolist()))
    return out


def transcript(answer: dict, index: int) -> str:
    """The text of transcript ``index``: ``answer`` with its own ``how_to_run`` line."""
    answer = copy.copy(answer)
    answer["how_to_run"] = f"python bench.py --config configs/run_{index:06d}.yaml"
    return HEADER + json.dumps(answer, ensure_ascii=False) + "\n"


def write_corpus(folder: Path, count: int, seed: int = 0) -> list[Path]:
    """Write ``count`` distinct transcripts into ``folder`` (made if missing); their paths in order."""
    folder.mkdir(parents=True, exist_ok=True)
    pool = variants(min(count, VARIANTS), seed)
    paths = []
    for index in range(count):
        path = folder / f"t{index:06d}.txt"
        path.write_text(transcript(pool[index % len(pool)], index), encoding="utf-8")
        paths.append(path)
    return paths
