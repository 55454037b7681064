"""The recomputation engine against brute-force references and the seeds."""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from conftest import seed_answer
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.answer.model import Answer, arm_view
from auditor.stats import summary as stats
from auditor.stats.precision import agrees, mean_noise, std_noise


@functools.cache
def sign_patterns(n: int) -> np.ndarray:
    """Every sign pattern of length n, shape (2^n, n), listed by itertools.product."""
    return np.array(list(itertools.product((1.0, -1.0), repeat=n)))


def brute_force_p(d: list[float]) -> tuple[float, float]:
    """Two-sided and one-sided sign-flip p over every sign pattern, in exact rational arithmetic.

    An independent reference: no float tolerance decides a tie.
    """
    from fractions import Fraction

    exact = [Fraction(x) for x in d]
    observed = sum(exact)
    two = one = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        s = sum(sign * x for sign, x in zip(signs, exact))
        two += abs(s) >= abs(observed)
        one += (s <= observed) if observed < 0 else (s >= observed)
    total = 2 ** len(d)
    return two / total, one / total


# Values on a coarse grid make exact ties and zeros common; free floats cover the rest.
grid_values = st.integers(-4, 4).map(lambda k: k * 0.25)
free_values = st.floats(-100, 100, allow_nan=False, allow_infinity=False)
diff_vectors = st.lists(st.one_of(grid_values, free_values), min_size=1, max_size=9)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(diff_vectors)
def test_exact_sign_flip_matches_brute_force(d: list[float]) -> None:
    """Equal to the rational count; within the honest band even where float64 cannot resolve a tie.

    ``[-0.25, -3.6e-165]``: rationally two sums beat 0.25 + 3.6e-165 by nothing, so p = 0.5,
    while every float64 computation rounds all four sums to +-0.25 and prints p = 1.
    """
    result = stats.sign_flip_test(np.array(d))
    two, one = brute_force_p(d)
    assert result.method == "exact"
    assert result.resamples == 2 ** len(d)
    assert two in result.two_sided_band and one in result.one_sided_band
    if _smallest_gap(d) > 1e-12 * sum(map(abs, d)):
        assert result.p_two_sided == two
        assert result.p_one_sided == one


def _smallest_gap(d: list[float]) -> float:
    """Smallest non-zero distance of a signed sum (or its size) from the observed one, rationally."""
    from fractions import Fraction

    exact = [Fraction(x) for x in d]
    observed = sum(exact)
    gaps = []
    for signs in itertools.product((1, -1), repeat=len(d)):
        s = sum(sign * x for sign, x in zip(signs, exact))
        gaps += [abs(abs(s) - abs(observed)), abs(s - observed)]
    return float(min((g for g in gaps if g), default=math.inf))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(grid_values, min_size=1, max_size=12))
def test_exact_p_lies_between_the_floor_and_one(d: list[float]) -> None:
    p = stats.sign_flip_test(np.array(d)).p_two_sided
    assert stats.min_two_sided_p(len(d)) - 1e-15 <= p <= 1.0


def test_all_zero_differences_give_p_one() -> None:
    result = stats.sign_flip_test(np.zeros(8))
    assert result.p_two_sided == 1.0
    assert result.p_one_sided == 1.0


def test_all_same_sign_reaches_the_minimum_p() -> None:
    for n in (3, 5, 8, 12):
        d = np.linspace(-2.0, -0.5, n)
        assert stats.sign_flip_test(d).p_two_sided == stats.min_two_sided_p(n)


def test_min_two_sided_p() -> None:
    assert stats.min_two_sided_p(8) == pytest.approx(0.0078125)
    assert stats.min_two_sided_p(5) == pytest.approx(0.0625)
    assert stats.min_two_sided_p(1) == 1.0
    assert stats.min_two_sided_p(0) == 1.0


def test_randomized_path_is_seeded_and_reproducible() -> None:
    d = np.random.default_rng(1).normal(-0.1, 1.0, 50)
    a = stats.sign_flip_test(d, resamples=5_000, seed=7)
    b = stats.sign_flip_test(d, resamples=5_000, seed=7)
    c = stats.sign_flip_test(d, resamples=5_000, seed=8)
    assert a.method == "randomized"
    assert a == b
    assert a.p_two_sided != c.p_two_sided


def test_randomized_path_agrees_with_the_exact_test_within_its_band() -> None:
    d = np.random.default_rng(2).normal(-0.3, 1.0, 16)
    exact = stats.sign_flip_test(d).p_two_sided
    randomized = stats.sign_flip_test(d, exact_max_n=10, resamples=20_000, seed=0)
    assert randomized.method == "randomized"
    assert exact in randomized.two_sided_band
    assert randomized.two_sided_band.high - randomized.two_sided_band.low < 0.05


def test_randomized_path_is_bounded_for_100k_seeds() -> None:
    d = np.random.default_rng(3).normal(0.0, 1.0, 100_000)
    result = stats.sign_flip_test(d, resamples=10_000, seed=0)
    assert result.method == "randomized"
    assert result.resamples * d.size <= max(stats.RANDOMIZED_MAX_CELLS, stats.RANDOMIZED_MIN_RESAMPLES * d.size)
    assert 0.0 < result.p_two_sided <= 1.0


def _count_at_least_by_dp(d: list[int], threshold: int) -> int:
    """Sign patterns of integer ``d`` whose sum is >= threshold, by dynamic programming over sums."""
    counts = {0: 1}
    for x in d:
        nxt: dict[int, int] = {}
        for s, c in counts.items():
            nxt[s + x] = nxt.get(s + x, 0) + c
            nxt[s - x] = nxt.get(s - x, 0) + c
        counts = nxt
    return sum(c for s, c in counts.items() if s >= threshold)


@pytest.mark.parametrize("n", [21, 33, 40])
def test_exact_up_to_40_seeds_matches_a_dynamic_programme(n: int) -> None:
    rng = np.random.default_rng(n)
    d = [int(x) for x in rng.integers(-6, 10, n)]  # integers: ties and zeros on purpose
    result = stats.sign_flip_test(np.array(d, dtype=float))
    observed = abs(sum(d))
    expected_two = (2 * _count_at_least_by_dp(d, observed) if observed else 2**n) / 2**n
    assert result.method == "exact"
    assert result.resamples == 2**n
    assert result.p_two_sided == expected_two
    assert result.p_one_sided == _count_at_least_by_dp(d, observed) / 2**n


@pytest.mark.parametrize("n", [stats.LIST_HALF_MAX_N * 2 - 1, stats.LIST_HALF_MAX_N * 2, stats.LIST_HALF_MAX_N * 2 + 1])
def test_halves_kept_as_lists_or_arrays_count_alike(n: int) -> None:
    """Either side of the size where the halves move from Python lists to numpy arrays."""
    rng = np.random.default_rng(n)
    d = [int(x) for x in rng.integers(-6, 10, n)]
    result = stats.sign_flip_test(np.array(d, dtype=float))
    observed = abs(sum(d))
    assert result.p_one_sided == _count_at_least_by_dp(d, observed) / 2**n
    assert result.p_two_sided == (2 * _count_at_least_by_dp(d, observed) if observed else 2**n) / 2**n


def _leave_one_out_one_by_one(d: np.ndarray, exact_max_n: int = stats.EXACT_MAX_N_CAP) -> list[float]:
    return [
        stats.sign_flip_test(np.delete(d, k), exact_max_n=exact_max_n, bands=False).p_two_sided for k in range(d.size)
    ]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.one_of(grid_values, free_values), min_size=2, max_size=12))
def test_leave_one_out_p_values_equal_one_test_per_seed(d: list[float]) -> None:
    d = np.array(d)
    assert stats.leave_one_out_p_values(d) == _leave_one_out_one_by_one(d)


def test_leave_one_out_shares_one_split_when_sums_are_exact() -> None:
    # Float32 metrics: exact sums, so all n p-values share one split into halves; one seed carries the result.
    baseline = np.array([10.5, 10.25, 10.75, 10.0, 10.5, 10.25, 10.0, 10.5], dtype=np.float32).astype(float)
    d = np.array([-2.0, -0.125, 0.125, -0.25, 0.125, -0.125, -0.125, -0.125])
    assert stats.sums_are_exact(d, stats.U64)
    p = stats.leave_one_out_p_values(d)
    assert p == _leave_one_out_one_by_one(d)
    assert p[0] == max(p) > stats.sign_flip_test(d).p_two_sided > p[2]  # dropping the big seed hurts most
    assert stats.leave_one_out_p_values(baseline - baseline.mean()) == _leave_one_out_one_by_one(
        baseline - baseline.mean()
    )


@pytest.mark.parametrize("n", [2, 3, 8, 13, stats.LEAVE_ONE_OUT_SHARED_MAX_N])
def test_leave_one_out_with_exact_sums_that_fill_the_mantissa(n: int) -> None:
    """Exact sums up to 53 bits wide: a needle ``size - left`` may round, yet every count stays the rational one."""
    rng = np.random.default_rng(n)
    ints = [2 * int(x) for x in rng.integers(-(2**19), 2**19, n)]
    # sum|d| stays below 2^53, so every signed sum is exact, while a needle |sum of the others| - left
    # with the first seed negative in left reaches ~2.5 * 2^52: odd (the last seed), so it rounds (n >= 8).
    ints[0], ints[-1] = 2**52 - 2**41 + 1, 2**51 + 1
    d = [float(x) for x in ints]
    assert stats.sums_are_exact(d, stats.U64)
    expected = []
    for k in range(n):
        rest = ints[:k] + ints[k + 1 :]
        size = abs(sum(rest))
        expected.append((2 * _count_at_least_by_dp(rest, size) if size else 2 ** (n - 1)) / 2 ** (n - 1))
    assert stats.leave_one_out_p_values(d) == expected == _leave_one_out_one_by_one(np.array(d))


def test_leave_one_out_above_the_shared_size_and_the_exact_limit() -> None:
    d = np.arange(1.0, stats.LEAVE_ONE_OUT_SHARED_MAX_N + 2)  # one seed too many to share a table
    assert stats.leave_one_out_p_values(d) == _leave_one_out_one_by_one(d)
    small = np.array([0.5, -0.25, 1.0, 0.75, 0.125])
    # exact_max_n below n - 1: each left-out test is the seeded randomized one, as before.
    assert stats.leave_one_out_p_values(small, exact_max_n=3) == _leave_one_out_one_by_one(small, exact_max_n=3)


@pytest.mark.parametrize("scale", [1e4, 1e7, 1e10])
def test_a_diverged_seed_does_not_merge_the_other_sums(scale: float) -> None:
    """One seed 1e4-1e10 times the others: the exact p is still the rational count."""
    rng = np.random.default_rng(int(scale) % 97)
    baseline = rng.normal(10.0, 1.0, 8)
    idea = baseline - np.array([0.9, 0.2, 0.35, 0.1, 0.5, -0.05, 0.3, 0.25])
    baseline[0] *= scale  # the baseline diverged on seed 0: the idea wins it by a mile
    d = idea - baseline
    two, _ = brute_force_p(list(d))
    result = stats.sign_flip_test(d, baseline=baseline, idea=idea)
    assert result.p_two_sided == two
    assert two in result.two_sided_band
    assert result.two_sided_band.high - result.two_sided_band.low <= 2 / 2**8


def test_float32_near_ties_widen_the_band_to_both_counts() -> None:
    # Accuracies k/10000: the decimal differences tie exactly, their binary ones only nearly.
    baseline = np.array([0.9012, 0.8931, 0.9104, 0.8877, 0.9050, 0.8990])
    idea = np.array([0.9022, 0.8921, 0.9114, 0.8887, 0.9060, 0.9000])
    d = idea - baseline  # four +0.001 and one -0.001 (decimal), +0.001 again
    result = stats.sign_flip_test(d, baseline=baseline, idea=idea)
    assert result.p_two_sided in result.two_sided_band
    float32_d = (idea.astype(np.float32) - baseline.astype(np.float32)).astype(np.float64)
    float32_p = stats.sign_flip_test(float32_d, bands=False).p_two_sided
    assert float32_p in result.two_sided_band


def test_zero_differences_raise_the_floor() -> None:
    assert stats.min_two_sided_p(3) == 0.25
    result = stats.sign_flip_test(np.array([-1.0, -2.0, -3.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
    assert result.n_nonzero == 3
    assert result.p_two_sided == 0.25


def test_exact_40_seed_test_is_fast_enough_for_an_audit() -> None:
    d = np.random.default_rng(40).normal(0.2, 1.0, 40)
    result = stats.sign_flip_test(d)
    assert result.method == "exact" and result.resamples == 2**40
    assert 0.0 < result.p_two_sided < 1.0


@pytest.mark.parametrize("n", [2, 3, 5, 8, 20, 101])
def test_mde_matches_scipy_t(n: int) -> None:
    from scipy.stats import t  # test-only: scipy.stats stays off the audit import path

    d = np.random.default_rng(n).normal(0.01, 0.02, n)
    expected = t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n)
    assert stats.mde_halfwidth(d) == pytest.approx(expected, rel=1e-10)


def test_mde_needs_two_pairs() -> None:
    assert stats.mde_halfwidth(np.array([0.1])) is None
    assert stats.mde_halfwidth(np.array([])) is None


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 64, 127, 128, 129, 300, 5_000])
def test_summaries_agree_with_numpys(n: int) -> None:
    """Means and stds are computed on Python floats, each sum rounded once: the mean is within an ulp
    of the exact one, and what numpy prints for the same values agrees with them."""
    rng = np.random.default_rng(n)
    for values in (
        rng.normal(10.0, 1.5, n),
        rng.normal(10.0, 1.5, n).astype(np.float32).astype(np.float64),
        np.full(n, 0.1),
    ):
        summary = stats.summarize(values)
        exact_mean = sum(map(Fraction, values.tolist()), Fraction(0)) / n
        assert abs(Fraction(summary.mean) - exact_mean) <= Fraction(math.ulp(summary.mean))
        assert summary.magnitude == float(np.abs(values).max())
        mean, std = float(values.mean()), float(values.std())
        assert agrees(mean, summary.mean, mean_noise(n, summary.magnitude, mean))
        assert agrees(std, summary.std_population, std_noise(n, summary.magnitude, std, summary.std_population))
        if n >= 2:
            sample = float(values.std(ddof=1))
            assert agrees(sample, summary.std_sample, std_noise(n, summary.magnitude, sample, summary.std_sample))
            expected_mde = stats.t_quantile(0.975, n - 1) * summary.std_sample / math.sqrt(n)
            assert stats.mde_halfwidth(values) == pytest.approx(expected_mde, rel=1e-15)


def _random_arms(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Paired arms of n values: float32 metrics, printed decimals, exact ties and zeros, or huge magnitudes."""
    kind = n % 4
    baseline = rng.normal(10.0, 1.5, n)
    idea = baseline + rng.normal(-0.05, 0.2, n)
    if kind == 1:
        baseline, idea = (arm.astype(np.float32).astype(np.float64) for arm in (baseline, idea))
    elif kind == 2:
        baseline, idea = baseline.round(4), idea.round(4)
        tie = rng.random(n) < 0.3
        idea[tie] = baseline[tie]  # some seeds tie exactly
    elif kind == 3:
        baseline, idea = baseline * 1e140, idea * -1e140
    return baseline, idea


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 16, 17, 40, 41, 128, 129, 300])
def test_recomputed_differences_agree_with_numpys(n: int) -> None:
    """The differences on Python floats are numpy's own bits, their summary agrees with numpy's,
    whatever the input sequence type."""
    rng = np.random.default_rng(100 + n)
    for _ in range(5):
        baseline, idea = _random_arms(rng, n)
        r = stats.recompute(tuple(baseline.tolist()), tuple(idea.tolist()), lower_is_better=True, resamples=2_000)
        d = idea - baseline
        assert type(r.diffs) is tuple and all(type(x) is float for x in r.diffs)
        assert [x.hex() for x in r.diffs] == [float(x).hex() for x in d]
        assert r.delta_mean == r.diff_summary.mean
        magnitude, mean, std = r.diff_summary.magnitude, float(np.mean(d)), float(np.std(d))
        assert magnitude == float(np.abs(d).max())
        assert agrees(mean, r.delta_mean, mean_noise(n, magnitude, mean))
        assert agrees(std, r.diff_summary.std_population, std_noise(n, magnitude, std, r.diff_summary.std_population))
        if n >= 2:
            sample = float(np.std(d, ddof=1))
            assert agrees(sample, r.diff_summary.std_sample, std_noise(n, magnitude, sample, r.diff_summary.std_sample))
        assert r.idea_wins == int(np.count_nonzero(d < 0))
        assert r == stats.recompute(baseline, idea, lower_is_better=True, resamples=2_000)  # an ndarray: the same


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 64, 128, 129, 1_000])
def test_mean_ratio_agrees_with_numpys(n: int) -> None:
    rng = np.random.default_rng(n)
    for scale in (1e-3, 1.0, 1e150):
        baseline, idea = _random_arms(rng, n)
        d = (idea - baseline) * scale
        with np.errstate(all="ignore"):
            ratios = d / baseline
            expected = float(np.mean(ratios))
        got = stats.mean_ratio(tuple(d.tolist()), tuple(baseline.tolist()))
        assert type(got) is float
        if math.isfinite(expected):
            assert agrees(expected, got, mean_noise(n, float(np.abs(ratios).max()), expected))
        else:
            assert got == expected or (math.isnan(got) and math.isnan(expected))


def test_values_close_scale_absorbs_float32_noise() -> None:
    assert not stats.values_close(1.0e-3 + 2e-6, 1.0e-3)
    assert stats.values_close(1.0e-3 + 2e-6, 1.0e-3, scale=10.0)


def _seed_recomputed(which: str) -> stats.Recomputed:
    report = Answer.model_validate(seed_answer(which)).bench_report
    base, idea = arm_view(report, "baseline", ""), arm_view(report, "idea", "")
    return stats.recompute(base.per_seed, idea.per_seed, lower_is_better=report.lower_is_better)


def test_arm_views_hold_python_floats() -> None:
    report = Answer.model_validate(seed_answer("000")).bench_report
    per_seed = arm_view(report, "idea", "").per_seed
    assert type(per_seed) is tuple and len(per_seed) == 8 and all(type(v) is float for v in per_seed)


def test_seed_000_recomputes_to_the_documented_values() -> None:
    r = _seed_recomputed("000")
    assert r.p_value == 0.015625
    assert r.p_value_one_sided == 0.0078125
    assert r.idea_wins == 7
    assert r.n_pairs == 8
    assert r.delta_mean == pytest.approx(-0.008685469627380371, rel=1e-9)
    assert r.mde == pytest.approx(0.004699979815996483, rel=1e-3)  # the seed used t = 2.365
    assert r.verdict.value == "idea better (significant)"


def test_seed_001_is_a_noop() -> None:
    r = _seed_recomputed("001")
    assert r.p_value == 1.0
    assert r.delta_mean == 0.0
    assert r.idea_wins == 0
    assert r.mde == 0.0
    assert r.verdict.value == "no measurable effect"


# Paired differences whose signed sums are exact (multiples of 1/16, as float32 metrics
# give), or printed decimals whose sums are not: mixed signs, zeros, seeds beyond the total.
_DIFFERENCES = st.one_of(
    st.lists(st.integers(-48, 48).map(lambda k: k / 16), min_size=2, max_size=12),
    st.lists(st.integers(-48, 48).map(lambda k: round(k * 0.013, 3)), min_size=2, max_size=12),
)


@settings(max_examples=1000, deadline=None)
@given(_DIFFERENCES, st.booleans())
def test_twice_the_p_of_all_bounds_every_leave_one_out_p_where_it_is_said_to(d, from_arms) -> None:
    """Where leave_one_out_within_twice_p says so (which lets E702 skip its n tests), no
    leave-one-out p exceeds twice the p of all: exact or not, seeds below and beyond the
    total, zeros, the p of all n computed with or without the arms' tolerance."""
    from auditor.stats.summary import leave_one_out_p_values, leave_one_out_within_twice_p, sign_flip_test

    baseline = [10.0 + k / 4 for k in range(len(d))] if from_arms else None
    idea = [b + x for b, x in zip(baseline, d)] if from_arms else None
    if from_arms:
        d = [i - b for b, i in zip(baseline, idea)]
    p = sign_flip_test(d, baseline=baseline, idea=idea).p_two_sided
    if leave_one_out_within_twice_p(d):
        assert max(leave_one_out_p_values(d)) <= 2 * p


def test_the_leave_one_out_bound_is_claimed_only_where_it_holds() -> None:
    """Claimed for exact sums within the shared halves, whichever way the seeds lie; not otherwise."""
    from auditor.stats.summary import leave_one_out_p_values, leave_one_out_within_twice_p, sign_flip_test

    d = [0.25, 0.5, 0.375, 0.125, 0.5, 0.25, 0.625, -0.0625]  # exact sums, every seed below the total
    assert leave_one_out_within_twice_p(d) and max(leave_one_out_p_values(d)) <= 2 * sign_flip_test(d).p_two_sided
    beyond = [0.0625, -0.125, -0.25, 0.125, 3.0]  # the last seed exceeds the total of all (2.8125): p >= 1/2
    assert leave_one_out_within_twice_p(beyond) and sign_flip_test(beyond).p_two_sided >= 0.5
    assert not leave_one_out_within_twice_p([0.125] * 17)  # beyond the shared halves: tests of their own
    assert not leave_one_out_within_twice_p([0.1, 0.2, 0.3])  # sums not exact
    assert leave_one_out_within_twice_p([0.5, -0.5])  # a zero total: p = 1, and twice it decides nothing
