"""The sign-flip test's shortcuts against the general computations they stand for."""

from __future__ import annotations

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.precision import float64_sum
from auditor.signflip_ties import SumExactness, _bit_span

_FINITE = st.floats(allow_nan=False, allow_infinity=False)
# Values as real answers hold them (float32 metrics, integer counts, printed decimals), and the extremes.
_VALUES = st.one_of(
    _FINITE,
    _FINITE.map(lambda x: array("f", [x]).tolist()[0] if abs(x) < 3e38 else x),
    st.integers(-(2**60), 2**60).map(float),
    st.sampled_from([5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 0.5, 2.0**-30]),
    st.integers(-1000, 1000).map(lambda k: k * 2.0**-20),
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_VALUES.filter(lambda x: x != 0), min_size=1, max_size=12), st.sampled_from([53, 24]))
def test_span_fits_is_the_bit_span_test(nonzero: list[float], precision: int) -> None:
    # What exact_in asked before the shortcut: the bit span itself, against the format's precision.
    expected = _bit_span(float64_sum(list(map(abs, nonzero))), nonzero) <= precision
    assert SumExactness(nonzero)._span_fits(precision) == expected
