"""Generated model builders give what the general reading (`_read_loosely`) gives, on any JSON object."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.model import Answer, BenchReport, Comparison, FlatIdea, SeedStats, SweepEntry, TunedArm, _read_loosely

_MODELS = [SweepEntry, SeedStats, FlatIdea, Comparison]
_VALUES = st.one_of(st.none(), st.floats(allow_nan=False), st.integers(-5, 5), st.lists(st.integers(-3, 3), max_size=3))


def _state(model):
    return {key: value for key, value in vars(model).items()}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_MODELS), st.data())
def test_generated_builder_equals_the_general_reading(cls, data):
    keys = st.sampled_from([*cls.FIELDS, "unknown", "other"])
    obj = data.draw(st.dictionaries(keys, _VALUES, max_size=len(cls.FIELDS) + 2))
    try:
        expected = _read_loosely(cls, obj)
    except (TypeError, ValueError, OverflowError) as exc:
        expected = type(exc)
    try:
        built = cls.from_json(obj)
    except (TypeError, ValueError, OverflowError) as exc:
        built = type(exc)
    if isinstance(expected, type):
        assert built is expected
    else:
        assert type(built) is cls and _state(built) == _state(expected)


def test_nested_models_without_required_keys_read_as_none():
    assert TunedArm.from_json({}).full is None
    assert BenchReport.from_json({"track": "t", "x": 1}).extra == {"x": 1}
    assert Answer.from_json({"bench_report": None, "worked": True}).worked is True
