"""A small, deterministic run of the calibration benchmark (bench/calibration.py), audited in-process.

The benchmark generates honest answers the way real agents compute and print their statistics
(rounded means, Monte-Carlo p-values, float32 accumulations, a diverged seed, ...) and dishonest
variants of them (a scaled p-value, a flipped verdict, a wrong win count).  Here: no honest answer may
fail (except the no-op "identical" ones, which must fail with D501), and every fake that the issue
requires to be caught must be caught.  ``python bench/calibration.py`` runs the full-size benchmark.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from auditor.audit import audit_bytes
from auditor.findings import Severity
from auditor.options.models import AuditOptions

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "calibration.py"
N_HONEST = 150
N_DISHONEST = 150
SEED = 20240601
SHOWN = 15  # failing cases listed in an assertion message


def _load_bench():
    name = "_auditor_calibration_bench"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _load_bench()


@pytest.fixture(scope="module")
def cases(bench):
    return bench.generate(N_HONEST, SEED, N_DISHONEST)


@pytest.fixture(scope="module")
def results(cases):
    options = AuditOptions()
    return {c.name: audit_bytes(c.text, c.name, options) for c in cases}


def _errors(result) -> list[str]:
    return [f"{f.rule} {f.pointer}: {f.message}" for f in result.findings if f.severity is Severity.ERROR]


def _explain(title: str, bad: list, results, describe=lambda c: "") -> str:
    """The failing cases, a few per (source) category, each with its error findings."""
    by_category: dict[str, list] = {}
    for c in bad:
        by_category.setdefault(c.category, []).append(c)
    lines = [f"{title}: {len(bad)} (by category: " + ", ".join(f"{k} {len(v)}" for k, v in by_category.items()) + ")"]
    shown = [c for k in range(SHOWN) for group in by_category.values() if k < len(group) for c in [group[k]]][:SHOWN]
    for c in shown:
        lines.append(f"- {c.name} (n={c.n}, exact p={c.exact_p:.6g}, printed p={c.claimed_p:.6g}{describe(c)})")
        errors = _errors(results[c.name])
        lines += [f"    {e[:400]}" for e in errors] or ["    (no error finding)"]
    if len(bad) > len(shown):
        lines.append(f"... and {len(bad) - len(shown)} more")
    return "\n".join(lines)


def _fake(c) -> str:
    out = f", verdict {c.honest_verdict!r} -> {c.verdict!r}"
    if c.fake_p is not None:
        out = f", fake p={c.fake_p:.6g}" + out
    return out + f", source {c.source}"


def test_generation_is_deterministic(bench):
    first = [(c.name, c.text) for c in bench.generate(19, 7, 19)]
    second = [(c.name, c.text) for c in bench.generate(19, 7, 19)]
    assert first == second


def test_every_category_and_kind_is_generated(bench, cases):
    assert {c.category for c in cases if c.variant == "honest"} == set(bench.CATEGORY_NAMES)
    assert {c.variant for c in cases if c.variant != "honest"} == set(bench.DISHONEST_KINDS)
    assert any(c.crosses_alpha for c in cases), "no fake p crossing alpha was generated: enlarge the sample"


def test_generator_is_honest(bench, cases):
    """Each honest answer's numbers, recomputed from its text independently of the generator, agree."""
    bad = [
        (c.name, problems) for c in cases if c.variant == "honest" for problems in [bench.verify_honest(c)] if problems
    ]
    assert not bad, f"generator bug, honest answers with inconsistent numbers: {bad[:SHOWN]}"


def test_honest_answers_pass(cases, results):
    bad = [c for c in cases if c.variant == "honest" and c.category != "identical" and results[c.name].status != "pass"]
    assert not bad, _explain("honest answers that fail", bad, results, lambda c: f", category {c.category}")


def test_identical_answers_fail_with_d501(cases, results):
    identical = [c for c in cases if c.category == "identical" and c.variant == "honest"]
    assert identical
    bad = [
        c
        for c in identical
        if results[c.name].status != "fail" or "D501" not in {f.rule for f in results[c.name].findings}
    ]
    assert not bad, _explain("no-op answers without a D501 failure", bad, results)


def test_fake_p_crossing_alpha_is_caught(cases, results):
    crossing = [c for c in cases if c.crosses_alpha]
    bad = [c for c in crossing if results[c.name].status != "fail"]
    assert not bad, _explain(f"fake p-values crossing alpha not caught (of {len(crossing)})", bad, results, _fake)


def test_wrong_win_counts_are_caught(cases, results):
    wrong = [c for c in cases if c.variant in ("wins_plus1", "wins_minus1")]
    assert wrong
    bad = [c for c in wrong if results[c.name].status != "fail"]
    assert not bad, _explain(f"wrong win counts not caught (of {len(wrong)})", bad, results, _fake)


def test_flipped_verdicts_are_caught(cases, results):
    flipped = [c for c in cases if c.variant == "verdict_flipped"]
    assert flipped
    bad = [c for c in flipped if results[c.name].status != "fail"]
    assert not bad, _explain(f"flipped verdicts not caught (of {len(flipped)})", bad, results, _fake)


def test_short_printed_p_values_off_by_2x_are_caught(bench):
    """Issue 31: a p off by >= 2x printed with one significant digit, at n <= 13, is caught in >= 95%
    (a sample of its own: 1 in 20 is too few to measure among the other kinds)."""
    short = [c for c in bench.generate(150, SEED + 1, 120, kinds=("p_short",)) if c.variant == "p_short"]
    assert len(short) >= 100
    options = AuditOptions()
    results = {c.name: audit_bytes(c.text, c.name, options) for c in short}
    bad = [c for c in short if results[c.name].status != "fail"]
    assert len(bad) <= 0.05 * len(short), _explain(
        f"short-printed fakes not caught (of {len(short)})", bad, results, _fake
    )


def test_unstated_small_counts_near_the_exact_p_warn_at_most(cases, results):
    near = [c for c in cases if c.category == "mc_small_unstated" and c.variant == "honest"]
    assert near
    bad = [c for c in near if results[c.name].status != "pass"]
    assert not bad, _explain("unstated small-count estimates within 2x that fail", bad, results)
