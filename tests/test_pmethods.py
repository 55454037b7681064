"""The alternative p-value methods against scipy.stats and brute-force references."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.stats
from conftest import seed_answer

from auditor.stats import pmethods
from auditor.stats.pmethods import AlternativeP, alternative_p_values, matching_methods

ALL_KEYS = [
    "paired-t",
    "paired-t-one-sided",
    "wilcoxon",
    "wilcoxon-approx",
    "sign-test",
    "unpaired-permutation",
    "welch-t",
    "student-t",
    "z-test",
]
PAIRED_PARAMETRIC = {"paired-t", "paired-t-one-sided", "z-test"}
RTOL = 1e-9


def by_key(alternatives: list[AlternativeP]) -> dict[str, float]:
    keys = [a.key for a in alternatives]
    assert len(keys) == len(set(keys))
    assert keys == [k for k in ALL_KEYS if k in keys]  # the documented order
    return {a.key: a.p_value for a in alternatives}


def quiet(thunk):
    """Call a scipy reference, silencing its precision warnings."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return thunk()


def strict(baseline, idea, **kwargs) -> list[AlternativeP]:
    """alternative_p_values with every warning an error; checks the p contract."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = alternative_p_values(np.asarray(baseline, dtype=float), np.asarray(idea, dtype=float), **kwargs)
    for alt in result:
        assert isinstance(alt.p_value, float)
        assert math.isfinite(alt.p_value) and 0.0 <= alt.p_value <= 1.0, alt
        assert alt.description.startswith("the ") and " p" in alt.description
    return result


def data(n: int, kind: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded paired data set, both arms shape (n,).

    "float": continuous values (no ties); "grid": values on a 0.5 grid, so
    the differences have ties and zeros.
    """
    rng = np.random.default_rng(seed)
    baseline = 10.0 + rng.standard_normal(n)
    idea = baseline + 0.4 + 0.8 * rng.standard_normal(n)
    if kind == "grid":
        baseline, idea = np.round(baseline * 2) / 2, np.round(idea * 2) / 2
    return baseline, idea


def two_sided_scipy_permutation(baseline: np.ndarray, idea: np.ndarray) -> float:
    """scipy's exact independent-samples permutation test of the difference of means."""

    def statistic(x, y, axis):
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    res = scipy.stats.permutation_test(
        (idea, baseline), statistic, permutation_type="independent", n_resamples=np.inf, vectorized=True
    )
    return float(res.pvalue)


def scipy_reference(baseline: np.ndarray, idea: np.ndarray) -> dict[str, float]:
    """Every method's p from scipy.stats (nan where scipy finds it undefined)."""
    d = idea - baseline
    n = d.size
    ref = {}
    ref["paired-t"] = quiet(lambda: scipy.stats.ttest_rel(idea, baseline).pvalue)
    side = "greater" if d.mean() > 0 else "less"
    ref["paired-t-one-sided"] = quiet(lambda: scipy.stats.ttest_rel(idea, baseline, alternative=side).pvalue)
    ref["wilcoxon"] = quiet(lambda: scipy.stats.wilcoxon(d).pvalue)
    ref["wilcoxon-approx"] = quiet(lambda: scipy.stats.wilcoxon(d, method="approx").pvalue)
    k, m = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d))
    ref["sign-test"] = scipy.stats.binomtest(k, m, 0.5).pvalue
    if math.comb(2 * n, n) <= pmethods.UNPAIRED_EXACT_MAX_SPLITS:
        ref["unpaired-permutation"] = two_sided_scipy_permutation(baseline, idea)
    ref["welch-t"] = quiet(lambda: scipy.stats.ttest_ind(idea, baseline, equal_var=False).pvalue)
    ref["student-t"] = quiet(lambda: scipy.stats.ttest_ind(idea, baseline, equal_var=True).pvalue)
    z = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    ref["z-test"] = 2 * scipy.stats.norm.sf(abs(z))
    return {key: float(p) for key, p in ref.items()}


# ---------------------------------------------------------------- against scipy


@pytest.mark.parametrize("kind", ["float", "grid"])
@pytest.mark.parametrize("n", [3, 8, 15, 40])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_method_matches_scipy(n: int, kind: str, seed: int) -> None:
    baseline, idea = data(n, kind, seed)
    if kind == "grid" and np.var(idea - baseline) == 0:
        pytest.skip("degenerate draw")
    got = by_key(strict(baseline, idea))
    ref = scipy_reference(baseline, idea)
    for key in ALL_KEYS:
        if key == "wilcoxon-approx" and key not in got:
            # Left out only when it would repeat the default Wilcoxon p.
            assert ref[key] == pytest.approx(got["wilcoxon"], rel=RTOL)
            continue
        if key not in ref:  # the randomized permutation test: its own tests below
            assert 0 < got[key] <= 1
            continue
        assert got[key] == pytest.approx(ref[key], rel=RTOL, abs=0), key


@pytest.mark.parametrize(
    "d, how",
    [
        ([0.3, -0.1, 0.7, 0.2, 0.9, -0.4, 1.1, 0.05], "exact"),  # no ties, no zeros
        ([0.5, 0.5, -0.5, 1.0, 0.0, 1.5, 2.0, 0.5], "exact permutation over the ranks"),  # ties and a zero
        ([0.0, 1.0, 2.0, 3.0, -4.0, 5.0], "exact permutation over the ranks"),  # a zero, no ties
        (list(np.arange(1.0, 14.0)) + [0.0], "normal approximation"),  # 14 pairs with a zero: approximation
        ([1.0, 1.0] + list(np.arange(2.0, 13.0)), "exact permutation over the ranks"),  # 13 pairs with a tie
        ([(-1.0) ** k * k for k in range(1, 51)], "exact"),  # 50 pairs, no ties: still exact
        ([(-1.0) ** k * k for k in range(1, 52)], "normal approximation"),  # 51 pairs
    ],
)
def test_wilcoxon_default_method_choice_follows_scipy(d: list[float], how: str) -> None:
    d = np.array(d)
    result = {a.key: a for a in strict(np.zeros_like(d), d)}
    assert result["wilcoxon"].description == f"the Wilcoxon signed-rank test p ({how})"
    assert result["wilcoxon"].p_value == pytest.approx(quiet(lambda: scipy.stats.wilcoxon(d).pvalue), rel=RTOL)


def test_wilcoxon_above_50_pairs_with_zeros_and_ties_is_scipys_approximation() -> None:
    rng = np.random.default_rng(5)
    d = np.round(rng.standard_normal(60) + 0.3)  # many zeros and ties
    assert np.any(d == 0)
    result = {a.key: a for a in strict(np.zeros_like(d), d)}
    assert "wilcoxon-approx" not in result
    assert result["wilcoxon"].p_value == pytest.approx(scipy.stats.wilcoxon(d).pvalue, rel=RTOL)


# ---------------------------------------------------------------- unpaired permutation


def brute_force_unpaired(baseline: list[float], idea: list[float]) -> float:
    """Two-sided p over every split of the pooled values into two arms of n (itertools)."""
    pooled = list(idea) + list(baseline)
    n = len(idea)
    everything = math.fsum(pooled)

    def statistic(first: tuple[int, ...]) -> float:
        s = math.fsum(pooled[i] for i in first)
        return s / n - (everything - s) / n

    observed = abs(statistic(tuple(range(n))))
    tol = 1e-9 * max(math.fsum(abs(x) for x in pooled), 1e-300)
    splits = list(itertools.combinations(range(2 * n), n))
    hits = sum(abs(statistic(first)) >= observed - tol for first in splits)
    return hits / len(splits)


@pytest.mark.parametrize("n", [4, 6])
@pytest.mark.parametrize("kind", ["float", "grid", "integers"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exact_unpaired_permutation_matches_brute_force(n: int, kind: str, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    if kind == "integers":  # small integers: many exactly tied splits
        baseline, idea = rng.integers(0, 4, n).astype(float), rng.integers(0, 5, n).astype(float)
    else:
        baseline, idea = data(n, kind, seed)
    result = pmethods.unpaired_permutation_test(baseline, idea)
    assert result.method == "exact"
    assert result.resamples == math.comb(2 * n, n)
    assert result.p_value == pytest.approx(brute_force_unpaired(list(baseline), list(idea)), abs=1e-12)


def test_unpaired_permutation_of_identical_arms_is_one() -> None:
    assert pmethods.unpaired_permutation_test(np.full(5, 0.1), np.full(5, 0.1)).p_value == 1.0
    assert pmethods.unpaired_permutation_test(np.array([1.0]), np.array([2.0])).p_value == 1.0


def test_randomized_unpaired_permutation_is_close_to_exact(monkeypatch) -> None:
    n = 11  # C(22, 11) = 705,432 splits: randomized by default
    rng = np.random.default_rng(7)
    baseline = rng.standard_normal(n)
    idea = baseline + 0.9 + 0.5 * rng.standard_normal(n)
    randomized = pmethods.unpaired_permutation_test(baseline, idea, seed=3)
    assert randomized.method == "randomized"
    assert randomized.resamples == pmethods.UNPAIRED_RESAMPLES
    assert pmethods.unpaired_permutation_test(baseline, idea, seed=3) == randomized  # deterministic
    monkeypatch.setattr(pmethods, "UNPAIRED_EXACT_MAX_SPLITS", 10**6)
    exact = pmethods.unpaired_permutation_test(baseline, idea)
    assert exact.method == "exact"
    band = 3.29 * math.sqrt(exact.p_value * (1 - exact.p_value) / randomized.resamples) + 2 / randomized.resamples
    assert abs(randomized.p_value - exact.p_value) <= band


def test_randomized_description_names_it() -> None:
    baseline, idea = data(15, "float", 0)
    alt = {a.key: a for a in strict(baseline, idea)}["unpaired-permutation"]
    assert "randomized" in alt.description and "100000 resamples" in alt.description
    exact = {a.key: a for a in strict(*data(8, "float", 0))}["unpaired-permutation"]
    assert "randomized" not in exact.description and "12870 splits" in exact.description


# ---------------------------------------------------------------- degenerate inputs


def test_one_pair_gives_only_the_methods_defined_for_it() -> None:
    got = by_key(strict([1.0], [2.0]))
    assert set(got) == {"wilcoxon", "wilcoxon-approx", "sign-test", "unpaired-permutation"}
    assert got["wilcoxon"] == got["sign-test"] == got["unpaired-permutation"] == 1.0
    assert by_key(strict([1.0], [1.0])) == {"unpaired-permutation": 1.0}


def test_zero_variance_of_the_differences_leaves_out_the_paired_t_and_z() -> None:
    got = by_key(strict([1.0, 2.0, 3.0, 5.0], [1.5, 2.5, 3.5, 5.5]))
    assert not PAIRED_PARAMETRIC & set(got)
    assert got["sign-test"] == pytest.approx(0.125)
    assert got["wilcoxon"] == pytest.approx(scipy.stats.wilcoxon([0.5] * 4).pvalue, rel=RTOL)
    assert {"welch-t", "student-t", "unpaired-permutation"} <= set(got)


def test_all_zero_differences_leave_out_the_paired_tests() -> None:
    got = by_key(strict([1.0, 2.0, 4.0], [1.0, 2.0, 4.0]))
    assert set(got) == {"unpaired-permutation", "welch-t", "student-t"}
    assert all(p == pytest.approx(1.0) for p in got.values())


def test_constant_arms_leave_out_the_unpaired_t_tests() -> None:
    got = by_key(strict([0.1] * 6, [0.3] * 6))
    assert set(got) == {"wilcoxon", "wilcoxon-approx", "sign-test", "unpaired-permutation"}
    assert got["unpaired-permutation"] == pytest.approx(2 / math.comb(12, 6))


def test_constant_equal_arms_give_only_the_unpaired_permutation() -> None:
    assert by_key(strict([0.1] * 5, [0.1] * 5)) == {"unpaired-permutation": 1.0}


@pytest.mark.parametrize("scale", [1e150, 1e-150, 2.0**500])
def test_huge_and_tiny_values_are_scale_invariant(scale: float) -> None:
    baseline, idea = data(8, "float", 4)
    plain = by_key(strict(baseline, idea))
    scaled = by_key(strict(baseline * scale, idea * scale))
    assert set(scaled) == set(plain)
    for key, p in plain.items():
        assert scaled[key] == pytest.approx(p, rel=1e-9), key


def test_power_of_two_scaling_is_bit_for_bit() -> None:
    baseline, idea = data(12, "float", 5)
    assert strict(baseline, idea) == strict(np.ldexp(baseline, 900), np.ldexp(idea, 900))


@pytest.mark.parametrize(
    "baseline, idea",
    [
        ([1e308, -1.7e308, 3e307], [-1.7e308, 1e308, 0.0]),  # differences overflow a double
        ([1.7e308, 1.7e308, 1.7e308], [1.7e308, 1.7e308, -1.7e308]),
        ([5e-324, 0.0, 1e-320], [0.0, 5e-324, 2e-320]),  # subnormals
        ([1e300, 1e300 + 1e285, 0.0], [1e-300, 2e-300, 1e300]),  # 600 orders of magnitude apart
        ([0.1] * 5, [0.1, 0.1, 0.1, 0.1, 0.1 + 1e-17]),  # one ulp of spread
        ([1.0, 1.0 + 2**-52, 1.0], [2.0, 2.0, 2.0 + 2**-51]),  # near-zero variance: t of ~1e16
    ],
)
def test_extreme_values_raise_nothing_and_give_no_nan(baseline, idea) -> None:
    got = strict(baseline, idea)
    assert {"unpaired-permutation"} <= {a.key for a in got}


def test_empty_and_non_finite_input_give_nothing() -> None:
    assert strict([], []) == []
    assert strict([1.0, np.nan], [1.0, 2.0]) == []
    assert strict([1.0, 2.0], [np.inf, 2.0]) == []


def test_mismatched_shapes_are_a_caller_error() -> None:
    with pytest.raises(ValueError):
        alternative_p_values(np.zeros(3), np.zeros(4))


# ---------------------------------------------------------------- cost and imports


def test_ten_thousand_pairs_finish_and_are_deterministic() -> None:
    rng = np.random.default_rng(11)
    baseline = rng.standard_normal(10_000)
    idea = baseline + 0.01 + 0.5 * rng.standard_normal(10_000)
    first = strict(baseline, idea, seed=4)
    assert [a.key for a in first] == [k for k in ALL_KEYS if k != "wilcoxon-approx"]
    perm = next(a for a in first if a.key == "unpaired-permutation")
    assert "randomized" in perm.description
    assert strict(baseline, idea, seed=4) == first


def test_scipy_stats_is_never_imported() -> None:
    code = (
        "import sys, numpy as np\n"
        "from auditor.stats.pmethods import alternative_p_values\n"
        "assert 'scipy' not in sys.modules\n"
        "alternative_p_values(np.arange(12.0), np.arange(12.0) ** 1.1)\n"
        "assert 'scipy.stats' not in sys.modules, 'scipy.stats imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- matching


def printed_3g(p: float):
    """The claim an agent prints with 3 significant digits, and a predicate for it."""
    claimed = float(f"{p:.3g}")
    last_digit = math.floor(math.log10(abs(claimed))) - 2
    return claimed, lambda v: abs(v - claimed) <= 0.5 * 10.0**last_digit


def test_matching_names_the_paired_t_of_seed_000() -> None:
    report = seed_answer("000")["bench_report"]
    baseline = np.array(report["baseline"]["full"]["per_seed"])
    idea = np.array(report["idea"]["per_seed"])
    alternatives = strict(baseline, idea)
    claimed, consistent = printed_3g(by_key(alternatives)["paired-t"])
    assert claimed == 0.00327
    assert [a.key for a in matching_methods(consistent, alternatives)] == ["paired-t"]
    assert by_key(alternatives)["wilcoxon"] == 0.015625  # equals the exact sign-flip p here


@pytest.mark.parametrize("n", [8, 15, 40])
def test_matching_finds_each_method_from_its_printed_p(n: int) -> None:
    alternatives = strict(*data(n, "float", 9))
    for alt in alternatives:
        _, consistent = printed_3g(alt.p_value)
        found = matching_methods(consistent, alternatives)
        assert alt in found
        assert found == [a for a in alternatives if a in found]  # list order


def test_matching_nothing() -> None:
    alternatives = strict(*data(8, "float", 0))
    assert matching_methods(lambda v: False, alternatives) == []
    assert matching_methods(lambda v: True, alternatives) == alternatives
