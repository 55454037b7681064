"""Numeric claims in prose: extraction, rounding-aware comparison, linear-time scanning."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor import prose

from conftest import seed_answer


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
    ],
    ids=lambda text: repr(text[:12]),
)
def test_scanning_is_linear(text: str) -> None:
    start = time.perf_counter()
    prose.extract_claims(text)
    assert time.perf_counter() - start < 2.0


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    claims = prose.extract_claims(text)
    for claim in claims.p_values + claims.wins + claims.deltas + claims.from_to:
        assert text[claim.span[0] : claim.span[1]] == claim.text


def test_non_strings_have_no_claims() -> None:
    assert not prose.extract_claims(None)  # type: ignore[arg-type]
