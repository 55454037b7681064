"""Issue 31, item 4: per-seed values printed rounded beside the answer's own, finer, per-seed differences.

An agent that prints its per-seed values with 3 significant digits (10.1 for 10.067) often prints
``per_seed_diffs`` far more precisely (-0.01473): the rounding of the values erases the effect, the
differences carry it.  The differences are used when every one agrees with the printed values (A304's
test); differences that disagree fail A304 and are never used: the per-seed values decide.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, seed_answer
from test_rounding import _audit, _errors

from auditor.audit import build_context
from auditor.options.models import AuditOptions
from auditor.rules.degenerate import D501

sys.path.insert(0, str(ROOT / "fixtures" / "generators"))
from consistent import load_seed, rewrite_statistics  # noqa: E402

# Differences as agents print them: 4 significant digits, far finer than 3-digit values near 10.
FOUR_DIGITS = "{:#.4g}".format


def _sig3(answer: dict, diff_literal=FOUR_DIGITS) -> dict[str, str]:
    """Print both arms' per-seed values of ``answer`` with 3 significant digits (trailing zeros kept) and
    its per_seed_diffs with ``diff_literal``, in place; every statistic stays that of the full values."""
    report = answer["bench_report"]
    literals = {}
    for which, values in enumerate((report["baseline"]["full"]["per_seed"], report["idea"]["per_seed"])):
        for k, value in enumerate(values):
            literals[f"@{which}.{k}@"], values[k] = f"{value:#.3g}", f"@{which}.{k}@"
    diffs = report["comparison"]["per_seed_diffs"] or []
    for k, value in enumerate(diffs):
        literals[f"@d.{k}@"], diffs[k] = diff_literal(value), f"@d.{k}@"
    return literals


def test_sig3_values_with_precise_diffs_pass_on_the_diffs() -> None:
    """Seed 000 (exact p 4/256, claimed 0.01475) with values printed 10.1, 12.1, 9.62 ...: as printed the
    values tie on 7 of 8 seeds (p 1); the differences -0.01473, -0.008639 ... give the exact p again."""
    answer = seed_answer()
    result = _audit(answer, _sig3(answer))
    assert result.status == "pass", [f.message for f in result.findings]
    assert not {"A304", "A305", "A306", "A307", "A309", "A312", "D501", "V401"} & {f.rule for f in result.findings}
    assert result.recomputed["p_value"] == 4 / 256 and result.recomputed["idea_wins"] == 7
    assert result.recomputed["baseline_mean"] == 10.92625  # the arms stay those of the printed values


def test_diffs_printed_as_coarsely_as_the_values_leave_it_to_a312() -> None:
    """The same answer with each difference printed to its values' decimals (-0.0, 0.00, ...): no finer than
    the values, so the values decide and the significance rests on digits the answer does not show."""
    answer = seed_answer()
    literals = _sig3(answer)
    for k, value in enumerate(seed_answer()["bench_report"]["comparison"]["per_seed_diffs"]):
        decimals = len(literals[f"@0.{k}@"].partition(".")[2])  # 1 beside 10.1, 2 beside 9.62
        literals[f"@d.{k}@"] = f"{value:.{decimals}f}"
    result = _audit(answer, literals)
    [finding] = [f for f in result.findings if f.rule == "A312"]
    assert finding.severity.value == "error" and result.status == "fail"
    assert "the per-seed values (printed to ±0.05)" in finding.message
    assert result.recomputed["p_value"] == 1.0  # the printed values' own test
    assert "A304" not in {f.rule for f in result.findings}


def test_a_diff_outside_its_interval_fails_a304_and_the_values_decide() -> None:
    """A lie: one difference made up beyond what 10.1 and 10.1 allow (|d| <= 0.1) to carry significance.
    A304 fails it, and the values decide the verdict: A312, since as printed they give no effect."""
    answer = seed_answer()
    literals = _sig3(answer)
    literals["@d.0@"] = "-0.2147"
    result = _audit(answer, literals)
    assert {"A304", "A312"} <= _errors(result)
    [a304] = [f for f in result.findings if f.rule == "A304"]
    assert a304.pointer.endswith("/per_seed_diffs/0")
    assert result.recomputed["p_value"] == 1.0 and result.recomputed["idea_wins"] == 1  # 9.61 < 9.62 only
    # Ignoring A304 never lets the made-up differences be used: they still disagree with the values.
    ignored = _audit(answer, literals, ignore=("A304",))
    assert "A312" in _errors(ignored) and ignored.recomputed["p_value"] == 1.0


@pytest.mark.parametrize("exact_max_n", [30, 6])
def test_the_randomized_test_runs_on_the_diffs_too(exact_max_n: int) -> None:
    answer = seed_answer()
    ctx, _ = build_context_for(answer, _sig3(answer), exact_max_n=exact_max_n)
    assert ctx.rounding.claimed_seeds == tuple(range(8))
    assert ctx.recomputed.p_method == ("exact" if exact_max_n == 30 else "randomized")
    assert ctx.recomputed.diffs[1] == -0.008639 and ctx.rounding.diff_h[1] == pytest.approx(5e-7)
    assert ctx.rounding.seed_diffs[0] == 0.0  # what A304 compares the claims with


def build_context_for(answer: dict, literals: dict[str, str], **options):
    from test_rounding import _text

    from auditor.parse.transcript import locate

    document = locate(_text(answer, literals).decode(), max_bytes=1 << 24, max_depth=64).document
    return build_context(document, AuditOptions(**options))


# Eight seeds whose idea moves each value by 0.003-0.012: printed with 3 significant digits, both arms
# print alike on every seed (10.1 and 10.1, ...), while the differences show the idea on all eight.
BASE = [10.123, 11.834, 12.041, 13.024, 10.527, 11.273, 12.614, 10.882]
SHIFTS = [-0.009, -0.012, -0.006, -0.011, -0.004, -0.010, -0.008, -0.007]


def _identical_in_print() -> tuple[dict, dict[str, str]]:
    answer = rewrite_statistics(load_seed("000"), baseline=BASE, idea=[b + s for b, s in zip(BASE, SHIFTS)])
    assert answer["bench_report"]["comparison"]["p_value"] == 2 / 256
    literals = _sig3(answer)
    assert [literals[f"@0.{k}@"] for k in range(8)] == [literals[f"@1.{k}@"] for k in range(8)]
    return answer, literals


def test_arms_printed_alike_with_nonzero_agreeing_diffs_are_no_noop() -> None:
    answer, literals = _identical_in_print()
    result = _audit(answer, literals)
    assert "D501" not in {f.rule for f in result.findings}
    assert result.status == "pass", [f.message for f in result.findings]
    assert result.recomputed["p_value"] == 2 / 256 and result.recomputed["idea_wins"] == 8


@pytest.mark.parametrize("diffs", ["absent", "zero"])
def test_arms_printed_alike_without_a_nonzero_diff_are_a_noop(diffs: str) -> None:
    answer, literals = _identical_in_print()
    if diffs == "absent":
        answer["bench_report"]["comparison"]["per_seed_diffs"] = None
    else:
        literals.update({f"@d.{k}@": "0.0" for k in range(8)})
    result = _audit(answer, literals)
    assert "D501" in _errors(result)


def test_d501_stays_exact_equality_for_values_printed_in_full() -> None:
    """Values printed at full precision, identical: a tiny non-zero difference within float noise of them
    (1e-15 beside values near 10) is no change, and D501 fires."""
    full = seed_answer()["bench_report"]["baseline"]["full"]["per_seed"]  # float32 metrics, printed in full
    answer = rewrite_statistics(load_seed("000"), baseline=full, idea=full)
    answer["bench_report"]["comparison"]["per_seed_diffs"] = [1e-15] * 8
    ctx, _ = build_context_for(answer, {})
    assert ctx.idea_is_baseline and list(D501.check(ctx))
