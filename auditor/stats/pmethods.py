"""P-values that other common tests give on the same paired data.

When a claimed ``p_value`` does not match the paired sign-flip test the bench
specifies, the auditor names the method it does match ("0.00327 is the paired
t-test p; the bench specifies the paired sign-flip test").  This module
recomputes those other methods; it never decides anything itself.

Small pure functions over numpy arrays.  scipy.stats is never imported (about a
second of start-up): the distributions come from ``scipy.special`` (``stdtr``,
``ndtr``, ``bdtr``), imported inside the functions that need them, and the
Wilcoxon null distribution is enumerated here.  Every method is reproduced
against its scipy.stats reference in ``tests/test_pmethods.py``.

Numerics: the t and z statistics are scale invariant, so the values are first
multiplied by a power of two (exact) that brings their largest magnitude into
[0.5, 1): squares and sums cannot overflow whatever the finite input (1e300
per seed included), and the results are bit-for-bit those of the unscaled
arithmetic.  Variances are computed on values shifted by one of them, so that
identical values give a variance of exactly zero instead of rounding noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# The unpaired permutation test enumerates every split of the 2n pooled values
# into two arms of n while C(2n, n) is at most this (n <= 10: 184,756 splits).
UNPAIRED_EXACT_MAX_SPLITS = 200_000
# Above that it draws this many random splits, p = (hits + 1) / (B + 1) ...
UNPAIRED_RESAMPLES = 100_000
# ... capped so that resamples * 2n stays under this many shuffled cells:
# a shuffle costs ~25-50 ns a cell, so the test stays near 0.1 s for any n
# (n <= 20 keeps all 100,000 resamples; n = 10,000 gets 200).
UNPAIRED_MAX_CELLS = 4_000_000
# Floor on the resamples of a capped test; beyond n = 20,000 the cost grows
# linearly with n, like reading the values does.
UNPAIRED_MIN_RESAMPLES = 100
# Cells shuffled per chunk (8 MiB of float64): bounds the memory of a chunk.
UNPAIRED_CHUNK_CELLS = 1_000_000
# Two split statistics are tied when they agree to this relative tolerance of
# the sum of the centred magnitudes (the scale of their rounding); mirrors
# ``stats.TIE_RTOL`` of the paired sign-flip test.
TIE_RTOL = 1e-9
# scipy.stats.wilcoxon(d) with its default method='auto' (scipy >= 1.15):
# more than this many pairs -> normal approximation ...
WILCOXON_AUTO_EXACT_MAX_N = 50
# ... otherwise the exact null distribution when |d| has no ties and no zeros;
# with ties or zeros a permutation test, which is exact (all 2^n sign patterns,
# within its default 9,999 resamples) up to this many pairs, and the normal
# approximation above it.
WILCOXON_AUTO_PERMUTATION_MAX_N = 13
# The normal-approximation Wilcoxon p is reported beside the default one only
# when the two differ by more than float noise.
WILCOXON_SAME_P_RTOL = 1e-12


@dataclass(frozen=True)
class AlternativeP:
    """The p-value another test gives on the same data."""

    key: str  # stable short id, e.g. "paired-t"
    description: str  # as used in a sentence: "the paired t-test p"
    p_value: float  # finite, in [0, 1]


def _as_p(p: float) -> float | None:
    """``p`` as a float clipped to [0, 1]; None when it is not finite."""
    p = float(p)
    if not math.isfinite(p):
        return None
    return min(max(p, 0.0), 1.0)


def _unit_scaled(x: np.ndarray) -> np.ndarray:
    """``x``, shape (m,), times the power of two that puts max|x| in [0.5, 1).

    Exact (a change of exponent) unless values 2^1000 times smaller than the
    largest fall into the subnormals, where they are negligible anyway.
    """
    top = float(np.max(np.abs(x))) if x.size else 0.0
    if top == 0.0:
        return x.astype(np.float64, copy=True)
    scaled: np.ndarray = np.ldexp(x, -math.frexp(top)[1])  # (numpy types its ufuncs' results as Any)
    return scaled


def _sample_var(x: np.ndarray) -> float:
    """ddof=1 variance of ``x``, shape (m,), m >= 2; exactly 0 when all values are equal."""
    return float(np.var(x - x[0], ddof=1))  # the shift makes equal values exact zeros


def _differences(baseline: np.ndarray, idea: np.ndarray) -> np.ndarray:
    """``idea - baseline``, shape (n,); halved when it overflows (every test here is scale invariant)."""
    d: np.ndarray = idea - baseline
    if not np.all(np.isfinite(d)):
        d = idea * 0.5 - baseline * 0.5
    return d


# ---------------------------------------------------------------- paired t / z


def paired_t_statistic(d: np.ndarray) -> float | None:
    """``mean(d) / (sd(d, ddof=1) / sqrt(n))`` of ``d``, shape (n,); None when n < 2 or sd = 0.

    May be +-inf when the spread is negligible next to the mean (p = 0 then).
    """
    n = d.size
    if n < 2:
        return None
    u = _unit_scaled(d)
    var = _sample_var(u)
    if var == 0.0:
        return None
    return float(np.float64(u.mean()) / np.sqrt(np.float64(var) / n))


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p of a Student t statistic: ``2 * P(T_df <= -|t|)``."""
    from scipy.special import stdtr  # light, unlike scipy.stats

    return float(2.0 * stdtr(df, -abs(t)))


def z_two_sided_p(z: float) -> float:
    """Two-sided normal p: ``2 * Phi(-|z|)`` (the same as ``2 * (1 - Phi(|z|))``, without its cancellation)."""
    from scipy.special import ndtr

    return float(2.0 * ndtr(-abs(z)))


# ---------------------------------------------------------------- unpaired t


def unpaired_t(baseline: np.ndarray, idea: np.ndarray, *, equal_var: bool) -> tuple[float, float] | None:
    """(t, df) of the unpaired t-test of idea vs baseline, both shape (n,).

    Welch's statistic and Welch-Satterthwaite df when ``equal_var`` is False,
    the pooled-variance Student test (df = 2n - 2) otherwise.  None when n < 2
    or both arms are constant.
    """
    n = idea.size
    if n < 2:
        return None
    u = _unit_scaled(np.concatenate((idea, baseline)))
    a, b = u[:n], u[n:]
    va, vb = _sample_var(a), _sample_var(b)
    if va == 0.0 and vb == 0.0:
        return None
    diff = np.float64(a.mean()) - np.float64(b.mean())
    if equal_var:
        se = np.sqrt(np.float64((va + vb) / 2.0) * (2.0 / n))
        return float(diff / se), float(2 * n - 2)
    qa, qb = va / n, vb / n
    se = np.sqrt(np.float64(qa + qb))
    top = max(qa, qb)
    ra, rb = qa / top, qb / top  # the df is scale free: ratios keep the squares from underflowing
    df = (ra + rb) ** 2 / ((ra * ra + rb * rb) / (n - 1))
    return float(diff / se), float(df)


# ---------------------------------------------------------------- Wilcoxon


@dataclass(frozen=True)
class SignedRanks:
    """Signed ranks of the nonzero differences, zeros dropped (scipy's zero_method='wilcox')."""

    n_pairs: int  # all pairs, zeros included (scipy's method choice looks at this)
    n_nonzero: int
    doubled_ranks: np.ndarray  # shape (n_nonzero,), int64: 2 * average rank of |d|
    doubled_r_plus: int  # sum of doubled_ranks over the positive differences
    tie_counts: np.ndarray  # shape (groups,): sizes of the groups of equal |d|

    @property
    def has_ties(self) -> bool:
        return bool(np.any(self.tie_counts > 1))

    @property
    def has_zeros(self) -> bool:
        return self.n_nonzero < self.n_pairs


def signed_ranks(d: np.ndarray) -> SignedRanks | None:
    """Average ranks of |d| over the nonzero ``d``, shape (n,); None when every d is zero."""
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return None
    _, group, counts = np.unique(np.abs(nonzero), return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    starts = ends - counts
    # A group filling sorted places starts+1 .. ends has average rank (starts + 1 + ends) / 2.
    doubled = (starts + ends + 1).astype(np.int64)[group.reshape(-1)]
    return SignedRanks(
        n_pairs=int(d.size),
        n_nonzero=int(nonzero.size),
        doubled_ranks=doubled,
        doubled_r_plus=int(doubled[nonzero > 0].sum()),
        tie_counts=counts,
    )


def wilcoxon_normal_p(ranks: SignedRanks) -> float:
    """Normal-approximation p of the signed-rank sum, tie-corrected, no continuity correction.

    What ``scipy.stats.wilcoxon(d, method='approx')`` gives with its defaults.
    """
    m = float(ranks.n_nonzero)
    mean = m * (m + 1.0) / 4.0
    counts = ranks.tie_counts.astype(np.float64)
    tie_correction = float(np.sum(counts**3 - counts))
    se = math.sqrt((m * (m + 1.0) * (2.0 * m + 1.0) - tie_correction / 2.0) / 24.0)  # > 0 for m >= 1
    return z_two_sided_p((ranks.doubled_r_plus / 2.0 - mean) / se)


def wilcoxon_enumerated_p(ranks: SignedRanks) -> float:
    """Exact two-sided p over all 2^m sign patterns of the (doubled, integer) ranks.

    ``2 * min(P(R+ <= r), P(R+ >= r))`` clipped to 1: scipy's exact test when
    there are no ties, and its exact permutation test when there are.  The
    counts are exact integers; meant for m <= 50 (counts below 2^50).
    """
    total = int(ranks.doubled_ranks.sum())
    counts = np.zeros(total + 1, dtype=np.int64)
    counts[0] = 1
    for r in ranks.doubled_ranks.tolist():  # polynomial product of (1 + x^r)
        counts[r:] = counts[r:] + counts[: total + 1 - r]
    observed = ranks.doubled_r_plus
    at_most = int(counts[: observed + 1].sum())
    at_least = int(counts[observed:].sum())
    return min(1.0, 2.0 * min(at_most, at_least) / 2.0**ranks.n_nonzero)


def wilcoxon_default(ranks: SignedRanks) -> tuple[float, str]:
    """(p, how) of ``scipy.stats.wilcoxon(d)`` with its default method='auto' (scipy >= 1.15)."""
    if ranks.n_pairs > WILCOXON_AUTO_EXACT_MAX_N:
        return wilcoxon_normal_p(ranks), "normal approximation"
    if not (ranks.has_ties or ranks.has_zeros):
        return wilcoxon_enumerated_p(ranks), "exact"
    if ranks.n_pairs <= WILCOXON_AUTO_PERMUTATION_MAX_N:
        return wilcoxon_enumerated_p(ranks), "exact permutation over the ranks"
    return wilcoxon_normal_p(ranks), "normal approximation"


# ---------------------------------------------------------------- sign test


def sign_test_p(d: np.ndarray) -> float | None:
    """Exact two-sided binomial sign test of the positive vs negative ``d``, shape (n,); zeros dropped.

    ``min(1, 2 * P(X <= min(k, m - k)))`` with X ~ Binomial(m, 1/2): what
    ``scipy.stats.binomtest(k, m, 0.5)`` gives.  None when every d is zero.
    """
    from scipy.special import bdtr

    positive = int(np.count_nonzero(d > 0))
    m = positive + int(np.count_nonzero(d < 0))
    if m == 0:
        return None
    return min(1.0, 2.0 * float(bdtr(min(positive, m - positive), m, 0.5)))


# ---------------------------------------------------------------- unpaired permutation


@dataclass(frozen=True)
class PermutationResult:
    """Two-sided unpaired permutation test of mean(idea) - mean(baseline)."""

    p_value: float
    method: str  # "exact" | "randomized"
    resamples: int  # C(2n, n) splits for the exact test


def _subset_sums_by_size(x: np.ndarray) -> list[np.ndarray]:
    """``out[k]``: the sums of all k-element subsets of ``x``, shape (C(m, k),), for k = 0..m."""
    out = [np.zeros(1)]
    for value in x:
        grown = [out[0]]
        for k in range(1, len(out)):
            grown.append(np.concatenate((out[k], out[k - 1] + value)))
        grown.append(out[-1] + value)
        out = grown
    return out


def unpaired_permutation_test(baseline: np.ndarray, idea: np.ndarray, *, seed: int = 0) -> PermutationResult:
    """Two-sided permutation test of the difference of the arm means, both shape (n,), n >= 1.

    The arms are pooled and every split into two arms of n is a resample; a
    split is as extreme as the observed one when ``|2 S - T| >= |2 S_obs - T|``
    (S: the sum of the first arm, T: the pooled sum) up to :data:`TIE_RTOL`.
    Exact over all C(2n, n) splits while that is at most
    :data:`UNPAIRED_EXACT_MAX_SPLITS` (meet in the middle: sums of k values of
    one arm plus n - k of the other); otherwise seeded random splits with
    p = (hits + 1) / (B + 1), B capped by :data:`UNPAIRED_MAX_CELLS`.
    """
    n = idea.size
    pooled = _unit_scaled(np.concatenate((idea, baseline)))
    # Centre on a value of the data (the statistic is shift invariant): equal values become exact zeros.
    pooled = pooled - np.sort(pooled)[n]
    total = float(pooled.sum())
    observed = abs(2.0 * float(pooled[:n].sum()) - total)
    threshold = observed - TIE_RTOL * max(float(np.abs(pooled).sum()), np.finfo(float).tiny)
    splits = math.comb(2 * n, n)
    if splits <= UNPAIRED_EXACT_MAX_SPLITS:
        first, second = _subset_sums_by_size(pooled[:n]), _subset_sums_by_size(pooled[n:])
        hits = 0
        for k in range(n + 1):  # k values from the first arm, n - k from the second
            sums = first[k][:, None] + second[n - k][None, :]
            hits += int(np.count_nonzero(np.abs(2.0 * sums - total) >= threshold))
        return PermutationResult(hits / splits, "exact", splits)
    resamples = min(UNPAIRED_RESAMPLES, max(UNPAIRED_MIN_RESAMPLES, UNPAIRED_MAX_CELLS // (2 * n)))
    chunk = max(1, UNPAIRED_CHUNK_CELLS // (2 * n))
    rng = np.random.default_rng(seed)
    hits = done = 0
    while done < resamples:
        k = min(chunk, resamples - done)
        shuffled = rng.permuted(np.broadcast_to(pooled, (k, 2 * n)), axis=1)
        sums = shuffled[:, :n].sum(axis=1)
        hits += int(np.count_nonzero(np.abs(2.0 * sums - total) >= threshold))
        done += k
    return PermutationResult((hits + 1) / (resamples + 1), "randomized", resamples)


# ---------------------------------------------------------------- the list


def alternative_p_values(
    baseline: Sequence[float] | np.ndarray, idea: Sequence[float] | np.ndarray, *, seed: int = 0
) -> list[AlternativeP]:
    """P-values of other tests of idea vs baseline, both shape (n,).

    In this order, each two-sided unless named one-sided: paired-t,
    paired-t-one-sided, wilcoxon, wilcoxon-approx, sign-test,
    unpaired-permutation, welch-t, student-t, z-test.  Methods that are
    undefined for the data (n too small, zero variance, all differences zero)
    are left out, as is wilcoxon-approx when it equals wilcoxon.  Never raises
    for finite input (an empty or non-finite input gives []), never returns
    NaN, lets no floating-point warning escape; deterministic given ``seed``
    (used by the randomized unpaired permutation test only).
    """
    baseline = np.asarray(baseline, dtype=np.float64)
    idea = np.asarray(idea, dtype=np.float64)
    if baseline.shape != idea.shape or baseline.ndim != 1:
        raise ValueError("baseline and idea must be vectors of the same length")
    if baseline.size == 0 or not (np.all(np.isfinite(baseline)) and np.all(np.isfinite(idea))):
        return []
    out: list[AlternativeP] = []

    def add(key: str, description: str, p: float | None) -> None:
        p = _as_p(p) if p is not None else None
        if p is not None:
            out.append(AlternativeP(key, description, p))

    n = idea.size
    with np.errstate(all="ignore"):  # a t of +-inf (negligible spread) is meaningful: p = 0
        d = _differences(baseline, idea)
        t = paired_t_statistic(d)
        if t is not None:
            p_t = t_two_sided_p(t, n - 1)
            add("paired-t", "the paired t-test p", p_t)
            add("paired-t-one-sided", "the one-sided paired t-test p", p_t / 2.0)
        ranks = signed_ranks(d)
        if ranks is not None:
            p_w, how = wilcoxon_default(ranks)
            add("wilcoxon", f"the Wilcoxon signed-rank test p ({how})", p_w)
            if how != "normal approximation":
                p_approx = wilcoxon_normal_p(ranks)
                if not math.isclose(p_approx, p_w, rel_tol=WILCOXON_SAME_P_RTOL):
                    add("wilcoxon-approx", "the Wilcoxon signed-rank test p (normal approximation)", p_approx)
        add("sign-test", "the two-sided binomial sign test p", sign_test_p(d))
        perm = unpaired_permutation_test(baseline, idea, seed=seed)
        how = (
            f"exact over all {perm.resamples} splits"
            if perm.method == "exact"
            else f"randomized, {perm.resamples} resamples"
        )
        add("unpaired-permutation", f"the unpaired two-sample permutation test p ({how})", perm.p_value)
        welch = unpaired_t(baseline, idea, equal_var=False)
        if welch is not None:
            add("welch-t", "the Welch unpaired t-test p", t_two_sided_p(*welch))
        student = unpaired_t(baseline, idea, equal_var=True)
        if student is not None:
            add("student-t", "the unpaired Student t-test p (equal variances)", t_two_sided_p(*student))
        if t is not None:
            add("z-test", "the normal-approximation (z) paired test p", z_two_sided_p(t))
    return out


def matching_methods(is_consistent: Callable[[float], bool], alternatives: list[AlternativeP]) -> list[AlternativeP]:
    """The alternatives whose p the claim is consistent with (the caller's rounding-aware predicate), in list order."""
    return [alt for alt in alternatives if is_consistent(alt.p_value)]
