"""A3xx: the numbers of the report against the numbers recomputed from its per-seed values.

Every check compares one claimed field with :class:`auditor.stats.summary.Recomputed`
and stays silent when the field is absent ("flag contradictions only, never
absence") or when the arms could not be paired (``ctx.recomputed is None``);
A301 is the exception, because it explains why nothing could be paired.
The p-value and MDE checks (A307-A310) live in :mod:`.arithmetic_inference`,
the sweep check A311 in :mod:`.arithmetic_sweep`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from auditor.answer.model import ArmView
from auditor.context import AuditContext
from auditor.findings import Finding, Rule, Severity, check_rule
from auditor.stats.precision import mean_agrees
from auditor.stats.summary import ArmSummary, std_ddof_matching

# Offending per-seed indices quoted in one message before "and N more".
MAX_LISTED = 5


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def _fmt_within(x: float, width: float) -> str:
    """``x`` to the digit of ``width`` (how far rounded data let it move), never finer than :func:`_fmt`."""
    if not (math.isfinite(x) and math.isfinite(width)) or width <= 0 or x == 0:
        return _fmt(x)
    digits = math.floor(math.log10(abs(x))) - math.floor(math.log10(width)) + 1
    return f"{x:.{min(max(digits, 1), 10)}g}"


def report_recomputed(
    rule: Rule,
    what: str,
    claimed: float,
    source: str,
    value: float,
    *,
    pointer: str,
    hint: str = "",
    severity: Severity | None = None,
    width: float = 0.0,
) -> Finding:
    """The finding of a claimed number that is not the recomputed ``value``, advising to report ``value``.

    Reads "``what`` is claimed as 0.001 but ``source`` 0.015625``hint``; report 0.015625":
    ``source`` names the computation up to its value ("the mean of its 8 per-seed values is").
    ``width``: how far the value may move with the rounding of the printed per-seed values
    (:mod:`auditor.stats.rounding`); the value is then given to that precision, never more.
    """
    shown = _fmt(value) if not width else _fmt_within(value, width)
    if width:
        hint = f" (within ±{width:.2g}, the rounding of the printed per-seed values){hint}"
    return rule.finding(
        f"{what} is claimed as {_fmt(claimed)} but {source} {shown}{hint}; report {shown}",
        pointer=pointer,
        claimed=claimed,
        recomputed=value,
        severity=severity,
    )


def _arm_label(arm: ArmView) -> str:
    return "baseline" if arm.name == "baseline" else "idea"


# --- A301 -------------------------------------------------------------------


def _claimed_counts(ctx: AuditContext) -> list[tuple[str, str, int]]:
    """(label, pointer, value) of every count the report states, per-seed lengths excluded."""
    c = ctx.report.comparison
    counts = []
    if ctx.report.n_seeds is not None:
        counts.append(("n_seeds", ctx.pointer("n_seeds"), ctx.report.n_seeds))
    for arm in ctx.arms():
        counts.append((f"{arm.name} n", arm.stats_pointer + "/n", arm.stats.n))
    counts.append(("comparison.n_pairs", ctx.pointer("comparison", "n_pairs"), c.n_pairs))
    if c.per_seed_diffs is not None:
        counts.append(("len(per_seed_diffs)", ctx.pointer("comparison", "per_seed_diffs"), len(c.per_seed_diffs)))
    return counts


@check_rule("A301", "count-mismatch", Severity.ERROR)
def A301(ctx: AuditContext) -> Iterator[Finding]:
    """The seed counts of the report disagree with each other.

    ## What it does
    Compares `n_seeds`, each arm's `n`, `comparison.n_pairs`, the length of
    each arm's `per_seed` list and the length of `per_seed_diffs`. When both
    `per_seed` lists have the same length, that length is the truth and every
    count that differs is reported; when they differ, the arms cannot be
    paired and nothing else is recomputed.

    ## Why is this bad?
    A count that does not match the data means a seed was dropped, added or
    copied by hand after the run, and every statistic built on the pairs is
    suspect.

    ## Example
    ```json
    "n_seeds": 8,
    "baseline": {"full": {"n": 8, "per_seed": [10.1, 12.1, 9.6, 10.0, 8.8, 11.8, 12.0, 13.0]}},
    "comparison": {"n_pairs": 9}
    ```

    ## How to fix
    Count the per-seed values and write that count everywhere the report
    states one: `n_seeds`, each arm's `n`, `comparison.n_pairs`, and one
    `per_seed_diffs` entry per seed. When the arms list different numbers of
    seeds, rerun the missing seeds (or drop the unpaired ones from both arms and
    say so in `limitations`); never pad a list to make the counts agree.
    """
    base_len, idea_len = len(ctx.baseline.per_seed), len(ctx.idea.per_seed)
    if base_len != idea_len:
        listed = ", ".join(f"{label} {value}" for label, _, value in _claimed_counts(ctx))
        yield A301.finding(
            f"the baseline has {base_len} per-seed values but the idea has {idea_len}: the arms cannot be "
            f"paired, so no statistic was recomputed (stated counts: {listed}); report one value per seed "
            "in both arms",
            pointer=ctx.idea.stats_pointer + "/per_seed",
            claimed=idea_len,
            recomputed=base_len,
        )
        return
    for label, pointer, value in _claimed_counts(ctx):
        if value != base_len:
            message = f"{label} is {value} but both arms list {base_len} per-seed values"
            yield A301.correction(message, base_len, pointer=pointer, claimed=value)


# --- A302 / A303 ------------------------------------------------------------


def _arm_summaries(ctx: AuditContext) -> list[tuple[ArmView, ArmSummary]]:
    r = ctx.recomputed
    return [] if r is None else [(ctx.baseline, r.baseline), (ctx.idea, r.idea)]


@check_rule("A302", "mean-mismatch", Severity.ERROR)
def A302(ctx: AuditContext) -> Iterator[Finding]:
    """An arm's reported mean is not the mean of its per-seed values.

    ## What it does
    Recomputes the mean of each arm's `per_seed` list and compares it with the
    reported `mean`. The claim agrees when the recomputed mean rounds to it at
    the digits it was printed with, allowing for float32 accumulation over the
    n values (float64 for a full-precision claim that is not a float32 number).

    ## Why is this bad?
    The mean is the headline number of each arm; if it does not follow from
    the per-seed values, either the list or the mean was edited by hand.

    ## Example
    ```json
    "full": {"mean": 10.83, "per_seed": [10.1, 12.1, 9.6, 10.0, 8.8, 11.8, 12.0, 13.0]}
    ```

    ## How to fix
    Recompute the arm's mean from its `per_seed` list in code
    (`statistics.fmean(per_seed)`) and report it at full precision, or correct
    the per-seed value that was mistyped; the message gives the recomputed mean.
    """
    rounding = ctx.rounding
    if rounding is None:  # nothing recomputed (the rounding is of the recomputed statistics)
        return
    for arm, summary in _arm_summaries(ctx):
        claimed = arm.stats.mean
        width = rounding.mean_width(arm.name)
        if not mean_agrees(claimed, summary.mean, summary.n, summary.magnitude, width):
            source = f"the mean of its {summary.n} per-seed values is"
            yield report_recomputed(
                A302,
                f"{_arm_label(arm)} mean",
                claimed,
                source,
                summary.mean,
                pointer=arm.stats_pointer + "/mean",
                width=width,
            )


@check_rule("A303", "std-mismatch", Severity.ERROR)
def A303(ctx: AuditContext) -> Iterator[Finding]:
    """An arm's reported std matches neither the population nor the sample std.

    ## What it does
    Recomputes each arm's standard deviation with ddof=0 (what the real
    answers report) and ddof=1, and fires when the reported `std` matches
    neither, rounding-aware and allowing for float32 arithmetic (including a
    one-pass variance formula). The message says which ddof the other arm
    used when it matched.

    ## Why is this bad?
    A std that no convention reproduces was not computed from these seeds;
    the spread, and any effect size built on it, cannot be trusted.

    ## Example
    ```json
    "full": {"std": 2.5, "per_seed": [10.1, 12.1, 9.6, 10.0, 8.8, 11.8, 12.0, 13.0]}
    ```

    ## How to fix
    Compute `std` in code from the arm's `per_seed` list, with the same
    convention for both arms: `numpy.std(per_seed, ddof=0)` as the bench does,
    or `ddof=1`, and say which in `protocol_note`. The message gives both values.
    """
    rounding = ctx.rounding
    if rounding is None:  # nothing recomputed (the rounding is of the recomputed statistics)
        return
    summaries = _arm_summaries(ctx)
    matched = {
        arm.name: std_ddof_matching(
            arm.stats.std, summary, (rounding.std_width(arm.name, 0), rounding.std_width(arm.name, 1))
        )
        for arm, summary in summaries
    }
    for arm, summary in summaries:
        if matched[arm.name] is not None:
            continue
        other = "idea" if arm.name == "baseline" else "baseline"
        hint = ""
        if matched.get(other) is not None:
            hint = f" (the {other} arm's std matches ddof={matched[other]})"
        sample = "undefined" if summary.std_sample is None else _fmt(summary.std_sample)
        yield A303.finding(
            f"{_arm_label(arm)} std is claimed as {_fmt(arm.stats.std)} but the per-seed values give "
            f"{_fmt(summary.std_population)} with ddof=0 and {sample} with ddof=1{hint}; report one of them "
            "and say which",
            pointer=arm.stats_pointer + "/std",
            claimed=arm.stats.std,
            recomputed=summary.std_population,
        )


# --- A304 / A305 / A306 -----------------------------------------------------


@check_rule("A304", "per-seed-diff-mismatch", Severity.ERROR)
def A304(ctx: AuditContext) -> Iterator[Finding]:
    """A reported per-seed difference is not idea minus baseline for that seed.

    ## What it does
    Recomputes `idea_i - baseline_i` for every seed and compares it with
    `comparison.per_seed_diffs[i]`, rounding-aware, with a tolerance scaled
    to the magnitude of the two values subtracted (float32 noise of numbers
    near 10 is ~1e-6).
    The message lists the offending seeds; the pointer names the element
    when only one is wrong. Only differences that pass this check may stand
    for rounded per-seed values (A312): one that fails leaves the statistics
    to the per-seed values.

    ## Why is this bad?
    The test, the wins and the MDE are all computed from these differences;
    a wrong sign or a transposed value changes every one of them.

    ## Example
    ```json
    "baseline": {"full": {"per_seed": [10.07, 12.07]}},
    "idea": {"per_seed": [10.05, 12.06]},
    "comparison": {"per_seed_diffs": [-0.02, 0.01]}
    ```

    ## How to fix
    Compute every difference in code as `idea.per_seed[i] - baseline.per_seed[i]`
    (idea minus baseline, in the seed order of the arms) and write the list
    unedited; a reversed sign means the subtraction was baseline minus idea.
    """
    r, rounding, claimed = ctx.recomputed, ctx.rounding, ctx.report.comparison.per_seed_diffs
    if r is None or rounding is None or claimed is None or len(claimed) != r.n_pairs:
        return  # a length mismatch is A301's (the rounding exists exactly when r does)
    diffs = rounding.seed_diffs  # of the per-seed values: r's may be these very claims (auditor.stats.rounding)
    if tuple(claimed) == diffs:
        return  # every difference as computed (and finite, as every recomputed one is): nothing to bound
    # The same test that lets the claims stand for the differences: a claim failing here is never used.
    close = rounding.diff_agrees

    bad = [k for k in range(r.n_pairs) if not close(k, claimed[k])]
    if not bad:
        return
    pointer = ctx.pointer("comparison", "per_seed_diffs")
    reversed_sign = all(close(k, -claimed[k]) for k in bad)
    listed = "; ".join(
        f"seed {k}: claimed {_fmt(claimed[k])}, idea - baseline = {_fmt(diffs[k])}" for k in bad[:MAX_LISTED]
    )
    more = f"; and {len(bad) - MAX_LISTED} more" if len(bad) > MAX_LISTED else ""
    why = " (the sign is reversed: baseline - idea)" if reversed_sign else ""
    verb = "is" if len(bad) == 1 else "are"
    yield A304.finding(
        f"{len(bad)} of {r.n_pairs} per_seed_diffs {verb} not idea - baseline{why}: {listed}{more}",
        pointer=f"{pointer}/{bad[0]}" if len(bad) == 1 else pointer,
        claimed=[claimed[k] for k in bad],
        recomputed=[diffs[k] for k in bad],
    )


@check_rule("A305", "delta-mean-mismatch", Severity.ERROR)
def A305(ctx: AuditContext) -> Iterator[Finding]:
    """The reported delta_mean is not the mean of idea minus baseline.

    ## What it does
    Recomputes `mean(idea_i - baseline_i)` and compares it with
    `comparison.delta_mean`, rounding-aware, with a tolerance scaled to the
    arms' magnitude (a difference of two means near 10 carries their float32
    noise).

    ## Why is this bad?
    delta_mean is the effect the whole answer is about; a wrong value (or a
    reversed sign) misstates what the idea did.

    ## Example
    ```json
    "comparison": {"delta_mean": -0.0187}
    ```

    ## How to fix
    Set `delta_mean` to the mean of idea minus baseline over the seeds (the
    message gives it). If the sign was reversed, also check the direction words
    of the verdict and the prose ("reduction", "improved") against it.
    """
    r, rounding = ctx.recomputed, ctx.rounding
    if r is None or rounding is None:  # (the rounding exists exactly when r does)
        return
    claimed = ctx.report.comparison.delta_mean
    magnitude = max(r.baseline.magnitude, r.idea.magnitude)
    width = rounding.delta_width

    def close(value: float) -> bool:
        # Two means subtracted (or n differences averaged): twice the terms.
        return mean_agrees(value, r.delta_mean, 2 * r.n_pairs, magnitude, width)

    if close(claimed):
        return
    why = ""
    if r.delta_mean != 0 and close(-claimed):
        why = " (the sign is reversed: the claim is baseline - idea)"
    source = f"the mean of idea - baseline over {r.n_pairs} seeds is"
    pointer = ctx.pointer("comparison", "delta_mean")
    yield report_recomputed(A305, "delta_mean", claimed, source, r.delta_mean, pointer=pointer, hint=why, width=width)


@check_rule("A306", "wins-mismatch", Severity.ERROR)
def A306(ctx: AuditContext) -> Iterator[Finding]:
    """The reported idea_wins is not the number of seeds where the idea is strictly better.

    ## What it does
    Counts the seeds where the idea is strictly better in the metric's
    direction (`idea < baseline` when lower is better, `>` when higher is
    better; ties are not wins) and compares the count with
    `comparison.idea_wins`.

    ## Why is this bad?
    "7/8 wins" is the number readers remember; counting ties as wins or
    counting in the wrong direction overstates (or hides) the effect.

    ## Example
    ```json
    "metric_direction": "lower is better",
    "comparison": {"per_seed_diffs": [-0.01, 0.0, 0.02], "idea_wins": 2}
    ```

    ## How to fix
    Set `idea_wins` to the number of seeds where the idea is strictly better in
    the report's `metric_direction` (`idea < baseline` for "lower is better"):
    ties are not wins. Change the prose's "k/n wins" with it.
    """
    r, rounding = ctx.recomputed, ctx.rounding
    if r is None or rounding is None:  # (the rounding exists exactly when r does)
        return
    claimed = ctx.report.comparison.idea_wins
    fewest, most = rounding.wins
    if claimed == r.idea_wins or fewest <= claimed <= most:
        return  # (any count the rounded per-seed values allow: a difference within its rounding of zero)
    better = "a lower metric" if ctx.lower_is_better else "a higher metric"
    losses = sum(d > 0 for d in r.diffs) if ctx.lower_is_better else sum(d < 0 for d in r.diffs)
    why = ""
    if claimed == losses:
        why = " (the claim counts the seeds where the idea is worse: the direction is reversed)"
    elif claimed == r.idea_wins + r.diffs.count(0.0):  # -0.0 counts too: it equals 0.0
        why = " (the claim counts ties as wins)"
    yield A306.finding(
        f"idea_wins is claimed as {claimed} but the idea is strictly better ({better}) on {r.idea_wins} "
        f"of {r.n_pairs} seeds{why}; report {r.idea_wins}",
        pointer=ctx.pointer("comparison", "idea_wins"),
        claimed=claimed,
        recomputed=r.idea_wins,
    )
