"""Numeric claims in prose: extraction, rounding-aware comparison, linear-time scanning."""

from __future__ import annotations

import re
import string
import sys

import pytest
from conftest import FIXTURES, codes, seed_answer
from hypothesis import given, settings
from hypothesis import strategies as st
from rule_context import run_rule

from auditor import prose
from auditor.audit import audit_path
from auditor.options.models import AuditOptions
from auditor.prose import claims, numbers, relative, resamples
from auditor.prose.scanning import fold, matches_at


def test_seed_000_verdict_sentence() -> None:
    claims = prose.extract_claims(seed_answer("000")["verdict"])
    [p] = claims.p_values
    assert (p.text, p.relation, p.reported.value) == ("p=0.01475", "=", 0.01475)
    [w] = claims.wins
    assert (w.wins, w.total) == (7, 8)
    [ft] = claims.from_to
    assert (ft.start.value, ft.end.value) == (10.93094, 10.92225)
    assert claims.deltas == []  # "target delta=0.02" is a mechanism parameter


def test_seed_000_paired_comparison_metric() -> None:
    text = seed_answer("000")["metrics"]["paired_comparison"]
    claims = prose.extract_claims(text)
    assert [d.reported.value for d in claims.deltas] == [-0.008685469627380371]
    assert [p.reported.value for p in claims.p_values] == [0.01475]
    assert [(w.wins, w.total) for w in claims.wins] == [(7, 8)]


def test_seed_001_prose() -> None:
    answer = seed_answer("001")
    verdict = prose.extract_claims(answer["verdict"])
    assert [d.reported.value for d in verdict.deltas] == [0.0]
    assert [p.reported.value for p in verdict.p_values] == [1.0]
    idea = prose.extract_claims(answer["metrics"]["idea"])
    assert [d.text for d in idea.deltas] == ["paired delta 0.0"]
    assert [(w.wins, w.total) for w in idea.wins] == [(0, 8)]


def test_spans_point_at_the_matched_text() -> None:
    text = "We saw p = 0.03 overall."
    [p] = prose.extract_p_values(text)
    assert text[p.span[0] : p.span[1]] == p.text == "p = 0.03"


@pytest.mark.parametrize(
    ("text", "relation", "value"),
    [
        ("p=0.01475", "=", 0.01475),
        ("p_value=0.2", "=", 0.2),
        ("p-value of 0.031", "=", 0.031),
        ("P = 1.0", "=", 1.0),
        ("p < 0.05", "<", 0.05),
        ("p≤0.05", "<=", 0.05),
        ("p >= 0.1", ">=", 0.1),
        ("p=1.5e-3", "=", 0.0015),
        ("p = 2×10^-4", "=", 0.0002),
        ("p=.05", "=", 0.05),
        ("p<0.01", "<", 0.01),
        ("p < .05", "<", 0.05),
        ("p ≤ 0.05", "<=", 0.05),
        ("p<.001", "<", 0.001),
        ("P<.05", "<", 0.05),
        ("(p<.05)", "<", 0.05),
        ("p≤.05", "<=", 0.05),
        ("p ⩽ 0.05", "<=", 0.05),
        ("p=<0.05", "<=", 0.05),
        ("p<1e-3", "<", 0.001),
        ("p > .5", ">", 0.5),
        ("p ≥ 0.1", ">=", 0.1),
    ],
)
def test_p_value_spellings(text: str, relation: str, value: float) -> None:
    [p] = prose.extract_p_values(text)
    assert p.relation == relation
    assert p.reported.value == pytest.approx(value)


@pytest.mark.parametrize(
    "text",
    ["step=0.5", "top=3", "the criterion is p < 0.05", "significant if p<0.05", "p=5%", "p_value_one_sided=0.007"],
)
def test_not_p_value_claims(text: str) -> None:
    assert prose.extract_p_values(text) == []


@pytest.mark.parametrize(
    ("text", "wins", "total"),
    [
        ("7/8 wins", 7, 8),
        ("idea_wins=7/8", 7, 8),
        ("0/8 wins", 0, 8),
        ("wins 7 of 8", 7, 8),
        ("won on 6/8 seeds", 6, 8),
        ("7 out of 8 seeds won", 7, 8),
        ("idea_wins=7", 7, None),
    ],
)
def test_win_spellings(text: str, wins: int, total: int | None) -> None:
    [w] = prose.extract_wins(text)
    assert (w.wins, w.total) == (wins, total)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("delta_mean=-0.0087", -0.0087),
        ("mean delta of −0.0087", -0.0087),
        ("paired delta 0.0", 0.0),
        ("mean paired difference: 0.12", 0.12),
    ],
)
def test_delta_spellings(text: str, value: float) -> None:
    [d] = prose.extract_deltas(text)
    assert d.reported.value == pytest.approx(value)


@pytest.mark.parametrize("text", ["target delta=0.02", "expected mean delta 0.5", "delta=0.3", "mean delta 4%"])
def test_not_delta_claims(text: str) -> None:
    assert prose.extract_deltas(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "we raised lr from 0.001 to 0.006",
        "learning rate from 1e-3 to 6e-3",
        "from 8 to 16 seeds",
        "trained from 12 to 18 epochs",
        "accuracy from 91.2% to 92.3%",
        "the threshold moved from 0.1 to 0.2",
    ],
)
def test_from_to_skips_hyperparameters_and_percentages(text: str) -> None:
    assert prose.extract_from_to(text) == []


def test_from_to_in_a_clause_after_a_hyperparameter_clause() -> None:
    [ft] = prose.extract_from_to("Across 8 paired seeds, test MSE improved from 10.93094 to 10.92225.")
    assert ft.text == "from 10.93094 to 10.92225"


@pytest.mark.parametrize(
    ("written", "actual", "consistent"),
    [
        ("0.0156", 0.015625, True),  # rounds half up or to even: both accepted
        ("0.0157", 0.015625, False),
        ("10.93094", 10.930935978889465, True),
        ("10.9309", 10.930935978889465, True),
        ("10.9310", 10.930935978889465, False),
        ("-0.008685469627380371", -0.008685469627380371, True),
        ("-0.00868547", -0.008685469627380371, True),
        ("1.5e-3", 0.00154, True),
        ("1.5e-3", 0.00156, False),
        ("0.0", 0.04, True),
        ("0.0", 0.06, False),
    ],
)
def test_rounding_aware_comparison(written: str, actual: float, consistent: bool) -> None:
    reported = prose.parse_number(written)
    assert reported is not None
    assert reported.consistent_with(actual) is consistent


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False), st.integers(0, 8))
def test_any_rounded_value_is_consistent_with_its_source(value: float, decimals: int) -> None:
    reported = prose.parse_number(f"{value:.{decimals}f}")
    assert reported is not None and reported.consistent_with(value)


@pytest.mark.parametrize(
    ("text", "actual", "consistent"),
    [("p < 0.05", 0.0156, True), ("p < 0.05", 0.05, False), ("p ≤ 0.05", 0.05, True), ("p > 0.05", 0.2, True)],
)
def test_inequalities_hold_for_the_reported_value(text: str, actual: float, consistent: bool) -> None:
    [p] = prose.extract_p_values(text)
    assert p.consistent_with(actual) is consistent


def test_scanned_length_is_capped() -> None:
    text = "x" * 1000 + " p=0.2"
    assert prose.extract_claims(text, max_chars=1000).p_values == []
    assert len(prose.extract_claims(text, max_chars=2000).p_values) == 1


@pytest.mark.parametrize(
    "text",
    [
        "p" * 100_000,
        "p = " * 25_000,
        "1" * 100_000,
        "from 1 " * 15_000,
        "7/" * 50_000,
        "mean delta " * 10_000,
        ("p" + " " * 1000) * 100,
        "9." * 50_000,
        "1%" * 50_000,
        "-1%" * 33_000,
        "1% lower " * 11_000,
        "a 1% reduction in MSE " * 4_500,
        "improved by 1% " * 6_000,
        "reduced " * 12_000 + "by 1%",
        "1 - " * 25_000,
    ],
    ids=lambda text: repr(text[:12]),
)
def test_pathological_text_gives_bounded_results(text: str) -> None:
    claims = prose.extract_claims(text)
    # None of these texts states a p-value, wins, a delta, a from-to or a resample count; the only
    # repeated claim, a relative change, is capped: the bound on the work hostile text can cause.
    assert (claims.p_values, claims.wins, claims.deltas, claims.from_to) == ([], [], [], [])
    assert len(claims.relative_changes) <= prose.MAX_RELATIVE_CHANGES
    assert prose.extract_resample_counts(text) == []


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    claims = prose.extract_claims(text)
    for claim in claims.p_values + claims.wins + claims.deltas + claims.from_to + claims.relative_changes:
        assert text[claim.span[0] : claim.span[1]] == claim.text
    assert all(isinstance(n, int) for n in prose.extract_resample_counts(text))


def test_non_strings_have_no_claims() -> None:
    assert not prose.extract_claims(None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- p bounds in V406

# Seed 000 claims p=0.01475; the exact recomputed p is 0.015625.  A bound is
# consistent when either satisfies it.


@pytest.mark.parametrize(
    "sentence",
    [
        "paired permutation p < 0.05",
        "p < .05",
        "p<0.02",
        "p<.02",
        "p ≤ 0.05",
        "p≤.05",
        "p ≤ 0.0156",  # rounds to the recomputed p: a non-strict bound holds
        "p ≤ 0.01",  # 0.01475 rounds to 0.01 at two decimals (a strict "<" does not hold)
        "p < 0.015",  # the claimed p satisfies it
        "p > 0.01",
    ],
)
def test_v406_p_bounds_the_report_satisfies(sentence: str) -> None:
    answer = seed_answer()
    answer["verdict"] = sentence
    assert run_rule("V406", answer) == []


@pytest.mark.parametrize("sentence", ["p<0.01", "p<.001", "p < .01", "p ≤ 0.001", "p<0.0147", "p > 0.05"])
def test_v406_p_bounds_the_report_violates(sentence: str) -> None:
    answer = seed_answer()
    answer["verdict"] = sentence
    [f] = run_rule("V406", answer)
    assert f'"{sentence}"' in f.message and "0.01475" in f.message


# --------------------------------------------------------------------------- relative changes: extraction


@pytest.mark.parametrize(
    ("text", "quoted", "value", "direction"),
    [
        ("a 4.1% reduction in test MSE", "a 4.1% reduction", 4.1, "decrease"),
        ("improved by 2%", "improved by 2%", 2.0, "better"),
        ("MSE dropped 4.1%", "dropped 4.1%", 4.1, "decrease"),
        ("4.1% lower MSE", "4.1% lower", 4.1, "decrease"),
        ("reduced test loss by 0.08%", "reduced test loss by 0.08%", 0.08, "decrease"),
        ("a 2.3% improvement", "a 2.3% improvement", 2.3, "better"),
        ("accuracy increased by 1.5%", "increased by 1.5%", 1.5, "increase"),
        ("test MSE fell 0.08% overall", "fell 0.08%", 0.08, "decrease"),
        ("test accuracy rose 1.2%", "rose 1.2%", 1.2, "increase"),
        ("a 0.08% relative reduction in MSE", "a 0.08% relative reduction", 0.08, "decrease"),
        ("a reduction of 4.1% in MSE", "a reduction of 4.1%", 4.1, "decrease"),
        ("an improvement of 0.1% in test MSE", "an improvement of 0.1%", 0.1, "better"),
        ("test MSE was 0.08% lower than the baseline", "0.08% lower", 0.08, "decrease"),
        ("test MSE lower by 0.08%", "lower by 0.08%", 0.08, "decrease"),
        ("MSE was 2% worse", "2% worse", 2.0, "worse"),
        ("the idea degraded test MSE by 3%", "degraded test MSE by 3%", 3.0, "worse"),
        ("a 1.5% gain in accuracy", "a 1.5% gain", 1.5, "better"),
        ("4.1 percent lower MSE", "4.1 percent lower", 4.1, "decrease"),
        ("MSE improved only 0.08%", "improved only 0.08%", 0.08, "better"),
        ("The idea gave a 2.3% improvement over the baseline.", "a 2.3% improvement", 2.3, "better"),
        ("+0.5% higher accuracy", "+0.5% higher", 0.5, "increase"),
    ],
)
def test_relative_change_spellings(text: str, quoted: str, value: float, direction: str) -> None:
    [c] = prose.extract_relative_changes(text)
    assert (c.text, c.reported.value, c.direction) == (quoted, pytest.approx(value), direction)
    assert text[c.span[0] : c.span[1]] == c.text
    assert not c.approximate


def test_relative_change_in_the_seed_sentence() -> None:
    text = "Across 8 paired seeds, test MSE improved from 10.93094 to 10.92225 (a 0.079% reduction in test MSE), with p=0.01."
    claims = prose.extract_claims(text)
    [c] = claims.relative_changes
    assert (c.text, c.direction, c.metric_words) == ("a 0.079% reduction", "decrease", frozenset({"test", "mse"}))
    assert claims.from_to and claims.p_values  # the other claims are still read


@pytest.mark.parametrize("text", ["about 0.1% lower MSE", "a ~0.08% improvement", "improved MSE by roughly 0.1%"])
def test_approximate_relative_changes_get_a_full_unit(text: str) -> None:
    [c] = prose.extract_relative_changes(text)
    assert c.approximate and c.reported.half_unit == pytest.approx(2 * prose.parse_number(c.reported.text).half_unit)


@pytest.mark.parametrize(
    "text",
    [
        "the baseline's MSE was 0.08% higher",  # the baseline is the subject
        "the control arm was 0.08% worse",
        "a -0.08% reduction in MSE",  # a signed number
        "MSE dropped −0.08%",
        "Adam's MSE was 0.08% higher",  # an unknown subject may be the baseline
        "MSE was 0.08% higher than with clipping",  # compared with the idea
        "test MSE was 0.08% lower relative to the idea",
    ],
)
def test_relative_change_with_an_unclear_direction(text: str) -> None:
    [c] = prose.extract_relative_changes(text)
    assert c.direction is None


@pytest.mark.parametrize(
    "text",
    [
        "clip fraction 4.1% lower",
        "Clip fraction: 4.1% lower",
        "mean clip fraction dropped 30%",
        "mean tail above threshold dropped 30%",
        "accuracy 91.2%",
        "accuracy from 90.1% to 91.2%",
        "accuracy rose from 90.1% to 91.2%",
        "MDE of 0.043%, a 0.04% detectable effect",
        "mde_rel_pct=0.043% lower",
        "95% confidence interval",
        "a 95% CI that is 3% higher",
        "improved on 87.5% of seeds",
        "improved by less than 1%",
        "improved by up to 5%",
        "improved by at least 2%",
        "improved by more than 2%",
        "dropped to 4.1%",
        "a 3-4% reduction",
        "a 3–4% reduction",
        "p<5% lower",
        "kurtosis-calibrated clipping improved by 2%",  # the subject may be anything: not judged
        "staleness fell 30%",
        "Test MSE was unchanged, with staleness 30% lower",
        "4.1% lower staleness",
        "a 4.1% reduction in gradient norm",
        "a 30% reduction in loss spikes",
        "reduced training time by 12%",
        "training loss fell by 5%",
        "validation loss fell by 5%",
        "lowered the learning rate by 50%",
        "the idea's best sweep config had 0.11% lower MSE",
        "the MC error dropped 30% with more resamples",
        "MSE did not drop 4.1%",
        "no 4.1% reduction in MSE was seen",
        "we expected a 4% reduction in MSE",
        "a 4% reduction in MSE would be needed to detect it",
        "on seed 3 MSE fell 0.2%",
        "the median improvement was 0.2%",
        "improved in 7 of 8 seeds by 0.1%",
        "an improvement of the baseline of 2%",
        "the improvement is 0.08% of the baseline mean",
        "the reduction in MSE was 0.08%",
        "MSE improved (0.08%)",
        "relative change: 0.08% lower",
        "ошибка 4.1% lower",  # unknown words are never invisible
        "4.1 percentage points lower",
    ],
)
def test_not_relative_change_claims(text: str) -> None:
    assert prose.extract_relative_changes(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "test MSE was 0.08% lower than the baseline",
        "test MSE fell by 0.08% relative to the baseline mean",
        "test MSE fell by 0.08% over 8 paired seeds",
        "a 0.08% improvement over the baseline",
        "the idea reduced test MSE by 0.08%",
    ],
)
def test_relative_change_against_the_baseline_has_a_direction(text: str) -> None:
    [c] = prose.extract_relative_changes(text)
    assert c.direction is not None


def test_a_clause_per_conjunction() -> None:
    [c] = prose.extract_relative_changes("MSE fell 0.08% and gradient norm fell 20%")
    assert c.text == "fell 0.08%"


def test_metrics_key_is_context() -> None:
    assert prose.extract_relative_changes("4.1% lower", context="clip_fraction") == []
    assert prose.extract_relative_changes("4.1% lower", context="mechanism") == []
    assert len(prose.extract_relative_changes("4.1% lower", context="paired_comparison")) == 1


def test_relative_change_metric_names() -> None:
    [c] = prose.extract_relative_changes("accuracy increased by 1.5%")
    assert c.metric_direction == "higher" and c.may_be_percentage_points
    [c] = prose.extract_relative_changes("test MSE dropped 1.5%")
    assert c.metric_direction == "lower" and not c.may_be_percentage_points
    [c] = prose.extract_relative_changes("the idea gave a 1.5% improvement")
    assert c.metric_direction is None and c.may_be_percentage_points


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        (
            "the gradient tail above the threshold averaged 0.00137, confirming the mechanism prediction, "
            "a 4.1% reduction in test MSE.",
            "a 4.1% reduction",
        ),
        ("the clip fraction was 0.0017 and the tail 0.0014, a 4.1% reduction in MSE", "a 4.1% reduction"),
    ],
)
def test_a_clause_naming_the_metric_is_read_beside_other_quantities(text: str, quoted: str) -> None:
    """Issue 31 item 3: other quantities elsewhere in the sentence do not hide a claim about the metric."""
    [c] = prose.extract_relative_changes(text)
    assert c.text == quoted and c.reported.value == 4.1


@pytest.mark.parametrize(
    "text",
    [
        "the gradient tail above the threshold averaged 0.00137, a 4.1% reduction",  # names no metric
        "the gradient tail above the threshold averaged 0.00137, a 4.1% reduction in tail mass",
        "test MSE held steady, the clip fraction 4.1% lower",
    ],
)
def test_a_change_of_another_quantity_beside_the_metric_is_not_read(text: str) -> None:
    assert prose.extract_relative_changes(text) == []


def test_relative_changes_examined_are_capped() -> None:
    text = "a 1% reduction in MSE; " * (prose.MAX_RELATIVE_CHANGES + 10)
    assert len(prose.extract_relative_changes(text)) == prose.MAX_RELATIVE_CHANGES


# --------------------------------------------------------------------------- relative changes in V406

# Seed 000: test MSE 10.930936 -> 10.922251 (lower is better), delta_mean -0.0086855:
# -0.07946% of the baseline mean, -0.07952% of the idea mean.


def _v406(sentence: str, which: str = "000", answer: dict | None = None) -> list:
    answer = seed_answer(which) if answer is None else answer
    answer["verdict"] = sentence
    return run_rule("V406", answer)


@pytest.mark.parametrize(
    "sentence",
    [
        "a 0.079% reduction in test MSE",
        "a 0.08% reduction in test MSE",
        "a 0.0795% reduction in test MSE",
        "a 0.1% reduction in test MSE",
        "test MSE improved by 0.08%",
        "test MSE dropped 0.079%",
        "0.08% lower MSE than the baseline",
        "reduced test MSE by 0.0795%",
        "the idea gave a 0.08% improvement",
        "improved by 0.07952%",  # over the idea mean
        "improved by 0.07946%",  # over the baseline mean
        "about 0.1% lower MSE",
        "test MSE fell by 0%",
        "the baseline's MSE was 0.08% higher",  # the direction is not judged, the magnitude is right
        "MSE was 0.08% higher than with clipping",
        "accuracy improved by 4.1%",  # another metric than the report's (lower is better): not judged
        "clip fraction 4.1% lower",
        "the mean tail dropped 30%",
        "accuracy 91.2% from 90.1% to 91.2%",
        "MDE 0.043%, a 4.1% detectable effect",
        "improved by less than 5%",
        "a 4.1% reduction in gradient norm",
        "training loss fell by 4.1%",
    ],
)
def test_v406_relative_changes_the_report_supports(sentence: str) -> None:
    assert _v406(sentence) == []


@pytest.mark.parametrize(
    ("sentence", "quoted"),
    [
        ("a 4.1% reduction in test MSE", "a 4.1% reduction"),
        ("improved by 2%", "improved by 2%"),
        ("MSE dropped 4.1%", "dropped 4.1%"),
        ("4.1% lower MSE", "4.1% lower"),
        ("reduced test loss by 0.8%", "reduced test loss by 0.8%"),
        ("a 2.3% improvement", "a 2.3% improvement"),
        ("a 0.07% reduction in test MSE", "a 0.07% reduction"),
        ("a reduction of 0.8% in MSE", "a reduction of 0.8%"),
    ],
)
def test_v406_relative_change_magnitude(sentence: str, quoted: str) -> None:
    [f] = _v406(sentence)
    assert f.pointer == "/verdict" and f.claimed == quoted
    assert f'the prose says "{quoted}" but the idea changes the baseline mean by -0.0795%' in f.message
    assert "(delta_mean -0.00869 of 10.93)" in f.message
    assert f.recomputed == pytest.approx(-0.07946, abs=1e-5)


@pytest.mark.parametrize(
    ("sentence", "quoted"),
    [
        ("a 0.079% increase in test MSE", "a 0.079% increase"),
        ("test MSE rose 0.08%", "rose 0.08%"),
        ("test MSE worsened by 0.08%", "worsened by 0.08%"),
        ("0.08% higher MSE", "0.08% higher"),
        ("MSE was 0.08% worse", "0.08% worse"),
        ("a 4.1% increase in test MSE", "a 4.1% increase"),  # both wrong: the direction is reported
    ],
)
def test_v406_relative_change_direction(sentence: str, quoted: str) -> None:
    [f] = _v406(sentence)
    assert f.claimed == quoted
    assert f'the prose says "{quoted}" but the idea lowers the metric (lower is better)' in f.message


def test_v406_relative_change_in_the_metrics() -> None:
    answer = seed_answer()
    answer["metrics"]["paired_comparison"] += " A 4.1% reduction in test MSE."
    [f] = run_rule("V406", answer)
    assert f.pointer == "/metrics/paired_comparison"
    answer = seed_answer()
    answer["metrics"]["clip_fraction"] = "4.1% lower"  # the key says what it is about
    assert run_rule("V406", answer) == []


def _accuracy_answer(scale: float) -> dict:
    """Seed 000 turned into an accuracy (higher is better) around 0.90 * ``scale``, idea +0.011 * ``scale``."""
    answer = seed_answer()
    report = answer["bench_report"]
    base = [round((0.90 + 0.002 * k) * scale, 6) for k in range(8)]
    idea = [round(b + 0.011 * scale, 6) for b in base]
    report["metric_direction"] = "higher is better"
    report["baseline"]["full"].update(per_seed=base, mean=sum(base) / 8)
    report["idea"].update(per_seed=idea, mean=sum(idea) / 8)
    report["comparison"].update(delta_mean=0.011 * scale, per_seed_diffs=[0.011 * scale] * 8, idea_wins=8)
    report["comparison"].update(p_value=0.0078125)
    answer["metrics"] = {}
    return answer


@pytest.mark.parametrize("scale", [1.0, 100.0])
@pytest.mark.parametrize(
    ("sentence", "fires"),
    [
        ("accuracy increased by 1.1%", False),  # percentage points
        ("accuracy increased by 1.2%", False),  # relative: 0.011 / 0.907
        ("a 1.2% improvement in accuracy", False),
        ("the idea improved by 1.1%", False),
        ("accuracy increased by 2.5%", True),
        ("accuracy decreased by 1.1%", True),  # the wrong direction
        ("a 1.1% degradation in accuracy", True),
        ("test error fell by 1.1%", False),  # an error-like name over an accuracy report: not judged
    ],
)
def test_v406_accuracy_like_metrics(scale: float, sentence: str, fires: bool) -> None:
    assert bool(_v406(sentence, answer=_accuracy_answer(scale))) is fires


def test_v406_percentage_points_are_not_read_for_mse() -> None:
    # |delta_mean| = 0.0087 would be "0.0087 points"; MSE is never written in percent.
    assert _v406("test MSE dropped 0.0087%")
    assert _v406("the idea gave a 0.0087% improvement") == []  # no metric named: maybe points


@settings(max_examples=150, deadline=None)
@given(
    st.floats(0.5, 200.0),
    st.floats(-0.2, 0.2).filter(lambda x: abs(x) > 1e-4),
    st.integers(0, 4),
    st.sampled_from(
        [
            "test MSE {verb} by {pct}",
            "a {pct} {noun} in test MSE",
            "{pct} {adjective} MSE than the baseline",
            "the idea gave a {pct} {noun}",
            "MSE {verb} {pct} across 8 paired seeds",
        ]
    ),
    st.booleans(),
)
def test_v406_an_honest_relative_change_is_silent(
    level: float, shift: float, decimals: int, template: str, lower_is_better: bool
) -> None:
    answer = seed_answer()
    report = answer["bench_report"]
    base = [v / 10.93 * level for v in report["baseline"]["full"]["per_seed"]]
    idea = [b * (1 + shift) + 0.001 * level * k for k, b in enumerate(base)]
    diffs = [i - b for i, b in zip(idea, base)]
    report["metric_direction"] = "lower is better" if lower_is_better else "higher is better"
    report["baseline"]["full"].update(per_seed=base, mean=sum(base) / 8)
    report["idea"].update(per_seed=idea, mean=sum(idea) / 8)
    report["comparison"].update(delta_mean=sum(diffs) / 8, per_seed_diffs=diffs)
    answer["metrics"] = {}
    delta, mean = sum(diffs) / 8, sum(base) / 8
    pct = f"{abs(100 * delta / mean):.{decimals}f}%"
    down = delta < 0
    verb = "dropped" if down else "rose"
    noun = "reduction" if down else "increase"
    adjective = "lower" if down else "higher"
    sentence = template.format(verb=verb, noun=noun, adjective=adjective, pct=pct)
    assert _v406(sentence, answer=answer) == [], sentence


@pytest.mark.parametrize("path", sorted((FIXTURES / "answers").glob("*.txt")), ids=lambda p: p.name)
def test_honest_seed_answers_have_no_v406(path) -> None:
    assert "V406" not in codes(audit_path(str(path), AuditOptions()))


# --------------------------------------------------------------------------- stated resample counts


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("1,000 sign flips", [1000]),
        ("10000 random sign flips", [10000]),
        ("n_resamples=20000", [20000]),
        ("20,000 permutations", [20000]),
        ("B = 5000 resamples", [5000]),
        ("with 5k permutations", [5000]),
        ("using 100000 Monte-Carlo resamples", [100000]),
        ("resamples: 2000", [2000]),
        ("9999 resamples", [9999]),
        ("10,000 Monte Carlo draws", [10000]),
        ("10000 MC samples", [10000]),
        ("10000 random sign-flip draws", [10000]),
        ("10000 paired sign-flip resamples", [10000]),
        ("a 10,000-permutation test", [10000]),
        ("10k-resample Monte-Carlo test", [10000]),
        ("resampled 5000 times", [5000]),
        ("sign-flip test (B=10000)", [10000]),
        ("permutation test with B = 5000", [5000]),
        ("number of permutations: 10,000", [10000]),
        ("num_permutations = 5000", [5000]),
        ("N_RESAMPLES = 50000", [50000]),
        ("n_permutations=1e4", [10000]),
        ("10^4 random sign flips", [10000]),
        ("20_000 permutations", [20000]),
        ("1.5k resamples", [1500]),
        ("2M permutations", [2000000]),
        ("10 shuffles", [10]),
        ("n_resamples=20000; reported with 10000 sign flips and 20,000 permutations", [20000, 10000]),
        ("instead of exhaustive enumeration, we used 10000 random sign flips", [10000]),
    ],
)
def test_resample_count_spellings(text: str, counts: list[int]) -> None:
    assert prose.extract_resample_counts(text) == counts


@pytest.mark.parametrize(
    "text",
    [
        "18 epochs",
        "8 seeds",
        "seed=10000",
        "1000 steps",
        "10000 training steps",
        "400-sample Friedman#1",
        "10000 samples",
        "n_samples=400",
        "all 256 sign patterns",
        "256 sign patterns",
        "all 256 sign flips",
        "every one of the 256 sign flips",
        "each of the 256 permutations",
        "the full 256 permutations",
        "2^8 = 256 sign flips",
        "2**8 = 256 permutations",
        "all 2^8 = 256 sign-flip permutations",
        "exact enumeration of 256 sign flips",
        "5 resamples",
        "1e9 permutations",
        "1,000,000,000 permutations",
        "2.5 permutations",
        "1000 bootstrap resamples",
        "B=10000",
        "batch size B=64 for the permutation test",
        "p=0.0001 from 10000",
        "lr=0.006, 18 epochs: test MSE mean 10.93",
    ],
)
def test_not_resample_counts(text: str) -> None:
    assert prose.extract_resample_counts(text) == []


def test_resample_counts_in_the_seeds_and_caps() -> None:
    for which in ("000", "001"):
        answer = seed_answer(which)
        assert prose.extract_resample_counts(answer["verdict"] + " " + str(answer["metrics"])) == []
    text = "x" * 1000 + " 10000 sign flips"
    assert prose.extract_resample_counts(text, max_chars=1000) == []
    assert prose.extract_resample_counts(text, max_chars=2000) == [10000]
    assert prose.extract_resample_counts(None) == []  # type: ignore[arg-type]


# --------------------------------------------------------------------------- scanning on folded text

# Every pattern of the package that runs on fold(text) in place of the same pattern with re.IGNORECASE.
_FOLDED_PATTERNS = [
    claims._P_VALUE,
    claims._FRACTION_TAIL,
    claims._FRACTION_WINS,
    claims._NAMED_TAIL,
    claims._NAMED_WINS,
    claims._WINS_OF,
    claims._OF_TAIL,
    claims._OF_WINS,
    claims._DELTA,
    claims._FROM_TO,
    claims._THRESHOLD_WORDS,
    claims._PARAMETER_WORDS,
    claims._HYPERPARAMETER_WORDS,
    numbers.SENTENCE_BREAK,
    numbers.NARROW_BREAK,
    relative._PERCENT,
    relative._CHANGE_STEM,
    relative._NOT_A_CHANGE_AFTER,
    resamples._COUNT_BEFORE_NOUN,
    resamples._HYPHENATED_SINGULAR,
    *(pattern for _, pattern in resamples._RESAMPLE_COUNTS),
    resamples._RESAMPLING_WORD,
    resamples._BATCH_WORD,
    resamples._EXACT_BEFORE,
    resamples._EXACT_CLAUSE,
]


def test_fold_stands_for_ignorecase() -> None:
    """Over every code point: fold keeps the length and every character class, and a folded character equals a
    pattern's literal exactly when re.IGNORECASE equates the two."""
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    folded = fold(every)
    assert len(folded) == len(every)
    changed = [i for i, (a, b) in enumerate(zip(every, folded, strict=True)) if a != b]
    for pattern in (re.compile(r"\w"), re.compile(r"\d"), re.compile(r"\s")):
        assert [bool(pattern.match(every[i])) for i in changed] == [bool(pattern.match(folded[i])) for i in changed]
    # The patterns' letters are small: a capital stands only beside its small letter in a class ("[eE]").
    non_ascii = {ch for pattern in _FOLDED_PATTERNS for ch in pattern.pattern if not ch.isascii()}
    for literal in sorted(set(string.ascii_lowercase) | non_ascii):
        equated = [m.start() for m in re.finditer(re.escape(literal), every, re.IGNORECASE)]
        assert equated == [m.start() for m in re.finditer(re.escape(literal), folded)], literal


def _case_variants(text: str) -> list[str]:
    return [text, text.upper(), text.title(), text.replace("s", "ſ").replace("i", "ı").replace("k", "\u212a")]


_SAMPLES = [
    "p=0.01475 and 7/8 wins; idea_wins = 3/8, won on 6 of 8 seeds, 5 out of 8 paired seeds won",
    "delta_mean=-0.0087, mean paired difference of 1.5E-3 (target delta=0.02), paired diff 0.1",
    "improved from 10.93 to 10.92 (lr from 0.001 to 0.006) if p < alpha; a 4.1% reduction in test MSE",
    "n_resamples=20000, 5K permutations, 2M sign-flips, B=10000 (sign flips), resampled 500 times, "
    "a 10,000-permutation test, all 256 sign flips, exhaustive enumeration, 1e4 Monte Carlo draws",
    "MSE dropped 4.1 percent, about 3% lower loss, 87.5% of seeds, 4%-5%, not a batch; and yet while",
]


@pytest.mark.parametrize("text", [variant for sample in _SAMPLES for variant in _case_variants(sample)])
def test_lower_case_patterns_match_folded_text_like_ignorecase(text: str) -> None:
    folded = fold(text)
    for pattern in _FOLDED_PATTERNS:
        ignorecase = re.compile(pattern.pattern, re.IGNORECASE)
        assert [m.span() for m in pattern.finditer(folded)] == [m.span() for m in ignorecase.finditer(text)]


# Claims, their words alone, and what sits around them.
_PIECES = [
    *("7/8 wins", "7 / 8 seeds won", "7 of 8 wins", "7 out of 8 paired seeds won", "wins 7 of 8", "won on 7/8"),
    *(
        "idea_wins=7/8",
        "idea wins: 7",
        "WINS = 7",
        "delta_mean=0.5",
        "mean paired difference of 0.5",
        "paired diff 0.5",
    ),
    *("mean_delta -1", "target delta_mean=1", "7", "/", "of", "win", "won", "idea", "delta", "diff", "mean", "paired"),
    *(" ", "  ", "_", "=", ":", "x", "0.5", "%", "-", ". "),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=20).map("".join))
def test_words_put_every_win_and_delta_claim(text: str) -> None:
    """Trying each spelling only where a word it holds puts it finds what searching all of the text finds."""
    spellings = (claims._FRACTION_WINS, claims._NAMED_WINS, claims._WINS_OF, claims._OF_WINS)
    matches = [m for p in spellings for m in re.compile(p.pattern, re.IGNORECASE).finditer(text)]
    expected, end = [], 0
    for m in sorted(matches, key=lambda m: (m.start(), -m.end())):
        if m.start() >= end:  # not inside a longer match of the same words
            expected.append((m.group(0), int(m["w"]), int(m["n"]) if m["n"] else None))
            end = m.end()
    assert [(w.text, w.wins, w.total) for w in prose.extract_wins(text)] == expected

    def before(m: re.Match[str]) -> str:
        return fold(text)[max(0, m.start() - 30) : m.start()]

    deltas = re.compile(claims._DELTA.pattern, re.IGNORECASE).finditer(text)
    quoted = [m for m in deltas if claims._number(m, text) and not claims._PARAMETER_WORDS.search(before(m))]
    assert [d.span for d in prose.extract_deltas(text)] == [m.span() for m in quoted]


def test_matches_at_is_finditer_at_the_given_starts() -> None:
    pattern = re.compile(r"ab+|b")
    text = "abbb b ab"
    found = matches_at(pattern, text, [0, 1, 2, 5, 7, 8])
    assert [m.span() for m in found] == [m.span() for m in pattern.finditer(text)]


def test_metrics_key_words_for_flat_and_nested_paths() -> None:
    from auditor.rules.verdict_prose import _metrics_key

    assert _metrics_key(("verdict",)) == ""
    assert _metrics_key(("metrics", "clip/fraction")) == "clip fraction"  # the flat-dict shortcut
    assert _metrics_key(("metrics", "mechanism", 0, "tail/mass")) == "mechanism 0 tail mass"
    assert _metrics_key(("metrics", 3)) == "3"


# --------------------------------------------------------------------------- V406 advice


def test_v406_advises_the_recomputed_value_not_a_wrong_report() -> None:
    """Issue 31 item 7: the JSON p (0.001) is wrong; the prose is told the recomputed p, never the JSON's."""
    answer = seed_answer()
    answer["bench_report"]["comparison"]["p_value"] = 0.001
    answer["verdict"] = answer["verdict"].replace("p=0.01475", "p=0.03")
    del answer["metrics"]["paired_comparison"]
    [f] = run_rule("V406", answer)
    assert f.recomputed == 0.015625
    assert "the recomputed p is 0.015625 (comparison.p_value: 0.001)" in f.message
    assert f.message.endswith("make the prose quote the recomputed value")


def test_v406_accepts_correct_prose_beside_a_wrong_report() -> None:
    answer = seed_answer()
    answer["bench_report"]["comparison"]["p_value"] = 0.001  # A307's to report
    answer["verdict"] = answer["verdict"].replace("p=0.01475", "p=0.0156")
    del answer["metrics"]["paired_comparison"]
    assert run_rule("V406", answer) == []


def test_v406_relative_change_message_quotes_the_recomputed_change() -> None:
    answer = seed_answer()
    answer["bench_report"]["comparison"]["delta_mean"] = -0.5  # a wrong report
    answer["verdict"] += " This is a 4.1% reduction in test MSE."
    [f] = [f for f in run_rule("V406", answer) if "4.1%" in f.message]
    assert "-0.0795%" in f.message and f.recomputed == pytest.approx(-0.0794577, rel=1e-4)


# p-values, from-to pairs and what makes them thresholds or hyperparameter changes, among other claims.
_CLAIM_PIECES = [
    *("p=0.01475", "p < 0.05", "p-value of 0.03", "p ≤ .001", "P = 1.0", "p=1.5e-3", "p=5%", "criterion", "if"),
    *("from 10.93 to 10.92", "from 0.001 to 0.006", "from 90% to 91%", "lr", "epochs", "MSE", "from", "to"),
    *("7/8 wins", "delta_mean=0.5", "mean paired diff -0.25", "target", "expected", "mean", "delta"),
    *("a 4.1% reduction in test MSE", "improved by 2%", "and", "with"),
    *(" ", "  ", ", ", ". ", "; ", "(", ")", "\n", "0.5", "-"),
]


def _omit_some(claim: prose.PValueClaim | prose.DeltaClaim | prose.FromToClaim) -> bool:
    """An arbitrary test that lets some claims pass and not others."""
    return len(claim.text) % 2 == 0


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_CLAIM_PIECES), max_size=24).map("".join))
def test_omitted_claims_are_only_left_out(text: str) -> None:
    """``omit`` drops the p-value, delta and from-to claims it holds for, and changes nothing else."""
    everything = prose.extract_claims(text)
    fewer = prose.extract_claims(text, omit=_omit_some)
    assert fewer.p_values == [p for p in everything.p_values if not _omit_some(p)]
    assert fewer.deltas == [d for d in everything.deltas if not _omit_some(d)]
    assert fewer.from_to == [ft for ft in everything.from_to if not _omit_some(ft)]
    assert (fewer.wins, fewer.relative_changes) == (everything.wins, everything.relative_changes)


@given(st.integers(0, 40))
def test_half_units_of_plain_decimals_are_the_formula(decimals: int) -> None:
    reported = prose.parse_number("1." + "5" * decimals if decimals else "1")
    assert reported is not None and reported.half_unit == 0.5 * 10.0**-decimals


@pytest.mark.parametrize(
    ("text", "randomized"),
    [
        ("p from a Monte-Carlo sign-flip test.", True),
        ("The p-value uses random sign flips.", True),
        ("the p-value is a Monte-Carlo estimate", True),
        ("95% CI from 10,000 bootstrap resamples", False),  # words about something else widen nothing
        ("We used MC dropout.", False),
        ("seeds were randomly drawn", False),
        ("inputs resampled at 16kHz", False),
        ("Exact test (no Monte-Carlo approximation), p=0.0156.", False),
        ("exact sign-flip test over all 256 patterns; no MC needed", False),
        ("paired permutation p=0.01475", False),
    ],
)
def test_only_a_clause_about_the_p_says_the_test_was_randomized(text: str, randomized: bool) -> None:
    assert prose.says_randomized([text], 10_000) is randomized


def test_an_unrelated_resampling_word_does_not_widen_the_reading_of_a_p() -> None:
    """A bootstrap CI in the protocol note does not make a one-digit, unstated p a Monte-Carlo estimate."""
    answer = seed_answer()
    answer["bench_report"]["comparison"]["p_value"] = 0.005
    answer["bench_report"]["protocol_note"] += " 95% CI from bootstrap resamples."
    assert [f.severity.value for f in run_rule("A307", answer)] == ["error"]
