"""What every check rule receives: the validated answer, its normalised arms,
the recomputed statistics and the options."""

from __future__ import annotations

import dataclasses
from functools import cached_property
from itertools import islice
from typing import TYPE_CHECKING, Any

from auditor.answer.model import Answer, ArmView, BenchReport, swept_keys
from auditor.options.models import AuditOptions
from auditor.parse.pointers import join_pointer
from auditor.stats.pvalues import PAgreement, exact_agreement, monte_carlo_agreement
from auditor.stats.summary import PBand, Recomputed

if TYPE_CHECKING:
    from auditor.stats.rounding import Rounding
from auditor.stats.verdicts import Verdict, classify_verdict


@dataclasses.dataclass(frozen=True)
class AuditContext:
    """Read-only input of a check rule.

    ``document`` is the JSON object as written (after NaN/Infinity were
    rejected); ``answer`` is None when the input was a bare bench report.
    ``report_pointer`` is ``"/bench_report"`` or ``""`` for a bare report.
    ``recomputed`` is None when the arms cannot be paired (A301 explains why);
    it is :attr:`rounding`'s, of the most precise differences the answer gives
    (its own ``per_seed_diffs`` when they agree with rounded per-seed values),
    so every rule and the output read one recomputation.  ``rounding`` holds the
    intervals of the statistics of the printed per-seed values (None exactly
    when ``recomputed`` is).
    """

    document: dict[str, Any]
    answer: Answer | None
    report: BenchReport
    report_pointer: str
    baseline: ArmView
    idea: ArmView
    recomputed: Recomputed | None
    rounding: Rounding | None
    options: AuditOptions

    def claimed_summary(self) -> dict[str, Any]:
        """The comparison's claimed statistics, as a result keeps them beside the recomputed ones."""
        c = self.report.comparison
        return {
            "n_pairs": c.n_pairs,
            "delta_mean": c.delta_mean,
            "idea_wins": c.idea_wins,
            "p_value": c.p_value,
            "mde": c.mde,
            "mde_rel_pct": c.mde_rel_pct,
            "verdict": c.verdict,
        }

    def pointer(self, *tokens: str | int) -> str:
        """Pointer into the bench report: ``ctx.pointer("comparison", "p_value")``."""
        return join_pointer(self.report_pointer, *tokens)

    @property
    def lower_is_better(self) -> bool:
        return self.report.lower_is_better

    @cached_property
    def claimed_verdict(self) -> Verdict | None:
        """The comparison verdict classified by its words (its first ``max_prose_chars`` characters)."""
        return classify_verdict(self.report.comparison.verdict[: self.options.max_prose_chars])

    @property
    def idea_is_baseline(self) -> bool:
        """The idea's per-seed values equal the baseline's on every seed (D501): there is no result to judge.

        Unless they are printed rounded and the answer's ``per_seed_diffs``, which agree with them, are not
        all zero: the idea changed something the printing hides (:attr:`Rounding.claims_show_a_change`).
        """
        b = self.baseline.per_seed
        if not b or b != self.idea.per_seed:  # tuples: equal lengths and values (-0.0 == 0.0)
            return False
        rounding = self.rounding
        return rounding is None or not rounding.claims_show_a_change

    def no_verdict_to_advise(self) -> bool:
        """D501 fires (the idea never ran): the verdict rules advise no verdict then, since none is right.

        Only while D501 is reported as failing, so ignoring it or lowering its severity never silences
        them too.
        """
        from auditor.findings import Severity
        from auditor.result import reports_failing

        return self.idea_is_baseline and reports_failing("D501", Severity.ERROR, self.options)

    def arms(self) -> tuple[ArmView, ArmView]:
        return (self.baseline, self.idea)

    @cached_property
    def swept_keys(self) -> tuple[frozenset[str], frozenset[str]]:
        """Config keys the baseline's and the idea's sweeps vary (empty without a sweep); T601-T603 read them."""
        return tuple(frozenset(swept_keys(arm.sweep)) if arm.sweep else frozenset() for arm in self.arms())  # type: ignore[return-value]

    @cached_property
    def stated_resamples(self) -> tuple[int, ...]:
        """Monte-Carlo resample counts the answer's words state ("20,000 sign flips", "n_resamples=5000")."""
        from auditor.prose import stated_resample_counts

        return stated_resample_counts(self.prose_texts(), self.options.max_prose_chars)

    @cached_property
    def says_randomized(self) -> bool:
        """The answer's words say its p came from random draws ("Monte-Carlo", "resampled")."""
        from auditor.prose import says_randomized

        return says_randomized(self.prose_texts(), self.options.max_prose_chars)

    def prose_texts(self) -> list[str]:
        """Free text where an answer describes its method: verdict, metrics, limitations, protocol note."""
        texts: list[str] = []
        if self.answer is not None:
            for value in (self.answer.verdict, getattr(self.answer, "limitations", None)):
                if isinstance(value, str):
                    texts.append(value)
            metrics = self.answer.metrics
            if isinstance(metrics, dict):
                texts.extend(v for v in islice(metrics.values(), 1_000) if isinstance(v, str))
        note = getattr(self.report, "protocol_note", None)
        if isinstance(note, str):
            texts.append(note)
        return texts

    @cached_property
    def printed_p_band(self) -> PBand | None:
        """The p range the per-seed values as printed allow (:attr:`Rounding.p_band`), when they are printed
        coarser than computed; None when they are not (the recomputed band then decides the verdict)."""
        rounding = self.rounding
        return rounding.p_band if rounding is not None and rounding.coarse else None  # coarse: the differences

    @cached_property
    def p_agreement(self) -> PAgreement | None:
        """Whether the claimed p_value could come from an honest sign-flip test (None: nothing recomputed)."""
        r = self.recomputed
        return None if r is None else self.p_agrees_with(r.p_band, self.rounding)

    def p_agrees_with(self, band: PBand, rounding: Rounding | None = None) -> PAgreement:
        """:func:`~auditor.stats.pvalues.agreement` of the claimed p_value with ``band``, the answer's stated
        resample counts and the configured one; the prose is read for counts only when the claim is not
        the exact p (most claims are).  With ``rounding``, the exact p of any values the printed per-seed
        values stand for (and of their decimals in exact arithmetic) agrees too; it is computed only
        when ``band`` alone does not decide."""
        claimed = self.report.comparison.p_value
        exact = exact_agreement(claimed, band)
        if exact is None and rounding is not None:
            exact = exact_agreement(claimed, rounding.p_band)
            if rounding.coarse:
                band = rounding.p_band  # a Monte-Carlo estimate of any p the printed values allow
        if exact is not None:
            return exact
        return monte_carlo_agreement(
            claimed,
            band,
            stated_resamples=self.stated_resamples,
            assumed_resamples=self.options.mc_resamples,
            randomized=self.says_randomized,
        )


def rounding_of(
    recomputed: Recomputed, baseline: ArmView, idea: ArmView, report: BenchReport, options: AuditOptions
) -> Rounding:
    """The intervals of the statistics of the printed per-seed values, and the recomputation of the most
    precise differences the answer gives (:mod:`auditor.stats.rounding`)."""
    from auditor.stats.rounding import Rounding

    return Rounding(
        baseline.per_seed,
        idea.per_seed,
        recomputed,
        lower_is_better=report.lower_is_better,
        alpha=options.alpha,
        exact_max_n=options.exact_max_n,
        resamples=options.resamples,
        seed=options.random_seed,
        claimed_diffs=report.comparison.per_seed_diffs,
    )
