"""Shortcuts of the sweep rules (T601-T603, D504, A311) and of A301 give what their general paths give."""

from __future__ import annotations

import math
from typing import Any

import pytest
from conftest import seed_answer
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rule_context import context_for

from auditor.model import SweepEntry
from auditor.rules import arithmetic, arithmetic_sweep, degenerate, tuning
from auditor.stats import values_close
from auditor.strings import canonical_json

_SPECIAL = [0.0, -0.0, 1.0, 1, True, False, None, math.inf, -math.inf, math.nan, "", "0.0", "null", "1", 5e-324]
_SCALARS = st.one_of(
    st.sampled_from(_SPECIAL),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.001, 0.003, 0.006, 0.003 * (1 + 1e-13)]),
    st.integers(-3, 3),
    st.integers(),
    st.booleans(),
    st.text(max_size=3),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)),
    max_leaves=6,
)
_CONFIGS = st.dictionaries(st.sampled_from(["lr", "wd", "epochs", "b"]), _VALUES, max_size=4)
_ENTRIES = st.lists(
    st.builds(
        lambda cfg, mean: SweepEntry.from_json({"cfg": cfg, "mean": mean}),
        _CONFIGS,
        st.sampled_from([1.0, 2.5, -0.0, 0.0, math.inf]),
    ),
    max_size=4,
)


@settings(max_examples=400, deadline=None)
@given(_VALUES, _VALUES)
def test_spelling_keys_are_equal_exactly_when_spellings_are(a: Any, b: Any) -> None:
    assert tuning._canonical(a) == canonical_json(a)
    same_key = tuning.spelling_key(a) == tuning.spelling_key(b)
    assert same_key == (canonical_json(a) == canonical_json(b))
    if same_key:
        assert hash(tuning.spelling_key(a)) == hash(tuning.spelling_key(b))


def _swept_keys_by_spelling(sweep: list[SweepEntry]) -> set[str]:
    """The definition: keys whose spelled values (null when missing) differ between entries."""
    keys = {k for e in sweep for k in e.cfg}
    return {k for k in keys if len({canonical_json(e.cfg.get(k)) for e in sweep}) > 1}


@settings(max_examples=300, deadline=None)
@given(_ENTRIES)
def test_swept_keys_is_the_definition(sweep: list[SweepEntry]) -> None:
    assert tuning.swept_keys(sweep) == _swept_keys_by_spelling(sweep)


@settings(max_examples=300, deadline=None)
@given(_CONFIGS, _CONFIGS, st.sets(st.sampled_from(["lr", "wd", "epochs", "b"])))
def test_config_points_are_equal_exactly_when_canonical_json_is(a: dict, b: dict, keys: set[str]) -> None:
    assert (tuning.config_point(a) == tuning.config_point(b)) == (canonical_json(a) == canonical_json(b))
    subset_a = {k: v for k, v in a.items() if k in keys and v is not None}
    subset_b = {k: v for k, v in b.items() if k in keys and v is not None}
    same_points = tuning.config_point(a, keys) == tuning.config_point(b, keys)
    assert same_points == (canonical_json(subset_a) == canonical_json(subset_b))


@settings(max_examples=300, deadline=None)
@given(_ENTRIES, _ENTRIES, st.booleans())
def test_same_entries_is_the_sorted_canonical_comparison(
    a: list[SweepEntry], b: list[SweepEntry], shuffle: bool
) -> None:
    if shuffle:  # the same entries in another order, often enough to matter
        b = a[::-1]

    def spelled(sweep: list[SweepEntry]) -> list[tuple[str, float]]:
        return sorted((canonical_json(e.cfg), e.mean) for e in sweep)

    assert degenerate._same_entries(a, b) == (spelled(a) == spelled(b))


_NAN = math.nan  # one NaN object: equal to itself as a dict key, unlike a NaN made elsewhere
_ITEMS = st.sampled_from([0.0, -0.0, 1, 1.0, True, 2.5, _NAN, float("nan"), "a", None, (1, 2.5)])


@settings(max_examples=400, deadline=None)
@given(st.lists(_ITEMS, max_size=5), st.data())
def test_same_multiset_is_counter_equality(a: list[Any], data: st.DataObject) -> None:
    from collections import Counter

    b = data.draw(st.one_of(st.permutations(a), st.lists(_ITEMS, min_size=len(a), max_size=len(a))))
    assert degenerate._same_multiset(a, b) == (Counter(a) == Counter(b))
    assert degenerate._same_multiset(a, list(a))


def _same_value_general(a: object, b: object) -> bool:
    """A311's comparison of two config values without its shortcuts."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return values_close(float(a), float(b), rtol=1e-12)
    return a == b


@settings(max_examples=400, deadline=None)
@given(_SCALARS, _SCALARS)
@example(10**400, 10**400)
@example(2**53 + 1, 2**53 + 1)
def test_same_value_shortcuts_give_the_general_answer(a: object, b: object) -> None:
    try:
        expected = _same_value_general(a, b)
    except OverflowError:  # an int beyond float range: the shortcuts must not hide it either
        with pytest.raises(OverflowError):
            arithmetic_sweep._same_value(a, b)
        return
    assert arithmetic_sweep._same_value(a, b) == expected
    try:
        same = _same_value_general(a, a)
    except OverflowError:
        with pytest.raises(OverflowError):
            arithmetic_sweep._same_value(a, a)
    else:
        assert arithmetic_sweep._same_value(a, a) == same


def test_a_value_and_itself_follow_values_close() -> None:
    assert not arithmetic_sweep._same_value(math.inf, math.inf)  # values_close(inf, inf) is False
    assert not arithmetic_sweep._same_value(1, True)
    assert arithmetic_sweep._same_value(0.003, 0.003 * (1 + 1e-13))


@settings(max_examples=300, deadline=None)
@given(_ENTRIES, st.sets(st.sampled_from(["lr", "wd", "epochs", "b"])))
def test_numeric_values_are_each_keys_sorted_finite_numbers(sweep: list[SweepEntry], keys: set[str]) -> None:
    expected: dict[str, set[float]] = {k: set() for k in keys}
    for entry in sweep:
        for key, value in entry.cfg.items():
            if key in expected and (number := tuning._number(value)) is not None:
                expected[key].add(number)
    found = tuning._numeric_values(sweep, frozenset(keys))
    assert {k: [(x, math.copysign(1, x)) for x in v] for k, v in found.items()} == {
        k: [(x, math.copysign(1, x)) for x in sorted(v)] for k, v in expected.items()
    }


_COUNT_EDITS = {
    "n_seeds": lambda report: report.__setitem__("n_seeds", 9),
    "no n_seeds": lambda report: report.pop("n_seeds"),
    "baseline n": lambda report: report["baseline"]["full"].__setitem__("n", 7),
    "idea n": lambda report: (report["idea"].get("full") or report["idea"]).__setitem__("n", 9),
    "n_pairs": lambda report: report["comparison"].__setitem__("n_pairs", 0),
    "short diffs": lambda report: report["comparison"]["per_seed_diffs"].pop(),
    "no diffs": lambda report: report["comparison"].pop("per_seed_diffs"),
}


@pytest.mark.parametrize("which", ["000", "001"])
@pytest.mark.parametrize("edit", sorted(_COUNT_EDITS))
def test_a301_shortcut_agrees_with_the_listed_counts(which: str, edit: str) -> None:
    answer = seed_answer(which)
    _COUNT_EDITS[edit](answer["bench_report"])
    ctx = context_for(answer)
    n = len(ctx.baseline.per_seed)
    listed = all(value == n for _, _, value in arithmetic._claimed_counts(ctx))
    assert arithmetic._claimed_counts_are(ctx, n) == listed
    assert listed == edit.startswith("no ")


# Sweeps whose entries all set the same keys in the same order, as agents write them, with up to
# a few more keys than _numeric_values reads key by key (above, it reads them in one pass).
_MANY_KEYS = [f"k{i}" for i in range(tuning._KEY_BY_KEY_MAX + 3)]
_UNIFORM_SWEEPS = st.integers(0, len(_MANY_KEYS)).flatmap(
    lambda width: st.lists(
        st.builds(
            lambda values: SweepEntry.from_json({"cfg": dict(zip(_MANY_KEYS[:width], values)), "mean": 1.0}),
            st.lists(_VALUES, min_size=width, max_size=width),
        ),
        max_size=4,
    )
)


@settings(max_examples=300, deadline=None)
@given(_UNIFORM_SWEEPS)
def test_swept_keys_of_uniform_sweeps_is_the_definition(sweep: list[SweepEntry]) -> None:
    assert tuning.swept_keys(sweep) == _swept_keys_by_spelling(sweep)


@settings(max_examples=300, deadline=None)
@given(_UNIFORM_SWEEPS, st.sets(st.sampled_from(_MANY_KEYS)))
def test_numeric_values_key_by_key_and_in_one_pass_agree(sweep: list[SweepEntry], keys: set[str]) -> None:
    expected: dict[str, list[float]] = {}
    for key in keys:  # the definition, with the first of equal numbers kept (0.0 before -0.0, or after)
        numbers: dict[float, float] = {}
        for entry in sweep:
            if (number := tuning._number(entry.cfg.get(key))) is not None:
                numbers.setdefault(number, number)
        expected[key] = sorted(numbers.values())
    found = tuning._numeric_values(sweep, frozenset(keys))
    assert {k: [(x, math.copysign(1, x)) for x in v] for k, v in found.items()} == {
        k: [(x, math.copysign(1, x)) for x in v] for k, v in expected.items()
    }
