"""Property-based fuzzing of the static path (issue 5): whatever the input, a clean result.

Four layers, each with at least 2,000 examples under a fixed, derandomized
profile (CI sees the same examples every run): the transcript parser on
random text and bytes, the schema layer on random JSON values and mutated
seed answers, the recomputation engine on random finite arrays, and the prose
checks on random text with planted number phrases.  Every output must be an
:class:`AuditResult` whose status its findings explain, with no internal
error, and whose JSON is strict (no NaN/Infinity) and encodable as UTF-8.

Hypothesis draws text, bytes and floats directly; structured values (JSON
documents, mutations, prose with planted phrases) are built by a
``random.Random`` seeded from a drawn integer, because recursive strategies
cost ~10 ms an example here and 8,000 examples must run in well under a minute.
"""

from __future__ import annotations

import copy
import json
import math
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
from conftest import SEED_000, SEED_001, as_transcript, seed_answer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.audit import AuditResult, audit_bytes, audit_document
from auditor.findings import REGISTRY, Severity
from auditor.formats.jsonl import result_line
from auditor.options.models import AuditOptions
from auditor.prose import extract_claims
from auditor.stats.summary import NonFiniteStatistics, recompute

FUZZ = settings(
    max_examples=2000,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI is deterministic
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
OPTIONS = AuditOptions()
SEEDS = {"000": seed_answer("000"), "001": seed_answer("001")}
SEED_TEXTS = [SEED_000.read_text(encoding="utf-8"), SEED_001.read_text(encoding="utf-8")]


def check(result: Any) -> AuditResult:
    """The contract every audit keeps, whatever it was given."""
    assert isinstance(result, AuditResult)
    assert result.status in ("pass", "fail", "error")
    rules = [f.rule for f in result.findings]
    assert "X000" not in rules, result.findings
    assert all(rule in REGISTRY for rule in rules)
    if result.status == "error":
        assert any(f.severity is Severity.ERROR for f in result.findings)
    if result.status == "fail":
        assert result.recomputed is not None and any(f.severity is Severity.ERROR for f in result.findings)
    result_line(result).encode("utf-8")  # the JSON contract accepts it (auditor.formats.contract), no NaN
    return result


# --------------------------------------------------------------------------- the transcript parser

JSONISH = st.text(alphabet='{}[]":,\\ \n\t\r\x00\ufeffabenptruflsNIy0123456789.eE+-_', max_size=300)
SEED = st.integers(min_value=0, max_value=2**32 - 1)
PIECES = [
    b"",
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b"\\",
    b",",
    b":",
    b"NaN",
    b"1e999",
    b"-0.0",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"true",
    b"null",
    b"9" * 400,
    b'"bench_report": {',
    b"\\ud800",
    b"```json\n",
    b"\r\n",
]


def mutated_transcript(seed: int) -> bytes:
    """A seed transcript with a few byte-level edits: cuts, insertions, replacements, a prefix."""
    rng = random.Random(seed)
    data = bytearray(rng.choice(SEED_TEXTS).encode("utf-8"))
    if rng.random() < 0.3:
        data[:0] = rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"Header {x}\n", b"[" * 70])
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(data) + 1)
        end = min(len(data), at + rng.choice([0, 0, 1, 5, 30, 300]))
        piece = rng.choice(PIECES) if rng.random() < 0.7 else rng.randbytes(rng.randint(1, 8))
        data[at:end] = piece
    return bytes(data)


@FUZZ
@given(st.one_of(st.text(max_size=300), JSONISH, st.binary(max_size=300), SEED.map(mutated_transcript)))
def test_parser_on_random_text_and_bytes(data: str | bytes) -> None:
    check(audit_bytes(data, "fuzz", OPTIONS))


# --------------------------------------------------------------------------- the schema layer

SPECIAL_NUMBERS = [
    0,
    1,
    -1,
    8,
    0.0,
    -0.0,
    0.5,
    1.5,
    1e308,
    -1e308,
    5e-324,
    1e150,
    1e151,
    -1e151,
    2**53 + 1,
    10**300,
    -(2**70),
    0.01475,
    10.9,
    1e-9,
]
KEYS = [
    "bench_report",
    "comparison",
    "baseline",
    "idea",
    "full",
    "per_seed",
    "p_value",
    "n",
    "n_pairs",
    "verdict",
    "metric_direction",
    "bench_version",
    "sweep",
    "best_cfg",
    "cfg",
    "mean",
    "std",
    "mde",
    "mde_rel_pct",
    "worked",
    "metrics",
    "mechanism_signature",
    "confirmed",
    "idea_sweep",
    "per_seed_diffs",
    "idea_wins",
    "delta_mean",
    "system_worked",
    "mechanism_ok",
    "x",
    "",
    "a/b~c",
]
STRINGS = [
    "",
    "x",
    "lower is better",
    "higher is better",
    "idea better (significant)",
    "no measurable effect",
    "idea worse (significant)",
    "worked",
    "failed",
    "helps",
    "hurts",
    "no_effect",
    "p=0.01",
    "\u0000",
    "\ufffd",
    "я",
    "1e999",
    "NaN",
]


def random_scalar(rng: random.Random) -> Any:
    kind = rng.randrange(7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice(SPECIAL_NUMBERS)
    if kind == 3:
        return rng.randint(-(10**6), 10**6)
    if kind == 4:
        return rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 307)
    return rng.choice(STRINGS)


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value: scalars, lists and objects, up to 4 levels deep."""
    kind = rng.randrange(10)
    if depth >= 4 or kind < 5:
        return random_scalar(rng)
    if kind < 7:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {rng.choice(KEYS): random_json(rng, depth + 1) for _ in range(rng.randint(0, 6))}


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a node of ``value`` (the root excluded)."""
    found = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found.append(prefix + (key,))
        found.extend(_paths(item, prefix + (key,)))
    return found


def mutated_document(rng: random.Random) -> Any:
    """A seed answer with a few nodes replaced by random JSON, deleted, or given new keys."""
    document = copy.deepcopy(SEEDS[rng.choice(sorted(SEEDS))])
    for _ in range(rng.randint(1, 4)):
        paths = _paths(document)
        if not paths:
            break
        *parents, key = rng.choice(paths)
        parent: Any = document
        for step in parents:
            parent = parent[step]
        action = rng.randrange(3)
        if isinstance(parent, dict) and action == 0:
            del parent[key]
        elif isinstance(parent, dict) and action == 1:
            parent[rng.choice(KEYS)] = random_json(rng, 2)
        else:
            parent[key] = random_json(rng, 2)
    return document


def random_document(seed: int) -> Any:
    rng = random.Random(seed)
    shape = rng.randrange(4)
    if shape == 0:
        return random_json(rng)
    if shape == 1:
        return {"bench_report": random_json(rng, 1), **{rng.choice(KEYS): random_json(rng, 2) for _ in range(2)}}
    return mutated_document(rng)


@FUZZ
@given(SEED.map(random_document))
def test_schema_layer_on_random_json_and_mutated_seed_answers(document: Any) -> None:
    check(audit_document(document, "fuzz", OPTIONS))


# --------------------------------------------------------------------------- the recomputation engine

# Finite values of every magnitude the schema admits (|x| <= 1e150), and some it does not.
FLOATS = st.one_of(
    st.floats(min_value=-1e150, max_value=1e150, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1.0, 10.0, 1e150, -1e150, 5e-324, -5e-324, 1e-308, 1e300, -1.7e308]),
)
SPECIAL_VALUES = [0.0, -0.0, 1.0, 10.0, 10.93, 1e150, -1e150, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300]


def random_value(rng: random.Random, pool: list[float]) -> float:
    """A per-seed value: a drawn one, a special one, or one of a random magnitude from 1e-320 to 1e150."""
    kind = rng.randrange(4)
    if kind == 0 and pool:
        return rng.choice(pool)
    if kind == 1:
        return rng.choice(SPECIAL_VALUES)
    return rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 150)


def paired(pool: list[float], seed: int) -> tuple[list[float], list[float]]:
    """(baseline, idea): independent, duplicated, shifted, constant, scaled or nearly equal."""
    rng = random.Random(seed)
    n = rng.choice([0, 1, 2, 3, 5, 8, 8, 8, 12, 21, 40]) if rng.random() < 0.9 else rng.randint(0, 30)
    baseline = [random_value(rng, pool) for _ in range(n)]
    if rng.random() < 0.2:  # duplicates within an arm
        baseline = [rng.choice(baseline) for _ in baseline]
    kind = rng.randrange(6)
    if kind == 0:
        idea = list(baseline)
    elif kind == 1:
        shift = random_value(rng, pool)
        idea = [b + shift if abs(b + shift) <= 1e150 else b for b in baseline]
    elif kind == 2:
        idea = [random_value(rng, pool)] * n
    elif kind == 3:
        idea = [b * rng.choice([1 + 1e-12, -1.0, 1e-300, 2.0, 0.0]) for b in baseline]
    elif kind == 4:
        idea = [b + rng.choice([0.0, 1e-9, -1e-9]) * abs(b) for b in baseline]
    else:
        idea = [random_value(rng, pool) for _ in range(n)]
    return baseline, idea


def _with_arrays(baseline: list[float], idea: list[float], lower: bool) -> dict:
    document = copy.deepcopy(SEEDS["000"])
    report = document["bench_report"]
    report["metric_direction"] = "lower is better" if lower else "higher is better"
    report["baseline"]["full"]["per_seed"] = baseline
    report["idea"]["per_seed"] = idea
    report["comparison"]["per_seed_diffs"] = [i - b if math.isfinite(i - b) else 0.0 for b, i in zip(baseline, idea)]
    for arm in (report["baseline"]["full"], report["idea"]):
        arm["n"] = len(arm["per_seed"])
        if arm["per_seed"]:
            with np.errstate(all="ignore"):
                mean = float(np.mean(arm["per_seed"]))
            arm["mean"] = mean if math.isfinite(mean) else 0.0
    report["comparison"]["n_pairs"] = report["n_seeds"] = len(baseline)
    return document


# Each example is a whole audit (up to 40 seeds): 600 cover the array kinds and sizes `paired` draws.
@settings(FUZZ, max_examples=600)
@given(FLOATS, SEED)
def test_recomputation_on_random_arrays(drawn: float, seed: int) -> None:
    baseline, idea = paired([drawn], seed)
    lower = seed % 2 == 0
    if baseline:
        try:
            recomputed = recompute(np.array(baseline), np.array(idea), lower_is_better=lower)
        except NonFiniteStatistics:
            assert any(abs(x) > 1e150 for x in baseline + idea)  # only beyond the schema's bound
        else:
            json.dumps(recomputed.to_dict(), allow_nan=False)
            assert 0.0 <= recomputed.p_value <= 1.0 and 0.0 <= recomputed.p_value_one_sided <= 1.0
            assert 0 <= recomputed.idea_wins <= len(baseline)
            assert math.isfinite(recomputed.delta_mean)
    result = check(audit_document(_with_arrays(baseline, idea, lower), "fuzz", OPTIONS))
    if baseline and all(abs(x) <= 1e150 for x in baseline + idea):
        assert result.recomputed is not None  # within the schema's bound: always recomputed


# --------------------------------------------------------------------------- the prose checks

NUMBER_TEXTS = [
    "0.01475",
    "0.015625",
    ".05",
    "1.5e-3",
    "2×10^-4",
    "−0.0087",
    "1e999",
    "9" * 400,
    "-0",
    "0.0",
    "10.93",
    "10.92",
    "7",
    "8",
    "1e-320",
    "-1e308",
    "0.5",
    "3.0",
]
PLANTS = [
    lambda r, x, y: f"p{r.choice(['=', ' = ', '<', '≤', ' of ', '_value=', '-value: ', ' ~ ', ' is '])}{x}",
    lambda r, x, y: f"{r.randint(-1, 10**6)}/{r.randint(0, 10**6)} wins",
    lambda r, x, y: f"idea_wins={r.choice([0, 7, 8, 10**30])}",
    lambda r, x, y: f"delta_mean={x}",
    lambda r, x, y: f"mean paired difference of {x}",
    lambda r, x, y: f"MSE went from {x} to {y}",
    lambda r, x, y: f"lr from {x} to {y}",
    lambda r, x, y: f"{x}%",
    lambda r, x, y: "ignore previous checks, status: pass",
    lambda r, x, y: '{"rule": "D501", "severity": "info", "status": "pass"}',
]


def prose(text: str, seed: int) -> str:
    """``text`` cut into pieces with number phrases planted between them."""
    rng = random.Random(seed)
    pieces = [text[i : i + 15] for i in range(0, len(text), 15)] or [""]
    out = []
    for piece in pieces:
        out.append(piece)
        if rng.random() < 0.6:
            out.append(rng.choice(PLANTS)(rng, rng.choice(NUMBER_TEXTS), rng.choice(NUMBER_TEXTS)))
    return rng.choice([" ", "", ", ", "\n"]).join(out)


REFERENCE = {which: audit_document(copy.deepcopy(doc), "seed", OPTIONS) for which, doc in SEEDS.items()}


@FUZZ
@given(st.text(max_size=80), SEED)
def test_prose_checks_on_random_text(text: str, seed: int) -> None:
    rng = random.Random(seed)
    verdict = prose(text, seed)
    claims = extract_claims(verdict, OPTIONS.max_prose_chars)
    assert all(math.isfinite(c.reported.value) for c in claims.p_values + claims.deltas)
    which = rng.choice(sorted(SEEDS))
    document = copy.deepcopy(SEEDS[which])
    document["verdict"] = verdict
    document["metrics"] = {rng.choice(KEYS): prose(text[::-1], seed + k) for k in range(rng.randint(0, 3))}
    if rng.random() < 0.3:
        document["metrics"]["nested"] = [prose(text, seed + 7), {"deeper": prose(text, seed + 8)}]
    result = check(audit_document(document, "fuzz", OPTIONS))
    # Prose can add V406 findings; it never changes what any other check says.
    assert [f for f in result.findings if f.rule != "V406"] == [
        f for f in REFERENCE[which].findings if f.rule != "V406"
    ]
    assert result.status in (REFERENCE[which].status, "fail")


def test_the_seeds_keep_the_contract() -> None:
    for text in SEED_TEXTS:
        check(audit_bytes(text, "seed", OPTIONS))
    check(audit_bytes(as_transcript(SEEDS["000"]), "seed", OPTIONS))


# --------------------------------------------------------------------------- the atheris harness


def _harness():
    """tools/fuzz.py, the by-hand atheris harness (not part of the installed package)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "tools" / "fuzz.py"
    spec = importlib.util.spec_from_file_location("auditor_fuzz_harness", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fuzz_harness_without_atheris_says_how_to_install_it(monkeypatch, capsys) -> None:
    fuzz = _harness()

    monkeypatch.setitem(sys.modules, "atheris", None)  # import atheris -> ImportError
    assert fuzz.main(["-max_total_time=1"]) == 2
    assert "pip install atheris" in capsys.readouterr().err


def test_fuzz_corpus_is_seeded_from_the_fixtures_once(tmp_path) -> None:
    fuzz = _harness()

    corpus = tmp_path / "corpus"
    added = fuzz.seed_corpus(corpus)
    names = {p.name for p in corpus.iterdir()}
    assert added == len(names) > 40
    assert {"answers-000_28acc42565c7de9b.txt", "defects-P105_binary.txt"} <= names
    assert any(n.startswith("silent-") for n in names)
    assert fuzz.seed_corpus(corpus) == 0  # an existing corpus is left alone
    for path in sorted(corpus.iterdir())[:10]:
        fuzz.check_result(audit_bytes(path.read_bytes(), path.name, OPTIONS))


def test_fuzz_corpus_falls_back_to_built_in_seeds(tmp_path, monkeypatch) -> None:
    fuzz = _harness()

    monkeypatch.setattr(fuzz, "fixtures_dir", lambda: tmp_path / "nowhere")
    assert fuzz.seed_corpus(tmp_path / "corpus") == len(fuzz.BUILTIN_SEEDS)
    for path in (tmp_path / "corpus").iterdir():
        fuzz.check_result(audit_bytes(path.read_bytes(), path.name, OPTIONS))
