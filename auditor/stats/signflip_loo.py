"""Leave-one-out p-values of the sign-flip test (E702): each seed left out in turn.

When every signed sum is exact the n tests share the enumerated halves of one split
(:func:`leave_one_out_p_values`); :func:`leave_one_out_within_twice_p` and
:func:`leave_one_out_p_bound` bound them all from the test of all n, so that a result
that cannot be fragile needs none of them.  :mod:`auditor.stats.summary` re-exports these.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from auditor.stats.precision import U64, as_floats, float64_sum
from auditor.stats.signflip import (
    EXACT_MAX_N_CAP,
    LIST_HALF_MAX_N,
    MeetInTheMiddle,
    sign_flip_test,
    signed_sums_list,
)
from auditor.stats.signflip_ties import sums_are_exact, tie_tolerance

# Leave-one-out p-values share one split of the seeds into halves of Python floats
# up to this n (when every sum is exact); above it, each comes from its own test.
LEAVE_ONE_OUT_SHARED_MAX_N = 2 * LIST_HALF_MAX_N


def leave_one_out_p_values(d: Iterable[float], *, exact_max_n: int = EXACT_MAX_N_CAP) -> list[float]:
    """Two-sided p of the sign-flip test on the n >= 2 differences ``d`` with seed k left out, for every k.

    Each equals ``sign_flip_test(others, exact_max_n=exact_max_n, bands=False).p_two_sided``.
    When every signed sum of ``d`` is exact in float64 (integer counts, float32
    metrics, most printed decimals), so is every sum without one seed, whatever the
    order of additions, and no tie needs a tolerance: then the n counts share the
    enumerated halves of one split (:func:`_exact_leave_one_out`).
    """
    values = as_floats(d)
    n = len(values)
    if _leave_one_out_shares_halves(values, exact_max_n):
        return _exact_leave_one_out(values)
    others = (values[:k] + values[k + 1 :] for k in range(n))
    return [sign_flip_test(rest, exact_max_n=exact_max_n, bands=False).p_two_sided for rest in others]


def leave_one_out_within_twice_p(d: Iterable[float], *, exact_max_n: int = EXACT_MAX_N_CAP) -> bool:
    """True when no :func:`leave_one_out_p_values` of ``d`` can exceed twice the two-sided p of
    all n differences (as :func:`sign_flip_test` gives it, tolerant or exact), known without them.

    It holds when the leave-one-out p-values are exact counts: every signed sum exact, and the
    shared halves of :func:`_exact_leave_one_out`.  Say the total T of all n is positive (the
    negative case is its mirror image).  For a seed k below T, each pattern of the others whose
    sum reaches T - x_k becomes, with seed k's + sign, a distinct pattern of all n whose sum
    reaches T: at most the C such patterns, so p_k = 2 * count_k / 2^(n-1) <= 4 * C / 2^n = 2 * p.
    For a seed at or above T, the others' patterns that reach T - x_k <= 0, half of them at least
    (their sums are symmetric about 0), all become such patterns: then p >= 1/2, and 2 * p >= 1
    bounds every p (a zero total likewise gives p = 1).  A tolerant p only counts more.  So a
    significant result with p below alpha / 2 is never fragile, and E702 needs no test.
    """
    values = as_floats(d)
    return len(values) >= 2 and _leave_one_out_shares_halves(values, exact_max_n)


# A leave-one-out count compares two computed sums (the others' and their total), each
# within one tie tolerance of its real value, and is mapped to a count of all n that again
# compares two computed sums: its own tolerance and four more cover every rounding.
LEAVE_ONE_OUT_BOUND_TOLERANCES = 5


def leave_one_out_p_bound(d: Iterable[float], *, exact_max_n: int = EXACT_MAX_N_CAP) -> float:
    """An upper bound on every :func:`leave_one_out_p_values` of the n >= 2 differences ``d``, from one count.

    :func:`leave_one_out_within_twice_p`'s argument on real numbers, where no sum is exact:
    each leave-one-out p counts the others' patterns whose computed sum comes within its
    tolerance (at most ``tol``, the tie tolerance of all n) of their computed total; every
    computed sum is within ``tol`` of its real value, so in reals the pattern reaches the total
    less ``tol`` + 2 ``tol``, and with the seed's own sign a pattern of all n reaches the full
    total less as much, which computed comes within 5 ``tol`` of it.  So each leave-one-out p
    is at most twice the two-sided p of all n counted with that tolerance.  1.0 (no bound)
    when the leave-one-out tests would not be exact.
    """
    values = as_floats(d)
    n = len(values)
    if n < 2 or n - 1 > min(exact_max_n, EXACT_MAX_N_CAP):
        return 1.0
    tol = LEAVE_ONE_OUT_BOUND_TOLERANCES * tie_tolerance(values, None, None, U64)
    size = abs(float64_sum(values))
    if size - tol <= 0:
        return 1.0  # every pattern ties: p = 1 and twice it bounds nothing
    counter = MeetInTheMiddle(values)
    return min(1.0, 4 * counter.at_least(size - tol) / counter.n_patterns)


def _leave_one_out_shares_halves(values: list[float], exact_max_n: int) -> bool:
    """The leave-one-out p-values of ``values`` are exact counts from the halves of one split
    (:func:`_exact_leave_one_out`): every signed sum exact, each test exact, the halves in lists."""
    n = len(values)
    shared = n - 1 <= min(exact_max_n, EXACT_MAX_N_CAP) and n <= LEAVE_ONE_OUT_SHARED_MAX_N
    return shared and sums_are_exact(values, U64)


def _exact_leave_one_out(values: list[float]) -> list[float]:
    """:func:`leave_one_out_p_values` of differences whose signed sums are all exact, halves in lists.

    The others' sums are matched as in :class:`MeetInTheMiddle`: the sums of the
    left-out seed's half that give it a + sign, less the seed (the half's sums
    without it), against the other half's sorted sums.  Exact sums make any split
    count the same patterns as the test's own: each needle ``size - left`` is
    exact, or beyond every sum it is matched with both before and after rounding.
    """
    half = len(values) // 2
    halves = (values[:half], values[half:])
    sums = [signed_sums_list(part) for part in halves]
    sorted_sums = [sorted(part_sums) for part_sums in sums]
    total = float64_sum(values)
    n_patterns = 2 ** (len(values) - 1)
    p_values = []
    for k, x in enumerate(values):
        size = abs(total - x)  # |sum of the others|, exact
        own = k >= half  # the half that holds seed k
        part_sums, right = sums[own], sorted_sums[not own]
        # signed_sums_list gives the sums with this seed's + sign in runs of 2^j, every 2^(j+1).
        run = 1 << (k - half if own else k)
        below = 0
        for start in range(0, len(part_sums), 2 * run):
            for with_plus in part_sums[start : start + run]:
                below += bisect_left(right, size - (with_plus - x))
        # As _exact_counts with exact ties: every pattern when the others sum to zero, else both tails.
        p_values.append(1.0 if size <= 0 else 2 * (n_patterns - below) / n_patterns)
    return p_values
