"""Which claimed p-values an honest sign-flip test could have printed (auditor.stats.pvalues)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from auditor.stats.precision import printed
from auditor.stats.pvalues import (
    COMMON_RESAMPLES,
    CONVENTIONS,
    DEFAULT_RESAMPLES,
    MC_MISS,
    PAgreement,
    _binomial_plausible,
    _claim_half_unit,
    _falling_tail_reaches,
    _hit_ranges,
    _tail_reaches,
    agreement,
    monte_carlo_agreement,
)
from auditor.stats.summary import PBand

SEED_000 = PBand(0.015625, 0.015625)  # exact 4/256


def test_exact_and_rounded_claims() -> None:
    assert agreement(0.015625, SEED_000).how == "exact"
    assert agreement(0.0156, SEED_000).how == "exact, rounded"
    assert agreement(0.02, SEED_000).consistent  # two decimals
    assert agreement(0.0, PBand(0.0039, 0.0039)).consistent  # 0.0039 printed with two decimals


def test_seed_000_is_a_count_over_20000_draws() -> None:
    agreed = agreement(0.01475, SEED_000)
    assert agreed.consistent
    assert agreed.resamples is not None and 0.01475 * agreed.resamples == pytest.approx(
        round(0.01475 * agreed.resamples)
    )


def _simulate(p_true: float, resamples: int, convention: str, rng: np.random.Generator) -> float:
    if convention == "hits/B":
        return rng.binomial(resamples, p_true) / resamples
    if convention == "(hits+1)/(B+1)":
        return (rng.binomial(resamples, p_true) + 1) / (resamples + 1)
    # scipy: twice the smaller one-sided (hits+1)/(B+1)
    return min(1.0, 2 * (rng.binomial(resamples, p_true / 2) + 1) / (resamples + 1))


@pytest.mark.parametrize("convention", ["hits/B", "(hits+1)/(B+1)", "scipy"])
@pytest.mark.parametrize("resamples", [1_000, 2_000, 5_000, 9_999, 20_000])
def test_honest_monte_carlo_estimates_are_accepted(convention: str, resamples: int) -> None:
    """200 simulated estimates per (B, convention), p from 1e-6 to 0.9: at most one miss (99.9% intervals),
    with the count unstated from 9,999 up, and for smaller counts once the answer says it resampled;
    unstated, a smaller count's estimate is a weak reading (A307 decides how bad), never a plain miss."""
    rng = np.random.default_rng(resamples)
    misses = unstated_misses = 0
    for p_true in np.geomspace(1e-6, 0.9, 200):
        claimed = _simulate(float(p_true), resamples, convention, rng)
        band = PBand(float(p_true), float(p_true))
        if resamples >= 9_999:
            misses += not agreement(claimed, band).consistent
        else:
            misses += not agreement(claimed, band, randomized=True).consistent
            unstated = agreement(claimed, band)
            unstated_misses += not (unstated.consistent or unstated.weak)
    assert misses <= 1 and unstated_misses <= 1


@pytest.mark.parametrize("factor", [2.0, 5.0, 10.0, 0.5, 0.2, 0.1])
def test_a_p_off_by_a_factor_printed_in_full_is_caught(factor: float) -> None:
    caught = 0
    exact_ps = [k / 256 for k in range(1, 128, 3)]  # exact p of 8 seeds
    for p in exact_ps:
        caught += not agreement(min(1.0, p * factor), PBand(p, p)).consistent
    assert caught >= 0.95 * len(exact_ps)


def test_a_stated_count_replaces_the_usual_ones() -> None:
    assert agreement(0.03, SEED_000, stated_resamples=[1_000]).consistent  # 30/1000
    assert agreement(0.018, SEED_000, randomized=True).consistent  # "Monte-Carlo": any usual count
    assert not agreement(0.018, SEED_000, stated_resamples=[1_000_000]).consistent
    assert agreement(0.01475, SEED_000, stated_resamples=[20_000]).consistent


def test_assumed_resamples_adds_an_uncommon_count() -> None:
    band = PBand(0.25, 0.25)
    claimed = 7 / 31  # 0.2258...: only a count over 31 draws prints exactly this
    assert 31 not in COMMON_RESAMPLES
    assert not agreement(claimed, band).consistent
    assert agreement(claimed, band, assumed_resamples=31).consistent


def test_strong_effect_plus_one_estimates() -> None:
    for resamples in (1_000, 2_000, 5_000):
        assert agreement(1 / (resamples + 1), PBand(1.9e-6, 1.9e-6), randomized=True).consistent


def test_not_a_probability() -> None:
    assert not agreement(1.5, SEED_000).consistent
    assert not agreement(-0.01, SEED_000).consistent
    assert not agreement(float("nan"), SEED_000).consistent


def test_resamples_and_mc_resamples_are_separate_options(tmp_path, capsys) -> None:
    """--resamples sets the auditor's own randomized test; --mc-resamples only the B assumed for claims."""
    import json

    from conftest import as_transcript, seed_answer

    from auditor.cli import main

    rng = np.random.default_rng(41)
    answer = seed_answer()
    report = answer["bench_report"]
    base = [float(x) for x in 10 + rng.normal(0, 1, 45)]
    report["baseline"]["full"]["per_seed"] = base
    report["idea"]["per_seed"] = [b - 0.01 for b in base]
    path = tmp_path / "answer.txt"
    path.write_text(as_transcript(answer), encoding="utf-8")

    def recomputed(*flags: str) -> dict:
        main(["audit", str(path), "--format", "json", "--isolated", *flags])
        return json.loads(capsys.readouterr().out)["results"][0]["recomputed"]

    default = recomputed()
    assert default["p_value_method"] == "randomized"
    assert default["p_value"] == pytest.approx(1 / 100_001)  # every one of 100,000 resamples is less extreme
    assert recomputed("--resamples", "2000")["p_value"] == pytest.approx(1 / 2_001)
    assert recomputed("--mc-resamples", "2000")["p_value"] == default["p_value"]


# ---------------------------------------------------------------- binomial tails without scipy.special


def _scipy_plausible(hits: tuple[int, int], resamples: int, band: PBand, tail: float) -> bool:
    """The 99.9% interval check as scipy's bdtr/bdtrc decide it: what the summed tails must reproduce."""
    from scipy.special import bdtr, bdtrc

    low, high = hits
    p_low, p_high = min(band.low * tail, 1.0), min(band.high * tail, 1.0)
    upper_tail = 1.0 if low <= 0 else float(bdtrc(low - 1, resamples, p_high))
    lower_tail = 1.0 if high >= resamples else float(bdtr(high, resamples, p_low))
    return upper_tail >= MC_MISS / 2 and lower_tail >= MC_MISS / 2


def _tail_cases(rng: np.random.Generator, count: int):
    """(k, n, p, upper): tails from far below the 99.9% level to the mode, B up to 10^7, p at 0 and 1 too."""
    for _ in range(count):
        n = int(rng.choice([1, 2, 9, 100, 999, 20_000, 99_999, 1_000_000, 10_000_000]))
        p = float(rng.choice([rng.random(), rng.random() ** 4, 1 - rng.random() * 1e-3, 0.5, 1 / 256, 0.0, 1.0]))
        upper = bool(rng.random() < 0.5)
        z = float(rng.choice([rng.uniform(-6, 6), 3.29 + rng.uniform(-0.02, 0.02), rng.uniform(-0.5, 0.5)]))
        spread = (n * p * (1 - p)) ** 0.5
        k = round(n * p + (z if upper else -z) * spread)
        yield min(max(k, 1 if upper else 0), n if upper else n - 1), n, p, upper


def test_summed_tails_decide_as_scipy_does() -> None:
    from scipy.special import bdtr, bdtrc

    rng = np.random.default_rng(13)
    reached = []
    for k, n, p, upper in _tail_cases(rng, 3_000):
        expected = float(bdtrc(k - 1, n, p) if upper else bdtr(k, n, p)) >= MC_MISS / 2
        assert _tail_reaches(k, n, p, MC_MISS / 2, upper=upper) is expected, (k, n, p, upper)
        reached.append(expected)
    assert 0.2 < np.mean(reached) < 0.8  # both answers were tested, many times


@pytest.mark.parametrize(
    ("k", "n", "p", "upper"),
    [(3, 10, 1.0, True), (10, 10, 1.0, True), (9, 10, 1.0, False), (1, 10, 0.0, True), (0, 10, 0.0, False)],
)
def test_certain_outcomes_decide_as_scipy_does(k: int, n: int, p: float, upper: bool) -> None:
    from scipy.special import bdtr, bdtrc

    expected = float(bdtrc(k - 1, n, p) if upper else bdtr(k, n, p)) >= MC_MISS / 2
    assert _tail_reaches(k, n, p, MC_MISS / 2, upper=upper) is expected


def test_a_tail_at_the_level_itself_is_left_to_scipy() -> None:
    """P(X <= 2) of Bin(100, p) equals the level for one p: too close to call by summing, scipy decides."""
    from scipy.special import bdtr

    level = MC_MISS / 2
    p_low, p_high = 0.05, 0.2
    for _ in range(60):  # bisect the p whose tail is the level
        middle = (p_low + p_high) / 2
        p_low, p_high = (middle, p_high) if float(bdtr(2, 100, middle)) >= level else (p_low, middle)
    for p in (p_low, p_high):
        assert _falling_tail_reaches(2, 100, p, level, upper=False) is None
        assert _tail_reaches(2, 100, p, level, upper=False) is (float(bdtr(2, 100, p)) >= level)


def test_agreement_is_unchanged_by_the_summed_tails() -> None:
    """Every hit range the usual counts and conventions give, decided as with scipy's bdtr/bdtrc."""
    rng = np.random.default_rng(7)
    checked = plausible = 0
    for p_true in np.geomspace(1e-6, 0.95, 60):
        band = PBand(float(p_true), float(p_true) * (1 + float(rng.uniform(0, 0.01))))
        for resamples in COMMON_RESAMPLES:
            for claimed in (float(rng.binomial(resamples, p_true)) / resamples, float(p_true) * rng.uniform(0.8, 1.25)):
                half_unit = printed(claimed).half_unit
                for _, convention, hits in _hit_ranges(claimed, half_unit, (resamples,)):
                    ours = _binomial_plausible(hits, resamples, band, convention.tail)
                    assert ours is _scipy_plausible(hits, resamples, band, convention.tail)
                    checked += 1
                    plausible += ours
    assert checked > 500 and 0 < plausible < checked


# --------------------------------------------------------------------------- issue 31 item 1


@pytest.mark.parametrize("claimed", [0.002, 0.004, 0.005, 0.008, 0.01])
def test_short_prints_are_no_estimate_of_seed_000(claimed: float) -> None:
    """One significant digit and no count stated: not read as a Monte-Carlo estimate of 0.015625."""
    agreed = agreement(claimed, SEED_000)
    assert not agreed.consistent


def test_an_unstated_small_count_is_a_weak_reading() -> None:
    agreed = agreement(0.03, SEED_000)  # about 30/1,000: only a count below 9,999 reaches it
    assert not agreed.consistent and agreed.weak and agreed.resamples in (999, 1_000)
    assert f"unstated count of {agreed.resamples:,}" in agreed.how
    assert agreement(0.03, SEED_000, randomized=True).consistent


def test_one_significant_digit_is_accepted_when_the_count_is_stated() -> None:
    assert not agreement(0.01, SEED_000).consistent
    assert agreement(0.01, SEED_000, stated_resamples=[10_000]).consistent
    assert agreement(0.01, SEED_000, randomized=True).consistent


def test_default_counts_still_read_seed_000() -> None:
    assert agreement(0.01475, SEED_000).resamples == 20_000


def _monte_carlo_reference(claimed: float, band: PBand) -> PAgreement | None:
    """The first count and convention, counts outermost, whose hit range is plausible: of the counts
    assumed when an answer states none."""
    half_unit = _claim_half_unit(claimed)
    for resamples in sorted(DEFAULT_RESAMPLES):
        for convention in CONVENTIONS:
            for _, _, hits in _hit_ranges(claimed, half_unit, (resamples,), (convention,)):
                if _binomial_plausible(hits, resamples, band, convention.tail):
                    return PAgreement(True, f"Monte-Carlo, B={resamples}, {convention.name}", resamples)
    return None


@settings(max_examples=300, deadline=None)
@given(st.floats(1e-4, 0.6), st.floats(0.9, 1.1), st.integers(2, 5))
# B=9,999 with (hits+1)/(B+1) comes before B=50,000 with hits/B: the counts are the outer loop.
@example(0.1264139671024897, 0.12694 / 0.1264139671024897, 5)
def test_monte_carlo_agreement_tries_counts_then_conventions(p_true: float, ratio: float, digits: int) -> None:
    claimed = round(p_true * ratio, digits)
    assume(printed(claimed).digits > 1)  # a one-digit print is read apart
    got = monte_carlo_agreement(claimed, PBand(p_true, p_true))
    assert (got if got.consistent else None) == _monte_carlo_reference(claimed, PBand(p_true, p_true))
