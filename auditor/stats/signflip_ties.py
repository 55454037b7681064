"""How far the signed sums of the sign-flip test may drift, and when they cannot drift at all.

A tie between two signed sums is decided within the float noise of the arithmetic
(:func:`tie_tolerance`), or exactly when every sum is exact (:func:`sums_are_exact`:
integer counts, float32 metrics, most printed decimals).  The work is done on
Python floats (the exact test's n <= 40, where numpy's per-call cost would dominate,
and an answer of a few seeds need not import numpy at all); every sum is
:func:`float64_sum`'s, correctly rounded.  Used by :mod:`auditor.stats.signflip`.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from operator import add, eq, itemgetter, sub

from auditor.stats.precision import ACCUMULATION_SAFETY, U32, U64, as_floats, float64_sum


def tie_tolerance(
    d: Iterable[float], baseline: Iterable[float] | None, idea: Iterable[float] | None, unit: float
) -> float:
    """How far a signed sum of the n differences ``d`` may drift in a format with unit roundoff ``unit``.

    Summation: n·u·sum|d|.  Inputs: each d_i = idea_i - baseline_i was taken from
    values that may not be exact in that format (decimals like 0.9012 in
    float32), u·(|idea_i| + |baseline_i|) each.  A float32 value is exact in float32.
    """
    operands = (None, None) if baseline is None or idea is None else (as_floats(baseline), as_floats(idea))
    return TieScale(as_floats(d), *operands).tolerance(unit)


class TieScale:
    """The magnitudes :func:`tie_tolerance` scales with, each summed once for both formats.

    ``d``, ``baseline`` and ``idea`` are Python floats; the sums are :func:`float64_sum`'s.
    """

    def __init__(self, d: list[float], baseline: list[float] | None, idea: list[float] | None) -> None:
        self.summation = len(d) * float64_sum(list(map(abs, d)))
        self.operands = None if baseline is None or idea is None else list(map(abs, baseline + idea))
        self._operands_sum: float | None = None
        self._narrowed: list[float] | None = None

    def tolerance(self, unit: float) -> float:
        magnitudes = self.summation
        if self.operands is not None:
            magnitudes += self._operand_sum(unit)
        return ACCUMULATION_SAFETY * unit * magnitudes

    def float32_holds_operands(self) -> bool:
        """Every baseline and idea value is a float32 (``abs`` keeps that); needs operands."""
        return self._narrowed_operands() == self.operands

    def _narrowed_operands(self) -> list[float]:
        """The operands, each rounded to float32 (see :func:`float32_holds`)."""
        if self._narrowed is None:
            self._narrowed = array("f", self._operands()).tolist()
        return self._narrowed

    def _operand_sum(self, unit: float) -> float:
        """Sum of every |baseline_i| and |idea_i|; for float32, of the ones it cannot hold."""
        if unit != U32:
            return self._all_operands()
        values, narrowed = self._operands(), self._narrowed_operands()
        if not any(map(eq, values, narrowed)):  # float32 holds none: the sum of all, summed once for both formats
            return self._all_operands()
        return float64_sum([x for x, y in zip(values, narrowed, strict=True) if x != y])

    def _all_operands(self) -> float:
        if self._operands_sum is None:
            self._operands_sum = float64_sum(self._operands())
        return self._operands_sum

    def _operands(self) -> list[float]:
        """The operands, for the sums that exist only when the baseline and idea values were given."""
        assert self.operands is not None  # tolerance() and float32_holds_operands() ask only then
        return self.operands


def float32_holds(values: list[float]) -> bool:
    """Every one of ``values`` is a float32.

    ``array("f")`` rounds each to the nearest float32 as numpy's ``astype`` does (the
    same C conversion; beyond float32's range both give inf, so such a value is not one).
    """
    return array("f", values).tolist() == values


def sums_are_exact(d: Iterable[float], unit: float) -> bool:
    """True when every signed sum of the differences ``d`` is exact in a format with unit roundoff ``unit``.

    Integer counts and float32 metrics give differences that are multiples of
    one power of two; while sum|d| stays within the format's mantissa, every
    partial sum is exact and no summation order can break a tie.
    """
    return SumExactness([x for x in as_floats(d) if x != 0]).exact_in(unit)


class SumExactness:
    """Whether the signed sums of the non-zero differences ``nonzero`` are exact in a format."""

    def __init__(self, nonzero: list[float]) -> None:
        self.nonzero = nonzero

    def exact_in(self, unit: float) -> bool:
        if not self.nonzero:
            return True
        if unit > U64 and not float32_holds(self.nonzero):  # the values themselves must be exact in the narrower format
            return False
        return _bit_span(float64_sum(list(map(abs, self.nonzero))), self.nonzero) <= (53 if unit == U64 else 24)


def _bit_span(abs_sum: float, nonzero: list[float]) -> int:
    """Bits from the lowest set bit of any value in ``nonzero`` (no zeros) up to the top of ``abs_sum`` = sum|values|."""
    _, top = math.frexp(abs_sum)
    return top - _lowest_set_bit_of_all(nonzero)


def _lowest_set_bit_of_all(nonzero: list[float]) -> int:
    """Exponent of the lowest set bit of any value in ``nonzero`` (no zeros), one C call a value.

    x = p/q in lowest terms with q = 2^k: when k > 0 its lowest bit is 2^-k (p is odd), so
    the largest q decides unless every value is an integer; then the lowest set bit of any p.
    """
    ratios = list(map(float.as_integer_ratio, nonzero))
    largest_q: int = max(map(itemgetter(1), ratios))
    if largest_q > 1:
        return 1 - largest_q.bit_length()
    return min((p & -p).bit_length() for p, _ in ratios) - 1


def exact_differences(baseline: list[float] | None, idea: list[float] | None, values: list[float]) -> bool:
    """True when ``values`` = d = idea - baseline was computed without rounding (TwoSum error term zero)."""
    if baseline is None or idea is None:
        return True
    # Exact subtraction <=> adding back recovers idea and the remainder is zero.
    if not len(baseline) == len(idea) == len(values):
        raise ValueError("baseline, idea and their differences must have the same length")
    return list(map(add, values, baseline)) == idea and list(map(sub, idea, values)) == baseline
