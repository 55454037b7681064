"""The bounded-cost paths of the sign-flip test: randomized draws above the exact limit, and the
one-count bound that spares E702 its n leave-one-out tests.  Correctness only, never time."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import ROOT, as_transcript, seed_answer
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.stats import signflip_randomized as sfr
from auditor.stats import summary as stats

sys.path.insert(0, str(ROOT / "fixtures" / "generators"))
from consistent import rewrite_statistics  # noqa: E402


def _differences(kind: str, n: int) -> tuple[list[float], list[float]]:
    """Baseline and idea per-seed values as answers hold them: printed decimals, or integer counts (ties)."""
    rng = np.random.default_rng(n)
    if kind == "decimals":
        baseline = np.round(rng.normal(10.0, 1.0, n), 4)
        idea = np.round(baseline + rng.normal(-0.25, 0.8, n), 4)
    else:
        baseline = rng.integers(50, 60, n).astype(float)
        idea = baseline + rng.integers(-4, 4, n)
    return baseline.tolist(), idea.tolist()


@pytest.mark.parametrize("kind", ["decimals", "counts"])
@pytest.mark.parametrize("n", [20, 26, 32, 40])
def test_the_randomized_interval_holds_the_exact_p(kind: str, n: int) -> None:
    baseline, idea = _differences(kind, n)
    d = [b - a for a, b in zip(baseline, idea)]
    exact = stats.sign_flip_test(d, baseline=baseline, idea=idea)
    randomized = stats.sign_flip_test(d, baseline=baseline, idea=idea, exact_max_n=n - 1, seed=3)
    assert exact.method == "exact" and randomized.method == "randomized"
    assert randomized.resamples == 100_000  # n * 100,000 is within the draw budget
    assert exact.p_two_sided in randomized.two_sided_band
    assert exact.p_one_sided in randomized.one_sided_band
    # The estimate (loose ties, as the exact p) is close to it: 100,000 draws are precise.
    assert abs(randomized.p_two_sided - exact.p_two_sided) < 0.006
    if kind == "decimals":  # no tie to count both ways: the interval is narrow
        assert randomized.two_sided_band.high - randomized.two_sided_band.low < 0.012


def test_randomized_results_are_seeded_across_blocks() -> None:
    """Same seed, same draws (the count crosses a block boundary); another seed, other draws."""
    d = np.random.default_rng(9).normal(-0.05, 1.0, 300)
    resamples = 2 * sfr.RANDOMIZED_BLOCK + 17
    a = stats.sign_flip_test(d, resamples=resamples, seed=1)
    assert a == stats.sign_flip_test(d, resamples=resamples, seed=1)
    assert a.resamples == resamples
    assert a.p_two_sided != stats.sign_flip_test(d, resamples=resamples, seed=2).p_two_sided


@pytest.mark.parametrize("n", [41, 47, 200])
def test_every_seed_gets_a_fair_sign(n: int) -> None:
    """Each seed, the padded last group's included, is + in about half of the draws and adds
    exactly its +-d to each sum: the draws of a lone non-zero seed are +-1, evenly split."""
    rng = np.random.default_rng(n)
    for seed_index in (0, 7, 8, n - 1):
        d = np.zeros(n)
        d[seed_index] = 1.0
        sums = sfr.random_signed_sums(sfr.sign_tables(d), rng, 40_000)
        assert set(np.unique(sums).tolist()) == {-1.0, 1.0}
        assert abs(np.count_nonzero(sums > 0) - 20_000) < 4 * 100  # 4 sd of Bin(40,000, 1/2)


def test_the_sign_tables_hold_every_signed_sum_of_a_group() -> None:
    d = np.arange(1.0, 12.0)  # 11 seeds: a full group of 8 and a padded one of 3
    tables = sfr.sign_tables(d)
    assert tables.shape == (2, 256)
    for byte in (0, 1, 0b10110101, 255):
        signs = np.array([1.0 if byte >> j & 1 else -1.0 for j in range(8)])
        assert tables[0, byte] == float(signs @ d[:8])
        assert tables[1, byte] == float(signs[:3] @ d[8:])


def test_the_draws_are_capped_so_that_1000_seeds_stay_cheap() -> None:
    assert sfr.randomized_resamples(100_000, 100) == 100_000
    assert sfr.randomized_resamples(100_000, 1_000) == sfr.RANDOMIZED_MAX_CELLS // 1_000 == 10_000
    assert sfr.randomized_resamples(100_000, 10**6) == sfr.RANDOMIZED_MIN_RESAMPLES
    assert sfr.randomized_resamples(500, 1_000) == 500
    result = stats.sign_flip_test(np.random.default_rng(4).normal(-0.1, 1.0, 1_000))
    assert result.method == "randomized" and result.resamples == 10_000
    # The interval widens to match the fewer draws, and still holds the estimate.
    assert result.two_sided_band.low <= result.p_two_sided <= result.two_sided_band.high


# ---------------------------------------------------------------- E702's one-count bound

# Printed decimals (sums not exact: tolerant ties), coarse grids (exact ties and zeros), near-ties.
_VALUE = st.one_of(
    st.integers(-3000, 3000).map(lambda k: round(k / 1000, 3)),
    st.integers(-6, 6).map(float),
    st.sampled_from([0.1, -0.1, 0.2, -0.3, 0.30000000000000004, 1e-9]),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(_VALUE, min_size=2, max_size=13))
def test_the_bound_holds_every_leave_one_out_p(d: list[float]) -> None:
    bound = stats.leave_one_out_p_bound(d)
    assert max(stats.leave_one_out_p_values(d)) <= bound


def test_the_bound_is_tight_where_one_seed_doubles_p() -> None:
    d = [0.25] * 8  # every seed left out gives 2/2^7, exactly twice p = 2/2^8
    assert stats.leave_one_out_p_bound(d) == max(stats.leave_one_out_p_values(d)) == 2 / 2**7
    assert stats.leave_one_out_p_bound([0.5, -0.5]) == 1.0  # a zero total bounds nothing
    assert stats.leave_one_out_p_bound([0.3] * 12, exact_max_n=5) == 1.0  # randomized leave-one-out tests


# A 20-seed answer in printed decimals whose significance rests on seed 0 (found once, kept fixed).
FRAGILE_BASE = [
    9.1981,
    8.6756,
    9.7516,
    10.4204,
    11.136,
    10.1097,
    9.4474,
    9.2152,
    10.7487,
    11.6348,
    10.2728,
    8.7667,
    9.0417,
    11.6,
    10.2029,
    8.2679,
    9.9163,
    8.8368,
    9.3707,
    9.512,
]
FRAGILE_IDEA = [
    5.1981,
    8.656,
    9.8212,
    10.3182,
    10.8488,
    9.9533,
    9.1299,
    9.2132,
    11.1308,
    11.4671,
    10.0667,
    8.8937,
    9.1288,
    11.6116,
    9.9038,
    8.2391,
    10.1049,
    8.4135,
    9.2134,
    8.9216,
]


def _answer(baseline: list[float], idea: list[float]) -> bytes:
    return as_transcript(rewrite_statistics(seed_answer(), baseline=baseline, idea=idea)).encode()


def test_e702_still_fires_on_a_fragile_20_seed_answer(audit) -> None:
    result = audit(_answer(FRAGILE_BASE, FRAGILE_IDEA))
    [finding] = [f for f in result.findings if f.rule == "E702"]
    assert "dropping seed 0" in finding.message
    assert finding.recomputed == max(stats.leave_one_out_p_values(result_diffs(FRAGILE_BASE, FRAGILE_IDEA)))


def result_diffs(baseline: list[float], idea: list[float]) -> list[float]:
    return [b - a for a, b in zip(baseline, idea)]


@pytest.mark.parametrize("n", [20, 30])
def test_e702_decides_a_robust_answer_without_n_tests(audit, monkeypatch, n: int) -> None:
    """A clearly significant answer above the shared-halves size (16 seeds): E702 stays silent
    from one count, and never runs the n leave-one-out tests it ran before."""
    rng = np.random.default_rng(n)
    baseline = np.round(rng.normal(10.0, 1.0, n), 4)
    idea = np.round(baseline - 0.5 + rng.normal(0.0, 0.3, n), 4)
    d = result_diffs(baseline.tolist(), idea.tolist())
    assert max(stats.leave_one_out_p_values(d)) < 0.05  # the decision the n tests would reach

    def refuse(*args, **kwargs):
        raise AssertionError("E702 ran the n leave-one-out tests")

    monkeypatch.setattr("auditor.rules.effect.leave_one_out_p_values", refuse)
    result = audit(_answer(baseline.tolist(), idea.tolist()))
    assert result.recomputed["verdict"] == "idea better (significant)"
    assert not [f for f in result.findings if f.rule in ("E702", "X000")]  # silent, and no internal error
