"""Shortcuts of the prose checks, V401 and V406 give what the general path gives."""

from __future__ import annotations

import math
from itertools import islice
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.precision import printed
from auditor.prose import Reported, claims, numbers, resamples
from auditor.prose.scanning import fold, matches_at
from auditor.rules import verdict, verdict_prose

_SPECIAL_FLOATS = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, math.inf, -math.inf, math.nan]
_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1.0, 1.0),
    st.sampled_from(_SPECIAL_FLOATS + [0.05, 0.0500001, 0.033, 0.1, 0.075, 0.025, 1.0, 1e-5, 1e16, 1e22]),
    st.integers(-(10**6), 10**6).map(lambda n: n / 1000),
    st.integers(-100, 100),
)


@settings(max_examples=1000, deadline=None)
@given(_FLOATS, _FLOATS)
def test_within_rounding_is_the_printed_half_unit_test(value: float, target: float) -> None:
    """The bound on the half unit never changes the answer of ``|value - target| < half unit``."""
    assert verdict._within_rounding(value, target) == (abs(value - target) < printed(value).half_unit)


@given(st.integers(1, 60), st.integers(-330, 310), st.sampled_from([0.05, 0.01, 0.1, 0.5, 1e-300]))
def test_within_rounding_at_the_half_unit_bound(digits: int, exponent: int, alpha: float) -> None:
    """Values whose half unit is as large as it gets (one digit: "1e-05", "2.0") next to alpha and to half of it."""
    value = float(f"{'9' * digits}e{exponent}")
    for v in (value, float(f"1e{exponent}"), float(f"{digits}.0")):
        for target in (alpha, v / 2, v * 1.5, v * 0.5000001, v * 1.4999999):
            assert verdict._within_rounding(v, target) == (abs(v - target) < printed(v).half_unit)


def _consistent_reference(reported: Reported, actual: float) -> bool:
    """Reported.consistent_with as first written: the slack is worked out before any test."""
    if not math.isfinite(actual):
        return False
    diff = abs(actual - reported.value)
    slack = 1e-9 * reported.half_unit + 1e-15 * max(1.0, abs(reported.value))
    if diff <= reported.half_unit + slack:
        return True
    return diff <= numbers.LONG_NUMBER_RTOL * max(abs(actual), abs(reported.value))


@settings(max_examples=800, deadline=None)
@given(
    _FLOATS.filter(math.isfinite),
    st.one_of(st.sampled_from([0.0, -1.0, -1e-7, 5e-6, 0.05, 0.5, math.inf]), st.floats(-1.0, 1.0)),
    _FLOATS,
)
def test_consistent_with_matches_its_reference(value: float, half_unit: float, actual: float) -> None:
    reported = Reported("x", value, half_unit)
    assert reported.consistent_with(actual) == _consistent_reference(reported, actual)
    if math.isfinite(half_unit):
        for units in (0.5, 1.0, 1.0 + 1e-12, 1.0 + 1e-9, 1.5, 2.0):
            for near in (value + units * half_unit, value - units * half_unit):
                assert reported.consistent_with(near) == _consistent_reference(reported, near)


def _strings_under_reference(value: Any, path: tuple, max_visits: int) -> list[tuple[tuple, str]]:
    """The general depth-first walk of verdict_prose._strings_under, without its flat-dict shortcut."""
    out = []
    stack: list[tuple[Any, tuple, int]] = [(value, path, 0)]
    visits = 0
    while stack and visits < max_visits:
        item, where, depth = stack.pop()
        visits += 1
        if isinstance(item, str):
            out.append((where, item))
        elif depth >= verdict_prose.MAX_METRICS_DEPTH:
            continue
        elif isinstance(item, (dict, list)):
            entries = item.items() if isinstance(item, dict) else enumerate(item)
            children = [(v, (*where, k), depth + 1) for k, v in islice(entries, max_visits - visits)]
            stack.extend(reversed(children))
    return out


_SCALARS = st.one_of(st.text(max_size=3), st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False))
_METRICS = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=5)),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.dictionaries(st.text(max_size=3), _SCALARS, max_size=6), _METRICS), st.integers(-2, 12))
def test_strings_under_matches_the_general_walk(metrics: Any, max_visits: int) -> None:
    """A flat dict's shortcut yields what the walk yields, for any visit budget; nested values take the walk."""
    got = list(verdict_prose._strings_under(metrics, ("metrics",), max_visits))
    assert got == _strings_under_reference(metrics, ("metrics",), max_visits)


_RESAMPLE_WORD_PIECES = st.lists(
    st.sampled_from(["resampl", "perm", "shuffl", "flip", "carlo", "mc", "MC", "PERM", "m", "c", "per", "x", " "]),
    max_size=6,
).map("".join)


@given(_RESAMPLE_WORD_PIECES)
def test_mentions_resampling_is_the_word_list(text: str) -> None:
    folded = fold(text)
    assert resamples._mentions_resampling(folded) == resamples._holds_any(folded, resamples._ANY_RESAMPLE_WORD)


_B_PIECES = ["B = 5000", "B=1e4", "b = 5000", "Β", "ß", " sign flips", "resampled", ". ", " "]


@given(st.lists(st.sampled_from(_B_PIECES), max_size=6).map("".join))
def test_b_counts_start_with_a_capital_b(text: str) -> None:
    """_resample_counts skips the "B = ..." pass on text without a "B": every match starts with one."""
    for m in resamples._B_COUNT.finditer(text):
        assert m.group().startswith("B")
    if "B" not in text:
        assert resamples._B_COUNT.search(text) is None


_DELTA_PIECES = [
    *("delta_mean", "delta mean", "deltamean", "mean_delta", "mean paired diff", "mean_paired_difference"),
    *("paired delta", "paired_diff_mean", "delta", "diff", "mean", "paired", "_", " ", "=", "-0.5", "1e-3", "x"),
]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_DELTA_PIECES), max_size=10).map("".join))
def test_delta_starts_hold_every_match_start(text: str) -> None:
    """Trying _DELTA only where _delta_starts says finds what searching everywhere finds."""
    folded = fold(text)
    starts = claims._delta_starts(folded)
    assert starts == sorted(set(starts))
    assert [m.span() for m in matches_at(claims._DELTA, folded, starts)] == [
        m.span() for m in claims._DELTA.finditer(folded)
    ]
