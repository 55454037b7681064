"""The sign-flip test's shortcuts against the general computations they stand for."""

from __future__ import annotations

import math
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.precision import float64_sum
from auditor.signflip_ties import SumExactness, _bit_span

_FINITE = st.floats(allow_nan=False, allow_infinity=False)
# Values as real answers hold them (float32 metrics, integer counts, printed decimals), and the extremes.
_VALUES = st.one_of(
    _FINITE,
    _FINITE.map(lambda x: array("f", [x]).tolist()[0] if abs(x) < 3e38 else x),
    st.integers(-(2**60), 2**60).map(float),
    st.sampled_from([5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 0.5, 2.0**-30]),
    st.integers(-1000, 1000).map(lambda k: k * 2.0**-20),
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_VALUES.filter(lambda x: x != 0), min_size=1, max_size=12), st.sampled_from([53, 24]))
def test_span_fits_is_the_bit_span_test(nonzero: list[float], precision: int) -> None:
    # What exact_in asked before the shortcut: the bit span itself, against the format's precision.
    expected = _bit_span(float64_sum(list(map(abs, nonzero))), nonzero) <= precision
    assert SumExactness(nonzero)._span_fits(precision) == expected


def _claimed_std(draw_value: float, how: int) -> float:
    """A std as an answer may print it: exact, rounded to a few digits, through float32, or off."""
    if how == 0:
        return draw_value
    if how == 1:
        return float(f"{draw_value:.4g}")
    if how == 2:
        return array("f", [draw_value]).tolist()[0] if abs(draw_value) < 3e38 else draw_value
    return draw_value * (1 + 10.0 ** -how)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(_VALUES.filter(lambda x: abs(x) < 1e300), min_size=1, max_size=10),
    st.integers(0, 9),
    st.booleans(),
)
def test_std_ddof_matching_builds_the_noise_bound_only_when_it_decides(values, how, sample) -> None:
    # What std_ddof_matching asked before the shortcut: agrees with the full noise bound, ddof 0 then 1.
    from auditor.precision import agrees, std_noise
    from auditor.stats import std_ddof_matching, summarize

    summary = summarize(values)
    target = summary.std_sample if sample and summary.std_sample is not None else summary.std_population
    if not math.isfinite(target):
        return
    claimed = _claimed_std(target, how)
    expected = None
    for ddof, value in ((0, summary.std_population), (1, summary.std_sample)):
        if value is not None and agrees(claimed, value, std_noise(summary.n, summary.magnitude, claimed, value)):
            expected = ddof
            break
    assert std_ddof_matching(claimed, summary) == expected


_BOUNDS = st.one_of(st.floats(min_value=0.0, allow_nan=False), st.sampled_from([0.0, 1e-12, 1e-7, math.inf]))


@settings(max_examples=1000, deadline=None)
@given(_VALUES, st.integers(0, 9), _BOUNDS, _BOUNDS, st.sampled_from([0.0, 1e-3]))
def test_agrees_with_a_bound_builder_is_agrees_with_the_bound(recomputed, how, f64, f32, rtol) -> None:
    from auditor.precision import Noise, agrees

    claimed = _claimed_std(recomputed, how)
    noise = Noise(f64, f32, ((claimed, 1.0),))
    calls = []

    def build() -> Noise:
        calls.append(1)
        return noise

    assert agrees(claimed, recomputed, build, rtol=rtol) == agrees(claimed, recomputed, noise, rtol=rtol)
    if agrees(claimed, recomputed, Noise(0.0, 0.0), rtol=rtol):
        assert not calls  # the printed digits decided: no bound was built


def _bands_searching_each_tolerance(d: list[float], baseline: list[float], idea: list[float]):
    """The honest bands of the exact test as they were computed before the float32 counts could
    settle the float64 ones: each tolerance's counts searched for on their own."""
    from auditor import signflip
    from auditor.precision import U64

    observed_sum, abs_sum = float64_sum(d), float64_sum([abs(x) for x in d])
    nonzero = [x for x in d if x != 0]
    exactness = SumExactness(nonzero) if len(nonzero) < len(d) else SumExactness(nonzero, abs_sum)
    counter = signflip._MeetInTheMiddle(d)
    group = 2 ** (len(d) - len(nonzero))
    exact_inputs = signflip.exact_differences(baseline, idea, d)
    exact64 = exact_inputs and exactness.exact_in(U64)
    scale = signflip.TieScale(d, baseline, idea, abs_sum)
    counts = [signflip._exact_counts(counter, observed_sum, 0.0 if exact64 else scale.tolerance(U64), group, exact64)]
    tol32 = signflip._float32_tolerance(scale, exact_inputs, exactness)
    if tol32 is not None:
        counts.append(signflip._exact_counts(counter, observed_sum, tol32, group))
    two, two_strict, one, one_strict = counts[0]
    low2, high2, low1, high1 = two_strict, two, one_strict, one
    for t2, s2, t1, s1 in counts[1:]:
        low2, high2, low1, high1 = min(low2, s2), max(high2, t2), min(low1, s1), max(high1, t1)
    n = counter.n_patterns
    return two / n, one / n, (low2 / n, high2 / n), (low1 / n, high1 / n)


# Per-seed values on a coarse float32 grid (so that signed sums tie exactly and float32
# near-ties occur), some nudged by one float32 step, some differences exactly zero; or
# printed decimals, whose signed sums are not all exact in float64.
_GRID_VALUES = st.one_of(
    st.integers(-40, 40).map(lambda k: 10.0 + k / 16),
    st.integers(-40, 40).map(lambda k: round(10.0 + k / 1000, 3)),
)
_NUDGE = st.sampled_from([0.0, 0.0, 0.0, 2.0**-20, -(2.0**-20), 2.0**-19])


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.tuples(_GRID_VALUES, _GRID_VALUES, _NUDGE), min_size=1, max_size=12))
def test_float32_counts_settle_the_exact_ones_only_when_nothing_else_ties(rows) -> None:
    """The exact test's p and bands are those of searching each tolerance's counts on its own,
    where the float32 counts now stand in for the exact ones: with ties, zero differences
    (several observed patterns) and float32 near-ties (values a float32 step apart)."""
    from auditor.stats import sign_flip_test

    baseline = [b for b, _, _ in rows]
    idea = [i + nudge for _, i, nudge in rows]
    d = [i - b for b, i in zip(baseline, idea)]
    result = sign_flip_test(d, baseline=baseline, idea=idea)
    two, one, band2, band1 = _bands_searching_each_tolerance(d, baseline, idea)
    assert (result.p_two_sided, result.p_one_sided) == (two, one)
    assert (result.two_sided_band.low, result.two_sided_band.high) == band2
    assert (result.one_sided_band.low, result.one_sided_band.high) == band1


# Paired differences whose signed sums are exact (multiples of 1/16, as float32 metrics
# give), or printed decimals whose sums are not: mixed signs, zeros, seeds beyond the total.
_DIFFERENCES = st.one_of(
    st.lists(st.integers(-48, 48).map(lambda k: k / 16), min_size=2, max_size=12),
    st.lists(st.integers(-48, 48).map(lambda k: round(k * 0.013, 3)), min_size=2, max_size=12),
)


@settings(max_examples=3000, deadline=None)
@given(_DIFFERENCES, st.booleans())
def test_twice_the_p_of_all_bounds_every_leave_one_out_p_where_it_is_said_to(d, from_arms) -> None:
    """Where leave_one_out_within_twice_p says so (which lets E702 skip its n tests), no
    leave-one-out p exceeds twice the p of all: exact or not, seeds below and beyond the
    total, zeros, the p of all n computed with or without the arms' tolerance."""
    from auditor.stats import leave_one_out_p_values, leave_one_out_within_twice_p, sign_flip_test

    baseline = [10.0 + k / 4 for k in range(len(d))] if from_arms else None
    idea = [b + x for b, x in zip(baseline, d)] if from_arms else None
    if from_arms:
        d = [i - b for b, i in zip(baseline, idea)]
    p = sign_flip_test(d, baseline=baseline, idea=idea).p_two_sided
    if leave_one_out_within_twice_p(d):
        assert max(leave_one_out_p_values(d)) <= 2 * p


def test_the_leave_one_out_bound_is_claimed_only_where_it_holds() -> None:
    """Claimed for exact sums within the shared halves, whichever way the seeds lie; not otherwise."""
    from auditor.stats import leave_one_out_p_values, leave_one_out_within_twice_p, sign_flip_test

    d = [0.25, 0.5, 0.375, 0.125, 0.5, 0.25, 0.625, -0.0625]  # exact sums, every seed below the total
    assert leave_one_out_within_twice_p(d) and max(leave_one_out_p_values(d)) <= 2 * sign_flip_test(d).p_two_sided
    beyond = [0.0625, -0.125, -0.25, 0.125, 3.0]  # the last seed exceeds the total of all (2.8125): p >= 1/2
    assert leave_one_out_within_twice_p(beyond) and sign_flip_test(beyond).p_two_sided >= 0.5
    assert not leave_one_out_within_twice_p([0.125] * 17)  # beyond the shared halves: tests of their own
    assert not leave_one_out_within_twice_p([0.1, 0.2, 0.3])  # sums not exact
    assert leave_one_out_within_twice_p([0.5, -0.5])  # a zero total: p = 1, and twice it decides nothing
