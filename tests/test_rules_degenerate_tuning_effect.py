"""Behaviour of the D5xx, T6xx and E7xx rules beyond "fires on its fixture"."""

from __future__ import annotations

import math
import sys

import pytest
from conftest import ROOT, as_transcript, codes, seed_answer
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.answer.model import SweepEntry, swept_keys
from auditor.findings import Severity
from auditor.parse.strings import canonical_json
from auditor.rules import arithmetic_sweep

sys.path.insert(0, str(ROOT / "fixtures" / "generators"))
from consistent import rewrite_statistics, stats_block  # noqa: E402

BASE = stats_block(seed_answer("000")["bench_report"], "baseline")["per_seed"]


def _by_code(result, code):
    return [f for f in result.findings if f.rule == code]


def test_d505_is_an_error_only_when_significance_is_claimed(audit) -> None:
    honest = rewrite_statistics(seed_answer(), baseline=BASE[:5], idea=[v - 0.1 for v in BASE[:5]])
    [quiet] = _by_code(audit(as_transcript(honest)), "D505")
    assert quiet.severity is Severity.WARNING
    assert quiet.recomputed == pytest.approx(2 / 2**5)
    honest["bench_report"]["comparison"]["verdict"] = "idea better (significant)"
    [loud] = _by_code(audit(as_transcript(honest)), "D505")
    assert loud.severity is Severity.ERROR


def test_d505_respects_alpha(audit) -> None:
    answer = rewrite_statistics(seed_answer(), baseline=BASE[:5], idea=[v - 0.1 for v in BASE[:5]])
    assert "D505" not in codes(audit(as_transcript(answer), alpha=0.1))


def test_t601_names_the_arm_and_the_key(audit) -> None:
    findings = _by_code(audit(as_transcript(seed_answer())), "T601")
    assert {f.pointer for f in findings} == {"/bench_report/baseline/best_cfg/lr", "/bench_report/idea/cfg/lr"}
    assert all(f.recomputed == [0.001, 0.003, 0.006] for f in findings)


def test_t601_smallest_value_is_also_an_edge(audit) -> None:
    answer = seed_answer()
    report = answer["bench_report"]
    for sweep in (report["baseline"]["sweep"], report["idea_sweep"]):
        sweep[0]["mean"] = 9.0  # lr=0.001 now best
    report["baseline"]["best_cfg"]["lr"] = 0.001
    report["idea"]["cfg"]["lr"] = 0.001
    messages = [f.message for f in _by_code(audit(as_transcript(answer)), "T601")]
    assert messages and all("smallest" in m for m in messages)


def test_higher_is_better_direction_counts_wins_upwards(audit) -> None:
    answer = seed_answer()
    report = answer["bench_report"]
    report["metric_direction"] = "higher is better"
    for sweep in (report["baseline"]["sweep"], report["idea_sweep"]):
        for entry in sweep:  # an accuracy-like sweep where lr=0.006 is still best
            entry["mean"] = 1 / entry["mean"]
    accuracy = [0.80, 0.81, 0.79, 0.82, 0.80, 0.78, 0.83, 0.81]
    answer = rewrite_statistics(answer, baseline=accuracy, idea=[a + 0.05 for a in accuracy])
    result = audit(as_transcript(answer))
    assert result.recomputed["idea_wins"] == 8
    assert result.recomputed["verdict"] == "idea better (significant)"
    assert not [f for f in result.findings if f.severity is Severity.ERROR]


def test_e701_thresholds_are_configurable(audit) -> None:
    text = as_transcript(seed_answer())
    assert "E701" in codes(audit(text))
    assert "E701" not in codes(audit(text, negligible_rel=0.0001, negligible_std=0.001))


def test_e703_uses_practical_verdict_too(audit) -> None:
    import numpy as np

    noisy = list(np.array(BASE) + np.random.default_rng(3).normal(0, 1.0, 8))
    answer = rewrite_statistics(seed_answer(), idea=noisy)
    answer["bench_report"]["comparison"]["verdict"] = "see the prose above"
    assert answer["practical_verdict"] == "no_effect"
    assert "E703" in codes(audit(as_transcript(answer)))


def test_the_same_value_test_decides_as_numpy_did() -> None:
    """D502/D503 compare the spread of Python floats with their largest magnitude, as the numpy expression did."""
    import numpy as np

    from auditor.rules.degenerate import SAME_VALUE_RTOL, _all_equal

    rng = np.random.default_rng(5)
    for n in range(12):
        for values in (
            np.full(n, 0.5),
            np.full(n, -0.0),
            np.where(rng.random(n) < 0.5, 0.0, -0.0),
            np.full(n, 7.25) + rng.choice([0.0, 5e-10, 1e-9, 2e-9], n) * 7.25,  # around rtol 1e-9
            rng.normal(10.0, 1.0, n),
            np.full(n, 5e-324),
        ):
            expected = values.size >= 2 and float(values.max() - values.min()) <= SAME_VALUE_RTOL * max(
                float(np.abs(values).max()), np.finfo(float).tiny
            )
            assert _all_equal(tuple(values.tolist())) == expected, values


def test_e702_fires_where_one_dropped_seed_doubles_p_to_alpha(audit) -> None:
    """Eight equal (exactly representable) improvements: p = 2/2^8, and every seed left out gives
    2/2^7, exactly twice p, the most a leave-one-out p can be.  With alpha at that value the
    result is significant yet fragile, so E702 must run its tests and fire; with alpha above
    twice p it is robust (and E702 skips its tests)."""
    improved = rewrite_statistics(seed_answer(), baseline=BASE, idea=[v - 0.25 for v in BASE])
    [fragile] = _by_code(audit(as_transcript(improved), alpha=2 / 2**7), "E702")
    assert fragile.recomputed == 2 / 2**7
    assert _by_code(audit(as_transcript(improved), alpha=0.05), "E702") == []


_SWEPT_VALUES = st.recursive(
    st.one_of(
        st.sampled_from([0.0, -0.0, 1.0, 1, True, False, None, math.inf, math.nan, "", "0.0", "1", 5e-324]),
        st.floats(),
        st.integers(),
        st.text(max_size=3),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)),
    max_leaves=6,
)
_SWEEPS = st.lists(
    st.builds(
        lambda cfg, mean: SweepEntry.model_validate({"cfg": cfg, "mean": mean}),
        st.dictionaries(st.sampled_from(["lr", "wd", "epochs", "b"]), _SWEPT_VALUES, max_size=4),
        st.sampled_from([1.0, 2.5, -0.0, 0.0, math.inf]),
    ),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(_SWEEPS)
def test_swept_keys_are_those_whose_spelled_values_differ(sweep: list[SweepEntry]) -> None:
    """T601-T603 read a key as swept when its values, spelled as JSON (null when missing), differ."""
    keys = {k for e in sweep for k in e.cfg}
    expected = {k for k in keys if len({canonical_json(e.cfg.get(k)) for e in sweep}) > 1}
    assert swept_keys(sweep) == expected


def test_a311_compares_config_values_as_values_close_does() -> None:
    assert not arithmetic_sweep._same_value(math.inf, math.inf)  # values_close(inf, inf) is False
    assert not arithmetic_sweep._same_value(1, True)
    assert arithmetic_sweep._same_value(0.003, 0.003 * (1 + 1e-13))
