"""The recomputation engine against brute-force references and the seeds."""

from __future__ import annotations

import functools
import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor import stats
from auditor.model import Answer, arm_view

from conftest import seed_answer


@functools.lru_cache(maxsize=None)
def sign_patterns(n: int) -> np.ndarray:
    """Every sign pattern of length n, shape (2^n, n), listed by itertools.product."""
    return np.array(list(itertools.product((1.0, -1.0), repeat=n)))


def brute_force_p(d: list[float]) -> tuple[float, float]:
    """Two-sided and one-sided sign-flip p over every sign pattern (an independent reference)."""
    observed = math.fsum(d)
    tol = stats.TIE_RTOL * max(math.fsum(abs(x) for x in d), np.finfo(float).tiny)
    sums = sign_patterns(len(d)) @ np.array(d)
    two = np.mean(np.abs(sums) >= abs(observed) - tol)
    one = np.mean(sums <= observed + tol) if observed < 0 else np.mean(sums >= observed - tol)
    return float(two), float(one)


# Values on a coarse grid make exact ties and zeros common; free floats cover the rest.
grid_values = st.integers(-4, 4).map(lambda k: k * 0.25)
free_values = st.floats(-100, 100, allow_nan=False, allow_infinity=False)
diff_vectors = st.lists(st.one_of(grid_values, free_values), min_size=1, max_size=12)


@settings(max_examples=2000, deadline=None)
@given(diff_vectors)
def test_exact_sign_flip_matches_brute_force(d: list[float]) -> None:
    result = stats.sign_flip_test(np.array(d))
    two, one = brute_force_p(d)
    assert result.method == "exact"
    assert result.resamples == 2 ** len(d)
    assert result.p_two_sided == pytest.approx(two, abs=1e-12)
    assert result.p_one_sided == pytest.approx(one, abs=1e-12)


@settings(max_examples=300, deadline=None)
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
    d = np.random.default_rng(1).normal(-0.1, 1.0, 40)
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
    assert abs(randomized.p_two_sided - exact) <= stats.mc_band(exact, randomized.resamples)


def test_randomized_path_is_bounded_for_100k_seeds() -> None:
    d = np.random.default_rng(3).normal(0.0, 1.0, 100_000)
    start = time.perf_counter()
    result = stats.sign_flip_test(d, resamples=10_000, seed=0)
    elapsed = time.perf_counter() - start
    assert result.method == "randomized"
    assert result.resamples * d.size <= max(stats.RANDOMIZED_MAX_CELLS, stats.RANDOMIZED_MIN_RESAMPLES * d.size)
    assert 0.0 < result.p_two_sided <= 1.0
    assert elapsed < 10.0


def test_mc_band_formula() -> None:
    p, b = 0.015625, 10_000
    assert stats.mc_band(p, b) == pytest.approx(3.29 * math.sqrt(p * (1 - p) / b) + 1 / b)
    assert abs(0.01475 - p) <= stats.mc_band(p, b)  # seed 000's Monte-Carlo estimate


@pytest.mark.parametrize("n", [2, 3, 5, 8, 20, 101])
def test_mde_matches_scipy_t(n: int) -> None:
    from scipy.stats import t  # test-only: scipy.stats stays off the audit import path

    d = np.random.default_rng(n).normal(0.01, 0.02, n)
    expected = t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n)
    assert stats.mde_halfwidth(d) == pytest.approx(expected, rel=1e-10)


def test_mde_needs_two_pairs() -> None:
    assert stats.mde_halfwidth(np.array([0.1])) is None


def test_values_close_scale_absorbs_float32_noise() -> None:
    assert not stats.values_close(1.0e-3 + 2e-6, 1.0e-3)
    assert stats.values_close(1.0e-3 + 2e-6, 1.0e-3, scale=10.0)


def _seed_recomputed(which: str) -> stats.Recomputed:
    report = Answer.model_validate(seed_answer(which)).bench_report
    base, idea = arm_view(report, "baseline", ""), arm_view(report, "idea", "")
    return stats.recompute(base.per_seed, idea.per_seed, lower_is_better=report.lower_is_better)


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
