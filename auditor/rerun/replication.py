"""Judge the rerun's activity (R808) and its replication on shifted seeds (R809, R810).

Pure functions over the probe's ``activity`` object, per-seed lists and the
claim; :func:`judge_replication` gives the ``rerun.replication`` object.

The replication test (docs/rerun.md gives its error rates, measured by
``bench/replication.py``): with ``d`` the replication's paired differences
(idea - baseline, n seeds), its interval for the mean difference is
``mean(d) ± t(0.975, n-1) · sd(d) / √n``.  A claimed significant effect is

* replicated (true) when the replication's own verdict (the auditor's paired
  test at ``--alpha``) is significant in the claimed direction;
* contradicted (false) when the replication is significant the other way, or
  the claimed mean difference lies outside that interval (the replication
  rules out an effect as large as the one claimed);
* inconclusive (null) otherwise.

A claim of no effect is replicated when the replication is not significant,
and inconclusive when it is.  ``power`` is the chance a replication of n seeds
with the replication's spread detects the claimed difference (normal
approximation): a low power says an inconclusive replication was expected.
"""

from __future__ import annotations

import math
from typing import Any

from auditor.findings import Finding, Severity
from auditor.options.models import AuditOptions
from auditor.rerun import compare
from auditor.rules.rerun import R808, R809, R810
from auditor.stats.summary import t_quantile
from auditor.stats.verdicts import Verdict, classify_verdict

IDENTICAL_RTOL = 1e-12  # "identical": equal but for the last bits of a float's printing
Z_975 = 1.959963984540054


def activity_finding(activity: dict[str, Any]) -> Finding | None:
    """R808: an error for a run that imported torch and trained nothing, or that undid the probe; info when
    training was not observed."""
    status = activity.get("status")
    if status == "undone":
        return R808.finding(
            f"{activity.get('why')}: a script that takes the auditor's probe apart cannot show that it trained",
            pointer="/how_to_run",
        )
    if status == "no training":
        return R808.finding(
            "torch was imported, yet no optimizer step, module forward call or backward pass was observed: "
            "the report was produced without training",
            pointer="/how_to_run",
            recomputed={k: activity.get(k) for k in ("optimizer_steps", "forward_calls", "backward_calls")},
        )
    if status == "not observed":
        return R808.finding(
            f"training not observed: {activity.get('why')}", pointer="/how_to_run", severity=Severity.INFO
        )
    return None


def draw_offset() -> int:
    """A random seed offset in [1, 2**20]: fresh seeds, far from the usual small ones."""
    import secrets

    return 1 + secrets.randbelow(2**20)


def unusable(offset: int, why: str, seeds_shifted: int = 0) -> tuple[list[Finding], dict[str, Any]]:
    """R810 (inconclusive) and the ``replication`` object of a replication that gave nothing to test."""
    out = empty(offset, why)
    out["seeds_shifted"] = seeds_shifted
    return [_inconclusive(out)], out


def empty(offset: int, why: str) -> dict[str, Any]:
    """The ``replication`` object of a replication that gave no per-seed values."""
    return {
        "seed_offset": offset,
        "baseline": None,
        "idea": None,
        "delta_mean": None,
        "p_value": None,
        "verdict": None,
        "interval": None,
        "claimed_delta": None,
        "power": None,
        "seeds_shifted": 0,
        "replicated": None,
        "why": why,
    }


def judge_replication(
    claimed: dict[str, Any],
    first: dict[str, Any],
    replica: dict[str, Any],
    offset: int,
    seeds_shifted: int,
    options: AuditOptions,
) -> tuple[list[Finding], dict[str, Any]]:
    """Findings (R809, R810) and the ``replication`` object for the replica's report against the claim."""
    baseline, _ = compare.arm_values(replica, "baseline")
    idea, _ = compare.arm_values(replica, "idea")
    statistics = compare.rerun_statistics(claimed, replica, options)
    if baseline is None or idea is None or statistics is None:
        return unusable(offset, "the replication's report has no usable paired per-seed values", seeds_shifted)
    findings: list[Finding] = []
    identical = _identical_arms(first, baseline, idea)
    if identical:
        findings.append(_seed_independent(identical, offset, seeds_shifted))
    claimed_delta = _claimed_delta(claimed)
    claim = _claimed_verdict(claimed, options)
    n, sd = statistics.n_pairs, statistics.diff_summary.std_sample
    interval = _interval(statistics.delta_mean, sd, n)
    out = {
        "seed_offset": offset,
        "baseline": baseline,
        "idea": idea,
        "delta_mean": statistics.delta_mean,
        "p_value": statistics.p_value,
        "verdict": statistics.verdict.value,
        "interval": list(interval) if interval else None,
        "claimed_delta": claimed_delta,
        "power": _power(claimed_delta, sd, n),
        "seeds_shifted": seeds_shifted,
        "replicated": None,
        "why": None,
    }
    out["replicated"], out["why"] = _decide(claim, statistics.verdict, claimed_delta, interval)
    if identical:  # the same values again: nothing was replicated, whatever they say
        out["replicated"], out["why"] = None, "the replication repeated the first run's values"
    elif out["replicated"] is not True:
        findings.append(_inconclusive(out) if out["replicated"] is None else _contradicted(out))
    return findings, out


def _decide(
    claim: Verdict | None, verdict: Verdict, claimed_delta: float | None, interval: tuple[float, float] | None
) -> tuple[bool | None, str]:
    if claim is None:
        return None, "the claim states no verdict the replication could test"
    if claim is Verdict.NONE:
        if verdict is Verdict.NONE:
            return True, "no effect claimed, none found on fresh seeds"
        return None, f"no effect claimed, but the replication gives {verdict.value!r}"
    if verdict is claim:
        return True, f"significant again on fresh seeds: {verdict.value!r}"
    if verdict.significant:
        return False, f"the replication gives the opposite verdict, {verdict.value!r}"
    if claimed_delta is not None and interval is not None and not interval[0] <= claimed_delta <= interval[1]:
        return False, (
            f"the claimed mean difference {claimed_delta:.6g} lies outside the replication's 95% interval "
            f"[{interval[0]:.6g}, {interval[1]:.6g}]"
        )
    return None, "not significant on fresh seeds, yet compatible with the claimed difference"


def _interval(mean: float, sd: float | None, n: int) -> tuple[float, float] | None:
    if n < 2 or sd is None or not math.isfinite(sd) or not math.isfinite(mean):
        return None
    half = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
    return mean - half, mean + half


def _power(delta: float | None, sd: float | None, n: int) -> float | None:
    """P(a two-sided level-0.05 test on n paired seeds of spread ``sd`` detects ``delta``), normal approximation."""
    if delta is None or sd is None or n < 2 or not math.isfinite(sd):
        return None
    if sd == 0:
        return 1.0 if delta != 0 else 0.05
    shift = abs(delta) * math.sqrt(n) / sd
    return round(_phi(shift - Z_975) + _phi(-shift - Z_975), 4)


def _phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _claimed_delta(claimed: dict[str, Any]) -> float | None:
    baseline, _ = compare.arm_values(claimed, "baseline")
    idea, _ = compare.arm_values(claimed, "idea")
    if not baseline or not idea or len(baseline) != len(idea):
        return None
    return math.fsum(i - b for b, i in zip(baseline, idea)) / len(idea)


def _claimed_verdict(claimed: dict[str, Any], options: AuditOptions) -> Verdict | None:
    """The verdict the claim states, or else the one its own per-seed values give."""
    comparison = claimed.get("comparison")
    stated = classify_verdict(comparison.get("verdict") if isinstance(comparison, dict) else None)
    return stated or compare.rerun_verdict(claimed, claimed, options)


def _identical_arms(first: dict[str, Any], baseline: list[float], idea: list[float]) -> list[str]:
    arms = []
    for arm, values in (("baseline", baseline), ("idea", idea)):
        before, _ = compare.arm_values(first, arm)
        if before is not None and len(before) == len(values) and values:
            if all(compare.relative_difference(a, b) <= IDENTICAL_RTOL for a, b in zip(before, values)):
                arms.append(arm)
    return arms


def _seed_independent(arms: list[str], offset: int, seeds_shifted: int) -> Finding:
    which = " and ".join(arms)
    if seeds_shifted:
        return R809.finding(
            f"the {which} per-seed values are identical to the first run's although the replication shifted "
            f"{seeds_shifted} seed{'s' if seeds_shifted != 1 else ''} by {offset}: they do not depend on the seeds",
            pointer="/bench_report",
        )
    return R809.finding(
        f"the {which} per-seed values are identical to the first run's, and no seed was set through a function "
        "the probe shifts (torch, numpy, random): the replication could not draw fresh seeds",
        pointer="/bench_report",
        severity=Severity.WARNING,
    )


def _contradicted(out: dict[str, Any]) -> Finding:
    return R810.finding(
        f"the claimed effect did not replicate on fresh seeds (offset {out['seed_offset']}): {out['why']}; "
        f"replication delta_mean {out['delta_mean']:.6g}, p {out['p_value']:.4g}",
        pointer="/bench_report/comparison/verdict",
        claimed=out["claimed_delta"],
        recomputed=out["delta_mean"],
    )


def _inconclusive(out: dict[str, Any]) -> Finding:
    power = f" (power for the claimed difference: {out['power']:.2f})" if out.get("power") is not None else ""
    return R810.finding(
        f"the replication on fresh seeds (offset {out['seed_offset']}) is inconclusive: {out['why']}{power}",
        pointer="/bench_report/comparison/verdict",
        severity=Severity.WARNING,
    )
