"""Pure recomputation of the statistics an answer reports.

Small functions over numpy arrays, no I/O.  The facts below were established
from the stored real answers (``shared/seeds``) and are the reference the
arithmetic rules check against:

* ``d_i = idea_i - baseline_i`` per seed; ``delta_mean = mean(d)``.
* A *win* is a seed where the idea is strictly better in the metric's direction
  (``d_i < 0`` when lower is better).
* Reported ``std`` is the population std (``ddof=0``); ``ddof=1`` is accepted too.
* ``p_value`` is a two-sided paired sign-flip permutation test on ``mean(d)``,
  exact (meet-in-the-middle over all 2^n patterns) for n <= 40.  Seed 000
  claims 0.01475 = 295/20000, a Monte-Carlo estimate from 20,000 resamples of
  the exact 4/256 = 0.015625; :mod:`auditor.pvalues` decides which claimed
  p-values an honest test could have printed.
* ``mde`` is the 95% CI half-width of the mean paired difference,
  ``t(0.975, n-1) * sd(d, ddof=1) / sqrt(n)``; seed 000 used t = 2.365 from a
  table, hence the 1e-3 relative tolerance of the MDE rules.

How claimed numbers are compared with these (printing, float32) is
:mod:`auditor.precision`'s business.

scipy.stats is deliberately not imported (about a second of start-up); the
t quantile comes from ``scipy.special.stdtrit``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .precision import ACCUMULATION_SAFETY, U32, U64, agrees, std_noise
from .verdicts import Verdict

# Relative tolerance for means, stds and per-seed differences.  The agents'
# scripts compute in float32, whose rounding is ~6e-8 relative, so 1e-6 leaves
# room for accumulation while still catching any hand-edited digit.
RTOL_VALUES = 1e-6
# Relative tolerance for the MDE: agents use a t quantile from a table (2.365).
RTOL_MDE = 1e-3
# Ties between signed sums are decided with a tolerance scaled to the float
# noise of the arithmetic (see :func:`tie_tolerance`), never to a fixed
# fraction of sum|d|: one diverged seed must not merge the others' sums.
# Randomized test above the exact limit: a two-sided 99.9% Clopper-Pearson
# interval of its estimate is the range of true p it supports.
RANDOMIZED_CONFIDENCE = 0.999
# Upper bound on sign draws (resamples x n) of the randomized test: keeps the
# cost bounded for any n (100,000 seeds still finishes in well under a second).
RANDOMIZED_MAX_CELLS = 50_000_000
RANDOMIZED_MIN_RESAMPLES = 1_000
# Exact enumeration by meet-in-the-middle: two halves of 2^(n/2) sums each
# (8 MiB apiece at n = 40), counted with a binary search.
EXACT_MAX_N_CAP = 40


def values_close(claimed: float, recomputed: float, *, rtol: float = RTOL_VALUES, scale: float | None = None) -> bool:
    """``|claimed - recomputed| <= rtol * max(|recomputed|, scale)``.

    ``scale`` is the magnitude of the operands a value was derived from: a
    difference of two numbers near 10 carries float32 noise of ~1e-6 whatever
    its own size.
    """
    if not (math.isfinite(claimed) and math.isfinite(recomputed)):
        return False
    if scale is not None and not math.isfinite(scale):
        scale = None  # an overflowed scale (a ratio to a near-zero mean) would accept anything
    ref = max(abs(recomputed), abs(scale) if scale is not None else 0.0)
    if ref == 0.0:
        return claimed == 0.0
    return abs(claimed - recomputed) <= rtol * ref


@dataclass(frozen=True)
class ArmSummary:
    """Recomputed summary of one arm's per-seed values, shape (n,)."""

    n: int
    mean: float
    std_population: float  # ddof=0, what the seeds report
    std_sample: float | None  # ddof=1; None when n < 2
    magnitude: float = 0.0  # max |value|: what float noise of the arm's statistics scales with


def summarize(values: np.ndarray) -> ArmSummary:
    """Mean and both stds of ``values``, shape (n,), n >= 1."""
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    return ArmSummary(
        n=n,
        mean=float(values.mean()),
        std_population=float(values.std(ddof=0)),
        std_sample=float(values.std(ddof=1)) if n >= 2 else None,
        magnitude=float(np.abs(values).max()) if n else 0.0,
    )


def std_ddof_matching(claimed: float, summary: ArmSummary) -> int | None:
    """Which ddof (0 or 1) reproduces ``claimed``, printed and computed honestly; None when neither does."""
    for ddof, value in ((0, summary.std_population), (1, summary.std_sample)):
        if value is not None and agrees(claimed, value, std_noise(summary.n, summary.magnitude, claimed, value)):
            return ddof
    return None


@dataclass(frozen=True)
class PBand:
    """The range of p-values honest arithmetic on the same data can give: [low, high]."""

    low: float
    high: float

    def __contains__(self, p: float) -> bool:
        return self.low <= p <= self.high


@dataclass(frozen=True)
class SignFlipResult:
    """Paired sign-flip permutation test of mean(d) = 0.

    ``p_two_sided`` counts sums within float64 noise of the observed one as
    ties (at least as extreme).  ``two_sided_band`` is the range an honest
    computation may report: a near-tie may fall either way in float64 or, when
    float32 arithmetic still resolves every difference, in float32.  For the
    randomized test the bands are 99.9% intervals of the true p.
    """

    p_two_sided: float
    # One-sided p in the direction of the observed mean difference.
    p_one_sided: float
    method: str  # "exact" | "randomized"
    resamples: int  # 2**n for the exact test
    two_sided_band: PBand | None = None
    one_sided_band: PBand | None = None
    n_nonzero: int = 0  # differences that are not exactly zero


def tie_tolerance(d: np.ndarray, baseline: np.ndarray | None, idea: np.ndarray | None, unit: float) -> float:
    """How far a signed sum of ``d``, shape (n,), may drift in a format with unit roundoff ``unit``.

    Summation: n·u·sum|d|.  Inputs: each d_i = idea_i - baseline_i was taken from
    values that may not be exact in that format (decimals like 0.9012 in
    float32), u·(|idea_i| + |baseline_i|) each.  A float32 value is exact in float32.
    """
    n = d.size
    total = n * float(np.abs(d).sum())
    if baseline is not None and idea is not None:
        operands = np.concatenate((np.abs(baseline), np.abs(idea)))
        if unit == U32:
            with np.errstate(over="ignore"):
                exact32 = operands.astype(np.float32).astype(np.float64) == operands
            operands = operands[~exact32]
        total += float(operands.sum())
    return ACCUMULATION_SAFETY * unit * total


def _signed_sums(d: np.ndarray) -> np.ndarray:
    """All 2^k sums of +-d_i, shape (2^k,) for ``d`` of shape (k,); the set is symmetric about 0."""
    sums = np.zeros(1)
    for x in d:
        sums = np.concatenate((sums + x, sums - x))
    return sums


class _MeetInTheMiddle:
    """Counts sign patterns of ``d``, shape (n,), whose signed sum clears a threshold.

    The 2^n sums are never formed: the first half's 2^(n//2) sums are matched
    against the second half's sorted sums by binary search.
    """

    def __init__(self, d: np.ndarray) -> None:
        half = d.size // 2
        # Both halves sorted: the binary searches then probe ascending needles,
        # which keeps them in cache (7x faster at n = 40 than unsorted needles).
        self.left_descending = np.sort(_signed_sums(d[:half]))[::-1]
        self.right = np.sort(_signed_sums(d[half:]))
        self.total = self.left_descending.size * self.right.size

    def _right_below(self, threshold: float, side: str) -> int:
        needles = threshold - self.left_descending  # ascending
        return int(np.searchsorted(self.right, needles, side=side).sum())

    def at_least(self, threshold: float) -> int:
        """Patterns with sum >= threshold."""
        return self.total - self._right_below(threshold, "left")

    def above(self, threshold: float) -> int:
        """Patterns with sum > threshold."""
        return self.total - self._right_below(threshold, "right")


def _exact_counts(counter: _MeetInTheMiddle, observed: float, tol: float, observed_group: int) -> tuple[int, int, int, int]:
    """(two-sided loose, two-sided strict, one-sided loose, one-sided strict) pattern counts.

    Loose counts every sum within ``tol`` of the observed one as a tie; strict
    counts only sums beyond it, plus the ``observed_group`` patterns that give
    the observed sum by construction (flipping zero differences).
    """
    size = abs(observed)
    loose_threshold = size - tol
    one_loose = counter.at_least(loose_threshold)
    two_loose = counter.total if loose_threshold <= 0 else 2 * one_loose
    one_strict = min(counter.above(size + tol) + observed_group, one_loose)
    two_strict = min(2 * one_strict, two_loose)  # the pattern set is symmetric about zero
    return two_loose, two_strict, one_loose, one_strict


def sums_are_exact(d: np.ndarray, unit: float) -> bool:
    """True when every signed sum of ``d``, shape (n,), is exact in a format with unit roundoff ``unit``.

    Integer counts and float32 metrics give differences that are multiples of
    one power of two; while sum|d| stays within the format's mantissa, every
    partial sum is exact and no summation order can break a tie.
    """
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return True
    mantissas, exponents = np.frexp(nonzero)
    if unit > U64:  # the values themselves must be exact in the narrower format
        with np.errstate(over="ignore"):
            if not np.array_equal(nonzero.astype(np.float32).astype(np.float64), nonzero):
                return False
    # Lowest set bit of each value: its mantissa as a 53-bit integer, trailing zeros dropped.
    integers = (np.abs(mantissas) * 2.0**53).astype(np.int64)
    trailing = np.log2(integers & -integers).astype(np.int64)
    lowest = int((exponents - 53 + trailing).min())
    _, top = math.frexp(float(np.abs(nonzero).sum()))
    precision = 53 if unit == U64 else 24
    return top - lowest <= precision


def _exact_differences(baseline: np.ndarray | None, idea: np.ndarray | None, d: np.ndarray) -> bool:
    """True when ``d = idea - baseline`` was computed without rounding (TwoSum error term zero)."""
    if baseline is None or idea is None:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        back = d + baseline  # exact subtraction <=> adding back recovers idea and the remainder is zero
        return bool(np.all(back == idea) and np.all((idea - d) == baseline))


def _exact_sign_flip(d: np.ndarray, baseline: np.ndarray | None, idea: np.ndarray | None, bands: bool) -> SignFlipResult:
    """Enumerate all 2^n sign patterns of ``d``, shape (n,), n <= :data:`EXACT_MAX_N_CAP`.

    When every sum is exact in float64 (integer counts, float32 metrics) ties
    are decided exactly, with no tolerance; otherwise within float64 noise.
    """
    observed = float(d.sum())
    nonzero = int(np.count_nonzero(d))
    counter = _MeetInTheMiddle(d)
    total = counter.total
    observed_group = 2 ** (d.size - nonzero)
    exact_inputs = _exact_differences(baseline, idea, d)
    exact64 = exact_inputs and sums_are_exact(d, U64)
    tol64 = 0.0 if exact64 else tie_tolerance(d, baseline, idea, U64)
    two, two_strict, one, one_strict = _exact_counts(counter, observed, tol64, observed_group)
    if exact64:
        two_strict, one_strict = two, one  # exact arithmetic breaks no tie
    two_band = one_band = None
    if bands:
        low2, high2, low1, high1 = two_strict, two, one_strict, one
        float32_exact = exact_inputs and sums_are_exact(d, U32) and (
            baseline is None or _float32_exact(baseline) and _float32_exact(idea)
        )
        if not float32_exact:
            tol32 = tie_tolerance(d, baseline, idea, U32)
            smallest = float(np.abs(d[d != 0]).min()) if nonzero else 0.0
            # Float32 near-ties count only while float32 still resolves every
            # difference; beyond that it would erase them, which is no honest test.
            if nonzero and tol32 <= 0.5 * smallest:
                t2, s2, t1, s1 = _exact_counts(counter, observed, tol32, observed_group)
                low2, high2, low1, high1 = min(low2, s2), max(high2, t2), min(low1, s1), max(high1, t1)
        two_band = PBand(low2 / total, high2 / total)
        one_band = PBand(low1 / total, high1 / total)
    return SignFlipResult(two / total, one / total, "exact", total, two_band, one_band, nonzero)


def _float32_exact(values: np.ndarray) -> bool:
    with np.errstate(over="ignore"):
        return bool(np.array_equal(values.astype(np.float32).astype(np.float64), values))


def _clopper_pearson(hits: int, trials: int, confidence: float) -> PBand:
    """Exact binomial confidence interval of a proportion hits/trials."""
    from scipy.special import betaincinv

    tail = (1 - confidence) / 2
    low = 0.0 if hits == 0 else float(betaincinv(hits, trials - hits + 1, tail))
    high = 1.0 if hits == trials else float(betaincinv(hits + 1, trials - hits, 1 - tail))
    return PBand(low, high)


def _randomized_sign_flip(
    d: np.ndarray, baseline: np.ndarray | None, idea: np.ndarray | None, resamples: int, seed: int
) -> SignFlipResult:
    """Monte-Carlo sign-flip test of ``d``, shape (n,), with bounded cost.

    The number of resamples is capped so that resamples * n stays under
    ``RANDOMIZED_MAX_CELLS``.  p = (hits + 1) / (B + 1), counting the observed
    pattern, so an estimate is never zero.
    """
    n = d.size
    budget = max(RANDOMIZED_MIN_RESAMPLES, RANDOMIZED_MAX_CELLS // max(n, 1))
    resamples = max(1, min(resamples, budget))
    rng = np.random.default_rng(seed)
    size = abs(float(d.sum()))
    tol = tie_tolerance(d, baseline, idea, U64)
    total = float(d.sum())
    chunk = max(1, min(resamples, 4_000_000 // max(n, 1)))
    hits_two = hits_one = strict_two = strict_one = 0
    done = 0
    while done < resamples:
        k = min(chunk, resamples - done)
        # A set bit keeps the sign, a clear bit flips it: sum(s*d) = 2*(bits@d) - sum(d).
        bits = np.unpackbits(rng.integers(0, 256, size=(k, (n + 7) // 8), dtype=np.uint8), axis=1, count=n)
        sums = 2.0 * (bits.astype(np.float64) @ d) - total
        oriented = sums if total >= 0 else -sums  # the observed direction is positive
        hits_two += int(np.count_nonzero(np.abs(sums) >= size - tol))
        hits_one += int(np.count_nonzero(oriented >= size - tol))
        strict_two += int(np.count_nonzero(np.abs(sums) > size + tol))
        strict_one += int(np.count_nonzero(oriented > size + tol))
        done += k
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


def sign_flip_test(
    d: np.ndarray,
    *,
    exact_max_n: int = EXACT_MAX_N_CAP,
    resamples: int = 100_000,
    seed: int = 0,
    baseline: np.ndarray | None = None,
    idea: np.ndarray | None = None,
    bands: bool = True,
) -> SignFlipResult:
    """Two-sided paired sign-flip test on mean(d); ``d`` has shape (n,).

    The one place that chooses between the exact and the randomized path:
    exact enumeration for n <= ``exact_max_n`` (at most :data:`EXACT_MAX_N_CAP`),
    a seeded randomized test above, whose cost is capped too: any n is bounded.
    ``baseline`` and ``idea``, shape (n,), are the values ``d`` came from: their
    magnitudes set the tie tolerance.  ``bands=False`` skips the honest-range
    bands (leave-one-out tests need the p alone).
    """
    d = np.asarray(d, dtype=np.float64)
    if d.size == 0:
        return SignFlipResult(1.0, 1.0, "exact", 1, PBand(1.0, 1.0), PBand(1.0, 1.0), 0)
    if d.size <= min(exact_max_n, EXACT_MAX_N_CAP):
        return _exact_sign_flip(d, baseline, idea, bands)
    return _randomized_sign_flip(d, baseline, idea, resamples, seed)


def min_two_sided_p(n_nonzero: int) -> float:
    """Smallest p an exact two-sided sign-flip test can give: 2/2^m for m non-zero differences.

    A zero difference flips to itself, so it adds nothing to the test; with no
    non-zero difference every pattern ties and p = 1.
    """
    if n_nonzero <= 0:
        return 1.0
    return min(1.0, 2.0 ** (1 - n_nonzero))


def t_quantile(q: float, df: int) -> float:
    """Quantile of Student's t with ``df`` degrees of freedom."""
    from scipy.special import stdtrit  # scipy.special is light; scipy.stats is not

    return float(stdtrit(df, q))


def mde_halfwidth(d: np.ndarray, *, confidence: float = 0.95) -> float | None:
    """CI half-width of mean(d), shape (n,): t((1+c)/2, n-1) * sd(d, ddof=1) / sqrt(n)."""
    d = np.asarray(d, dtype=np.float64)
    n = d.size
    if n < 2:
        return None
    return t_quantile((1 + confidence) / 2, n - 1) * float(d.std(ddof=1)) / math.sqrt(n)


def count_wins(d: np.ndarray, *, lower_is_better: bool) -> int:
    """Seeds where the idea is strictly better: d < 0 when lower is better, d > 0 otherwise."""
    d = np.asarray(d, dtype=np.float64)
    return int(np.count_nonzero(d < 0 if lower_is_better else d > 0))


def decide_verdict(p_value: float, delta_mean: float, *, lower_is_better: bool, alpha: float) -> Verdict:
    """Verdict from a two-sided p and the sign of the mean difference."""
    if p_value >= alpha or delta_mean == 0:
        return Verdict.NONE
    idea_better = delta_mean < 0 if lower_is_better else delta_mean > 0
    return Verdict.BETTER if idea_better else Verdict.WORSE


@dataclass(frozen=True)
class Recomputed:
    """Everything the auditor recomputes from the paired per-seed values."""

    n_pairs: int
    baseline: ArmSummary
    idea: ArmSummary
    diffs: np.ndarray  # shape (n_pairs,): idea - baseline
    delta_mean: float
    idea_wins: int
    p_value: float
    p_value_one_sided: float
    p_method: str
    p_resamples: int
    p_band: PBand  # two-sided p-values honest arithmetic on these values can give
    p_band_one_sided: PBand
    n_nonzero: int  # per-seed differences that are not exactly zero
    mde: float | None
    mde_rel_pct: float | None
    verdict: Verdict

    def to_dict(self) -> dict:
        """The JSON output's ``recomputed`` object; a non-finite number is written as null."""
        return {
            "n_pairs": self.n_pairs,
            "delta_mean": _finite_or_none(self.delta_mean),
            "idea_wins": self.idea_wins,
            "p_value": _finite_or_none(self.p_value),
            "p_value_one_sided": _finite_or_none(self.p_value_one_sided),
            "mde": _finite_or_none(self.mde),
            "mde_rel_pct": _finite_or_none(self.mde_rel_pct),
            "verdict": self.verdict.value,
            "p_value_method": self.p_method,
            "baseline_mean": _finite_or_none(self.baseline.mean),
            "idea_mean": _finite_or_none(self.idea.mean),
        }


def _finite_or_none(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


class NonFiniteStatistics(ValueError):
    """The per-seed values are finite but their statistics are not (they overflow a double)."""


def recompute(
    baseline: np.ndarray,
    idea: np.ndarray,
    *,
    lower_is_better: bool,
    alpha: float = 0.05,
    exact_max_n: int = EXACT_MAX_N_CAP,
    resamples: int = 100_000,
    seed: int = 0,
) -> Recomputed:
    """Recompute the paired comparison from per-seed values, both shape (n,), n >= 1.

    Raises :class:`NonFiniteStatistics` when finite inputs give non-finite
    statistics (values near the float range; the schema bounds per-seed values
    so that audited answers never get here).  An MDE or relative MDE that
    overflows (a near-zero baseline mean) is None, like one that is undefined.
    """
    baseline = np.asarray(baseline, dtype=np.float64)
    idea = np.asarray(idea, dtype=np.float64)
    if baseline.shape != idea.shape or baseline.ndim != 1 or baseline.size == 0:
        raise ValueError("baseline and idea must be non-empty vectors of the same length")
    # Overflow is checked below, on the results, instead of warned about on the way.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        d = idea - baseline
        delta = float(d.mean())
        base, idea_summary = summarize(baseline), summarize(idea)
        if not all(map(math.isfinite, (delta, float(np.abs(d).sum()), base.std_population, idea_summary.std_population))):
            raise NonFiniteStatistics(
                "the per-seed values are too large: their differences or spreads overflow a 64-bit float"
            )
        test = sign_flip_test(d, exact_max_n=exact_max_n, resamples=resamples, seed=seed, baseline=baseline, idea=idea)
        mde = mde_halfwidth(d)
        mde_rel = 100.0 * mde / abs(base.mean) if mde is not None and base.mean != 0 else None
    return Recomputed(
        n_pairs=int(d.size),
        baseline=base,
        idea=idea_summary,
        diffs=d,
        delta_mean=delta,
        idea_wins=count_wins(d, lower_is_better=lower_is_better),
        p_value=test.p_two_sided,
        p_value_one_sided=test.p_one_sided,
        p_method=test.method,
        p_resamples=test.resamples,
        p_band=test.two_sided_band,
        p_band_one_sided=test.one_sided_band,
        n_nonzero=test.n_nonzero,
        mde=_finite_or_none(mde),
        mde_rel_pct=_finite_or_none(mde_rel),  # a near-zero baseline mean leaves it undefined
        verdict=decide_verdict(test.p_two_sided, delta, lower_is_better=lower_is_better, alpha=alpha),
    )
