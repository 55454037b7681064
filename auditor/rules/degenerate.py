"""D5xx: degenerate experiments, where no verdict about the idea can be drawn."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from operator import ne

from auditor.answer.model import SweepEntry
from auditor.context import AuditContext
from auditor.findings import Finding, Severity, check_rule
from auditor.parse.strings import canonical_json
from auditor.stats.summary import min_two_sided_p
from auditor.stats.verdicts import Verdict

# Two per-seed values are "the same metric" below this relative difference:
# float32 noise, not a different outcome.
SAME_VALUE_RTOL = 1e-9


def _all_equal(values: Sequence[float], *, rtol: float = SAME_VALUE_RTOL) -> bool:
    """True when there are two or more ``values`` (finite) and all are the same number, within ``rtol``."""
    if len(values) < 2:
        return False
    spread = max(values) - min(values)
    return spread <= rtol * max(max(map(abs, values)), sys.float_info.min)  # min: the smallest normal double


@check_rule("D501", "idea-identical-to-baseline", Severity.ERROR)
def D501(ctx: AuditContext) -> Iterator[Finding]:
    """The idea's per-seed values are identical to the baseline's.

    ## What it does
    Fires when every per-seed value of the idea equals the baseline's value for
    the same seed, as printed. Values printed rounded may print alike while
    they differ: it stays silent when the answer's `per_seed_diffs` agree with
    them (A304 is silent) and one of them is non-zero on a seed printed rounded.

    ## Why is this bad?
    Identical numbers on every seed mean the intervention never changed the
    computation (a no-op: the code path was not reached, the change was cast
    away, or the same run was reported twice). "No measurable effect" is then
    not a finding about the idea at all; no verdict about it can be drawn.

    ## Example
    ```json
    "baseline": {"full": {"per_seed": [14.05, 15.06, 13.77]}},
    "idea":     {"full": {"per_seed": [14.05, 15.06, 13.77]}}
    ```

    ## How to fix
    Fix the no-op and rerun the idea arm: check that the intervention runs at
    all (log or assert its effect on one batch: the flag is read, the code
    path is reached, the result is not cast away), then report the new
    per-seed values and the verdict they give. No edit of the verdict fields
    fixes this answer, so the other verdict rules advise none while this
    rule fires; the answer fails until the idea's numbers come from a run in
    which it ran.
    """
    if not ctx.idea_is_baseline:
        return
    yield D501.finding(
        f"the idea's {len(ctx.baseline.per_seed)} per-seed values are identical to the baseline's: the "
        "intervention changed nothing, so no verdict about the idea can be drawn; fix the no-op and rerun "
        "the idea arm",
        pointer=ctx.idea.stats_pointer + "/per_seed",
        claimed=ctx.report.comparison.verdict,
        recomputed="no-op",
    )


@check_rule("D502", "constant-nonzero-difference", Severity.WARNING)
def D502(ctx: AuditContext) -> Iterator[Finding]:
    """Every seed shows exactly the same non-zero difference.

    ## What it does
    Fires when the per-seed differences idea − baseline are all equal but not
    zero (zero variance of the paired differences).

    ## Why is this bad?
    Independent seeds never move two training runs by the same amount to the
    last digit. A constant shift means the "idea" is a deterministic offset of
    the baseline (a transformed metric, a copied column plus a constant), and a
    t-based MDE or CI of width zero is meaningless.

    ## Example
    ```json
    "per_seed_diffs": [-0.01, -0.01, -0.01, -0.01, -0.01, -0.01, -0.01, -0.01]
    ```

    ## How to fix
    Check that the idea arm was trained, not derived from the baseline's
    numbers (a copied column plus a constant, a transformed metric), and rerun
    it with its own seeds.
    """
    r = ctx.recomputed
    if r is None or r.n_pairs < 2 or not _all_equal(r.diffs) or not any(r.diffs):  # all zero: D501's
        return
    yield D502.finding(
        f"all {r.n_pairs} per-seed differences equal {r.diffs[0]:.6g}: a constant shift on "
        "every seed is not the variation of independent runs",
        pointer=ctx.pointer("comparison", "per_seed_diffs"),
        recomputed=r.diffs[0],
    )


@check_rule("D503", "constant-metric", Severity.WARNING)
def D503(ctx: AuditContext) -> Iterator[Finding]:
    """Every seed of an arm gives the same metric value.

    ## What it does
    Fires, per arm, when all of its per-seed values are the same number.

    ## Why is this bad?
    Different seeds change initialisation and data order, so identical results
    mean the seed was never applied (or the metric is saturated or constant):
    the "paired seeds" are one run repeated, and any test over them is void.

    ## Example
    ```json
    "idea": {"full": {"per_seed": [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]}}
    ```

    ## How to fix
    Make the seed reach every source of randomness (`torch.manual_seed`,
    `numpy`, `random`, the data loader's shuffling and workers) and rerun the
    arm. If the metric is saturated (0% error on every seed), choose a harder
    task or a finer metric where the arms can differ.
    """
    for arm in ctx.arms():
        if _all_equal(arm.per_seed):
            yield D503.finding(
                f"all {len(arm.per_seed)} seeds of the {arm.name} give the same metric "
                f"{arm.per_seed[0]:.10g}: the seed was not applied or the metric is constant",
                pointer=arm.stats_pointer + "/per_seed",
                recomputed=arm.per_seed[0],
            )


def _same_entries(a: list[SweepEntry], b: list[SweepEntry]) -> bool:
    """Whether two sweeps list the same (config, mean) entries, in any order; configs are the same
    when their canonical JSON is."""
    return Counter((canonical_json(e.cfg), e.mean) for e in a) == Counter((canonical_json(e.cfg), e.mean) for e in b)


@check_rule("D504", "copied-sweep", Severity.ERROR)
def D504(ctx: AuditContext) -> Iterator[Finding]:
    """The idea's sweep is a copy of the baseline's while the per-seed results differ.

    ## What it does
    Fires when the idea's learning-rate sweep lists the same configs with
    exactly the same means as the baseline's sweep, although the full per-seed
    results of the two arms differ.

    ## Why is this bad?
    If the idea changes training, its sweep means must differ from the
    baseline's too. Identical sweeps next to different final results mean the
    idea was never swept (the baseline's table was pasted), so its tuning and
    its best config are unsupported.

    ## Example
    ```json
    "baseline": {"sweep": [{"cfg": {"lr": 0.003}, "mean": 13.86}]},
    "idea":     {"sweep": [{"cfg": {"lr": 0.003}, "mean": 13.86}]}
    ```

    ## How to fix
    Run the idea's own sweep over the grid the baseline used, report its
    means, and take the idea's `best_cfg` from it.
    """
    b, i = ctx.baseline, ctx.idea
    if b.per_seed == i.per_seed:
        return  # a no-op idea: D501 already says so
    if not b.sweep or not i.sweep or not _same_entries(b.sweep, i.sweep):
        return
    yield D504.finding(
        f"the idea's sweep ({len(i.sweep)} entries) is an exact copy of the baseline's, yet their "
        "per-seed results differ: the idea was not actually swept",
        pointer=i.sweep_pointer or "",
    )


def _claims_significance(ctx: AuditContext) -> bool:
    c = ctx.report.comparison
    if ctx.claimed_verdict in (Verdict.BETTER, Verdict.WORSE) or c.system_worked:
        return True
    return c.p_value < ctx.options.alpha


@check_rule("D505", "underpowered-seeds", Severity.ERROR)
def D505(ctx: AuditContext) -> Iterator[Finding]:
    """Too few seeds for any result to reach significance.

    ## What it does
    Fires when the smallest p-value an exact two-sided sign-flip test can
    produce, 2/2^m for m non-zero paired differences, is above alpha (m <= 5
    at alpha 0.05; a seed whose two arms tie flips to itself and adds nothing
    to the test; a tie of values printed rounded may be none, and counts as
    non-zero). It is an error when the answer nevertheless claims
    significance, a warning otherwise. An idea identical to its baseline on
    every seed (m = 0) is D501's.

    ## Why is this bad?
    With 5 paired seeds even a perfect 5/5 win gives p = 0.0625: the experiment
    could never have found an effect, so "no measurable effect" is
    uninformative and "significant" is impossible.

    ## Example
    ```json
    "n_seeds": 4, "comparison": {"n_pairs": 4, "p_value": 0.01, "verdict": "idea better (significant)"}
    ```

    ## How to fix
    Run more seeds: at alpha 0.05 the exact two-sided sign-flip test needs at
    least 6 non-zero paired differences to reach significance, and 8 or more to
    have useful power. Until then report the result as inconclusive, never as
    significant.
    """
    b, i = ctx.baseline.per_seed, ctx.idea.per_seed
    n = len(b)
    if n == 0 or n != len(i):
        return
    m = sum(map(ne, i, b))
    if ctx.rounding is not None:  # a tie printed rounded may be none: the rounding decides it (A312)
        m = max(m, ctx.rounding.nonzero_max)
    floor = min_two_sided_p(m)
    if m == 0 or floor <= ctx.options.alpha:
        return
    claims = _claims_significance(ctx)
    seeds = f"{n} paired seeds" if m == n else f"{n} paired seeds, of which only {m} differ between the arms,"
    yield D505.finding(
        f"with {seeds} the smallest achievable two-sided p is 2/2^{m} = {floor:.4g} > "
        f"alpha {ctx.options.alpha:g}: no result could reach significance"
        + ("; the answer claims significance anyway" if claims else ""),
        pointer=ctx.pointer("comparison", "n_pairs"),
        claimed=n,
        recomputed=floor,
        severity=Severity.ERROR if claims else Severity.WARNING,
    )


# A duplicate is only evidence of copying when a collision by chance is
# implausible: every value carries at least this many significant digits
# (float32 training metrics carry 7-9; counts and k/10000 accuracies do not).
DUPLICATE_MIN_DIGITS = 6


def _carries_digits(value: float, wanted: int) -> bool:
    """``value`` carries at least ``wanted`` significant digits: in its shortest repr and,
    when it is a float32, in its float32 repr too (printed as a double, it shows digits it never had)."""
    from auditor.stats.precision import near_float32, printed, to_float32

    if printed(value).digits < wanted:
        return False
    if not near_float32(value):
        return True
    import numpy as np  # Python has no float32 repr; only a long value duplicated in both arms gets here

    shortest32 = np.format_float_positional(np.float32(to_float32(value)), unique=True, trim="-")
    return (len(shortest32.lstrip("-").replace(".", "").lstrip("0")) or 1) >= wanted


@check_rule("D506", "duplicated-seed", Severity.ERROR)
def D506(ctx: AuditContext) -> Iterator[Finding]:
    """Two seeds report identical values in both arms: one training counted twice.

    ## What it does
    Fires when two seeds have exactly the same baseline value and exactly
    the same idea value (to full precision) while those values carry at least
    6 significant digits, so that a chance collision is implausible. Integer
    counts and short decimals (accuracies of k/10000) collide honestly and
    are not judged.

    ## Why is this bad?
    Different seeds give different trainings. A pair repeated to the last
    digit is a copied row, and the paired test counts it twice: the p-value
    and the win count overstate the evidence.

    ## Example
    ```json
    "baseline": {"full": {"per_seed": [10.067484855651855, 12.066851615905762, 10.067484855651855]}},
    "idea": {"per_seed": [10.052755355834961, 12.058212280273438, 10.052755355834961]}
    ```

    ## How to fix
    Find the bug that reported one training twice (a loop that reuses the last
    result, a copied row) and rerun the duplicated seed, so that every seed is
    one training.
    """
    b, i = ctx.baseline.per_seed, ctx.idea.per_seed
    if len(b) < 2 or len(b) != len(i):
        return
    first_seen: dict[tuple[float, float], int] = {}
    groups: dict[int, list[int]] = {}
    for k, pair in enumerate(zip(b, i)):
        if pair in first_seen:
            groups.setdefault(first_seen[pair], [first_seen[pair]]).append(k)
        else:
            first_seen[pair] = k
    for first, seeds in groups.items():
        base, idea = b[first], i[first]
        if not (_carries_digits(base, DUPLICATE_MIN_DIGITS) and _carries_digits(idea, DUPLICATE_MIN_DIGITS)):
            continue
        listed = ", ".join(map(str, seeds))
        yield D506.finding(
            f"seeds {listed} report identical values in both arms (baseline {base:.10g}, idea {idea:.10g}): "
            f"a copied run, not {len(seeds)} trainings; the paired test counts it {len(seeds)} times. "
            "Report each seed's own run",
            pointer=ctx.idea.stats_pointer + f"/per_seed/{seeds[1]}",
            claimed=seeds,
            recomputed=[first],
        )
