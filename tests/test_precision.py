"""Printed precision, float32 provenance and the tolerance model of claimed numbers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.stats.precision import (
    U32,
    Noise,
    accumulation_noise,
    agrees,
    could_be_float32,
    float64_sum,
    mean_agrees,
    mean_noise,
    near_float32,
    printed,
    std_noise,
    to_float32,
)


@pytest.mark.parametrize(
    "value, digits, half_unit",
    [
        (10.93094, 7, 5e-6),
        (0.0156, 3, 5e-5),
        (1.5e-07, 2, 5e-9),
        (0.0, 1, 0.05),
        (14.0, 3, 0.05),
        (-0.008685469627380371, 16, 5e-19),
        (123456.0, 7, 0.05),
    ],
)
def test_printed_reads_the_last_digit(value: float, digits: int, half_unit: float) -> None:
    shown = printed(value)
    assert shown.digits == digits
    assert shown.half_unit == pytest.approx(half_unit, rel=1e-12)


def test_float32_provenance() -> None:
    f32 = float(np.float32(10.930935978889465))
    assert near_float32(f32)
    assert not near_float32(10.930935978889465)
    # Nine printed digits of a float32 pin it down; the seventh digit edited does not fit.
    assert could_be_float32(float(f"{f32:.9g}"))
    assert not could_be_float32(10.93094597888946)
    # A float32 sum divided by n in float64 is a float32 only after multiplying back.
    total32 = float(np.float32(87.44748783111572))
    assert could_be_float32(total32 / 7, [(total32 / 7 * 7, 7)])


MEAN = 10.930935978889465  # seed 000's baseline mean, float64
MAGNITUDE = 13.046205520629883


@pytest.mark.parametrize(
    "claimed",
    [
        MEAN,
        10.93094,  # 7 significant digits
        10.931,  # 5 significant digits
        10.9,
        float(np.float32(MEAN)),  # computed in float32, printed in full
        float(np.float32(MEAN)) + 2 * 9.5367431640625e-07,  # float32 accumulation two ulps off
    ],
)
def test_honest_means_agree(claimed: float) -> None:
    assert agrees(claimed, MEAN, mean_noise(8, MAGNITUDE, claimed))


@pytest.mark.parametrize(
    "claimed",
    [
        10.930945978889465,  # a hand-edited 7th digit in a 17-digit number
        10.93099,  # 7 digits: 5e-5 away, beyond any float32 accumulation over 8 values near 10
        10.92,
        10.930935978898,  # 14 digits, not a float32 result: its 13th digit was edited
    ],
)
def test_dishonest_means_do_not(claimed: float) -> None:
    assert not agrees(claimed, MEAN, mean_noise(8, MAGNITUDE, claimed))


def test_float32_std_of_accuracy_fractions_agrees() -> None:
    acc = np.array([9012, 8931, 9104, 8877, 9050, 8990, 9120, 8955, 9033, 9001]) / 10000
    exact = float(acc.std())
    for ddof_free in (
        float(acc.astype(np.float32).std()),  # two-pass in float32
        float(np.sqrt(np.float32(np.mean(acc.astype(np.float32) ** 2) - np.mean(acc.astype(np.float32)) ** 2))),
    ):
        assert agrees(ddof_free, exact, std_noise(acc.size, float(acc.max()), ddof_free, exact))
    assert not agrees(exact * 1.01, exact, std_noise(acc.size, float(acc.max()), exact * 1.01, exact))


def test_rtol_is_a_method_tolerance_on_top() -> None:
    noise = Noise(0.0, 0.0)
    assert not agrees(1.0005, 1.0, noise)
    assert agrees(1.0005, 1.0, noise, rtol=1e-3)


def test_non_finite_never_agrees() -> None:
    assert not agrees(float("nan"), 1.0, Noise(1.0, 1.0))
    assert not agrees(1.0, float("inf"), Noise(1.0, 1.0))
    assert not agrees(float("inf"), float("inf"), Noise(1.0, 1.0))  # equal, yet no number
    assert not agrees(float("nan"), float("nan"), Noise(1.0, 1.0))


@given(st.floats(allow_nan=False, allow_infinity=False), st.floats(min_value=0.0, max_value=1.0))
def test_a_value_equal_to_its_recomputation_always_agrees(value: float, noise: float) -> None:
    """The exact-equality shortcut says what the tolerance says: a difference of 0 is within any slack."""
    assert agrees(value, value, Noise(noise, noise))
    assert agrees(value, value, Noise(0.0, 0.0), rtol=0.0)


def test_to_float32_rounds_to_the_nearest_float32() -> None:
    assert to_float32(0.1) == float(np.float32(0.1)) != 0.1
    assert to_float32(16777217.0) == 16777216.0  # 2^24 + 1: the first integer float32 cannot hold


def test_a_printed_zero_is_a_claim_of_none() -> None:
    """delta_mean 0.0 beside a real effect of -0.0087 is not "-0.0087 printed with one decimal"."""
    assert not agrees(-0.0, -0.0087, mean_noise(16, 13.0, -0.0))
    assert agrees(0.0, 0.0, mean_noise(16, 13.0, 0.0))
    assert agrees(0.0, 1e-15, mean_noise(16, 13.0, 0.0))  # float noise around an exact zero


def _float64_lists(rng: np.random.Generator) -> list[list[float]]:
    """Lists of many lengths and magnitudes, with -0.0, huge values and NaN."""
    lists = []
    for n in [*range(0, 300, 7), 1_000, 10_000]:
        values = rng.normal(0.0, 10.0 ** rng.integers(-8, 8), size=n)
        kind = n % 4
        if kind == 1:
            values[rng.random(n) < 0.5] = -0.0
        elif kind == 2 and n:
            values[rng.integers(0, n)] = rng.choice([1e308, -1e308, np.nan])
        lists.append(values.tolist())
    return lists


def test_float64_sum_is_the_exact_sum_rounded_once() -> None:
    for values in _float64_lists(np.random.default_rng(7)):
        got = float64_sum(values)
        if any(math.isnan(x) for x in values):
            assert math.isnan(got)
        else:
            assert got == float(sum(map(Fraction, values), Fraction(0))), len(values)
    assert float64_sum([-0.0] * 9).hex() == "0x0.0p+0"
    assert float64_sum([1e308, 1e308]) == math.inf and math.isnan(float64_sum([math.inf, -math.inf]))


@pytest.mark.parametrize("n", [5, 8, 16, 48, 1_000])
def test_float32_means_in_any_order_agree_with_the_float64_recomputation(n: int) -> None:
    """An agent's float32 mean (numpy's pairwise order, or left to right) printed in full lies within
    the float32 accumulation bound of the recomputed mean; twice the bound away does not agree."""
    rng = np.random.default_rng(n)
    for _ in range(20):
        values32 = (rng.random(n) * 10.0 ** rng.integers(-3, 4)).astype(np.float32)
        values = values32.tolist()
        recomputed = float64_sum(values) / n
        magnitude = max(map(abs, values))
        pairwise = float(np.float32(values32.sum(dtype=np.float32) / np.float32(n)))
        in_order = float(np.float32(np.cumsum(values32, dtype=np.float32)[-1] / np.float32(n)))
        for claimed in (pairwise, in_order):
            assert abs(claimed - recomputed) <= accumulation_noise(n, magnitude, U32)
            assert mean_agrees(claimed, recomputed, n, magnitude)
    assert not mean_agrees(recomputed + 2 * accumulation_noise(n, magnitude, U32), recomputed, n, magnitude)
