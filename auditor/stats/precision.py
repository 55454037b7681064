"""How a claimed number was printed and computed, and when it agrees with a recomputation.

A claim agrees with a recomputed value when some honest way of computing and
printing that value gives it.  Two things separate an honest claim from the
recomputed float64 value:

* **Printing.**  The shortest repr of the parsed float tells the last digit the
  agent printed: ``10.931`` stands for every value in [10.9305, 10.9315]
  (statcheck's rule, applied to every number).  A full-precision float64
  (``10.930935978889465``) has a half unit of ~1e-15 and is checked tightly.
* **Arithmetic.**  Agents compute in float32 (torch) or float64, in any order.
  Accumulating n values of magnitude M in a format with unit roundoff u moves a
  result by at most about n·u·M (Higham, *Accuracy and Stability*, ch. 4).  A
  claim whose digits do not fit a float32 result (a float32 number printed with
  those digits, or one finished by a float64 division or square root) was
  computed in float64 and gets the float64 bound; every other claim gets the
  float32 bound.  With 8 or fewer digits every claim fits.

The per-seed values themselves are the data: they are taken as exact.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from auditor.parse.literals import PrintedFloat, digits_and_half_unit, printed_text

# Unit roundoff of IEEE binary64 and binary32.
U64 = 2.0**-53
U32 = 2.0**-24
# Safety factor on the textbook accumulation bound (n+2)·u·M: summation order,
# the final division and a two-pass std each add a few roundings.
ACCUMULATION_SAFETY = 4.0
# Largest finite float32.
FLOAT32_MAX = 3.4028234663852886e38


def as_floats(values: Iterable[float]) -> list[float]:
    """``values`` (floats, ints, a numpy array) as a list of Python floats, the values numpy's ``float64``
    conversion gives: the arithmetic is then Python's, and no numpy scalar reaches a message or the output."""
    return list(map(float, values))


def float64_sum(values: Sequence[float]) -> float:
    """The sum of ``values`` rounded once to float64 (:func:`math.fsum`): the recomputation is then
    the nearest float to the exact sum, and an agent's honest sum in any order lies within
    :func:`accumulation_noise` of it.  An overflowing or infinite sum is IEEE addition's (inf or
    NaN), for the caller to judge."""
    try:
        return 0.0 + math.fsum(values)  # (0.0 +: a sum of -0.0 values is 0.0, as numpy gives it)
    except (OverflowError, ValueError):
        return sum(values, 0.0)


@dataclass(frozen=True)
class Printed:
    """A claimed float as the agent printed it."""

    value: float
    digits: int  # significant digits of the shortest repr
    half_unit: float  # half a unit in the last printed digit


def printed(value: float) -> Printed:
    """The digits ``value`` was printed with: ``printed(0.0156)`` has 3 digits, half unit 5e-5.

    A number read with its literal (:class:`~auditor.parse.literals.PrintedFloat`: ``0.0000``,
    ``10.930``) has the literal's digits; any other float its shortest repr's: ``0.0``
    counts as one printed decimal (half unit 0.05), as does ``14.0``, which is how
    Python prints a float that was rounded to one decimal.
    """
    if not math.isfinite(value):
        return Printed(float(value), 0, math.inf)
    return Printed(float(value), *_digits_and_half_unit(value))


def _digits_and_half_unit(value: float) -> tuple[int, float]:
    """:func:`printed`'s digits and half unit of a finite float, without building a :class:`Printed`."""
    return digits_and_half_unit(printed_text(value))


def _half_unit(value: float) -> float:
    """``printed(value).half_unit`` of a float."""
    return _digits_and_half_unit(value)[1] if math.isfinite(value) else math.inf


_FLOAT32 = struct.Struct("f")


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (|value| <= FLOAT32_MAX), as a Python float."""
    narrowed: float = _FLOAT32.unpack(_FLOAT32.pack(value))[0]  # (struct types what it unpacks as Any)
    return narrowed


def near_float32(value: float, slack: float = 0.0) -> bool:
    """True when ``value`` lies within ``slack`` (and a float64 rounding) of a float32 number."""
    if not math.isfinite(value) or abs(value) > FLOAT32_MAX:
        return False
    return abs(to_float32(value) - value) <= 4 * math.ulp(value) + slack


def accumulation_noise(n: int, magnitude: float, unit: float) -> float:
    """Bound on how far an honest n-term sum, mean or variance of values of ``magnitude`` may drift.

    Values beyond the float32 range cannot have been computed in float32: the
    float64 bound applies to them whatever ``unit`` says.
    """
    if unit == U32 and abs(magnitude) > FLOAT32_MAX:
        unit = U64
    return ACCUMULATION_SAFETY * (max(n, 1) + 2) * unit * abs(magnitude)


@dataclass(frozen=True)
class Noise:
    """How far an honest computation of one statistic may drift, in float64 and in float32.

    ``float32_forms`` are (value, sensitivity) pairs: values that are float32
    numbers when the claim was computed in float32 and finished in float64
    (``sum32 / n`` -> ``claim * n``, sensitivity n; ``sqrt(var32)`` ->
    ``claim ** 2``, sensitivity 2·claim).
    """

    float64: float
    float32: float
    float32_forms: tuple[tuple[float, float], ...] = ()


def could_be_float32(claimed: float, forms: Iterable[tuple[float, float]] = ()) -> bool:
    """Could ``claimed`` be a float32 result, printed with the digits it shows?

    A float32 result printed with k digits lies within half a unit of the k-th
    digit of a float32 number; with 9 or more digits that pins the float32
    down, with fewer every number qualifies.
    """
    return _could_be_float32(claimed, _half_unit(claimed), forms)


def _could_be_float32(claimed: float, half_unit: float, forms: Iterable[tuple[float, float]]) -> bool:
    """:func:`could_be_float32` given the half unit of ``claimed``'s printed digits."""
    if near_float32(claimed, half_unit):
        return True
    return any(near_float32(value, abs(sensitivity) * half_unit) for value, sensitivity in forms)


def agrees(claimed: float, recomputed: float, noise: Noise, *, rtol: float = 0.0, width: float = 0.0) -> bool:
    """True when ``claimed`` is ``recomputed`` as some honest computation and printing gives it.

    ``rtol`` is a method tolerance on top (a t quantile read from a table).  A NaN ``noise``
    bound refuses every claim that is not equal to the recomputed value.
    """
    if claimed == recomputed:  # no drift to bound (a difference of 0 is within any slack)
        return math.isfinite(claimed)
    if not (math.isfinite(claimed) and math.isfinite(recomputed)):
        return False
    printed_half_unit = _half_unit(claimed)
    # A printed zero carries no digit to round at: "0.0" beside a real effect is a claim of none.  A
    # zero printed with its decimals ("0.0000", a literal) is rounded to them like any other number.
    half_unit = 0.0 if claimed == 0 and type(claimed) is not PrintedFloat else printed_half_unit
    diff = abs(claimed - recomputed)
    # Half a unit of the printed digit, with float slack at exact halves; ``width``: how far the
    # recomputed value itself may be from the one the unrounded per-seed values give (auditor.stats.rounding).
    slack = half_unit * (1 + 1e-9) + 2 * math.ulp(max(abs(claimed), abs(recomputed))) + rtol * abs(recomputed) + width
    if diff <= slack + noise.float64:
        return True
    if not _could_be_float32(claimed, printed_half_unit, noise.float32_forms):
        return False  # not a float32 result at the digits shown: float64 arithmetic, float64 noise
    return diff <= slack + noise.float32


def mean_agrees(claimed: float, recomputed: float, n: int, magnitude: float, width: float = 0.0) -> bool:
    """:func:`agrees` for a mean (or a difference of means) of n values of at most ``magnitude``."""
    return agrees(claimed, recomputed, mean_noise(n, magnitude, claimed), width=width)


def mean_noise(n: int, magnitude: float, claimed: float) -> Noise:
    """A mean (or a difference of means) of n values of at most ``magnitude``."""
    return Noise(
        accumulation_noise(n, magnitude, U64),
        accumulation_noise(n, magnitude, U32),
        ((claimed * n, n),),
    )


def std_noise(
    n: int, magnitude: float, claimed: float, recomputed: float, *, operand_magnitude: float | None = None
) -> Noise:
    """A standard deviation of n values of at most ``magnitude``.

    The bound is on the variance (a one-pass formula loses n·u·M² there) and
    carried to the std through ``|c - s| = |c² - s²| / (c + s)``.  Values that
    are differences of larger operands (``operand_magnitude``) also carry the
    rounding of those operands, u·M each, which moves the std by as much.
    """
    denominator = abs(claimed) + abs(recomputed)
    operands = magnitude if operand_magnitude is None else max(magnitude, operand_magnitude)

    def bound(unit: float) -> float:
        on_variance = accumulation_noise(n, magnitude * magnitude, unit)
        spread = math.sqrt(on_variance) if denominator == 0 else min(on_variance / denominator, math.sqrt(on_variance))
        return spread + accumulation_noise(1, operands, unit)

    squared, slope = claimed * claimed, 2 * abs(claimed)
    forms = ((squared, slope), (squared * n, slope * n), (squared * max(n - 1, 1), slope * max(n - 1, 1)))
    return Noise(bound(U64), bound(U32), forms)
