"""V4xx: each rule fires on a planted defect and stays silent on the seeds and near misses."""

from __future__ import annotations

import pytest
from conftest import seed_answer
from hypothesis import given, settings
from hypothesis import strategies as st
from rule_context import run_rule

from auditor.findings import Severity, get_rule
from auditor.rules.verdict_mechanism import mechanism_pairs

V_CODES = [f"V40{k}" for k in range(1, 8)]


def _report(answer: dict) -> dict:
    return answer["bench_report"]


def _comparison(answer: dict) -> dict:
    return answer["bench_report"]["comparison"]


@pytest.mark.parametrize("which", ["000", "001"])
@pytest.mark.parametrize("code", V_CODES)
def test_silent_on_the_seeds(code: str, which: str) -> None:
    assert run_rule(code, seed_answer(which)) == []


def test_severities() -> None:
    assert get_rule("V407").severity is Severity.WARNING
    assert all(get_rule(code).severity is Severity.ERROR for code in V_CODES[:-1])


@pytest.mark.parametrize("code", ["V403", "V404", "V405", "V406"])
def test_answer_level_rules_skip_a_bare_report(code: str) -> None:
    report = _report(seed_answer())
    report["comparison"]["verdict"] = "no measurable effect"
    assert run_rule(code, report) == []


def _null_answer() -> dict:
    """Seed answer 001 with its idea arm moved off the baseline (no longer D501): still no effect."""
    answer = seed_answer("001")
    full, c = _report(answer)["idea"]["full"], _comparison(answer)
    offsets = [(-1) ** k * 1e-3 for k in range(len(full["per_seed"]))]  # differences cancel: p = 1
    full["per_seed"] = [v + d for v, d in zip(full["per_seed"], offsets)]
    c["per_seed_diffs"], c["idea_wins"] = offsets, 4
    return answer


# --- V401 ----------------------------------------------------------------------


def test_v401_claims_significance_the_data_do_not_show() -> None:
    answer = _null_answer()
    _comparison(answer)["verdict"] = "idea significantly better"
    [f] = run_rule("V401", answer)
    assert f.pointer == "/bench_report/comparison/verdict"
    assert f.recomputed == "no measurable effect"


def test_v401_hides_a_significant_improvement() -> None:
    answer = seed_answer()
    _comparison(answer)["verdict"] = "no significant difference"
    [f] = run_rule("V401", answer)
    assert f.recomputed == "idea better (significant)"


def test_v401_unrecognised_verdict() -> None:
    answer = seed_answer()
    _comparison(answer)["verdict"] = "see above"
    [f] = run_rule("V401", answer)
    assert "not recognised" in f.message


@pytest.mark.parametrize("text", ["Idea better (significant).", "significant improvement", "idea_better_significant"])
def test_v401_accepts_other_wordings(text: str) -> None:
    answer = seed_answer()
    _comparison(answer)["verdict"] = text
    assert run_rule("V401", answer) == []


def test_v401_follows_alpha() -> None:
    assert run_rule("V401", seed_answer(), alpha=0.01) != []


# --- V402 / V403 / V404 / V405 ------------------------------------------------------


def test_v402_system_worked_without_a_significant_improvement() -> None:
    answer = _null_answer()
    _comparison(answer)["system_worked"] = True
    [f] = run_rule("V402", answer)
    assert f.pointer == "/bench_report/comparison/system_worked"
    assert (f.claimed, f.recomputed) == (True, False)


def test_v402_leaves_a_flag_that_follows_a_wrong_verdict_to_v401() -> None:
    answer = _null_answer()
    c = _comparison(answer)
    c["verdict"], c["system_worked"] = "idea better (significant)", True
    assert run_rule("V402", answer) == []  # V401 reports the verdict itself


def test_v402_advice_follows_the_statistics_not_a_wrong_verdict() -> None:
    """Issue 11 item 4: the advice never contradicts V401's "the verdict should be ..."."""
    answer = _null_answer()  # recomputed: no measurable effect
    c = _comparison(answer)
    c["verdict"], c["system_worked"] = "idea better (significant)", False
    assert run_rule("V402", answer) == []  # false is right: it once advised true, the wrong verdict's flag
    c["verdict"], c["system_worked"] = "idea worse (significant)", True
    [f] = run_rule("V402", answer)
    assert (f.claimed, f.recomputed) == (True, False)
    assert 'the recomputed verdict is "no measurable effect"' in f.message


def test_v402_falls_back_to_the_recomputed_verdict() -> None:
    answer = seed_answer()
    c = _comparison(answer)
    c["verdict"], c["system_worked"] = "see above", False
    [f] = run_rule("V402", answer)
    assert "recomputed verdict" in f.message


def test_v403_names_the_field_that_contradicts_the_comparison() -> None:
    answer = seed_answer()  # idea better (significant): worked true, system_verdict "worked"
    answer["system_verdict"] = "failed"
    [f] = run_rule("V403", answer)
    assert (f.pointer, f.claimed, f.recomputed) == ("/system_verdict", "failed", "worked")
    answer["system_verdict"], answer["worked"] = "worked", False
    [f] = run_rule("V403", answer)
    assert (f.pointer, f.claimed, f.recomputed) == ("/worked", False, True)
    answer["worked"], answer["system_verdict"] = True, "pending"  # other words are not judged
    assert run_rule("V403", answer) == []


def test_v403_worked_beside_an_honest_significant_degradation() -> None:
    """Issue 31 item 2: the comparison says "hurts"; worked/system_verdict say it worked."""
    answer = seed_answer()
    _report(answer)["metric_direction"] = "higher is better"  # the same numbers: idea significantly worse
    c = _comparison(answer)
    c["verdict"], c["system_worked"] = "idea worse (significant)", False
    answer["practical_verdict"] = "hurts"
    assert run_rule("V401", answer) == []  # the comparison itself is honest
    findings = run_rule("V403", answer)
    assert [(f.pointer, f.recomputed) for f in findings] == [("/worked", False), ("/system_verdict", "failed")]
    assert all(f.severity is Severity.ERROR for f in findings)
    answer["worked"], answer["system_verdict"] = False, "failed"  # the honest twin
    assert run_rule("V403", answer) == []


def test_v403_leaves_fields_that_follow_a_wrong_verdict_to_v401() -> None:
    answer = _null_answer()  # recomputed: no measurable effect
    _comparison(answer)["verdict"] = "idea better (significant)"
    answer["worked"], answer["system_verdict"] = True, "worked"
    assert run_rule("V403", answer) == []
    assert run_rule("V401", answer) != []


def test_v404_practical_verdict() -> None:
    answer = _null_answer()
    answer["practical_verdict"] = "helps"
    [f] = run_rule("V404", answer)
    assert f.pointer == "/practical_verdict"
    assert f.recomputed == "no_effect"


@pytest.mark.parametrize(("practical", "advice"), [("no_effect", None), ("hurts", "no_effect"), ("helps", None)])
def test_v404_advice_follows_the_statistics_not_a_wrong_verdict(practical: str, advice: str | None) -> None:
    answer = _null_answer()  # recomputed: no measurable effect
    _comparison(answer)["verdict"] = "idea better (significant)"
    answer["practical_verdict"] = practical
    assert [f.recomputed for f in run_rule("V404", answer)] == ([advice] if advice else [])


def test_v404_unknown_practical_word_is_not_judged() -> None:
    answer = _null_answer()
    answer["practical_verdict"] = "mixed"
    assert run_rule("V404", answer) == []


@pytest.mark.parametrize(("ok", "fires"), [(0, True), (False, True), (1, False), (True, False), (1.0, False)])
def test_v405_mechanism_ok(ok, fires: bool) -> None:
    answer = seed_answer()
    answer["mechanism_ok"] = ok
    findings = run_rule("V405", answer)
    assert bool(findings) is fires
    if fires:
        assert findings[0].pointer == "/mechanism_ok"


def test_a_mechanism_ok_of_2_never_reaches_v405() -> None:
    from auditor.answer.schema import validate

    answer = seed_answer()
    answer["mechanism_ok"] = 2
    assert [(f.rule, f.pointer) for f in validate(answer)] == [("S201", "/mechanism_ok")]


# --- V406 ------------------------------------------------------------------------


def test_v406_p_in_the_metrics_contradicts_the_report() -> None:
    answer = seed_answer()
    answer["metrics"]["paired_comparison"] = "delta_mean=-0.008685469627380371, p_value=0.001, idea_wins=7/8."
    [f] = run_rule("V406", answer)
    assert f.pointer == "/metrics/paired_comparison"
    assert '"p_value=0.001"' in f.message and "0.01475" in f.message


def test_v406_wins_and_totals() -> None:
    answer = seed_answer()
    answer["verdict"] = answer["verdict"].replace("7/8 wins", "8/8 wins")
    [f] = run_rule("V406", answer)
    assert f.pointer == "/verdict" and "idea_wins is 7" in f.message
    answer["verdict"] = answer["verdict"].replace("8/8 wins", "7/9 wins")
    [f] = run_rule("V406", answer)
    assert "n_pairs is 8" in f.message


def test_v406_delta_and_from_to() -> None:
    answer = seed_answer()
    answer["metrics"]["paired_comparison"] = "delta_mean=-0.0187"
    answer["verdict"] = answer["verdict"].replace("to 10.92225", "to 10.82225")
    pointers = sorted(f.pointer for f in run_rule("V406", answer))
    assert pointers == ["/metrics/paired_comparison", "/verdict"]


@pytest.mark.parametrize(
    "sentence",
    [
        "p=0.0148 and 7/8 wins",  # rounded to 4 decimals
        "p=0.015625 (exact)",  # the recomputed p
        "p < 0.05 with 7 of 8 wins",
        "mean delta -0.0087",
        "MSE went from 10.931 to 10.922",
        "lr went from 0.001 to 0.006",
        "target delta=0.5",
    ],
)
def test_v406_near_misses_are_consistent(sentence: str) -> None:
    answer = seed_answer()
    answer["verdict"] = sentence
    assert run_rule("V406", answer) == []


def test_v406_nested_metrics_and_prose_cap() -> None:
    answer = seed_answer()
    answer["metrics"]["nested"] = {"runs": ["fine", "p=0.5"]}
    [f] = run_rule("V406", answer)
    assert f.pointer == "/metrics/nested/runs/1"
    assert run_rule("V406", answer, max_prose_chars=200) == []


# --- V407 ------------------------------------------------------------------------


def test_v407_confirmed_far_from_target() -> None:
    answer = seed_answer()
    _report(answer)["mechanism_signature"]["target_mean_tail_above_tau"] = 0.02
    [f] = run_rule("V407", answer)
    assert f.severity is Severity.WARNING
    assert f.pointer == "/bench_report/mechanism_signature/observed_mean_tail_above_tau"


def test_v407_silent_when_not_confirmed_or_close() -> None:
    answer = seed_answer()
    signature = _report(answer)["mechanism_signature"]
    signature["target_mean_tail_above_tau"] = 0.002  # 1.46x away
    assert run_rule("V407", answer) == []
    signature["target_mean_tail_above_tau"] = 0.02
    signature["confirmed"] = False
    assert run_rule("V407", answer) == []


def test_v407_factor_is_configurable() -> None:
    answer = seed_answer()
    _report(answer)["mechanism_signature"]["target_mean_tail_above_tau"] = 0.002
    assert run_rule("V407", answer, mechanism_factor=1.2) != []


@pytest.mark.parametrize(
    ("signature", "pairs"),
    [
        ({"target_delta": 0.02, "observed_mean_tail_above_tau": 0.001}, []),
        ({"target_tail": 0.02, "observed_mean_tail": 0.001}, [("target_tail", "observed_mean_tail")]),
        ({"expected_depth": 1, "measured_depth": 3}, [("expected_depth", "measured_depth")]),
        ({"depth_predicted": 1, "depth_actual": 3}, [("depth_predicted", "depth_actual")]),
        ({"target_x": "small", "observed_x": 3}, []),
        ({"target_x": True, "observed_x": 3}, []),
        ({"target_tail": 1, "observed_entail": 3}, []),
    ],
)
def test_v407_pairs_keys_by_stem(signature: dict, pairs: list) -> None:
    assert mechanism_pairs(signature) == pairs


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["target", "Expected", "PREDICTED", "observed", "Measured", "actual", "tail", "x", "\u0130", "_", ""]
        ),
        max_size=5,
    ).map("_".join)
)
def test_v407_stems_keys_as_the_affix_loop_does(key: str) -> None:
    from auditor.rules.verdict_mechanism import _OBSERVED_WORDS, _TARGET_WORDS, _stem

    for marks in (_TARGET_WORDS, _OBSERVED_WORDS):
        k, stem = key.lower(), None
        for prefix, suffix in marks.affixes:  # the definition, tried on every key
            if k.startswith(prefix) and len(k) > len(prefix):
                stem = k[len(prefix) :]
                break
            if k.endswith(suffix) and len(k) > len(suffix):
                stem = k[: -len(suffix)]
                break
        assert _stem(key, marks) == stem


@pytest.mark.parametrize(
    ("target", "observed", "fires"),
    [(0.02, -0.02, True), (0.0, 0.5, False), (0.0, 0.0, False), (-1.0, -3.0, True), (-1.0, -1.5, False)],
)
def test_v407_zero_and_sign(target: float, observed: float, fires: bool) -> None:
    answer = seed_answer()
    _report(answer)["mechanism_signature"].update(target_gap=target, observed_gap=observed)
    assert bool(run_rule("V407", answer)) is fires


def test_v401_randomized_p_near_alpha_accepts_either_verdict() -> None:
    answer = seed_answer()
    _comparison(answer)["verdict"] = "no measurable effect"
    # Exact p = 0.015625 < alpha = 0.016: the null verdict is a decision error ...
    assert run_rule("V401", answer, alpha=0.016) != []
    # ... but a randomized p cannot tell 0.0156 from 0.016, so either verdict stands
    # (next to a claimed p that says the same).
    _comparison(answer)["p_value"] = 0.0162
    assert run_rule("V401", answer, alpha=0.016, exact_max_n=4) == []
    assert run_rule("V401", answer, alpha=0.2, exact_max_n=4) != []


def _near_alpha(p_value: float, verdict: str) -> dict:
    """10 seeds whose exact two-sided p is 56/1024 = 0.0546875 (dyadic values: no near-ties), with the given claims."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fixtures" / "generators"))
    from consistent import load_seed, rewrite_statistics

    diffs = [-0.875, -0.15625, 0.59375, -0.65625, -0.59375, 0.25, -0.71875, -0.75, -0.65625, -0.0625]
    # Printed at full precision (17 digits): values as short as 10.5 would be read as rounded (A312).
    baseline = [10.0 + 0.5 * k + 2.0**-20 for k in range(len(diffs))]
    answer = rewrite_statistics(load_seed("000"), baseline=baseline, idea=[b + x for b, x in zip(baseline, diffs)])
    _comparison(answer).update(p_value=p_value, verdict=verdict)
    return answer


def test_v401_borderline_monte_carlo_p_is_a_warning() -> None:
    """An honest Monte-Carlo p of 0.0495 whose exact value is 0.0547 (issue 8): borderline, not wrong."""
    answer = _near_alpha(0.0495, "idea better (significant)")
    assert run_rule("A307", answer) == []
    [f] = run_rule("V401", answer)
    assert f.severity is Severity.WARNING
    assert "borderline" in f.message


def test_v401_a_fake_p_across_alpha_is_an_error() -> None:
    answer = _near_alpha(0.0273, "idea better (significant)")  # half the exact p, no honest estimate
    [f] = run_rule("V401", answer)
    assert f.severity is Severity.ERROR


def test_v401_verdict_contradicting_its_own_p() -> None:
    """p = 0.03 next to "no measurable effect": the data support the verdict, the answer contradicts itself."""
    answer = _near_alpha(0.03, "no measurable effect")
    [f] = run_rule("V401", answer)
    assert f.severity is Severity.ERROR
    assert f.pointer == "/bench_report/comparison/p_value"
    assert "own p_value" in f.message
    assert run_rule("V401", _near_alpha(0.0547, "no measurable effect")) == []
    assert run_rule("V401", _near_alpha(0.05, "no measurable effect")) == []  # on alpha: either reading


_VERDICT_WORDS = st.sampled_from(
    [
        "idea",
        "better",
        "worse",
        "significant",
        "not",
        "no",
        "measurable",
        "effect",
        "improved",
        "(significant)",
        "insignificant",
        "hurts",
        "null",
        "_",
        " ",
        "statistically",
        "x" * 150,
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_VERDICT_WORDS, max_size=12).map(" ".join))
def test_classify_verdict_kept_per_phrase_is_the_classification(text: str) -> None:
    """Short sentences are classified once per process; asked again (or long), the answer is the same."""
    from auditor.stats.verdicts import _classify, classify_verdict

    assert classify_verdict(text) == _classify(text)
    assert classify_verdict(text) == _classify(text)  # the kept answer
    assert classify_verdict(text + " " * 250) == _classify(text + " " * 250)  # past the kept length


# --- under D501 ------------------------------------------------------------------


def _no_op_claiming_an_improvement() -> dict:
    answer = seed_answer("001")  # D501: the idea's values are the baseline's
    _comparison(answer).update(verdict="idea better (significant)", system_worked=True)
    answer.update(worked=True, system_verdict="worked", practical_verdict="helps")
    return answer


@pytest.mark.parametrize("code", ["V401", "V402", "V403", "V404"])
def test_no_verdict_is_advised_for_a_no_op_idea(code: str) -> None:
    """Issue 31 item 7: D501 alone says what is wrong; no rule advises a verdict a no-op cannot have."""
    answer = _no_op_claiming_an_improvement()
    assert [f.rule for f in run_rule("D501", answer)] == ["D501"]
    assert run_rule(code, answer) == []


@pytest.mark.parametrize("options", [{"ignore": ("D501",)}, {"severity_overrides": {"D501": Severity.INFO}}])
def test_ignoring_or_lowering_d501_leaves_the_verdict_rules_on(options: dict) -> None:
    [f] = run_rule("V401", _no_op_claiming_an_improvement(), **options)
    assert f.recomputed == "no measurable effect"


def test_d501_advice_fits_the_schema() -> None:
    doc = get_rule("D501").doc
    assert "report no verdict" not in doc.lower()
    assert "rerun the idea arm" in doc
    [f] = run_rule("D501", _no_op_claiming_an_improvement())
    assert "fix the no-op and rerun the idea arm" in f.message
