"""Pure recomputation of the statistics an answer reports.

Small functions over numpy arrays, no I/O.  The facts below were established
from the stored real answers (``shared/seeds``) and are the reference the
arithmetic rules check against:

* ``d_i = idea_i - baseline_i`` per seed; ``delta_mean = mean(d)``.
* A *win* is a seed where the idea is strictly better in the metric's direction
  (``d_i < 0`` when lower is better).
* Reported ``std`` is the population std (``ddof=0``); ``ddof=1`` is accepted too.
* ``p_value`` is a two-sided paired sign-flip permutation test on ``mean(d)``.
  Seed 000 claims 0.01475 = 295/20000, a Monte-Carlo estimate from 20,000
  resamples of the exact 4/256 = 0.015625.
* ``mde`` is the 95% CI half-width of the mean paired difference,
  ``t(0.975, n-1) * sd(d, ddof=1) / sqrt(n)``; seed 000 used t = 2.365 from a
  table, hence the 1e-3 relative tolerance of the MDE rules.

scipy.stats is deliberately not imported (about a second of start-up); the
t quantile comes from ``scipy.special.stdtrit``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .verdicts import Verdict

# Relative tolerance for means, stds and per-seed differences.  The agents'
# scripts compute in float32, whose rounding is ~6e-8 relative, so 1e-6 leaves
# room for accumulation while still catching any hand-edited digit.
RTOL_VALUES = 1e-6
# Relative tolerance for the MDE: agents use a t quantile from a table (2.365).
RTOL_MDE = 1e-3
# Two sums of sign-flipped differences are "tied" with the observed one when
# they agree to this relative tolerance: float rounding must not decide a tie.
TIE_RTOL = 1e-9
# z for a two-sided 99.9% band around a Monte-Carlo p-value estimate.
MC_BAND_Z = 3.29
# Upper bound on sign draws (resamples x n) of the randomized test: keeps the
# cost bounded for any n (100,000 seeds still finishes in well under a second).
RANDOMIZED_MAX_CELLS = 50_000_000
RANDOMIZED_MIN_RESAMPLES = 1_000
# Exact enumeration holds 2^n sums in memory (8 MiB at n = 20, 128 MiB at 24):
# above this n the randomized test is used whatever ``exact_max_n`` says.
EXACT_MAX_N_CAP = 24


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


def summarize(values: np.ndarray) -> ArmSummary:
    """Mean and both stds of ``values``, shape (n,), n >= 1."""
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    return ArmSummary(
        n=n,
        mean=float(values.mean()),
        std_population=float(values.std(ddof=0)),
        std_sample=float(values.std(ddof=1)) if n >= 2 else None,
    )


def std_ddof_matching(claimed: float, summary: ArmSummary, *, rtol: float = RTOL_VALUES) -> int | None:
    """Which ddof (0 or 1) reproduces ``claimed``; None when neither does."""
    scale = abs(summary.mean) * 1e-3  # stds of near-constant values are float noise
    if values_close(claimed, summary.std_population, rtol=rtol, scale=scale):
        return 0
    if summary.std_sample is not None and values_close(claimed, summary.std_sample, rtol=rtol, scale=scale):
        return 1
    return None


@dataclass(frozen=True)
class SignFlipResult:
    """Paired sign-flip permutation test of mean(d) = 0."""

    p_two_sided: float
    # One-sided p in the direction of the observed mean difference.
    p_one_sided: float
    method: str  # "exact" | "randomized"
    resamples: int  # 2**n for the exact test


def _tie_tolerance(d: np.ndarray) -> float:
    return TIE_RTOL * max(float(np.abs(d).sum()), np.finfo(float).tiny)


def _exact_sign_flip(d: np.ndarray) -> SignFlipResult:
    """Enumerate all 2^n sign patterns of ``d``, shape (n,), n <= ~22."""
    observed = float(d.sum())
    sums = np.zeros(1)
    for x in d:  # doubles each step: all 2^n signed sums, 8 MiB at n = 20
        sums = np.concatenate((sums + x, sums - x))
    tol = _tie_tolerance(d)
    total = sums.size
    two = np.count_nonzero(np.abs(sums) >= abs(observed) - tol) / total
    if observed < 0:
        one = np.count_nonzero(sums <= observed + tol) / total
    else:
        one = np.count_nonzero(sums >= observed - tol) / total
    return SignFlipResult(float(two), float(one), "exact", total)


def _randomized_sign_flip(d: np.ndarray, resamples: int, seed: int) -> SignFlipResult:
    """Monte-Carlo sign-flip test of ``d``, shape (n,), with bounded cost.

    The number of resamples is capped so that resamples * n stays under
    ``RANDOMIZED_MAX_CELLS``.  p = (hits + 1) / (B + 1), counting the observed
    pattern, so an estimate is never zero.
    """
    n = d.size
    budget = max(RANDOMIZED_MIN_RESAMPLES, RANDOMIZED_MAX_CELLS // max(n, 1))
    resamples = max(1, min(resamples, budget))
    rng = np.random.default_rng(seed)
    observed = float(d.sum())
    tol = _tie_tolerance(d)
    total = float(d.sum())
    chunk = max(1, min(resamples, 4_000_000 // max(n, 1)))
    hits_two = hits_one = 0
    done = 0
    while done < resamples:
        k = min(chunk, resamples - done)
        # A set bit keeps the sign, a clear bit flips it: sum(s*d) = 2*(bits@d) - sum(d).
        bits = np.unpackbits(rng.integers(0, 256, size=(k, (n + 7) // 8), dtype=np.uint8), axis=1, count=n)
        sums = 2.0 * (bits.astype(np.float64) @ d) - total
        hits_two += int(np.count_nonzero(np.abs(sums) >= abs(observed) - tol))
        if observed < 0:
            hits_one += int(np.count_nonzero(sums <= observed + tol))
        else:
            hits_one += int(np.count_nonzero(sums >= observed - tol))
        done += k
    return SignFlipResult(
        (hits_two + 1) / (resamples + 1), (hits_one + 1) / (resamples + 1), "randomized", resamples
    )


def sign_flip_test(d: np.ndarray, *, exact_max_n: int = 20, resamples: int = 10_000, seed: int = 0) -> SignFlipResult:
    """Two-sided paired sign-flip test on mean(d); ``d`` has shape (n,).

    The one place that chooses between the exact and the randomized path:
    exact enumeration for n <= ``exact_max_n`` (at most :data:`EXACT_MAX_N_CAP`),
    a seeded randomized test above, whose cost is capped too: any n is bounded.
    """
    d = np.asarray(d, dtype=np.float64)
    if d.size == 0:
        return SignFlipResult(1.0, 1.0, "exact", 1)
    if d.size <= min(exact_max_n, EXACT_MAX_N_CAP):
        return _exact_sign_flip(d)
    return _randomized_sign_flip(d, resamples, seed)


def min_two_sided_p(n: int) -> float:
    """Smallest p an exact two-sided sign-flip test can give with n pairs: 2/2^n."""
    if n <= 0:
        return 1.0
    return min(1.0, 2.0 ** (1 - n))


def mc_band(p: float, resamples: int) -> float:
    """Half-width of the 99.9% band of a Monte-Carlo p estimate from B resamples.

    ``3.29 * sqrt(p (1 - p) / B) + 1/B``; the 1/B term covers the granularity
    of an estimate that is a count over B.
    """
    resamples = max(int(resamples), 1)
    p = min(max(p, 0.0), 1.0)
    return MC_BAND_Z * math.sqrt(p * (1 - p) / resamples) + 1 / resamples


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
    exact_max_n: int = 20,
    resamples: int = 10_000,
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
        test = sign_flip_test(d, exact_max_n=exact_max_n, resamples=resamples, seed=seed)
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
        mde=_finite_or_none(mde),
        mde_rel_pct=_finite_or_none(mde_rel),  # a near-zero baseline mean leaves it undefined
        verdict=decide_verdict(test.p_two_sided, delta, lower_is_better=lower_is_better, alpha=alpha),
    )
