"""Pure recomputation of the statistics an answer reports.

Small functions over sequences of floats (an arm's per-seed tuple, a list, a numpy array), no I/O.  The
arithmetic is done on Python floats, every sum correctly rounded (:func:`~auditor.stats.precision.float64_sum`):
no numpy import or per-call cost on the few values of an answer, and overflow is quiet (it is checked on
the results).  The facts below were established from the stored real answers (``shared/seeds``) and are
the reference the arithmetic rules check against:

* ``d_i = idea_i - baseline_i`` per seed; ``delta_mean = mean(d)``.
* A *win* is a seed where the idea is strictly better in the metric's direction
  (``d_i < 0`` when lower is better).
* Reported ``std`` is the population std (``ddof=0``); ``ddof=1`` is accepted too.
* ``p_value`` is a two-sided paired sign-flip permutation test on ``mean(d)``, exact (meet-in-the-middle
  over all 2^n patterns) for n <= 30 (the default exact_max_n; at most 40) (:mod:`auditor.stats.signflip`).
  Seed 000 claims 0.01475 = 295/20000, a Monte-Carlo estimate from 20,000 resamples of the exact
  4/256 = 0.015625; :mod:`auditor.stats.pvalues` decides which claimed p-values an honest test could print.
* ``mde`` is the 95% CI half-width of the mean paired difference,
  ``t(0.975, n-1) * sd(d, ddof=1) / sqrt(n)``; seed 000 used t = 2.365 from a
  table, hence the 1e-3 relative tolerance of the MDE rules.

How claimed numbers are compared with these (printing, float32) is :mod:`auditor.stats.precision`'s
business.  scipy.stats is deliberately not imported (about a second of start-up); the t quantile comes
from a table of ``scipy.special.stdtrit``'s values (:mod:`auditor.stats.t_table`), and from ``stdtrit``
itself beyond it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import sub, truediv

from auditor.stats import t_table
from auditor.stats.precision import U32, U64, agrees, as_floats, float64_sum, std_noise
from auditor.stats.signflip import (
    EXACT_MAX_N_CAP,
    LIST_HALF_MAX_N,
    PBand,
    SignFlipResult,
    min_two_sided_p,
    sign_flip_on_floats,
    sign_flip_test,
)
from auditor.stats.signflip_loo import (
    LEAVE_ONE_OUT_SHARED_MAX_N,
    leave_one_out_p_bound,
    leave_one_out_p_values,
    leave_one_out_within_twice_p,
)
from auditor.stats.signflip_randomized import RANDOMIZED_CONFIDENCE, RANDOMIZED_MAX_CELLS, RANDOMIZED_MIN_RESAMPLES
from auditor.stats.signflip_ties import sums_are_exact, tie_tolerance
from auditor.stats.verdicts import Verdict

__all__ = [  # the sign-flip test lives in auditor.stats.signflip(_randomized); these names stay importable from here
    "EXACT_MAX_N_CAP",
    "LEAVE_ONE_OUT_SHARED_MAX_N",
    "LIST_HALF_MAX_N",
    "RANDOMIZED_CONFIDENCE",
    "RANDOMIZED_MAX_CELLS",
    "RANDOMIZED_MIN_RESAMPLES",
    "RTOL_MDE",
    "RTOL_VALUES",
    "U32",
    "U64",
    "ArmSummary",
    "NonFiniteStatistics",
    "PBand",
    "Recomputed",
    "SignFlipResult",
    "count_wins",
    "decide_verdict",
    "leave_one_out_p_bound",
    "leave_one_out_p_values",
    "leave_one_out_within_twice_p",
    "mde_halfwidth",
    "mean_ratio",
    "min_two_sided_p",
    "recompute",
    "sign_flip_test",
    "std_ddof_matching",
    "summarize",
    "sums_are_exact",
    "t_quantile",
    "tie_tolerance",
    "values_close",
    "with_differences",
]

# Relative tolerance for means, stds and per-seed differences.  The agents'
# scripts compute in float32, whose rounding is ~6e-8 relative, so 1e-6 leaves
# room for accumulation while still catching any hand-edited digit.
RTOL_VALUES = 1e-6
# Relative tolerance for the MDE: agents use a t quantile from a table (2.365).
RTOL_MDE = 1e-3


def values_close(claimed: float, recomputed: float, *, rtol: float = RTOL_VALUES, scale: float | None = None) -> bool:
    """``|claimed - recomputed| <= rtol * max(|recomputed|, scale)``.

    ``scale`` is the magnitude of the operands a value was derived from: a
    difference of two numbers near 10 carries float32 noise of ~1e-6 whatever
    its own size.
    """
    if not (math.isfinite(claimed) and math.isfinite(recomputed)):
        return False
    if scale is not None and not math.isfinite(scale):
        scale = None  # an overflowed scale (a ratio to a near-zero mean) would accept anything
    ref = max(abs(recomputed), abs(scale) if scale is not None else 0.0)
    if ref == 0.0:
        return claimed == 0.0
    return abs(claimed - recomputed) <= rtol * ref


@dataclass(frozen=True)
class ArmSummary:
    """Recomputed summary of n per-seed values: one arm's, or the paired differences."""

    n: int
    mean: float
    std_population: float  # ddof=0, what the seeds report
    std_sample: float | None  # ddof=1; None when n < 2
    magnitude: float = 0.0  # max |value|: what float noise of the arm's statistics scales with


def summarize(values: Iterable[float]) -> ArmSummary:
    """Mean and both stds of n >= 1 ``values``, as numpy's ``mean`` and ``std`` define them."""
    return _summary(as_floats(values))


def _summary(values: list[float]) -> ArmSummary:
    """:func:`summarize` on Python floats (n >= 1)."""
    n = len(values)
    mean, squares = _moments(values)
    magnitude = max(map(abs, values))
    if math.isnan(mean) and any(map(math.isnan, values)):
        magnitude = math.nan  # numpy's max propagates a NaN; Python's depends on where it stands
    return ArmSummary(
        n=n,
        mean=mean,
        std_population=math.sqrt(squares / n),
        std_sample=math.sqrt(squares / (n - 1)) if n >= 2 else None,
        magnitude=magnitude,
    )


def _moments(values: list[float]) -> tuple[float, float]:
    """The mean of n >= 1 ``values`` and the sum of squared deviations that ``np.var`` divides by n - ddof.

    numpy's two-pass formula on Python floats, both sums :func:`float64_sum`'s;
    ``np.std`` is the square root of the variance.
    """
    mean = float64_sum(values) / len(values)
    return mean, float64_sum([(x - mean) * (x - mean) for x in values])


def mean_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """``np.mean(numerators / denominators)`` of n >= 1 pairs with no zero denominator.

    Elementwise division, then :func:`float64_sum` divided by n; a quotient or
    sum that overflows gives inf or NaN quietly, as numpy's would.
    """
    quotients = list(map(truediv, numerators, denominators))
    return float64_sum(quotients) / len(quotients)


def std_ddof_matching(claimed: float, summary: ArmSummary, widths: tuple[float, float] = (0.0, 0.0)) -> int | None:
    """Which ddof (0 or 1) reproduces ``claimed``, printed and computed honestly; None when neither does.

    ``widths``: how far each std may move with the rounding of the printed values (auditor.stats.rounding).
    """
    for ddof, value in ((0, summary.std_population), (1, summary.std_sample)):
        if value is None:
            continue
        if agrees(claimed, value, std_noise(summary.n, summary.magnitude, claimed, value), width=widths[ddof]):
            return ddof
    return None


@functools.lru_cache(maxsize=1024)
def t_quantile(q: float, df: int) -> float:
    """Quantile of Student's t with ``df`` degrees of freedom.

    The MDE's t(0.975, df) comes from a generated table of ``stdtrit``'s values
    (:mod:`auditor.stats.t_table`, bit for bit): importing scipy.special costs a cold
    audit a few hundred ms.  Other quantiles, and df beyond the table, ask
    ``stdtrit``.  Cached: stdtrit inverts a distribution function (~0.1 ms a
    call), and an audit asks for the same few quantiles several times (MDE, its
    rules), as does a batch.
    """
    if q == t_table.Q and isinstance(df, int) and 1 <= df <= len(t_table.T_975):
        return t_table.T_975[df - 1]
    from scipy.special import stdtrit  # lighter than scipy.stats, but not free

    return float(stdtrit(df, q))


def mde_halfwidth(d: Iterable[float], *, confidence: float = 0.95) -> float | None:
    """CI half-width of the mean of the n values ``d``: t((1+c)/2, n-1) * sd(d, ddof=1) / sqrt(n)."""
    values = as_floats(d)
    if len(values) < 2:
        return None
    return _mde(math.sqrt(_moments(values)[1] / (len(values) - 1)), len(values), confidence)


def _mde(sd: float, n: int, confidence: float = 0.95) -> float:
    """:func:`mde_halfwidth` of n >= 2 differences whose sd (ddof=1) is ``sd``."""
    return t_quantile((1 + confidence) / 2, n - 1) * sd / math.sqrt(n)


def count_wins(d: Iterable[float], *, lower_is_better: bool) -> int:
    """Seeds where the idea is strictly better: d < 0 when lower is better, d > 0 otherwise."""
    return _count_wins(as_floats(d), lower_is_better)


def _count_wins(d: Iterable[float], lower_is_better: bool) -> int:
    return sum(map((0.0).__gt__ if lower_is_better else (0.0).__lt__, d))


def decide_verdict(p_value: float, delta_mean: float, *, lower_is_better: bool, alpha: float) -> Verdict:
    """Verdict from a two-sided p and the sign of the mean difference."""
    if p_value >= alpha or delta_mean == 0:
        return Verdict.NONE
    idea_better = delta_mean < 0 if lower_is_better else delta_mean > 0
    return Verdict.BETTER if idea_better else Verdict.WORSE


@dataclass(frozen=True)
class Recomputed:
    """Everything the auditor recomputes from the paired per-seed values."""

    n_pairs: int
    baseline: ArmSummary
    idea: ArmSummary
    diffs: tuple[float, ...]  # the n_pairs differences idea - baseline, in seed order
    diff_summary: ArmSummary  # of diffs: its mean is delta_mean, its std_sample the MDE's sd
    delta_mean: float
    idea_wins: int
    p_value: float
    p_value_one_sided: float
    p_method: str
    p_resamples: int
    p_band: PBand  # two-sided p-values honest arithmetic on these values can give
    p_band_one_sided: PBand
    n_nonzero: int  # per-seed differences that are not exactly zero
    mde: float | None
    mde_rel_pct: float | None
    verdict: Verdict

    def to_dict(self) -> dict[str, float | str | None]:
        """The JSON output's ``recomputed`` object; a non-finite number is written as null."""
        return {
            "n_pairs": self.n_pairs,
            "delta_mean": _finite_or_none(self.delta_mean),
            "idea_wins": self.idea_wins,
            "p_value": _finite_or_none(self.p_value),
            "p_value_one_sided": _finite_or_none(self.p_value_one_sided),
            "mde": _finite_or_none(self.mde),
            "mde_rel_pct": _finite_or_none(self.mde_rel_pct),
            "verdict": self.verdict.value,
            "p_value_method": self.p_method,
            "baseline_mean": _finite_or_none(self.baseline.mean),
            "idea_mean": _finite_or_none(self.idea.mean),
        }


def _finite_or_none(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


class NonFiniteStatistics(ValueError):
    """The per-seed values are finite but their statistics are not (they overflow a double)."""


def recompute(
    baseline: Iterable[float],
    idea: Iterable[float],
    *,
    lower_is_better: bool,
    alpha: float = 0.05,
    exact_max_n: int = EXACT_MAX_N_CAP,
    resamples: int = 100_000,
    seed: int = 0,
) -> Recomputed:
    """Recompute the paired comparison from the n >= 1 per-seed values of each arm.

    Raises :class:`NonFiniteStatistics` when finite inputs give non-finite
    statistics (values near the float range; the schema bounds per-seed values
    so that audited answers never get here).  An MDE or relative MDE that
    overflows (a near-zero baseline mean) is None, like one that is undefined.
    """
    base_values, idea_values = as_floats(baseline), as_floats(idea)
    if len(base_values) != len(idea_values) or not base_values:
        raise ValueError("baseline and idea must be non-empty vectors of the same length")
    diffs = list(map(sub, idea_values, base_values))  # idea - baseline: numpy's subtraction, bit for bit
    return _from_differences(
        _summary(base_values),
        _summary(idea_values),
        diffs,
        (base_values, idea_values),
        lower_is_better=lower_is_better,
        alpha=alpha,
        exact_max_n=exact_max_n,
        resamples=resamples,
        seed=seed,
    )


def with_differences(
    recomputed: Recomputed,
    diffs: Iterable[float],
    *,
    lower_is_better: bool,
    alpha: float = 0.05,
    exact_max_n: int = EXACT_MAX_N_CAP,
    resamples: int = 100_000,
    seed: int = 0,
) -> Recomputed:
    """``recomputed`` with every statistic of the differences (delta, wins, the sign-flip p and its bands,
    n_nonzero, the MDE, the verdict) recomputed from ``diffs`` instead, the arms' summaries kept.

    For an answer whose own ``per_seed_diffs`` are more precise than its rounded per-seed values and agree
    with them (:class:`auditor.stats.rounding.Rounding` chooses them).  Raises :class:`NonFiniteStatistics` as
    :func:`recompute` does.
    """
    values = as_floats(diffs)
    if len(values) != recomputed.n_pairs:
        raise ValueError("one difference per pair is needed")
    return _from_differences(
        recomputed.baseline,
        recomputed.idea,
        values,
        None,
        lower_is_better=lower_is_better,
        alpha=alpha,
        exact_max_n=exact_max_n,
        resamples=resamples,
        seed=seed,
    )


def _from_differences(
    base: ArmSummary,
    idea_summary: ArmSummary,
    diffs: list[float],
    operands: tuple[list[float], list[float]] | None,
    *,
    lower_is_better: bool,
    alpha: float,
    exact_max_n: int,
    resamples: int,
    seed: int,
) -> Recomputed:
    """The :class:`Recomputed` of two arms' summaries and their n >= 1 differences; ``operands`` are the
    per-seed values the differences were subtracted from (their float noise bounds the test's ties), when
    they were."""
    n = len(diffs)
    abs_sum = float64_sum(list(map(abs, diffs)))
    diff_summary = _summary(diffs)
    delta = diff_summary.mean
    if not all(map(math.isfinite, (delta, abs_sum, base.std_population, idea_summary.std_population))):
        raise NonFiniteStatistics(
            "the per-seed values are too large: their differences or spreads overflow a 64-bit float"
        )
    base_values, idea_values = operands if operands is not None else (None, None)
    test = sign_flip_on_floats(diffs, base_values, idea_values, exact_max_n=exact_max_n, resamples=resamples, seed=seed)
    assert test.two_sided_band is not None and test.one_sided_band is not None  # bands=True (the default) made them
    mde = None if (sd := diff_summary.std_sample) is None else _mde(sd, n)  # no sd when n < 2
    mde_rel = 100.0 * mde / abs(base.mean) if mde is not None and base.mean != 0 else None
    return Recomputed(
        n_pairs=n,
        baseline=base,
        idea=idea_summary,
        diffs=tuple(diffs),
        diff_summary=diff_summary,
        delta_mean=delta,
        idea_wins=_count_wins(diffs, lower_is_better),
        p_value=test.p_two_sided,
        p_value_one_sided=test.p_one_sided,
        p_method=test.method,
        p_resamples=test.resamples,
        p_band=test.two_sided_band,
        p_band_one_sided=test.one_sided_band,
        n_nonzero=test.n_nonzero,
        mde=_finite_or_none(mde),
        mde_rel_pct=_finite_or_none(mde_rel),  # a near-zero baseline mean leaves it undefined
        verdict=decide_verdict(test.p_two_sided, delta, lower_is_better=lower_is_better, alpha=alpha),
    )


def benjamini_hochberg(p_values: Sequence[float], q: float) -> float | None:
    """The largest p that is a discovery at FDR ``q`` (every p at or below it is); None if none is."""
    ordered = sorted(p_values)
    m = len(ordered)
    cutoff = None
    for k, p in enumerate(ordered, start=1):
        if p <= q * k / m:
            cutoff = p
    return cutoff
