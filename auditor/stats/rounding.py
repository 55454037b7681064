"""How far the statistics of printed per-seed values may be from those of the values the agent computed with.

Agents often print per-seed values rounded (4 decimals, 3-4 significant digits) while
they compute the means, stds, delta, p and MDE from the full values.  A printed value
x_i stands for every value within its half unit h_i (its literal's last digit,
:func:`auditor.stats.precision.printed`), so every statistic recomputed from the printed
values is an interval, and a claim inside it is honest:

* a mean moves by at most mean(h_i); a std (ddof 0 or 1) by sqrt(sum h_i²)/sqrt(n - ddof)
  (the std is Lipschitz in the Euclidean norm: centering is a projection);
* a difference d_i = idea_i - baseline_i by hd_i = hb_i + hi_i, delta_mean by mean(hd_i),
  the MDE t·sd(d)/sqrt(n) by t·sqrt(sum hd_i²)/sqrt(n(n - 1));
* a win is certain when d_i is better by more than hd_i, possible when its interval
  reaches the better side;
* the exact sign-flip p: with the observed sum positive, a sign pattern that flips the
  seeds F is at least as extreme exactly when sum_F d_i <= 0; for every value in the
  intervals that holds surely when sum_F (d_i + hd_i) <= 0 and possibly when
  sum_F (d_i - hd_i) <= 0.  Those counts are the one-sided sign-flip counts of the
  shifted values d_i ± hd_i, so the test itself (:func:`auditor.stats.signflip.sign_flip_on_floats`)
  gives the range, exact or randomized like the p.

A value printed with :data:`EXACT_DIGITS` or more significant digits is how a computed
float64 prints itself, one of :data:`FLOAT32_DIGITS` or more that is a float32 number how
a float32 metric does, and an arm of integers holds counts: all are taken as exact.  So are
all values of an answer whose ``per_seed_diffs`` are the differences of its printed values
bit for bit (accuracies of k/10000, printed whole): it computed with those values.
The p range also holds the p that exact rational arithmetic on the printed decimals
gives: the test of the differences of the printed decimals (each exact, rounded to a float
once) has a band of its own, which holds their exact ties.  A tie in binary float64 (float32
metrics) need not be one in the decimals, and an agent that computed with fractions got
that other, equally honest, p.

The differences come from the most precise data the answer gives that agrees with the rest: an
answer whose ``per_seed_diffs`` hold one finite entry per pair, each within the interval of the
printed values' difference (``|c_i - d_i| <= hd_i`` plus the claim's own half unit and float noise:
A304's test, :meth:`Rounding.diff_agrees`), takes every entry printed finer than the per-seed values
themselves (half unit below hd_i / 2) as that seed's difference, with its own half unit as interval
(10.9 and 10.9 beside a difference of -0.008639); the arms' means and stds stay those of the per-seed
values.  Could a lie use this?  Differences fabricated within the printed values' intervals are no
easier to make than fabricated full-precision per-seed values, which only ``--rerun`` catches; and
differences that disagree with the values are never used: A304 reports them and the per-seed values
decide the verdict (A312).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import cached_property
from operator import add, sub
from typing import TypedDict

from auditor.parse.literals import PrintedFloat, digits_and_half_unit, printed_text
from auditor.stats.precision import mean_agrees, near_float32
from auditor.stats.signflip import PBand, sign_flip_on_floats
from auditor.stats.summary import Recomputed, t_quantile, with_differences

# Significant digits from which a printed per-seed value is the value the agent computed with: a float64
# prints itself with 15 to 17; a float32 metric (torch's .item()) with 8 or more, and is a float32 number.
EXACT_DIGITS = 15
FLOAT32_DIGITS = 8


class _TestOptions(TypedDict):
    """The sign-flip test's options a :class:`Rounding` passes on to every test it runs."""

    exact_max_n: int
    resamples: int
    seed: int


def seed_half_unit(value: float) -> float:
    """Half a unit in the last digit ``value`` was printed with; 0 for a value printed at full precision
    (:data:`EXACT_DIGITS`)."""
    if not math.isfinite(value):
        return 0.0
    digits, half_unit = digits_and_half_unit(printed_text(value))
    full = digits >= EXACT_DIGITS or (digits >= FLOAT32_DIGITS and near_float32(value))
    return 0.0 if full and type(value) is not PrintedFloat else half_unit


def arm_half_units(values: Sequence[float]) -> tuple[float, ...]:
    """:func:`seed_half_unit` of each value; all 0 for an arm of integers (counts: exact)."""
    if all(type(x) is not PrintedFloat and math.isfinite(x) and float(x).is_integer() for x in values):
        return (0.0,) * len(values)
    return tuple(map(seed_half_unit, values))


def _decimal_difference(baseline: float, idea: float, diff: float) -> float:
    """The difference of the printed decimals of ``idea`` and ``baseline``, exactly, rounded to a float once;
    ``diff`` (the float difference) when their decimals are equal."""
    if baseline == idea and printed_text(baseline) == printed_text(idea):
        return diff
    return float(Fraction(printed_text(idea)) - Fraction(printed_text(baseline)))


class Rounding:
    """The intervals of the statistics of one answer's printed per-seed values, and the differences every
    statistic of the comparison is recomputed from (see the module): :attr:`recomputed` is what the rules read."""

    def __init__(
        self,
        baseline: Sequence[float],
        idea: Sequence[float],
        recomputed: Recomputed,
        *,
        lower_is_better: bool,
        alpha: float,
        exact_max_n: int,
        resamples: int,
        seed: int,
        claimed_diffs: Sequence[float] | None = None,
    ) -> None:
        self._baseline, self._idea, self._claimed = baseline, idea, claimed_diffs
        self._lower_is_better = lower_is_better
        self._test_options: _TestOptions = {"exact_max_n": exact_max_n, "resamples": resamples, "seed": seed}
        self.seed_diffs = recomputed.diffs  # of the per-seed values as printed
        if claimed_diffs is not None and tuple(claimed_diffs) == recomputed.diffs:
            # The answer's differences are those of the printed values, bit for bit: they are its data.
            self.baseline_h = self.idea_h = (0.0,) * len(baseline)
        else:
            self.baseline_h = arm_half_units(baseline)
            self.idea_h = arm_half_units(idea)
        self.seed_diff_h = tuple(map(add, self.baseline_h, self.idea_h))
        chosen = self._finer_claims()
        # Seeds whose difference is the answer's own (a claim finer than the per-seed values), in order.
        self.claimed_seeds: tuple[int, ...] = ()
        self.diff_h, self.recomputed = self.seed_diff_h, recomputed
        if chosen is not None:
            values, self.diff_h, self.claimed_seeds = chosen
            self.recomputed = with_differences(
                recomputed,
                values,
                lower_is_better=lower_is_better,
                alpha=alpha,
                exact_max_n=exact_max_n,
                resamples=resamples,
                seed=seed,
            )
        self._r = self.recomputed
        # Differences known only to their rounding: every interval of theirs below is a point otherwise.
        self.coarse = any(self.diff_h)

    def diff_agrees(self, k: int, claimed: float) -> bool:
        """``claimed`` is seed k's idea - baseline of the printed values, within their rounding, its own printed
        digits and float noise (A304's test; the only way the answer's differences are ever used)."""
        scale = max(abs(self._baseline[k]), abs(self._idea[k]))  # float32 noise scales with the operands
        return mean_agrees(claimed, self.seed_diffs[k], 1, scale, self.seed_diff_h[k])

    @cached_property
    def claims_agree(self) -> bool:
        """The answer's ``per_seed_diffs`` hold one finite entry per pair, each :meth:`diff_agrees`."""
        claimed = self._claimed
        if claimed is None or len(claimed) != len(self.seed_diffs):
            return False
        return all(math.isfinite(c) and self.diff_agrees(k, c) for k, c in enumerate(claimed))

    @cached_property
    def claims_show_a_change(self) -> bool:
        """The agreeing ``per_seed_diffs`` are non-zero on a seed whose values are printed rounded: the idea
        changed something even where its values print like the baseline's (D501 then stays silent)."""
        claimed = self._claimed
        return self.claims_agree and any(c != 0 and h > 0 for c, h in zip(claimed, self.seed_diff_h))  # type: ignore[arg-type]

    def _finer_claims(self) -> tuple[list[float], tuple[float, ...], tuple[int, ...]] | None:
        """(differences, their half units, the seeds taken from the claims) when some agreeing claimed
        difference is printed finer than the per-seed values (half unit below hd_i / 2); None otherwise."""
        if not any(self.seed_diff_h) or not self.claims_agree:
            return None
        values, widths, seeds = list(self.seed_diffs), list(self.seed_diff_h), []
        for k, claimed in enumerate(self._claimed):  # type: ignore[arg-type]
            half_unit = seed_half_unit(claimed)
            if 2 * half_unit < self.seed_diff_h[k]:
                values[k], widths[k] = float(claimed), half_unit
                seeds.append(k)
        return (values, tuple(widths), tuple(seeds)) if seeds else None

    @property
    def n(self) -> int:
        return len(self.diff_h)

    def mean_width(self, arm: str) -> float:
        """How far an arm's mean may move: mean(h_i)."""
        h = self.baseline_h if arm == "baseline" else self.idea_h
        return math.fsum(h) / len(h)  # (0 for values printed at full precision)

    def std_width(self, arm: str, ddof: int) -> float:
        """How far an arm's std (ddof 0 or 1) may move: sqrt(sum h_i²)/sqrt(n - ddof)."""
        h = self.baseline_h if arm == "baseline" else self.idea_h
        if len(h) - ddof <= 0:
            return 0.0
        return math.sqrt(math.fsum(x * x for x in h) / (len(h) - ddof))

    @cached_property
    def delta_width(self) -> float:
        """How far delta_mean may move: mean(hd_i) (of the differences as chosen)."""
        return math.fsum(self.diff_h) / self.n if self.coarse else 0.0

    @cached_property
    def wins(self) -> tuple[int, int]:
        """(fewest, most) wins the intervals allow: seeds surely better, seeds whose interval reaches better."""
        r = self._r
        if not self.coarse:
            return r.idea_wins, r.idea_wins
        # Better is d < 0 when lower is better: read every difference with the sign that makes better positive.
        sign = -1.0 if self._lower_is_better else 1.0
        better = [sign * d for d in r.diffs]
        surely = sum(b - h > 0 for b, h in zip(better, self.diff_h))
        possibly = sum(b + h > 0 for b, h in zip(better, self.diff_h))
        return surely, possibly

    @cached_property
    def mde_width(self) -> float:
        """How far the MDE t·sd(d, ddof=1)/sqrt(n) may move."""
        n = self.n
        if not self.coarse or n < 2:
            return 0.0
        sd_width = math.sqrt(math.fsum(h * h for h in self.diff_h) / (n - 1))
        return t_quantile(0.975, n - 1) * sd_width / math.sqrt(n)

    @cached_property
    def mde_rel_width(self) -> float:
        """How far 100·mde/|baseline mean| may move (0 when the baseline mean's interval holds zero)."""
        r = self._r
        base, base_width = abs(r.baseline.mean), self.mean_width("baseline")
        if not (self.coarse or base_width) or r.mde is None or r.mde_rel_pct is None:
            return 0.0
        if base <= base_width:
            return math.inf
        high = 100.0 * (r.mde + self.mde_width) / (base - base_width)
        low = 100.0 * max(r.mde - self.mde_width, 0.0) / (base + base_width)
        return max(high - r.mde_rel_pct, r.mde_rel_pct - low)

    @cached_property
    def nonzero_max(self) -> int:
        """Differences that may be non-zero: those printed non-zero, and zeros with a rounding."""
        return sum(d != 0 or h > 0 for d, h in zip(self._r.diffs, self.diff_h))

    @cached_property
    def p_bands(self) -> tuple[PBand, PBand]:
        """(two-sided, one-sided) range of the exact p over every value the printed ones stand for, and of
        the exact p of the printed decimals, joined with the recomputed bands (float near-ties): it only
        widens them."""
        r = self._r
        low2, high2 = r.p_band.low, r.p_band.high
        low1, high1 = r.p_band_one_sided.low, r.p_band_one_sided.high
        decimal = list(map(_decimal_difference, self._baseline, self._idea, r.diffs))
        for k in self.claimed_seeds:  # a claimed difference is its own decimal, rounded to a float once
            decimal[k] = r.diffs[k]
        if decimal != list(r.diffs):  # the printed decimals' own test (its band holds their exact ties)
            result = sign_flip_on_floats(decimal, None, None, **self._test_options)
            two, one = result.two_sided_band, result.one_sided_band
            assert two is not None and one is not None  # bands=True (the default) made them
            low2, high2, low1, high1 = (
                min(low2, two.low),
                max(high2, two.high),
                min(low1, one.low),
                max(high1, one.high),
            )
        if self.coarse:
            # The decimals' own offsets from the float differences, on top of the rounding: a bound for both.
            h = [hd + abs(x - d) for hd, x, d in zip(self.diff_h, decimal, r.diffs)]
            total = math.fsum(r.diffs)
            for sign in (1.0, -1.0) if total == 0 else ((1.0,) if total > 0 else (-1.0,)):
                oriented = [sign * d for d in r.diffs]
                surely = self._one_sided(list(map(add, oriented, h)))
                low1, low2 = min(low1, surely.low), min(low2, min(1.0, 2 * surely.low))
                possibly_values = list(map(sub, oriented, h))
                if math.fsum(possibly_values) <= 0:
                    high1 = high2 = 1.0  # the observed sum may be zero or of either sign: every pattern may count
                else:
                    possibly = self._one_sided(possibly_values)
                    high1, high2 = max(high1, possibly.high), max(high2, min(1.0, 2 * possibly.high))
        return PBand(low2, high2), PBand(low1, high1)

    def _one_sided(self, values: list[float]) -> PBand:
        """The one-sided band, in the direction of the values' (positive) sum, of the sign-flip test on ``values``."""
        result = sign_flip_on_floats(values, None, None, **self._test_options)
        return result.one_sided_band or PBand(result.p_one_sided, result.p_one_sided)

    @property
    def p_band(self) -> PBand:
        return self.p_bands[0]

    @property
    def p_band_one_sided(self) -> PBand:
        return self.p_bands[1]
