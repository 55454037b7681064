"""A3xx: each rule fires on a planted defect and stays silent on the seeds and near misses."""

from __future__ import annotations

import pytest
from conftest import seed_answer
from rule_context import run_rule

from auditor.findings import Severity

A_CODES = [f"A3{k:02d}" for k in range(1, 12)]


def _report(answer: dict) -> dict:
    return answer["bench_report"]


def _comparison(answer: dict) -> dict:
    return answer["bench_report"]["comparison"]


@pytest.mark.parametrize("which", ["000", "001"])
@pytest.mark.parametrize("code", A_CODES)
def test_silent_on_the_seeds(code: str, which: str) -> None:
    assert run_rule(code, seed_answer(which)) == []


# --- A301 --------------------------------------------------------------------


def test_a301_names_the_count_that_disagrees() -> None:
    answer = seed_answer()
    _comparison(answer)["n_pairs"] = 9
    [f] = run_rule("A301", answer)
    assert f.pointer == "/bench_report/comparison/n_pairs"
    assert (f.claimed, f.recomputed) == (9, 8)
    assert "n_pairs is 9" in f.message and "set it to 8" in f.message


def test_a301_reports_each_wrong_count() -> None:
    answer = seed_answer("001")
    _report(answer)["n_seeds"] = 10
    _report(answer)["idea"]["full"]["n"] = 7
    pointers = {f.pointer for f in run_rule("A301", answer)}
    assert pointers == {"/bench_report/n_seeds", "/bench_report/idea/full/n"}


def test_a301_unpaired_arms_stop_the_recomputation() -> None:
    answer = seed_answer()
    _report(answer)["idea"]["per_seed"].pop()
    [f] = run_rule("A301", answer)
    assert f.pointer == "/bench_report/idea/per_seed"
    assert (f.claimed, f.recomputed) == (7, 8)
    assert "cannot be paired" in f.message
    assert all(run_rule(code, answer) == [] for code in A_CODES[1:])


def test_a301_short_per_seed_diffs() -> None:
    answer = seed_answer()
    _comparison(answer)["per_seed_diffs"].pop()
    [f] = run_rule("A301", answer)
    assert f.pointer == "/bench_report/comparison/per_seed_diffs"
    assert "len(per_seed_diffs) is 7" in f.message


def test_a301_absent_n_seeds_is_not_a_finding() -> None:
    answer = seed_answer()
    del _report(answer)["n_seeds"]
    del _comparison(answer)["per_seed_diffs"]
    assert run_rule("A301", answer) == []


# --- A302 / A303 ---------------------------------------------------------------


def test_a302_wrong_mean() -> None:
    answer = seed_answer()
    _report(answer)["baseline"]["full"]["mean"] = 10.83
    [f] = run_rule("A302", answer)
    assert f.pointer == "/bench_report/baseline/full/mean"
    assert f.claimed == 10.83 and f.recomputed == pytest.approx(10.930935978889465)


def test_a302_float32_rounding_is_tolerated() -> None:
    answer = seed_answer()
    _report(answer)["idea"]["mean"] = float(__import__("numpy").float32(10.922250509262085))
    assert run_rule("A302", answer) == []


def test_a303_std_matching_no_ddof_names_the_other_arm() -> None:
    answer = seed_answer()
    _report(answer)["idea"]["std"] = 2.5
    [f] = run_rule("A303", answer)
    assert f.pointer == "/bench_report/idea/std"
    assert "baseline arm's std matches ddof=0" in f.message


def test_a303_sample_std_is_accepted() -> None:
    answer = seed_answer()
    _report(answer)["baseline"]["full"]["std"] = 1.4948782581983764  # ddof=1
    assert run_rule("A303", answer) == []


# --- A304 / A305 / A306 ----------------------------------------------------------


def test_a304_one_wrong_diff_points_at_the_element() -> None:
    answer = seed_answer()
    _comparison(answer)["per_seed_diffs"][4] = -0.0035953521728515625
    [f] = run_rule("A304", answer)
    assert f.pointer == "/bench_report/comparison/per_seed_diffs/4"
    assert "seed 4" in f.message


def test_a304_reversed_sign_points_at_the_array() -> None:
    answer = seed_answer()
    c = _comparison(answer)
    c["per_seed_diffs"] = [-x for x in c["per_seed_diffs"]]
    [f] = run_rule("A304", answer)
    assert f.pointer == "/bench_report/comparison/per_seed_diffs"
    assert "8 of 8" in f.message and "sign is reversed" in f.message
    assert "and 3 more" in f.message


def test_a304_float32_noise_in_diffs_is_tolerated() -> None:
    answer = seed_answer()
    c = _comparison(answer)
    import numpy as np

    # A float32 computation two float32 ulps (values near 10: ~1.9e-6) off, printed in full.
    c["per_seed_diffs"] = [float(np.float32(x + 2e-6)) for x in c["per_seed_diffs"]]
    assert run_rule("A304", answer) == []


def test_a304_rounded_diffs_are_tolerated() -> None:
    c = _comparison(answer := seed_answer())
    c["per_seed_diffs"] = [float(f"{x:.4g}") for x in c["per_seed_diffs"]]
    assert run_rule("A304", answer) == []


def test_a304_a_hand_edited_seventh_digit_is_caught() -> None:
    c = _comparison(answer := seed_answer())
    c["per_seed_diffs"][2] = -0.01031504140625  # -0.01031494140625 with its 7th significant digit edited
    [f] = run_rule("A304", answer)
    assert f.pointer.endswith("/per_seed_diffs/2")


def test_a305_wrong_delta_mean() -> None:
    answer = seed_answer()
    _comparison(answer)["delta_mean"] = -0.0187
    [f] = run_rule("A305", answer)
    assert f.pointer == "/bench_report/comparison/delta_mean"
    assert f.recomputed == pytest.approx(-0.008685469627380371)


def test_a305_reversed_sign_is_explained() -> None:
    answer = seed_answer()
    _comparison(answer)["delta_mean"] = 0.008685469627380371
    [f] = run_rule("A305", answer)
    assert "sign is reversed" in f.message


def test_a306_wrong_wins() -> None:
    answer = seed_answer()
    _comparison(answer)["idea_wins"] = 8
    [f] = run_rule("A306", answer)
    assert (f.claimed, f.recomputed) == (8, 7)
    assert "report 7" in f.message


def test_a306_counting_the_wrong_direction_is_explained() -> None:
    answer = seed_answer()
    _comparison(answer)["idea_wins"] = 1
    [f] = run_rule("A306", answer)
    assert "direction is reversed" in f.message


def test_a306_higher_is_better_counts_upwards() -> None:
    answer = seed_answer()
    _report(answer)["metric_direction"] = "higher is better"
    _comparison(answer)["idea_wins"] = 1
    assert run_rule("A306", answer) == []


# --- A307 / A308 -------------------------------------------------------------------


def test_a307_p_outside_the_monte_carlo_band() -> None:
    answer = seed_answer()
    _comparison(answer)["p_value"] = 0.0462
    [f] = run_rule("A307", answer)
    assert f.pointer == "/bench_report/comparison/p_value"
    assert f.recomputed == 0.015625
    assert "all 256 sign patterns is 0.015625" in f.message


@pytest.mark.parametrize(
    "p",
    [
        0.015625,  # exact
        0.01475,  # seed 000: 295/20000
        0.0156,  # exact, rounded
        0.02,  # exact, rounded to 2 decimals
        0.018,  # 18/1000
        0.0138,  # 138/10000
        0.015623,  # 15623/1000000: a tight interval that holds
    ],
)
def test_a307_monte_carlo_estimates_are_consistent(p: float) -> None:
    answer = seed_answer()
    _comparison(answer)["p_value"] = p
    assert run_rule("A307", answer) == []


def test_a307_a_five_digit_p_gets_the_tight_interval_of_a_large_b() -> None:
    answer = seed_answer()
    # 0.017 is a plausible count over 1,000 draws; 0.017123 is only reachable by
    # B = 1,000,000, where it is 12 standard errors from 0.015625.
    _comparison(answer)["p_value"] = 0.017
    assert run_rule("A307", answer) == []
    _comparison(answer)["p_value"] = 0.017123
    [f] = run_rule("A307", answer)
    assert f.recomputed == 0.015625


def test_a307_stated_resample_count_is_used() -> None:
    answer = seed_answer()
    _comparison(answer)["p_value"] = 0.018  # fine for B = 1,000, not for the stated 1,000,000
    assert run_rule("A307", answer) == []
    answer["limitations"] += " The p-value uses 1,000,000 random sign flips."
    [f] = run_rule("A307", answer)
    assert "1 resample count" in f.message


def test_a307_says_when_the_one_sided_p_was_reported() -> None:
    answer = seed_answer()
    _comparison(answer)["p_value"] = 0.0078125
    [f] = run_rule("A307", answer)
    assert "is the one-sided sign-flip p (0.0078125)" in f.message


def test_a307_names_no_method_the_claim_does_not_match_within_printing() -> None:
    """Issue 31 item 7: 0.001 is no reading of the one-sided p 0.0078125, even as a Monte-Carlo estimate."""
    answer = seed_answer()
    _comparison(answer)["p_value"] = 0.001
    [f] = run_rule("A307", answer)
    assert "one-sided" not in f.message and "neither the exact p nor" in f.message


def test_a307_names_the_paired_t_test() -> None:
    import numpy as np
    from scipy import stats as scipy_stats

    answer = seed_answer()
    report = _report(answer)
    t_p = scipy_stats.ttest_rel(report["idea"]["per_seed"], report["baseline"]["full"]["per_seed"]).pvalue
    _comparison(answer)["p_value"] = float(f"{t_p:.3g}")
    [f] = run_rule("A307", answer)
    assert "paired t-test" in f.message
    assert np.isclose(f.recomputed, 0.015625)


def test_a307_randomized_p_widens_the_band() -> None:
    import numpy as np

    rng = np.random.default_rng(5)
    base = list(10 + rng.normal(0, 1, 45))
    idea = [b - 0.003 + rng.normal(0, 0.02) for b in base]
    answer = seed_answer()
    report = _report(answer)
    report["baseline"]["full"]["per_seed"] = base
    report["idea"]["per_seed"] = idea
    from rule_context import context_for

    r = context_for(answer).recomputed
    assert r.p_method == "randomized"
    assert r.p_band.low < r.p_value < r.p_band.high
    _comparison(answer)["p_value"] = r.p_value
    assert run_rule("A307", answer) == []
    _comparison(answer)["p_value"] = min(1.0, r.p_value + 0.2)
    [f] = run_rule("A307", answer)
    assert "randomized" in f.message


def test_a308_p_below_the_floor() -> None:
    answer = seed_answer()
    _comparison(answer)["p_value"] = 0.001
    [f] = run_rule("A308", answer)
    assert f.recomputed == pytest.approx(0.0078125)
    assert "2/2^8" in f.message


def test_a308_floor_counts_only_nonzero_differences() -> None:
    answer = seed_answer()
    report = _report(answer)
    # Seeds 0-4 tie exactly: 3 non-zero differences leave a floor of 2/2^3 = 0.25.
    report["idea"]["per_seed"][:5] = report["baseline"]["full"]["per_seed"][:5]
    _comparison(answer)["p_value"] = 0.03
    [f] = run_rule("A308", answer)
    assert f.recomputed == pytest.approx(0.25)
    assert "5 of them with a zero difference" in f.message


def test_a308_p_at_the_floor_is_possible() -> None:
    answer = seed_answer()
    _comparison(answer)["p_value"] = 0.0078
    assert run_rule("A308", answer) == []


# --- A309 / A310 -------------------------------------------------------------------


def test_a309_wrong_mde() -> None:
    answer = seed_answer()
    _comparison(answer)["mde"] = 0.0094
    [f] = run_rule("A309", answer)
    assert f.recomputed == pytest.approx(0.004699233088753434)
    assert "t(0.975, 7)" in f.message


def test_a309_z_quantile_is_explained() -> None:
    answer = seed_answer()
    _comparison(answer)["mde"] = 0.004699233088753434 * 1.959963984540054 / 2.364624251592785
    [f] = run_rule("A309", answer)
    assert "z = 1.96" in f.message


def test_a309_table_t_is_tolerated() -> None:
    answer = seed_answer()
    _comparison(answer)["mde"] = 0.004699233088753434 * 1.0008
    assert run_rule("A309", answer) == []


def test_a310_fraction_instead_of_percent() -> None:
    answer = seed_answer()
    _comparison(answer)["mde_rel_pct"] = 0.0004299704824063914
    [f] = run_rule("A310", answer)
    assert "fraction, not the percent" in f.message


def test_a310_within_relative_tolerance() -> None:
    answer = seed_answer()
    _comparison(answer)["mde_rel_pct"] = 0.042990216920389054 * (1 - 8e-4)
    assert run_rule("A310", answer) == []


def test_absent_optional_fields_are_not_findings() -> None:
    answer = seed_answer()
    c = _comparison(answer)
    for key in ("mde", "mde_rel_pct", "per_seed_diffs"):
        del c[key]
    for code in A_CODES:
        assert run_rule(code, answer) == []


# --- A311 ----------------------------------------------------------------------


def test_a311_best_cfg_not_best() -> None:
    answer = seed_answer("001")
    _report(answer)["baseline"]["best_cfg"]["lr"] = 0.003
    [f] = run_rule("A311", answer)
    assert f.pointer == "/bench_report/baseline/best_cfg"
    assert f.recomputed == {"lr": 0.006, "epochs": 12}


def test_a311_flat_idea_uses_the_top_level_sweep() -> None:
    answer = seed_answer()
    _report(answer)["idea_sweep"][1]["mean"] = 9.9
    [f] = run_rule("A311", answer)
    assert f.pointer == "/bench_report/idea/cfg"


def test_a311_best_cfg_missing_from_the_sweep() -> None:
    answer = seed_answer("001")
    _report(answer)["idea"]["best_cfg"]["lr"] = 0.01
    [f] = run_rule("A311", answer)
    assert "not an entry of its sweep" in f.message


def test_a311_higher_is_better_and_ties() -> None:
    answer = seed_answer("001")
    report = _report(answer)
    report["metric_direction"] = "higher is better"
    assert {f.pointer for f in run_rule("A311", answer)} == {
        "/bench_report/baseline/best_cfg",
        "/bench_report/idea/best_cfg",
    }
    for arm in ("baseline", "idea"):
        report[arm]["sweep"][0]["mean"] = report[arm]["sweep"][2]["mean"] = 50.0
        report[arm]["best_cfg"]["lr"] = 0.006  # tied with lr=0.001
    assert run_rule("A311", answer) == []


# --- A307: short prints and unstated small counts (issue 31 item 1) ---------------------


def _with_p(p: float, prose: str | None = None) -> dict:
    answer = seed_answer()
    _comparison(answer)["p_value"] = p
    for key in ("verdict",):
        answer[key] = answer[key].replace("p=0.01475", f"p={p}")
    answer["metrics"]["paired_comparison"] = answer["metrics"]["paired_comparison"].replace("0.01475", str(p))
    if prose:
        answer["bench_report"]["protocol_note"] += " " + prose
    return answer


@pytest.mark.parametrize("claimed", [0.002, 0.004, 0.005, 0.008, 0.01])
def test_a307_short_printed_lies_fail(claimed: float) -> None:
    """With the data of seed 000 (exact p 0.015625), a one-digit p matched by the prose is an error."""
    [f] = run_rule("A307", _with_p(claimed))
    assert f.severity is Severity.ERROR


def test_a307_seed_000s_estimate_stays_accepted() -> None:
    assert run_rule("A307", _with_p(0.01475)) == []


def test_a307_an_unstated_small_count_near_the_exact_p_is_a_warning() -> None:
    [f] = run_rule("A307", _with_p(0.03))  # 2x off at most, same side of alpha as 0.015625
    assert f.severity is Severity.WARNING and "unstated count" in f.message


@pytest.mark.parametrize("prose", ["The p-value uses 1,000 random sign flips.", "p from a Monte-Carlo sign-flip test."])
def test_a307_a_stated_count_or_randomization_is_used(prose: str) -> None:
    assert run_rule("A307", _with_p(0.03, prose)) == []


def test_a307_a_paired_permutation_test_is_not_said_to_be_randomized() -> None:
    """The bench names its exact test a paired permutation test: that word states no random draws."""
    [f] = run_rule("A307", _with_p(0.03, "The paired permutation test compares the arms."))
    assert f.severity is Severity.WARNING


def _five_seeds() -> dict:
    """Seed 000 cut to its 5 seeds whose differences all favour the idea: exact p = 2/32 = 0.0625."""
    answer = seed_answer()
    report, keep = answer["bench_report"], [0, 1, 2, 3, 5]
    for arm in (report["baseline"]["full"], report["idea"]):
        arm["per_seed"] = [arm["per_seed"][k] for k in keep]
    c = report["comparison"]
    c.update(per_seed_diffs=[c["per_seed_diffs"][k] for k in keep], n_pairs=5, idea_wins=5)
    report["n_seeds"] = 5
    return answer


def test_a_significant_verdict_on_a_short_printed_p_is_an_error() -> None:
    """Exact p 0.0625; a claimed 0.04 beside "significant" is no borderline case."""
    answer = _five_seeds()
    _comparison(answer).update(p_value=0.04, verdict="idea better (significant)")
    [a307] = run_rule("A307", answer)
    [v401] = run_rule("V401", answer)
    assert a307.severity is Severity.ERROR and v401.severity is Severity.ERROR
