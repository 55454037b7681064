"""The randomized sign-flip test, above the exact limit: vectorised draws at a bounded cost.

Signs are drawn a byte at a time (8 seeds a byte) and summed from per-group tables of
the 256 signed sums, in blocks of draws; the count of draws is capped by the number of
signs drawn in all, and the hit counts give 99.9% Clopper-Pearson intervals of the true
p.  :func:`auditor.stats.signflip.sign_flip_test` chooses this path (numpy is imported only then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.stats.precision import U64
from auditor.stats.signflip import PBand, SignFlipResult
from auditor.stats.signflip_ties import tie_tolerance

if TYPE_CHECKING:
    import numpy as np

# Randomized test above the exact limit: a two-sided 99.9% Clopper-Pearson
# interval of its estimate is the range of true p it supports.
RANDOMIZED_CONFIDENCE = 0.999
# Upper bound on sign draws (resamples x n) of the randomized test: keeps the cost
# of any n to a few milliseconds.  Up to 100 seeds keep all 100,000 default draws;
# 1,000 seeds get 10,000, and the interval widens to match.
RANDOMIZED_MAX_CELLS = 10_000_000
RANDOMIZED_MIN_RESAMPLES = 1_000
# Draws per block of the randomized test: a block's sums and random bytes stay in cache.
RANDOMIZED_BLOCK = 8_192
# Seeds whose signs one random byte holds: each group's 256 signed sums are tabulated.
SIGNS_PER_BYTE = 8


def _clopper_pearson(hits: int, trials: int, confidence: float) -> PBand:
    """Exact binomial confidence interval of a proportion hits/trials."""
    from scipy.special import betaincinv

    tail = (1 - confidence) / 2
    low = 0.0 if hits == 0 else float(betaincinv(hits, trials - hits + 1, tail))
    high = 1.0 if hits == trials else float(betaincinv(hits + 1, trials - hits, 1 - tail))
    return PBand(low, high)


def sign_tables(d: np.ndarray) -> np.ndarray:
    """Signed sums of each group of :data:`SIGNS_PER_BYTE` differences, for every byte of signs.

    Row g, column b: the sum over seeds 8g + j of +d if bit j of b is set, else -d, so
    a random byte per group draws the signs of 8 seeds and one lookup sums them.  The
    last group is padded with zeros, whose sign changes no sum.
    """
    import numpy as np

    groups = -(-d.size // SIGNS_PER_BYTE)
    padded = np.zeros(groups * SIGNS_PER_BYTE)
    padded[: d.size] = d
    byte = np.arange(256, dtype=np.uint8)[:, None]
    signs = np.unpackbits(byte, axis=1, bitorder="little") * 2.0 - 1.0  # (256, 8): +1 where the bit is set
    return padded.reshape(groups, SIGNS_PER_BYTE) @ signs.T


def random_signed_sums(tables: np.ndarray, rng: np.random.Generator, draws: int) -> np.ndarray:
    """``draws`` signed sums of the differences behind ``tables`` (:func:`sign_tables`), signs uniform.

    One random byte per group and draw (the generator's raw 64-bit words, split into
    bytes); each group adds its tabulated sum, a gather from a 2 KiB table.
    """
    import numpy as np

    groups = tables.shape[0]
    words = -(-groups * draws // 8)
    signs = rng.bit_generator.random_raw(words).view(np.uint8)[: groups * draws].reshape(groups, draws)
    sums: np.ndarray = np.take(tables[0], signs[0])
    part = np.empty(draws)
    for group in range(1, groups):
        np.take(tables[group], signs[group], out=part)
        sums += part
    return sums


def randomized_resamples(resamples: int, n: int) -> int:
    """The draws the randomized test makes for n seeds: ``resamples``, capped at
    :data:`RANDOMIZED_MAX_CELLS` sign draws in all, never below :data:`RANDOMIZED_MIN_RESAMPLES`."""
    budget = max(RANDOMIZED_MIN_RESAMPLES, RANDOMIZED_MAX_CELLS // max(n, 1))
    return max(1, min(resamples, budget))


def randomized_sign_flip(
    values: list[float], base_values: list[float] | None, idea_values: list[float] | None, resamples: int, seed: int
) -> SignFlipResult:
    """Monte-Carlo sign-flip test of the n differences ``values``, with bounded cost.

    :func:`randomized_resamples` draws of the signs, in blocks (:func:`random_signed_sums`).
    p = (hits + 1) / (B + 1), counting the observed pattern, so an estimate is never zero;
    the bands are 99.9% Clopper-Pearson intervals of the strict and loose hit counts.
    """
    import numpy as np  # only above the exact limit, where the draws are vectorised

    d = np.array(values)
    resamples = randomized_resamples(resamples, d.size)
    rng = np.random.default_rng(seed)
    tables = sign_tables(d)
    tol = tie_tolerance(values, base_values, idea_values, U64)  # covers any order of the additions
    observed_sum = float(d.sum())
    size = abs(observed_sum)
    hits_two = hits_one = strict_two = strict_one = 0
    for done in range(0, resamples, RANDOMIZED_BLOCK):
        sums = random_signed_sums(tables, rng, min(RANDOMIZED_BLOCK, resamples - done))
        oriented = sums if observed_sum >= 0 else -sums  # the observed direction is positive
        magnitudes = np.abs(sums)
        hits_two += int(np.count_nonzero(magnitudes >= size - tol))
        hits_one += int(np.count_nonzero(oriented >= size - tol))
        strict_two += int(np.count_nonzero(magnitudes > size + tol))
        strict_one += int(np.count_nonzero(oriented > size + tol))
    low2 = _clopper_pearson(strict_two, resamples, RANDOMIZED_CONFIDENCE).low
    high2 = _clopper_pearson(hits_two, resamples, RANDOMIZED_CONFIDENCE).high
    low1 = _clopper_pearson(strict_one, resamples, RANDOMIZED_CONFIDENCE).low
    high1 = _clopper_pearson(hits_one, resamples, RANDOMIZED_CONFIDENCE).high
    return SignFlipResult(
        (hits_two + 1) / (resamples + 1),
        (hits_one + 1) / (resamples + 1),
        "randomized",
        resamples,
        PBand(low2, high2),
        PBand(low1, high1),
        int(np.count_nonzero(d)),
    )
