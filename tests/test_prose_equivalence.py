"""Shortcuts of the prose checks and the p agreement give what the general path gives."""

from __future__ import annotations

import math

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from auditor import prose
from auditor.precision import printed
from auditor.pvalues import (
    DEFAULT_RESAMPLES,
    _COMMON_SORTED,
    CONVENTIONS,
    HITS_SLACK,
    Convention,
    PAgreement,
    _binomial_plausible,
    _claim_half_unit,
    _hit_ranges,
    monte_carlo_agreement,
)
from auditor.stats import PBand

# p-values, from-to pairs and what makes them thresholds or hyperparameter changes, among other claims.
_PIECES = [
    *("p=0.01475", "p < 0.05", "p-value of 0.03", "p ≤ .001", "P = 1.0", "p=1.5e-3", "p=5%", "criterion", "if"),
    *("from 10.93 to 10.92", "from 0.001 to 0.006", "from 90% to 91%", "lr", "epochs", "MSE", "from", "to"),
    *("7/8 wins", "delta_mean=0.5", "mean paired diff -0.25", "target", "expected", "mean", "delta"),
    *("a 4.1% reduction in test MSE", "improved by 2%", "and", "with"),
    *(" ", "  ", ", ", ". ", "; ", "(", ")", "\n", "0.5", "-"),
]


def _omit_some(claim: prose.PValueClaim | prose.DeltaClaim | prose.FromToClaim) -> bool:
    """An arbitrary test that lets some claims pass and not others."""
    return len(claim.text) % 2 == 0


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=24).map("".join))
def test_omitted_claims_are_only_left_out(text: str) -> None:
    """``omit`` drops the p-value, delta and from-to claims it holds for, and changes nothing else."""
    everything = prose.extract_claims(text)
    fewer = prose.extract_claims(text, omit=_omit_some)
    assert fewer.p_values == [p for p in everything.p_values if not _omit_some(p)]
    assert fewer.deltas == [d for d in everything.deltas if not _omit_some(d)]
    assert fewer.from_to == [ft for ft in everything.from_to if not _omit_some(ft)]
    assert (fewer.wins, fewer.relative_changes) == (everything.wins, everything.relative_changes)


def _hit_range_reference(
    claimed: float, half_unit: float, resamples: int, convention: Convention
) -> tuple[int, int] | None:
    """The hit range as first written, with max() and min()."""
    offset, scale = convention.offset, convention.scale
    denominator = resamples + offset
    slack = HITS_SLACK * max(1.0, claimed * denominator)
    low = math.ceil((claimed - half_unit) * denominator / scale - offset - slack)
    if claimed + half_unit >= 1.0 and scale > 1:
        high = resamples
    else:
        high = math.floor((claimed + half_unit) * denominator / scale - offset + slack)
    low, high = max(low, 0), min(high, resamples)
    return (low, high) if low <= high else None


@settings(max_examples=2000, deadline=None)
@given(
    st.floats(0.0, 1.0),
    st.sampled_from([0.0, 5e-9, 5e-6, 5e-5, 5e-4, 5e-3, 0.05, 0.5]),
    st.integers(1, 2_000_000),
    st.sampled_from(CONVENTIONS),
)
# The lowest count's bound is exactly the highest count (1e-7 - 0 - slack = 0.0 = floor(2e-7)): one count.
@example(1e-7, 0.0, 1, CONVENTIONS[0])
def test_hit_range_matches_its_reference(claimed: float, half_unit: float, resamples: int, convention: Convention) -> None:
    ranges = [hits for _, _, hits in _hit_ranges(claimed, half_unit, (resamples,), (convention,))]
    assert ranges == [r for r in [_hit_range_reference(claimed, half_unit, resamples, convention)] if r is not None]


@st.composite
def _estimates(draw: st.DrawFn) -> float:
    """A p an agent may print: some convention's estimate for some count, rounded to some digits or not at
    all, moved by a few ulps or by float noise; or any probability."""
    if draw(st.booleans()):
        return draw(st.floats(0.0, 1.0))
    resamples = draw(st.sampled_from(_COMMON_SORTED))
    convention = draw(st.sampled_from(CONVENTIONS))
    hits = draw(st.integers(0, resamples))
    p = min(1.0, convention.scale * (hits + convention.offset) / (resamples + convention.offset))
    p = draw(st.sampled_from([p, float(f"{p:.{draw(st.integers(1, 17))}g}")]))
    for _ in range(draw(st.integers(0, 40))):
        p = math.nextafter(p, draw(st.sampled_from([0.0, 1.0])))
    return min(1.0, max(0.0, p * (1 + draw(st.sampled_from([0.0, 3e-8, -3e-8, 1e-7, -1e-7])))))


@settings(max_examples=3000, deadline=None)
@given(_estimates(), st.sampled_from([None, 3, 7_777, 12_345_678]))
# A 17-digit claim of 295/20000 and of (294+1)/(20000+1): the slack, not the rounding, lets them in.
@example(295 / 20000, None)
@example(295 / 20001, None)
@example(2 * 133 / 1000, None)
def test_every_count_and_convention_the_shortcut_skips_has_no_hits(claimed: float, extra: int | None) -> None:
    """_hit_ranges' one test per count (no integer near claim * B nor claim * (B + 1)) skips only counts for
    which no convention has a hit range; the ranges of the rest are those of the reference."""
    half_unit = _claim_half_unit(claimed)
    counts = _COMMON_SORTED if extra is None else tuple(sorted({*_COMMON_SORTED, extra}))
    expected = [
        (resamples, convention.name, hits)
        for resamples in counts
        for convention in CONVENTIONS
        if (hits := _hit_range_reference(claimed, half_unit, resamples, convention)) is not None
    ]
    assert [(b, c.name, hits) for b, c, hits in _hit_ranges(claimed, half_unit, counts)] == expected


def _monte_carlo_reference(claimed: float, band: PBand) -> PAgreement | None:
    """The first count and convention, counts outermost, whose hit range (as first written) is plausible:
    of the counts assumed when an answer states none."""
    half_unit = _claim_half_unit(claimed)
    for resamples in sorted(DEFAULT_RESAMPLES):
        for convention in CONVENTIONS:
            hits = _hit_range_reference(claimed, half_unit, resamples, convention)
            if hits is not None and _binomial_plausible(hits, resamples, band, convention.tail):
                return PAgreement(True, f"Monte-Carlo, B={resamples}, {convention.name}", resamples)
    return None


@settings(max_examples=500, deadline=None)
@given(st.floats(1e-4, 0.6), st.floats(0.9, 1.1), st.integers(2, 5))
# B=9,999 with (hits+1)/(B+1) comes before B=50,000 with hits/B: the counts are the outer loop.
@example(0.1264139671024897, 0.12694 / 0.1264139671024897, 5)
def test_monte_carlo_agreement_tries_counts_then_conventions(p_true: float, ratio: float, digits: int) -> None:
    claimed = round(p_true * ratio, digits)
    assume(printed(claimed).digits > 1)  # a one-digit print is read apart (tests/test_pvalues.py)
    got = monte_carlo_agreement(claimed, PBand(p_true, p_true))
    assert (got if got.consistent else None) == _monte_carlo_reference(claimed, PBand(p_true, p_true))


_RESAMPLE_PIECES = [
    *("10,000 sign flips", "n_resamples=20000", "5k permutations", "B = 5000", "all 256 sign flips", "perm"),
    *("ΑΣ", "Σ", "İ", "K", "ſ", "σ", " ", "\n", ". ", "-", "resampled", "1000", " times"),
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(_RESAMPLE_PIECES), max_size=10).map("".join), max_size=4),
    st.integers(0, 120),
)
def test_stated_resample_counts_read_each_text_alone(texts: list[str], max_chars: int) -> None:
    """Folding all the texts at once and reading each one's span is reading each text on its own."""
    expected: dict[int, None] = {}
    budget = max_chars
    for text in texts:
        if budget <= 0:
            break
        expected.update(dict.fromkeys(prose.extract_resample_counts(text[:budget])))
        budget -= len(text)
    assert prose.stated_resample_counts(texts, max_chars) == tuple(expected)


@given(st.integers(0, 40))
def test_half_units_of_plain_decimals_are_the_formula(decimals: int) -> None:
    reported = prose.parse_number("1." + "5" * decimals if decimals else "1")
    assert reported is not None and reported.half_unit == 0.5 * 10.0**-decimals
