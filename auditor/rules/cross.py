"""X9xx: cross-answer checks, which only a batch of answers can make.

They run after every single audit of a batch (``auditor audit DIR`` or several
paths) and read two things per answer: the facts :func:`auditor.extracts.cross_facts` stores in
``AuditResult.cross`` while the answer is audited (track, model,
baseline config, baseline per-seed values) and the result's claimed verdict
and recomputed p-value.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from auditor.extracts import DEFAULT_VERDICT_POINTER, CrossFacts, compact_cross
from auditor.findings import Finding, Rule, Severity
from auditor.stats.precision import printed
from auditor.stats.summary import benjamini_hochberg
from auditor.stats.verdicts import classify_verdict

# Two baseline values are "the same measurement" within float32 noise and the rounding of their
# printing; beyond both the runs differ.
SAME_VALUE_RTOL = 1e-6
# How many other answers a finding names before it says "and k more".
MAX_NAMED = 3

X901 = Rule(
    "X901",
    "baseline-not-reproducible-across-answers",
    Severity.WARNING,
    doc="""Two answers report different baseline per-seed values for the same setup.

    ## What it does
    Groups the answers of a batch by track, model, baseline best config and
    number of seeds, and fires on every answer whose baseline per-seed values
    differ (beyond float32 noise, relative 1e-6) from another answer of the
    same group. Values agree within the rounding of their printing too: a
    value printed as 10.0675 is any value within 5e-5 of it, so a rounded copy
    of a baseline is the same baseline. The finding names the other answer and
    the first seed that differs. Seeds are assumed to be numbered the same way in every answer
    (the bench runs seeds 0..n-1).

    ## Why is this bad?
    The baseline is the same training run: same data, model, config and seeds.
    If two answers disagree about its results, either the benchmark is not
    deterministic (so per-seed pairing and a permutation p-value built on it are
    noisier than they look) or one answer did not run what it reports.

    ## Example
    `a.txt` and `b.txt`, both `tabular` / `mlp_tiny`, baseline `{"lr": 0.006}`,
    8 seeds:
    ```json
    a.txt: "baseline": {"full": {"per_seed": [10.0675, 12.0669, ...]}}
    b.txt: "baseline": {"full": {"per_seed": [10.0702, 12.0669, ...]}}
    ```

    ## How to fix
    Check that the benchmark is deterministic (the seed fixes data order,
    initialisation and dropout; deterministic kernels), then rerun the baseline
    of the answer whose values deviate and compare again.
    """,
)

X902 = Rule(
    "X902",
    "significance-lost-under-fdr-control",
    Severity.WARNING,
    doc="""A significant claim does not survive false-discovery control across the batch.

    ## What it does
    Takes every answer of the batch whose p-value could be recomputed (one
    tested idea each, m in all), applies the Benjamini–Hochberg procedure at
    `--fdr` (default 0.05) to the recomputed p-values, and fires on each
    answer that claims a significant result but is not among the
    Benjamini–Hochberg discoveries.

    ## Why is this bad?
    A pipeline that tests m ideas at alpha = 0.05 expects alpha·m of them to
    come out "significant" by chance alone, even if no idea works. A claim that
    is significant on its own but not after controlling the false-discovery
    rate is plausibly one of those: it needs a confirmation run before anyone
    builds on it. The batch summary reports m and the expected number of false
    positives.

    ## Example
    Forty answers in one batch; one claims "idea better (significant)" with
    recomputed p = 0.03. Benjamini–Hochberg at 0.05 needs the smallest p to be
    at most 0.05/40 = 0.00125 before anything is a discovery, so the claim
    is flagged.

    ## How to fix
    Treat the claim as a candidate, not a result: confirm it with a fresh run on
    new seeds before building on it. Audit unrelated experiments in separate
    batches, and set the false-discovery rate with `fdr` in `[tool.auditor]`
    (`--fdr`).
    """,
)


@dataclass(frozen=True)
class CrossSummary:
    """Multiple-testing figures of a batch.

    * ``ideas_tested`` m: answers with a recomputed p-value;
    * ``significant_claims``: answers claiming a significant verdict;
    * ``significant_recomputed``: recomputed p below alpha;
    * ``discoveries`` R: Benjamini–Hochberg discoveries at ``fdr``;
    * ``expected_false_positives`` = fdr·R, the bound Benjamini–Hochberg puts
      on the expected number of false discoveries among the R that survive;
    * ``expected_by_chance`` = alpha·m, how many "significant" results m tests
      give by chance alone when no idea works.
    """

    ideas_tested: int
    significant_claims: int
    significant_recomputed: int
    discoveries: int
    fdr: float
    alpha: float

    @property
    def expected_false_positives(self) -> float:
        return self.fdr * self.discoveries

    @property
    def expected_by_chance(self) -> float:
        return self.alpha * self.ideas_tested

    def to_dict(self) -> dict[str, Any]:
        return {
            "ideas_tested": self.ideas_tested,
            "significant_claims": self.significant_claims,
            "significant_recomputed": self.significant_recomputed,
            "discoveries": self.discoveries,
            "fdr": self.fdr,
            "alpha": self.alpha,
            # Rounded so that 0.05 * 3 reads 0.15, not 0.15000000000000002.
            "expected_false_positives": round(self.expected_false_positives, 12),
            "expected_by_chance": round(self.expected_by_chance, 12),
        }


def _p_value(result: Any) -> float | None:
    p = (result.recomputed or {}).get("p_value")
    return float(p) if isinstance(p, (int, float)) and math.isfinite(p) else None


def _claims_significance(result: Any) -> bool:
    verdict = classify_verdict((result.claimed or {}).get("verdict"))
    return verdict is not None and verdict.significant


def _group_key(facts: CrossFacts) -> tuple[Any, Any, str, int] | None:
    """(track, model, baseline config, seeds): answers with one key share a baseline; None: no group."""
    if facts.track is None or facts.model is None or facts.cfg_text is None or facts.per_seed is None:
        return None  # without the full setup and its values two answers cannot be compared
    return (facts.track, facts.model, facts.cfg_text, len(facts.per_seed))


def _first_difference(a: Sequence[float], b: Sequence[float]) -> int | None:
    if type(a) is array and type(b) is array and a == b:
        return None  # equal values (compact facts, compared in C) are within any tolerance
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        gap = abs(x - y)
        # Float32 noise, and the rounding of each value as printed: 10.0675 is any value within 5e-5 of it.
        if gap > SAME_VALUE_RTOL * max(abs(x), abs(y)) and gap > (
            SAME_VALUE_RTOL * max(abs(x), abs(y)) + _printed_half_unit(x) + _printed_half_unit(y)
        ):
            return i
    return None


def _printed_half_unit(value: float) -> float:
    """Half a unit of the last digit ``value`` was printed with (its literal, or its shortest repr)."""
    return printed(value).half_unit if math.isfinite(value) else 0.0


def _values(member: tuple[int, Any, CrossFacts]) -> Sequence[float]:
    values = member[2].per_seed
    assert values is not None  # _group_key groups only facts that hold their values
    return values


def _x901_for_group(members: list[tuple[int, Any, CrossFacts]]) -> dict[int, list[Finding]]:
    """Cluster one group by baseline values; every answer differs from all other clusters."""
    clusters: list[list[tuple[int, Any, CrossFacts]]] = []
    for member in members:
        values = _values(member)
        for cluster in clusters:
            if _first_difference(values, _values(cluster[0])) is None:
                cluster.append(member)
                break
        else:
            clusters.append([member])
    out: dict[int, list[Finding]] = {}
    if len(clusters) < 2:
        return out
    for c_index, cluster in enumerate(clusters):
        others = [m for other_index, other in enumerate(clusters) if other_index != c_index for m in other]
        for member in cluster:
            out[member[0]] = [_x901_finding(member, others)]
    return out


def _x901_finding(member: tuple[int, Any, CrossFacts], others: list[tuple[int, Any, CrossFacts]]) -> Finding:
    cross = member[2]
    mine = _values(member)
    # Clusters are built against their first member, so name an answer that really differs.
    first = next((m for m in others if _first_difference(mine, _values(m)) is not None), others[0])
    theirs = _values(first)
    seed = _first_difference(mine, theirs) or 0
    names = ", ".join(r.source for _, r, _ in others[:MAX_NAMED])
    if len(others) > MAX_NAMED:
        names += f" and {len(others) - MAX_NAMED} more"
    return X901.finding(
        f"baseline per-seed values differ from {names} for the same track {cross.track!r}, model "
        f"{cross.model!r}, baseline config {cross.cfg_text} and {len(mine)} seeds "
        f"(seed {seed}: {mine[seed]:.10g} here, {theirs[seed]:.10g} in {first[1].source}): the benchmark is "
        "not deterministic, or one of the answers does not report what was run",
        pointer=f"{cross.baseline_pointer}/{seed}",  # the first seed that differs, where the reader looks
        claimed=mine[seed],
        recomputed=theirs[seed],
    )


def x901(results: Sequence[Any]) -> dict[int, list[Finding]]:
    """X901 findings by result index."""
    groups: dict[tuple[Any, Any, str, int], list[tuple[int, Any, CrossFacts]]] = {}
    for index, result in enumerate(results):
        facts = compact_cross(result.cross)  # a batch's kept results hold them compact already
        if facts is None:
            continue
        key = _group_key(facts)
        if key is not None:
            groups.setdefault(key, []).append((index, result, facts))
    out: dict[int, list[Finding]] = {}
    for members in groups.values():
        if len(members) > 1:
            out.update(_x901_for_group(members))
    return out


def x902(results: Sequence[Any], *, fdr: float, alpha: float) -> tuple[dict[int, list[Finding]], CrossSummary]:
    """X902 findings by result index, and the batch's multiple-testing summary."""
    tested = [(i, p) for i, r in enumerate(results) if (p := _p_value(r)) is not None]
    m = len(tested)
    cutoff = benjamini_hochberg([p for _, p in tested], fdr) if m else None
    discoveries = sum(1 for _, p in tested if cutoff is not None and p <= cutoff)
    claiming = [(index, p) for index, p in tested if _claims_significance(results[index])]
    out: dict[int, list[Finding]] = {}
    for index, p in claiming:
        if cutoff is not None and p <= cutoff:
            continue
        result = results[index]
        bar = f"p <= {cutoff:.4g}" if cutoff is not None else f"p <= {fdr / m:.4g} for the smallest p, and none has it"
        facts = compact_cross(result.cross)
        pointer = facts.verdict_pointer if facts is not None else DEFAULT_VERDICT_POINTER
        out[index] = [
            X902.finding(
                f"claims significance with recomputed p = {p:.4g}, but across the {m} ideas tested in this batch "
                f"Benjamini-Hochberg at FDR {fdr:g} needs {bar} ({discoveries} discoveries); about "
                f"{alpha * m:.1f} of {m} tests come out significant by chance alone at alpha {alpha:g}: "
                "confirm this result before building on it",
                pointer=pointer,
                claimed=(result.claimed or {}).get("verdict"),
                recomputed="not significant after FDR control",
            )
        ]
    summary = CrossSummary(
        ideas_tested=m,
        significant_claims=len(claiming),
        significant_recomputed=sum(1 for _, p in tested if p < alpha),
        discoveries=discoveries,
        fdr=fdr,
        alpha=alpha,
    )
    return out, summary


def cross_findings(
    results: Sequence[Any], *, fdr: float, alpha: float
) -> tuple[dict[int, list[Finding]], CrossSummary]:
    """Every cross-answer finding by result index, and the summary."""
    found = x901(results)
    fdr_findings, summary = x902(results, fdr=fdr, alpha=alpha)
    for index, items in fdr_findings.items():
        found.setdefault(index, []).extend(items)
    return found, summary
