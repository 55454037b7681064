"""The paired sign-flip permutation test of mean(d) = 0: exact up to `exact_max_n` seeds, randomized above.

The exact test enumerates all 2^n sign patterns by meet-in-the-middle: the sums
of each half, matched by binary search, never all 2^n at once.  Ties between
signed sums are decided within the float noise of the arithmetic (none when
every sum is exact), and the honest range of p (:class:`PBand`) also counts the
near-ties float32 arithmetic would make.  Leave-one-out p-values (E702) are
:mod:`auditor.stats.signflip_loo`.

Pure functions over sequences of floats (a tuple, a list, a numpy array), no I/O.
An answer of up to 16 seeds is tested on Python floats alone; numpy is imported
only for the larger halves of the exact test and for the randomized test above
the exact limit.
How far sums may drift and when they are exact is :mod:`auditor.stats.signflip_ties`;
the randomized test is :mod:`auditor.stats.signflip_randomized`.
:mod:`auditor.stats.summary` re-exports what the rest of the auditor uses.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat
from operator import sub
from typing import TYPE_CHECKING, Literal

from auditor.stats.precision import U32, U64, as_floats, float64_sum
from auditor.stats.signflip_ties import SumExactness, TieScale, exact_differences

if TYPE_CHECKING:
    import numpy as np

# Ties between signed sums are decided with a tolerance scaled to the float
# noise of the arithmetic (see :func:`~auditor.stats.signflip_ties.tie_tolerance`), never to a fixed
# fraction of sum|d|: one diverged seed must not merge the others' sums.
# Exact enumeration by meet-in-the-middle: two halves of 2^(n/2) sums each
# (8 MiB apiece at n = 40), counted with a binary search.
EXACT_MAX_N_CAP = 40


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


def signed_sums(d: np.ndarray) -> np.ndarray:
    """All 2^k sums of +-d_i, shape (2^k,) for ``d`` of shape (k,); the set is symmetric about 0."""
    import numpy as np

    sums = np.zeros(1)
    for x in d:
        sums = np.concatenate((sums + x, sums - x))
    return sums


def signed_sums_list(values: list[float]) -> list[float]:
    """:func:`signed_sums` on Python floats: the same additions in the same order, so the same sums.

    ``s + (-x)`` is ``s - x`` bit for bit (IEEE subtraction adds the negation), in one pass a level.
    """
    sums = [0.0]
    for x in values:
        sums = [s + y for y in (x, -x) for s in sums]
    return sums


# Halves of up to 2^8 sums are enumerated and searched as Python floats: at that
# size numpy's per-call overhead is most of the work, and an answer of up to 16
# seeds never imports numpy.
LIST_HALF_MAX_N = 8


class MeetInTheMiddle:
    """Counts sign patterns of the n ``values`` whose signed sum clears a threshold.

    The 2^n sums are never formed: the first half's 2^(n//2) sums are matched
    against the second half's sorted sums by binary search.  Small halves are
    Python lists, large ones numpy arrays; both do the same float operations
    (:func:`signed_sums_list`, ``threshold - left``), so they give the same counts.
    """

    def __init__(self, values: list[float]) -> None:
        half = len(values) // 2
        self.in_lists = len(values) - half <= LIST_HALF_MAX_N
        if self.in_lists:
            self.left: list[float] | np.ndarray = signed_sums_list(values[:half])
            self.right: list[float] | np.ndarray = sorted(signed_sums_list(values[half:]))
        else:
            import numpy as np

            d = np.array(values)
            # Both halves sorted: the binary searches then probe ascending needles,
            # which keeps them in cache (7x faster at n = 40 than unsorted needles).
            with np.errstate(over="ignore", invalid="ignore"):  # huge sums overflow quietly, as Python floats do
                self.left = np.sort(signed_sums(d[:half]))[::-1]
                self.right = np.sort(signed_sums(d[half:]))
        self.n_patterns = len(self.left) * len(self.right)

    def _right_below(self, threshold: float, side: Literal["left", "right"]) -> int:
        """Pairs (l, r) of half sums with r below ``threshold - l`` (``side="right"``: or equal)."""
        if self.in_lists:
            search = bisect_left if side == "left" else bisect_right
            needles = map(sub, repeat(threshold), self.left)
            return sum(map(search, repeat(self.right), needles))
        import numpy as np

        with np.errstate(over="ignore", invalid="ignore"):
            ascending = np.subtract(threshold, self.left)  # threshold - left, as an array
        return int(np.searchsorted(self.right, ascending, side=side).sum())

    def at_least(self, threshold: float) -> int:
        """Patterns with sum >= threshold."""
        return self.n_patterns - self._right_below(threshold, "left")

    def above(self, threshold: float) -> int:
        """Patterns with sum > threshold."""
        return self.n_patterns - self._right_below(threshold, "right")


def _exact_counts(
    counter: MeetInTheMiddle, observed_sum: float, tol: float, observed_group: int, ties_exact: bool = False
) -> tuple[int, int, int, int]:
    """(two-sided loose, two-sided strict, one-sided loose, one-sided strict) pattern counts.

    Loose counts every sum within ``tol`` of the observed one as a tie; strict
    counts only sums beyond it, plus the ``observed_group`` patterns that give
    the observed sum by construction (flipping zero differences).  With
    ``ties_exact`` (every sum exact, ``tol`` = 0) no tie can break: strict is loose.
    """
    size = abs(observed_sum)
    one_loose = counter.at_least(size - tol)
    two_loose = counter.n_patterns if size - tol <= 0 else 2 * one_loose
    if ties_exact:
        return two_loose, two_loose, one_loose, one_loose
    one_strict = min(counter.above(size + tol) + observed_group, one_loose)
    two_strict = min(2 * one_strict, two_loose)  # the pattern set is symmetric about zero
    return two_loose, two_strict, one_loose, one_strict


def _exact_sign_flip(
    values: list[float],
    base_values: list[float] | None,
    idea_values: list[float] | None,
    bands: bool,
) -> SignFlipResult:
    """Enumerate all 2^n sign patterns of the n <= :data:`EXACT_MAX_N_CAP` differences ``values``.

    When every sum is exact in float64 (integer counts, float32 metrics) ties
    are decided exactly, with no tolerance; otherwise within float64 noise.
    With ``bands``, float32's near-ties widen the honest range (see
    :class:`SignFlipResult`).  Scalar work is done on Python floats (n <= 40:
    numpy's per-call cost would dominate); every sum is
    :func:`~auditor.stats.precision.float64_sum`'s.
    """
    observed_sum = float64_sum(values)
    nonzero = [x for x in values if x != 0]
    exactness = SumExactness(nonzero)
    counter = MeetInTheMiddle(values)
    n_patterns = counter.n_patterns
    observed_group = 2 ** (len(values) - len(nonzero))
    exact_inputs = exact_differences(base_values, idea_values, values)
    exact64 = exact_inputs and exactness.exact_in(U64)
    scale = TieScale(values, base_values, idea_values) if bands or not exact64 else None
    # (scale is made whenever either tolerance needs it)
    tol64 = scale.tolerance(U64) if scale is not None and not exact64 else 0.0
    tol32 = _float32_tolerance(scale, exact_inputs, exactness) if scale is not None and bands else None
    counts = [_exact_counts(counter, observed_sum, tol64, observed_group, exact64)]
    if tol32 is not None:
        counts.append(_exact_counts(counter, observed_sum, tol32, observed_group))
    two, two_strict, one, one_strict = counts[0]
    two_band = one_band = None
    if bands:
        low2, high2, low1, high1 = two_strict, two, one_strict, one
        for t2, s2, t1, s1 in counts[1:]:
            low2, high2, low1, high1 = min(low2, s2), max(high2, t2), min(low1, s1), max(high1, t1)
        two_band = PBand(low2 / n_patterns, high2 / n_patterns)
        one_band = PBand(low1 / n_patterns, high1 / n_patterns)
    return SignFlipResult(two / n_patterns, one / n_patterns, "exact", n_patterns, two_band, one_band, len(nonzero))


def _float32_tolerance(scale: TieScale, exact_inputs: bool, exactness: SumExactness) -> float | None:
    """The tie tolerance of float32 arithmetic, when its near-ties widen the honest range; else None.

    None when float32 is exact on these values, and when its tolerance reaches half
    the smallest difference: float32 near-ties count only while float32 still
    resolves every difference; beyond that it would erase them, which is no honest test.
    """
    nonzero = exactness.nonzero
    float32_exact = (
        exact_inputs and exactness.exact_in(U32) and (scale.operands is None or scale.float32_holds_operands())
    )
    if float32_exact or not nonzero:
        return None
    tol32 = scale.tolerance(U32)
    return tol32 if tol32 <= 0.5 * min(map(abs, nonzero)) else None


def sign_flip_test(
    d: Iterable[float],
    *,
    exact_max_n: int = EXACT_MAX_N_CAP,
    resamples: int = 100_000,
    seed: int = 0,
    baseline: Iterable[float] | None = None,
    idea: Iterable[float] | None = None,
    bands: bool = True,
) -> SignFlipResult:
    """Two-sided paired sign-flip test on the mean of the n differences ``d``.

    The one place that chooses between the exact and the randomized path:
    exact enumeration for n <= ``exact_max_n`` (at most :data:`EXACT_MAX_N_CAP`),
    a seeded randomized test above, whose cost is capped too: any n is bounded.
    ``baseline`` and ``idea``, n values each, are the values ``d`` came from: their
    magnitudes set the tie tolerance.  ``bands=False`` skips the honest-range
    bands (leave-one-out tests need the p alone).
    """
    return sign_flip_on_floats(
        as_floats(d),
        None if baseline is None else as_floats(baseline),
        None if idea is None else as_floats(idea),
        exact_max_n=exact_max_n,
        resamples=resamples,
        seed=seed,
        bands=bands,
    )


def sign_flip_on_floats(
    values: list[float],
    base_values: list[float] | None,
    idea_values: list[float] | None,
    *,
    exact_max_n: int = EXACT_MAX_N_CAP,
    resamples: int = 100_000,
    seed: int = 0,
    bands: bool = True,
) -> SignFlipResult:
    """:func:`sign_flip_test` of lists of Python floats (:func:`~auditor.stats.precision.as_floats`'s)."""
    if not values:
        return SignFlipResult(1.0, 1.0, "exact", 1, PBand(1.0, 1.0), PBand(1.0, 1.0), 0)
    if len(values) <= min(exact_max_n, EXACT_MAX_N_CAP):
        return _exact_sign_flip(values, base_values, idea_values, bands)
    import numpy as np  # the randomized test's draws are vectorised

    from auditor.stats.signflip_randomized import randomized_sign_flip

    with np.errstate(over="ignore", invalid="ignore"):  # huge sums overflow quietly, as in the exact test
        return randomized_sign_flip(values, base_values, idea_values, resamples, seed)


def min_two_sided_p(n_nonzero: int) -> float:
    """Smallest p an exact two-sided sign-flip test can give: 2/2^m for m non-zero differences.

    A zero difference flips to itself, so it adds nothing to the test; with no
    non-zero difference every pattern ties and p = 1.
    """
    if n_nonzero <= 0:
        return 1.0
    return min(1.0, 2.0 ** (1 - n_nonzero))
