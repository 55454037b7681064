"""Which claimed p-values an honest sign-flip test could have printed.

A claim is consistent with the recomputed test when it is

* the exact p (any value in the honest band of :class:`auditor.stats.summary.PBand`:
  near-ties fall either way in float arithmetic), printed with any rounding; or
* a Monte-Carlo estimate from B resamples, under one of the conventions agents
  use, whose hit count lies in the exact binomial 99.9% interval of the true p:

  ==========================  ==========================  ================
  convention                  claim                        hits ~
  ==========================  ==========================  ================
  ``hits/B``                  h / B                        Bin(B, p)
  ``(hits+1)/(B+1)``          (h + 1) / (B + 1)            Bin(B, p)
  scipy ``permutation_test``  min(1, 2 (h + 1) / (B + 1))  Bin(B, p / 2)
  twice one-sided ``hits/B``  min(1, 2 h / B)              Bin(B, p / 2)
  ==========================  ==========================  ================

  (scipy's two-sided p is twice the smaller one-sided estimate, hence the
  variance p(2 - p)/B.)  B is the count the answer states ("20,000 sign
  flips"); else, when it says its test was randomized, any of the counts
  agents use (:data:`COMMON_RESAMPLES`); else the counts of 9,999 and up that
  code uses by default (:data:`DEFAULT_RESAMPLES`, ``--mc-resamples``).  Only
  counts for which the printed digits are reachable count: a p printed with
  five significant digits is not a count over 1,000 draws.  A one-digit print
  fits almost any p under a small B, so a claim only an unstated small count,
  or only one significant digit, explains is not consistent (:attr:`PAgreement.weak`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from auditor.parse.strings import plural
from auditor.stats.precision import printed
from auditor.stats.summary import PBand

# Resample counts assumed when an answer states none: what scipy (9,999) and hand-written code use
# by default at 9,999 draws and up (and --mc-resamples).  Smaller B reads short prints too freely:
# 0.002 is 2 hits of 1,000 under the doubled one-sided convention, whatever the exact p.
DEFAULT_RESAMPLES = (9_999, 10_000, 20_000, 50_000, 100_000, 1_000_000)
# Every count agents use (numpy loops of 1,000 ...): tried when the answer says its test was randomized,
# and, when it does not, to tell a claim only an unstated small count explains (a warning at most).
COMMON_RESAMPLES = (999, 1_000, 2_000, 4_999, 5_000, *DEFAULT_RESAMPLES, 99_999, 200_000, 500_000)
# The counts in the order they are tried.
_COMMON_SORTED = tuple(sorted(set(COMMON_RESAMPLES)))
_DEFAULT_SORTED = tuple(sorted(DEFAULT_RESAMPLES))
_OTHER_SORTED = tuple(b for b in _COMMON_SORTED if b not in DEFAULT_RESAMPLES)
# Two-sided miss probability of the binomial interval a Monte-Carlo claim must lie in (99.9%).
MC_MISS = 0.001
# Miss probability for an unstated-count estimate printed with one significant digit (99%).
SHORT_PRINT_MISS = 0.01
# Slack, in hits, for float error in claim * B (a 17-digit claim of 295/20000).
HITS_SLACK = 1e-7
# A binomial tail summed here decides against the 99.9% level when it is further from it than this,
# relatively: the sum's own error is below 1e-7 (lgamma at B = 10^7, rounding, the truncated rest),
# scipy's below 1e-7 near that level (measured up to B = 10^7; it is 1e-5 near 1/2, far from it).
TAIL_DECISION_MARGIN = 1e-3
# Relative size of the rest of a tail at which its sum stops.
TAIL_REST = 1e-10
# The largest B whose tails are summed here (lgamma's absolute error grows with B); scipy beyond.
TAIL_MAX_N = 10_000_000


@dataclass(frozen=True)
class Convention:
    """p = scale * (hits + offset) / (B + offset), capped at 1; hits ~ Bin(B, p_true * tail)."""

    name: str
    offset: int
    scale: float
    tail: float  # 1 for a two-sided count, 1/2 when the count is one tail


CONVENTIONS = (
    Convention("hits/B", 0, 1.0, 1.0),
    Convention("(hits+1)/(B+1)", 1, 1.0, 1.0),
    Convention("2*(hits+1)/(B+1), scipy's two-sided", 1, 2.0, 0.5),
    Convention("2*hits/B", 0, 2.0, 0.5),
)


@dataclass(frozen=True)
class PAgreement:
    """Whether a claimed p could come from an honest test, and how."""

    consistent: bool
    how: str  # "exact", "exact, rounded", "Monte-Carlo, B=20000, hits/B", or why not
    resamples: int | None = None
    # Not consistent, but a Monte-Carlo estimate the answer does not account for would print it: with a
    # count below DEFAULT_RESAMPLES it neither states nor implies (it does not say its test was
    # randomized), or only when rounded to one significant digit.  A307 makes such a reading a
    # warning when it is near the exact p and on its side of alpha.
    weak: bool = False


def _hit_ranges(
    claimed: float, half_unit: float, candidates: Iterable[int], conventions: Iterable[Convention] = CONVENTIONS
) -> Iterator[tuple[int, Convention, tuple[int, int]]]:
    """(B, convention, the hit counts whose estimate prints as ``claimed``) for each count B of
    ``candidates`` and each convention, in that order, where there are such counts."""
    conventions = tuple(conventions)
    for resamples in candidates:
        for convention in conventions:
            hits = _hit_range(claimed, half_unit, resamples, convention)
            if hits is not None:
                yield resamples, convention, hits


def _hit_range(claimed: float, half_unit: float, resamples: int, convention: Convention) -> tuple[int, int] | None:
    """The hit counts h whose estimate ``scale * (h + offset) / (B + offset)`` lies within ``half_unit`` of
    ``claimed``; None when there are none."""
    offset, scale = convention.offset, convention.scale
    denominator = resamples + offset
    slack = HITS_SLACK * max(1.0, claimed * denominator)  # float error in claim * D, in hits
    lowest = (claimed - half_unit) * denominator / scale - offset - slack
    if claimed + half_unit >= 1.0 and scale > 1:
        high = resamples  # an estimate capped at 1 prints as 1 for every count above the cap
    else:
        high = math.floor((claimed + half_unit) * denominator / scale - offset + slack)
    low, high = max(math.ceil(lowest), 0), min(high, resamples)
    return (low, high) if low <= high else None


def _binomial_plausible(hits: tuple[int, int], resamples: int, band: PBand, tail: float, miss: float = MC_MISS) -> bool:
    """Some count in ``hits`` lies in the 1 - ``miss`` (99.9%) interval of Bin(B, p*tail) for some p in ``band``.

    P(X >= low) grows with p and P(X <= high) falls with it, so checking the
    first at the band's top and the second at its bottom decides it.
    """
    low, high = hits
    p_low, p_high = min(band.low * tail, 1.0), min(band.high * tail, 1.0)
    level = miss / 2
    upper_ok = low <= 0 or _tail_reaches(low, resamples, p_high, level, upper=True)  # P(X >= low)
    return upper_ok and (high >= resamples or _tail_reaches(high, resamples, p_low, level, upper=False))


def _tail_reaches(k: int, n: int, p: float, level: float, *, upper: bool) -> bool:
    """``P(X >= k)`` (``upper``, 0 < k <= n) or ``P(X <= k)`` (0 <= k < n), X ~ Bin(n, p), is at least ``level``.

    What scipy's ``bdtrc(k - 1, n, p)`` / ``bdtr(k, n, p)`` would say, decided here
    when the tail is clearly on one side of ``level`` (importing scipy.special
    costs a cold audit a few hundred ms), by scipy when it is too close to call.
    """
    if p == 0.0 or p == 1.0:  # X is surely 0, or surely n
        certain = n if p == 1.0 else 0
        return float(certain >= k if upper else certain <= k) >= level
    decided = None
    if 0.0 < p < 1.0 and n <= TAIL_MAX_N:
        falls = (n - k) * p < (k + 1) * (1 - p) if upper else k * (1 - p) < (n - k + 1) * p
        # A tail whose terms rise from k holds a median of X (floor(np) <= median <= ceil(np)): it is >= 1/2.
        decided = _falling_tail_reaches(k, n, p, level, upper=upper) if falls else (True if level <= 0.5 else None)
    if decided is not None:
        return decided
    from scipy.special import bdtr, bdtrc

    return float(bdtrc(k - 1, n, p) if upper else bdtr(k, n, p)) >= level


def _falling_tail_reaches(k: int, n: int, p: float, level: float, *, upper: bool) -> bool | None:
    """The tail from ``k``, whose terms fall with ratios that fall too, is at least ``level``; None: too close.

    Summed relative to its first term (no underflow) until the sum so far, or the
    sum plus a geometric bound on the rest, is clear of ``level`` by
    :data:`TAIL_DECISION_MARGIN`, or the rest is below :data:`TAIL_REST` of it.
    """
    log_first = (
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p) + (n - k) * math.log1p(-p)
    )
    above = math.log(level * (1 + TAIL_DECISION_MARGIN)) - log_first  # log of the relative sums that decide
    below = math.log(level * (1 - TAIL_DECISION_MARGIN)) - log_first
    odds = p / (1 - p)
    end, step = (n, 1) if upper else (0, -1)
    total, term, i = 1.0, 1.0, k
    while True:
        if math.log(total) > above:
            return True
        ratio = (n - i) * odds / (i + 1) if upper else i / ((n - i + 1) * odds)  # term(i + step) / term(i)
        rest = term * ratio / (1.0 - ratio) if i != end else 0.0  # the ratios only fall from here
        if math.log(total + rest) < below:
            return False
        if i == end or rest <= TAIL_REST * total:
            return None
        term *= ratio
        total += term
        i += step


def _claim_half_unit(claimed: float) -> float:
    """Half a unit in the last printed digit of ``claimed``, widened by float noise."""
    return printed(claimed).half_unit * (1 + 1e-9) + 2 * math.ulp(claimed or 1.0)


def exact_agreement(claimed: float, band: PBand) -> PAgreement | None:
    """What :func:`agreement` says when no resample count matters: ``claimed`` is no probability, or it is
    the exact p (printed with any rounding); None when only a Monte-Carlo estimate could explain it."""
    if not math.isfinite(claimed) or not 0.0 <= claimed <= 1.0:
        return PAgreement(False, "not a probability")
    half_unit = _claim_half_unit(claimed)
    if band.low - half_unit <= claimed <= band.high + half_unit:
        exact = band.low - 2 * math.ulp(band.low or 1.0) <= claimed <= band.high + 2 * math.ulp(band.high or 1.0)
        return PAgreement(True, "exact" if exact else "exact, rounded")
    return None


def monte_carlo_agreement(
    claimed: float,
    band: PBand,
    *,
    stated_resamples: Iterable[int] = (),
    assumed_resamples: int | None = None,
    randomized: bool = False,
) -> PAgreement:
    """What :func:`agreement` says of a probability ``claimed`` that :func:`exact_agreement` left undecided.

    The counts tried: those the answer states; else, when it says its test was randomized
    (``randomized``), every count agents use; else :data:`DEFAULT_RESAMPLES` and
    ``assumed_resamples``, and a claim only a smaller count explains is not consistent but
    flagged ``weak``; so is a one-significant-digit claim that is an estimate only once rounded, or
    only in the 99.9% interval and not in the 99% one (:data:`SHORT_PRINT_MISS`).
    """
    half_unit = _claim_half_unit(claimed)
    stated = sorted({int(b) for b in stated_resamples if b > 0})
    if stated:
        candidates: Iterable[int] = stated
    else:
        assumed = () if not assumed_resamples else (assumed_resamples,)
        candidates = sorted({*(_COMMON_SORTED if randomized else _DEFAULT_SORTED), *assumed})
    reading = _monte_carlo_reading(claimed, half_unit, band, candidates)
    if reading is not None and (stated or randomized or printed(claimed).digits > 1):
        return reading
    if reading is not None:
        # One significant digit spans +-50%: as a rounded estimate it fits nearly any p near it.  An
        # estimate that is the value itself (0.0003 = 3/10,000) needs no rounding and stays honest, within
        # the narrower interval a count of a few hits calls for (a 99.9% one holds 3x off at 10 hits).
        unrounded = _monte_carlo_reading(claimed, 2 * math.ulp(claimed or 1.0), band, candidates, SHORT_PRINT_MISS)
        if unrounded is not None:
            return unrounded
        return PAgreement(
            False,
            f"a Monte-Carlo estimate (B={reading.resamples:,}) only when rounded to one significant digit, which the "
            "answer does not say it did",
            reading.resamples,
            weak=True,
        )
    if not stated and not randomized:
        small = _monte_carlo_reading(claimed, half_unit, band, _OTHER_SORTED)
        if small is not None:
            return PAgreement(
                False,
                f"a Monte-Carlo estimate only with an unstated count of {small.resamples:,} resamples (fewer than "
                f"the {_DEFAULT_SORTED[0]:,} assumed when an answer states none)",
                small.resamples,
                weak=True,
            )
    where = f"the {plural(len(stated), 'resample count')} the answer states" if stated else "the usual resample counts"
    return PAgreement(False, f"neither the exact p nor a Monte-Carlo estimate with {where}")


def _monte_carlo_reading(
    claimed: float, half_unit: float, band: PBand, candidates: Iterable[int], miss: float = MC_MISS
) -> PAgreement | None:
    """The first count and convention whose plausible estimates print as ``claimed``; None when none does."""
    for resamples, convention, hits in _hit_ranges(claimed, half_unit, candidates):
        if _binomial_plausible(hits, resamples, band, convention.tail, miss):
            return PAgreement(True, f"Monte-Carlo, B={resamples}, {convention.name}", resamples)
    return None


def agreement(
    claimed: float,
    band: PBand,
    *,
    stated_resamples: Iterable[int] = (),
    assumed_resamples: int | None = None,
    randomized: bool = False,
) -> PAgreement:
    """Could an honest paired sign-flip test have printed ``claimed``?

    ``band`` is the range of true two-sided p the data allow (exact: the float
    near-tie band; randomized: the auditor's own 99.9% interval).
    ``stated_resamples`` are counts the answer names; when there are none,
    ``assumed_resamples`` and :data:`DEFAULT_RESAMPLES` are tried (every
    count of :data:`COMMON_RESAMPLES` when the answer says it resampled,
    ``randomized``).  Callers
    that find the stated counts in prose ask :func:`exact_agreement` first:
    most claims are the exact p, and need no count.
    """
    exact = exact_agreement(claimed, band)
    if exact is not None:
        return exact
    return monte_carlo_agreement(
        claimed, band, stated_resamples=stated_resamples, assumed_resamples=assumed_resamples, randomized=randomized
    )
