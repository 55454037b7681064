"""auditor.strings: the encoders built once must write what json.dumps writes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.strings import canonical_json, json_encoder

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)

_OPTION_SETS = [
    {},
    {"sort_keys": True, "default": str},
    {"ensure_ascii": False, "allow_nan": False, "separators": (",", ":")},
    {"sort_keys": True, "separators": (", ", ": ")},
]


def _dumps_or_error(value: object, options: dict) -> str | tuple[type, str]:
    try:
        return json.dumps(value, **options)
    except (ValueError, TypeError) as exc:
        return type(exc), str(exc)


def _encode_or_error(value: object, options: dict) -> str | tuple[type, str]:
    try:
        return json_encoder(**options)(value)
    except (ValueError, TypeError) as exc:
        return type(exc), str(exc)


@settings(max_examples=300, deadline=None)
@given(value=_values, options=st.sampled_from(_OPTION_SETS))
def test_an_encoder_built_once_writes_what_json_dumps_writes(value: object, options: dict) -> None:
    assert _encode_or_error(value, options) == _dumps_or_error(value, options)


def test_refusals_are_json_dumps_refusals() -> None:
    strict = {"allow_nan": False}
    for value in ({"a": float("nan")}, [float("inf")], {"x": object()}, {(1, 2): 3}):
        expected = _dumps_or_error(value, strict)
        assert isinstance(expected, tuple)  # json.dumps refuses each of them
        assert _encode_or_error(value, strict) == expected


def test_canonical_json_spells_equal_configs_alike_and_stringifies_the_rest() -> None:
    assert canonical_json({"lr": 0.001, "epochs": 12}) == canonical_json({"epochs": 12, "lr": 0.001})
    assert canonical_json({"lr": 0.001, "epochs": 12}) == '{"epochs": 12, "lr": 0.001}'
    assert canonical_json({"when": pytest}) == json.dumps({"when": pytest}, sort_keys=True, default=str)
    assert canonical_json("é") == '"\\u00e9"'


def test_an_encoder_is_reusable_after_a_refusal() -> None:
    encode = json_encoder(allow_nan=False)
    with pytest.raises(ValueError):
        encode([1.0, float("nan")])
    assert encode([1.0, {"a": [2]}]) == "[1.0, {\"a\": [2]}]"
