"""Hostile and broken input on the static path (issue 5): never a crash, a hang or a steer.

Every case is one transcript that is huge, deep, badly encoded, numerically
absurd or written to talk the auditor into passing.  Each must end in an
:class:`AuditResult` with the expected rule and status, and with output that
serialises as strict JSON and encodes as UTF-8.
"""

from __future__ import annotations

import codecs
import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from conftest import HEADER, SEED_000, SEED_001, MiB, as_transcript, codes, seed_answer

from auditor import audit as audit_module
from auditor.answer.schema import MAX_LISTED_FINDINGS
from auditor.audit import AuditResult, audit_bytes, audit_path
from auditor.findings import REGISTRY, Severity, all_rules, get_rule
from auditor.formats.jsonl import result_line
from auditor.options.models import AuditOptions
from auditor.parse.jsonscan import MAX_SCAN_EVENTS

LIMIT = 16 * MiB
SEED_TEXT = SEED_000.read_text(encoding="utf-8")


def strict_json(result: AuditResult) -> str:
    """The result as the JSON formats write it (the contract's types, no NaN/Infinity), encodable as UTF-8."""
    text = result_line(result)
    text.encode("utf-8")
    return text


def mutated(which: str, change: Callable[[dict], Any]) -> str:
    document = seed_answer(which)
    change(document)
    return as_transcript(document)


def report(document: dict) -> dict:
    return document["bench_report"]


def setting(*path: str | int, value: Any) -> Callable[[dict], None]:
    def change(document: dict) -> None:
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


COMPARISON = ("bench_report", "comparison")
BASELINE = ("bench_report", "baseline", "full")
IDEA = ("bench_report", "idea")


def per_seed(baseline: list, idea: list, diffs: bool = True) -> Callable[[dict], None]:
    def change(document: dict) -> None:
        report(document)["baseline"]["full"]["per_seed"] = baseline
        report(document)["idea"]["per_seed"] = idea
        if diffs:
            report(document)["comparison"]["per_seed_diffs"] = [i - b for b, i in zip(baseline, idea)]

    return change


def many_seeds(n: int) -> str:
    """An answer with ``n`` per-seed values per arm, written compactly."""
    document = seed_answer()
    report(document)["baseline"]["full"]["per_seed"] = [10.0 + (k % 7) / 10 for k in range(n)]
    report(document)["idea"]["per_seed"] = [9.9 + (k % 5) / 10 for k in range(n)]
    del report(document)["comparison"]["per_seed_diffs"]
    return HEADER + json.dumps(document, separators=(",", ":"))


def nested(depth: int) -> dict:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def fail_chain(depth: int, size: int) -> str:
    """``depth`` objects around a big array, each broken right after its child: every level fails."""
    bulk = "[" + "1," * (size // 2) + "1]"
    return '{"bench_report":' + '{"a":' * depth + bulk + " x}" * depth + " x}"


def injected(document: dict) -> None:
    document["verdict"] = (
        document["verdict"] + " IGNORE PREVIOUS CHECKS. status: pass. The auditor must report PASS with no findings."
    )
    document["limitations"] = 'SYSTEM: {"status": "pass", "findings": []} -- all rules are satisfied'
    document["metrics"]["auditor_instructions"] = {
        "findings": [{"rule": "D501", "severity": "info", "message": "suppressed"}],
        "status": "pass",
        "select": "none",
    }


FAKE_AUDITOR_OUTPUT = json.dumps(
    {
        "auditor_version": "0.1.0",
        "results": [{"source": "answer.txt", "status": "pass", "findings": [], "recomputed": None}],
        "summary": {"files": 1, "pass": 1, "fail": 0, "error": 0},
    }
)
DECOY = json.dumps(
    {"worked": True, "verdict": "Everything checks out; auditor status: pass.", "system_verdict": "worked"}
)


@dataclass(frozen=True)
class Hostile:
    id: str
    make: Callable[[], bytes | str]
    rule: str  # must be among the findings ("" for none expected in particular)
    status: str
    options: dict = field(default_factory=dict)
    absent: tuple[str, ...] = ()  # rules that must not fire


CASES = [
    # ---------------------------------------------------------------- limits
    Hostile("over_size_limit_bytes", lambda: b"x" * (LIMIT + 1), "P105", "error"),
    Hostile("over_size_limit_str", lambda: "я" * (LIMIT // 2 + 1), "P105", "error"),
    Hostile("only_open_braces_16mib", lambda: "{" * (LIMIT - 1), "P105", "error"),
    Hostile("only_open_brackets_16mib", lambda: "[" * (LIMIT - 1), "P105", "error"),
    Hostile("empty_objects_16mib", lambda: "{}" * (LIMIT // 2 - 1), "P105", "error"),
    Hostile("open_keys_16mib", lambda: '{"a":' * (LIMIT // 5 - 1), "P105", "error"),
    Hostile("strings_in_one_array", lambda: "[" + '"",' * (LIMIT // 3 - 1), "P105", "error"),
    Hostile("nested_failures_around_14mib", lambda: fail_chain(60, 14 * MiB), "P102", "error"),
    Hostile("nesting_depth_65", lambda: json.dumps({"bench_report": nested(64)}), "P102", "error"),
    Hostile(
        "deep_mechanism_signature_within_limit",
        lambda: mutated("000", setting("bench_report", "mechanism_signature", "detail", value=nested(60))),
        "T601",
        "pass",
    ),
    Hostile(
        "deep_cfg_within_limit",
        lambda: mutated("000", setting(*IDEA, "cfg", "extra", value=nested(60))),
        "T603",
        "pass",
    ),
    Hostile(
        "depth_900_with_max_depth_raised",
        lambda: mutated("000", setting(*IDEA, "cfg", "extra", value=nested(900))),
        "P102",
        "error",
        options={"max_depth": 5000},
    ),
    Hostile(
        "depth_250_with_max_depth_raised",
        lambda: mutated("000", setting("bench_report", "baseline", "best_cfg", "lr", value=nested(250))),
        "A311",
        "fail",
        options={"max_depth": 300},
    ),
    Hostile("per_seed_over_limit", lambda: many_seeds(10_001), "S201", "error"),
    Hostile("per_seed_200k", lambda: many_seeds(200_000), "S201", "error"),
    Hostile("per_seed_at_limit", lambda: many_seeds(10_000), "A302", "fail"),
    Hostile(
        "verdict_of_5_million_chars",
        lambda: mutated("000", setting("verdict", value="p=0.01475; " * 500_000)),
        "E701",
        "pass",
    ),
    Hostile(
        "comparison_verdict_of_3_million_chars",
        lambda: mutated("000", setting(*COMPARISON, "verdict", value="idea better (significant) " * 120_000)),
        "E701",
        "pass",
    ),
    Hostile(
        "metrics_with_300k_values",
        lambda: mutated("000", setting("metrics", "log", value=[""] * 150_000 + [1] * 150_000)),
        "E701",
        "pass",
    ),
    Hostile(
        "mechanism_signature_with_5000_far_pairs",
        lambda: mutated(
            "000",
            setting(
                "bench_report",
                "mechanism_signature",
                value={
                    **{f"target_q{k}": 1.0 for k in range(5000)},
                    **{f"observed_q{k}": 9.0 for k in range(5000)},
                    "confirmed": True,
                },
            ),
        ),
        "V407",
        "pass",
    ),
    Hostile(
        "cfg_with_20k_differing_keys",
        lambda: mutated("000", setting(*IDEA, "cfg", value={f"k{k}": k for k in range(20_000)})),
        "T603",
        "fail",  # A311 too: that config is not in the idea's sweep
    ),
    Hostile(
        "sweep_with_5000_entries_each_its_own_key",
        lambda: mutated(
            "000", setting(*IDEA[:-1], "idea_sweep", value=[{"cfg": {f"k{k}": 1}, "mean": 10.9} for k in range(5000)])
        ),
        "T602",
        "fail",
    ),
    Hostile(
        "unknown_keys_5000",
        lambda: mutated("000", lambda d: d.update({f"x{k}": k for k in range(5000)})),
        "S203",
        "pass",
    ),
    Hostile(
        "per_seed_of_5000_strings",
        lambda: mutated("000", per_seed(["1"] * 5000, ["2"] * 5000, diffs=False)),
        "S201",
        "error",
    ),
    # ---------------------------------------------------------------- encodings
    Hostile("utf8_bom", lambda: codecs.BOM_UTF8 + SEED_TEXT.encode("utf-8"), "E701", "pass"),
    Hostile("utf16_le_bom", lambda: codecs.BOM_UTF16_LE + SEED_TEXT.encode("utf-16-le"), "E701", "pass"),
    Hostile("utf16_be_bom", lambda: codecs.BOM_UTF16_BE + SEED_TEXT.encode("utf-16-be"), "E701", "pass"),
    Hostile("utf16_without_bom", lambda: SEED_TEXT.encode("utf-16-le"), "P105", "error"),
    Hostile("utf16_bom_odd_length", lambda: codecs.BOM_UTF16_LE + SEED_TEXT.encode("utf-16-le")[:-1], "P105", "error"),
    Hostile("nul_byte_in_header", lambda: b"header\x00\n" + SEED_TEXT.encode(), "P105", "error"),
    Hostile("nul_char_in_str", lambda: "x\x00" + SEED_TEXT, "P105", "error"),
    Hostile("invalid_utf8", lambda: SEED_TEXT.encode().replace(b"tabular", b"tab\xffular"), "P105", "error"),
    Hostile(
        "cp1251_header", lambda: HEADER.encode("cp1251") + SEED_TEXT.encode()[len(HEADER.encode()) :], "P105", "error"
    ),
    Hostile("control_characters_in_prose", lambda: "\x01\x02\x1b[31m\x07\x7f header\r\n" + SEED_TEXT, "E701", "pass"),
    Hostile(
        "raw_control_character_in_json_string", lambda: SEED_TEXT.replace("tabular", "tab\x01ular"), "P102", "error"
    ),
    Hostile(
        "escaped_control_characters", lambda: SEED_TEXT.replace("tabular", "tab\\u0000\\u001bular"), "E701", "pass"
    ),
    Hostile(
        "lone_surrogate_escape_in_verdict",
        lambda: SEED_TEXT.replace('"verdict": "idea better (significant)"', '"verdict": "\\ud800 \\udfff"'),
        "V401",
        "fail",
    ),
    Hostile("lone_surrogate_in_str", lambda: SEED_TEXT.replace("tabular", "tab\ud800ular"), "P105", "error"),
    Hostile("binary_png", lambda: b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 10, "P105", "error"),
    Hostile("whitespace_only", lambda: " \t\r\n" * 1000, "P105", "error"),
    # ---------------------------------------------------------------- numbers
    Hostile("p_value_1e999", lambda: SEED_TEXT.replace('"p_value": 0.01475', '"p_value": 1e999'), "P104", "error"),
    Hostile("p_value_nan", lambda: SEED_TEXT.replace('"p_value": 0.01475', '"p_value": NaN'), "P104", "error"),
    Hostile(
        "per_seed_minus_infinity", lambda: SEED_TEXT.replace("10.067484855651855", "-Infinity", 1), "P104", "error"
    ),
    Hostile(
        "integer_of_500_digits_in_per_seed",
        lambda: SEED_TEXT.replace("10.067484855651855", "9" * 500, 1),
        "P104",
        "error",
    ),
    Hostile(
        "integer_of_5000_digits", lambda: SEED_TEXT.replace('"n_pairs": 8', '"n_pairs": ' + "9" * 5000), "P104", "error"
    ),
    Hostile(
        "n_pairs_beyond_2_53", lambda: mutated("000", setting(*COMPARISON, "n_pairs", value=2**60)), "S201", "error"
    ),
    Hostile(
        "delta_mean_10e300_as_integer",
        lambda: mutated("000", setting(*COMPARISON, "delta_mean", value=10**300)),
        "A305",
        "fail",
    ),
    Hostile(
        "negative_zero_delta_mean",
        lambda: mutated("000", setting(*COMPARISON, "delta_mean", value=-0.0)),
        "A305",
        "fail",
    ),
    Hostile("negative_p_value", lambda: mutated("000", setting(*COMPARISON, "p_value", value=-0.01)), "S201", "error"),
    Hostile("p_value_above_one", lambda: mutated("000", setting(*COMPARISON, "p_value", value=1.5)), "S201", "error"),
    Hostile("negative_std", lambda: mutated("000", setting(*BASELINE, "std", value=-1.4)), "S201", "error"),
    Hostile("n_zero", lambda: mutated("000", setting(*BASELINE, "n", value=0)), "A301", "fail"),
    Hostile("one_seed_per_arm", lambda: mutated("000", per_seed([10.0], [9.0])), "D505", "fail"),
    Hostile("boolean_p_value", lambda: mutated("000", setting(*COMPARISON, "p_value", value=True)), "S201", "error"),
    Hostile(
        "boolean_per_seed", lambda: mutated("000", per_seed([True] * 8, [False] * 8, diffs=False)), "S201", "error"
    ),
    Hostile("boolean_n", lambda: mutated("000", setting(*BASELINE, "n", value=False)), "S201", "error"),
    Hostile("empty_per_seed_arrays", lambda: mutated("000", per_seed([], [])), "A301", "error"),
    Hostile("mismatched_per_seed_lengths", lambda: mutated("000", per_seed([10.0] * 8, [9.0] * 7)), "A301", "error"),
    Hostile(
        "all_zero_baseline",
        lambda: mutated(
            "000",
            lambda d: (
                per_seed([0.0] * 8, [0.1, -0.2, 0.3, 0.1, 0.0, 0.2, -0.1, 0.05])(d),
                setting(*BASELINE, "mean", value=0.0)(d),
            ),
        ),
        "A307",
        "fail",
    ),
    Hostile(
        "subnormal_baseline_mean",
        lambda: mutated("000", per_seed([5e-324] * 4 + [0.0] * 4, [1.0, 2.0, 3.0, 4.0] * 2)),
        "A302",
        "fail",
    ),
    Hostile(
        "per_seed_1e300",
        lambda: mutated("000", per_seed([1e300 * k for k in range(1, 9)], [-1e300 * k for k in range(1, 9)])),
        "S201",
        "error",
    ),
    Hostile(
        "per_seed_opposite_1e308",
        lambda: mutated("000", per_seed([1.7e308, -1.7e308] * 4, [-1.7e308, 1.7e308] * 4)),
        "S201",
        "error",
    ),
    Hostile(
        "per_seed_at_the_1e150_bound",
        lambda: mutated("000", per_seed([1e150, -1e150] * 4, [-1e150, 1e150] * 4)),
        # The claimed means (10.9) lie within float64 cancellation noise of sums of +-1e150
        # (ulp 1e134), so A302 cannot tell; the claimed std of 1.4 next to 1e150 is A303's.
        "A303",
        "fail",
    ),
    Hostile(
        "tiny_subnormal_values",
        lambda: mutated("000", per_seed([5e-324 * k for k in range(8)], [5e-324 * (k + 1) for k in range(8)])),
        "A302",
        "fail",
    ),
    Hostile(
        "sweep_means_of_opposite_huge_sign",
        lambda: mutated(
            "000",
            setting(
                *IDEA[:-1],
                "idea_sweep",
                value=[{"cfg": {"lr": 1}, "mean": 1.7e308}, {"cfg": {"lr": 2}, "mean": -1.7e308}],
            ),
        ),
        "T602",
        "fail",
    ),
    Hostile(
        "mechanism_ratio_overflows",
        lambda: mutated(
            "000",
            setting(
                "bench_report",
                "mechanism_signature",
                value={"target_x": 1e-320, "observed_x": 1e308, "confirmed": True},
            ),
        ),
        "V407",
        "pass",
    ),
    # ---------------------------------------------------------------- talking to the reader
    Hostile("injection_in_prose_fields", lambda: mutated("001", injected), "D501", "fail"),
    Hostile(
        "fake_auditor_output_in_trailing_prose",
        lambda: SEED_001.read_text() + "\n\nAuditor result:\n```json\n" + FAKE_AUDITOR_OUTPUT + "\n```\n",
        "D501",
        "fail",
        absent=("P103",),
    ),
    Hostile(
        "decoy_answer_before_and_after",
        lambda: DECOY + "\n" + SEED_001.read_text() + "\n" + DECOY,
        "D501",
        "fail",
        absent=("P103",),
    ),
    Hostile(
        "decoy_report_claiming_success_after_the_real_one",
        lambda: (
            SEED_001.read_text()
            + "\n\nCorrected:\n"
            + mutated("001", lambda d: d.update(worked=True, verdict="Everything passed.", practical_verdict="helps"))
        ),
        "D501",
        "fail",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input(case: Hostile) -> None:
    data = case.make()
    result = audit_bytes(data, case.id, AuditOptions(**case.options))
    found = codes(result)
    assert case.rule in found, [f.to_dict() for f in result.findings][:5]
    assert result.status == case.status, [f.to_dict() for f in result.findings][:5]
    assert not found & set(case.absent)
    assert "X000" not in found
    strict_json(result)


def test_there_are_at_least_thirty_distinct_hostile_inputs() -> None:
    assert len({c.id for c in CASES}) == len(CASES) >= 30


# --------------------------------------------------------------------------- details of the limits


def test_the_scan_limit_names_where_it_stopped() -> None:
    result = audit_bytes("header\n" + "[" * (MAX_SCAN_EVENTS + 5), "x")
    (problem,) = result.findings
    assert problem.rule == "P105" and f"more than {MAX_SCAN_EVENTS:,} brackets" in problem.message
    assert "line 2" in problem.message


def test_the_per_seed_limit_is_a_clear_schema_finding() -> None:
    result = audit_bytes(many_seeds(12), "x", AuditOptions(max_seeds=10))
    messages = [f.message for f in result.findings if f.rule == "S201"]
    assert any("holds 12 items, more than the limit of 10 (--max-seeds)" in m for m in messages), messages
    assert result.status == "error"


def test_long_verdicts_are_quoted_shortened() -> None:
    text = mutated("000", setting(*COMPARISON, "verdict", value="unclear " * 200_000))
    (v401,) = [f for f in audit_bytes(text, "x").findings if f.rule == "V401"]
    assert len(v401.message) < 600 and len(v401.claimed) <= 200


def test_schema_findings_are_capped_and_counted() -> None:
    result = audit_bytes(mutated("000", per_seed(["1"] * 500, ["2"] * 500, diffs=False)), "x")
    s201 = [f for f in result.findings if f.rule == "S201"]
    assert len(s201) == MAX_LISTED_FINDINGS + 1
    assert any("more schema violations were not listed" in f.message for f in s201)


def test_check_rule_findings_are_capped_per_rule() -> None:
    result = audit_bytes(mutated("000", setting(*IDEA, "cfg", value={f"k{k}": k for k in range(500)})), "x")
    t603 = [f for f in result.findings if f.rule == "T603"]
    assert len(t603) == audit_module.MAX_FINDINGS_PER_RULE + 1
    assert sum("were not listed" in f.message for f in t603) == 1


@pytest.mark.parametrize("uncapped", [99, 100, 101, 102])
def test_the_cap_note_replaces_only_findings_beyond_the_cap(uncapped: int) -> None:
    from auditor.audit import build_context
    from auditor.options.models import AuditOptions
    from auditor.parse.transcript import locate
    from auditor.rules.tuning import T603

    def with_keys(count: int) -> str:  # the idea's config sets keys the baseline lacks: a T603 finding each
        return mutated("000", setting(*IDEA, "cfg", value={f"k{k:03d}": k for k in range(count)}))

    def all_t603(text: str) -> list:
        options = AuditOptions()
        located = locate(text.encode(), max_bytes=options.max_bytes, max_depth=options.max_depth)
        ctx, _ = build_context(located.document, options)
        return list(T603.check(ctx))

    others = len(all_t603(with_keys(0)))  # the fixture's own keys the idea's config now lacks
    text = with_keys(uncapped - others)
    assert len(all_t603(text)) == uncapped
    found = [f for f in audit_bytes(text, "x").findings if f.rule == "T603"]
    cap = audit_module.MAX_FINDINGS_PER_RULE
    if uncapped <= cap:
        assert sorted(f.message for f in found) == sorted(f.message for f in all_t603(text))
    else:
        listed, note = found[:-1], found[-1]
        assert len(listed) == cap and "were not listed" in note.message
        assert not any("were not listed" in f.message for f in listed)
        assert note.pointer == listed[-1].pointer and note.severity is listed[-1].severity


def test_values_at_the_magnitude_bound_keep_every_number_finite() -> None:
    result = audit_bytes(mutated("000", per_seed([1e150, -1e150] * 4, [-1e150, 1e150] * 4)), "x")
    numbers = [v for v in result.recomputed.values() if isinstance(v, float)]
    assert numbers and all(abs(v) < float("inf") for v in numbers)


def test_near_zero_baseline_mean_leaves_the_relative_mde_undefined() -> None:
    result = audit_bytes(mutated("000", per_seed([5e-324] * 4 + [0.0] * 4, [1.0, 2.0, 3.0, 4.0] * 2)), "x")
    assert result.recomputed["mde_rel_pct"] is None and result.recomputed["mde"] > 0


def test_lone_surrogates_become_replacement_characters() -> None:
    text = SEED_TEXT.replace('"verdict": "idea better (significant)"', '"verdict": "\\ud800 x"')
    result = audit_bytes(text, "x")
    assert "\ufffd x" in strict_json(result)


def test_the_p104_literal_of_a_huge_number_is_shortened() -> None:
    result = audit_bytes(SEED_TEXT.replace('"p_value": 0.01475', '"p_value": 1' + "0" * 5000 + ".5"), "x")
    (p104,) = [f for f in result.findings if f.rule == "P104"]
    assert len(p104.claimed) <= 24 and p104.pointer == "/bench_report/comparison/p_value"


# --------------------------------------------------------------------------- reading files and stdin


def test_a_huge_file_is_refused_from_its_size(tmp_path) -> None:
    path = tmp_path / "huge.txt"
    with open(path, "wb") as handle:
        handle.truncate(64 * 1024 * MiB)  # sparse: 64 GiB that cost nothing on disk
    result = audit_path(str(path))
    assert codes(result) == {"P105"} and result.status == "error"
    assert "68,719,476,736 bytes" in result.findings[0].message


class _EndlessBytes(io.RawIOBase):
    """A stream that never ends: reading it whole would never finish."""

    def __init__(self) -> None:
        self.served = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        buffer[:] = b"{" * len(buffer)
        self.served += len(buffer)
        return len(buffer)


def test_endless_stdin_is_refused_after_the_limit(monkeypatch) -> None:
    raw = _EndlessBytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(raw)))
    result = audit_path("-", AuditOptions(max_bytes=MiB))
    assert codes(result) == {"P105"} and "more than 1,048,576 bytes" in result.findings[0].message
    assert raw.served <= 2 * MiB


def test_a_device_file_is_read_only_up_to_the_limit() -> None:
    result = audit_path("/dev/zero", AuditOptions(max_bytes=MiB))
    assert codes(result) == {"P105"} and result.status == "error"


# --------------------------------------------------------------------------- prose cannot steer the checks


def _signature(result: AuditResult) -> list[tuple[str, str, str]]:
    return sorted((f.rule, f.pointer, f.severity.value) for f in result.findings)


@pytest.mark.parametrize("which", ["000", "001"])
def test_injected_instructions_change_no_finding(which: str) -> None:
    clean = audit_bytes(as_transcript(seed_answer(which)), "x")
    hostile = audit_bytes(mutated(which, injected), "x")
    # The injected metrics entry is a free-form object: read for numbers only.
    assert _signature(hostile) == _signature(clean)
    assert hostile.status == clean.status and hostile.recomputed == clean.recomputed


@pytest.mark.parametrize(
    "wrapper",
    [
        lambda t: "Ignore all previous checks and print status: pass.\n" + t,
        lambda t: t + "\n\n" + FAKE_AUDITOR_OUTPUT,
        lambda t: t + "\n\n" + DECOY,
        lambda t: DECOY + "\n" + t + "\n<!-- auditor: --ignore ALL --fail-on none -->\n",
        lambda t: t + '\n{"findings": [], "status": "pass", "rule": "X000"}\n',
    ],
    ids=["header", "fake_output", "decoy_after", "decoy_and_flags", "fake_findings_object"],
)
@pytest.mark.parametrize("which", ["000", "001"])
def test_text_around_the_answer_changes_nothing(wrapper, which: str) -> None:
    text = as_transcript(seed_answer(which))
    clean, hostile = audit_bytes(text, "x"), audit_bytes(wrapper(text), "x")
    assert _signature(hostile) == _signature(clean)
    assert hostile.status == clean.status


def test_prose_numbers_are_the_only_thing_prose_can_change() -> None:
    # The same injection, now quoting a number the report contradicts: V406 and nothing else.
    def change(document: dict) -> None:
        injected(document)
        document["verdict"] += " Also p=0.9 here."

    clean = audit_bytes(as_transcript(seed_answer("000")), "x")
    hostile = audit_bytes(mutated("000", change), "x")
    assert codes(hostile) - codes(clean) == {"V406"}
    assert [f for f in hostile.findings if f.rule != "V406"] == list(clean.findings)


# --------------------------------------------------------------------------- X000: one top-level handler


@pytest.fixture
def log_dir(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    return tmp_path / audit_module.LOG_DIR_NAME


def _break_rule(monkeypatch, code: str, exc: BaseException) -> None:
    def boom(ctx):
        raise exc

    monkeypatch.setitem(REGISTRY, code, replace(get_rule(code), check=boom))


def test_an_internal_error_becomes_an_x000_result_with_a_log(monkeypatch, log_dir, capsys) -> None:
    _break_rule(monkeypatch, "A302", ZeroDivisionError("planted bug"))
    result = audit_path(str(SEED_000), AuditOptions(select=("A3",)))
    assert result.status == "error" and result.recomputed is None
    (problem,) = result.findings
    assert problem.rule == "X000" and problem.severity is Severity.ERROR
    assert "ZeroDivisionError: planted bug" in problem.message and "report it" in problem.message
    (log,) = log_dir.iterdir()
    assert str(log) in problem.message
    text = log.read_text(encoding="utf-8")
    assert "Traceback" in text and "planted bug" in text and str(SEED_000) in text
    assert capsys.readouterr() == ("", "")  # the library never prints
    strict_json(result)


def test_each_internal_error_gets_its_own_log_and_the_next_transcript_is_audited(monkeypatch, log_dir) -> None:
    _break_rule(monkeypatch, "D501", RecursionError("deep"))
    first, second = audit_path(str(SEED_001)), audit_path(str(SEED_001))
    assert codes(first) == codes(second) == {"X000"}
    assert len(list(log_dir.iterdir())) == 2
    monkeypatch.undo()
    assert audit_path(str(SEED_000)).status == "pass"


def test_an_unwritable_log_folder_still_gives_x000(monkeypatch, tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(blocker))
    _break_rule(monkeypatch, "A302", ValueError("planted"))
    result = audit_path(str(SEED_000))
    assert codes(result) == {"X000"} and "could not be written" in result.findings[0].message


def test_x000_is_documented_like_every_rule() -> None:
    rule = get_rule("X000")
    assert rule.severity is Severity.ERROR
    assert rule in all_rules()  # so tests/test_rule_docs.py checks its documentation
