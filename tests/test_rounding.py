"""Issue 31, items 4-6: numbers are read as printed (their literal's digits), statistics of per-seed values
printed rounded are intervals, and the exact p of the printed decimals is honest too.

Every case is a real-looking answer (seed 000, or one rewritten consistently from it) written as text, so
that the literals go through the decoder as an agent's answer would; each lie has an honest twin.
"""

from __future__ import annotations

import json
import pickle
import sys
from types import SimpleNamespace

import pytest
from conftest import HEADER, ROOT, seed_answer

from auditor.audit import audit_bytes
from auditor.findings import Severity
from auditor.options.models import AuditOptions
from auditor.parse.literals import PrintedFloat
from auditor.parse.transcript import locate
from auditor.rules.cross import x901

sys.path.insert(0, str(ROOT / "fixtures" / "generators"))
from consistent import load_seed, rewrite_statistics  # noqa: E402


def _text(answer: dict, literals: dict[str, str] | None = None) -> bytes:
    """The transcript of ``answer``; each placeholder string of ``literals`` is written as that number literal."""
    text = HEADER + json.dumps(answer, ensure_ascii=False, indent=1)
    for placeholder, literal in (literals or {}).items():
        text = text.replace(json.dumps(placeholder), literal)
    return text.encode("utf-8")


def _audit(answer: dict, literals: dict[str, str] | None = None, **options):
    return audit_bytes(_text(answer, literals), "answer.txt", AuditOptions(**options))


def _errors(result) -> set[str]:
    return {f.rule for f in result.findings if f.severity is Severity.ERROR}


def _printed(answer: dict, decimals: int) -> dict[str, str]:
    """Print both arms' per-seed values and the differences of ``answer`` with ``decimals`` decimals (trailing
    zeros kept), in place; every statistic stays computed from the full values.  Returns the literals."""
    report = answer["bench_report"]
    literals = {}
    lists = (report["baseline"]["full"]["per_seed"], report["idea"]["per_seed"], report["comparison"]["per_seed_diffs"])
    for which, values in enumerate(lists):
        for k, value in enumerate(values):
            placeholder = f"@{which}.{k}@"
            literals[placeholder] = f"{value:.{decimals}f}"
            values[k] = placeholder
    return literals


# --- item 5: the literal's digits ---------------------------------------------------------------------------


def test_trailing_zeros_are_kept_where_claims_are_read_and_nowhere_else() -> None:
    answer = seed_answer()
    answer["bench_report"]["comparison"]["delta_mean"] = "@delta@"
    answer["bench_report"]["idea"]["cfg"]["lr"] = "@lr@"
    text = _text(answer, {"@delta@": "-0.00870", "@lr@": "0.0060"}).decode()
    document = locate(text, max_bytes=1 << 24, max_depth=64).document
    delta = document["bench_report"]["comparison"]["delta_mean"]
    assert type(delta) is PrintedFloat and delta.literal == "-0.00870"
    assert type(document["bench_report"]["idea"]["cfg"]["lr"]) is float  # a config value is a plain float
    # Invisible elsewhere: equal, JSON-encoded and pickled as the float it is.
    assert delta == -0.0087 and hash(delta) == hash(-0.0087) and repr(delta) == "-0.0087"
    assert json.dumps(delta) == "-0.0087"
    assert pickle.loads(pickle.dumps(delta)).literal == "-0.00870"
    import numpy as np

    assert np.array([delta]).dtype == np.float64 and float(np.array([delta])[0]) == -0.0087


def test_a_mean_printed_with_a_trailing_zero_is_held_to_that_digit() -> None:
    """The baseline mean of seed 000 is 10.930936: "10.930" claims three decimals, which it gets wrong."""
    lie, twin = seed_answer(), seed_answer()
    lie["bench_report"]["baseline"]["full"]["mean"] = "@m@"
    twin["bench_report"]["baseline"]["full"]["mean"] = "@m@"
    caught = _audit(lie, {"@m@": "10.930"})
    assert "A302" in _errors(caught)  # (read as 10.93, two decimals, it passed)
    [finding] = [f for f in caught.findings if f.rule == "A302"]
    assert "claimed as 10.93 " in finding.message
    assert json.loads(json.dumps(caught.to_dict()))["findings"][0]["claimed"] == 10.93  # JSON output unchanged
    assert _audit(twin, {"@m@": "10.931"}).status == "pass"


def test_a_zero_printed_with_four_decimals_is_a_rounding_to_them() -> None:
    """ "0.0000" claims |delta| < 0.00005: true for 0.00004, false for 0.0003 (today both read as "0.0")."""
    base = [0.0912 + 0.0137 * k for k in range(8)]
    for effect, caught in ((0.00004, False), (0.0003, True)):
        shifts = [effect + 0.0002 * (-1) ** k for k in range(8)]
        answer = rewrite_statistics(load_seed("000"), baseline=base, idea=[b + s for b, s in zip(base, shifts)])
        answer["bench_report"]["comparison"]["delta_mean"] = "@d@"
        result = _audit(answer, {"@d@": "0.0000"})
        assert ("A305" in _errors(result)) is caught, result.findings


# --- item 4: per-seed values printed rounded -------------------------------------------------------------


@pytest.mark.parametrize("decimals", [4, 3])
def test_per_seed_values_printed_rounded_pass_with_statistics_of_the_full_values(decimals: int) -> None:
    answer = seed_answer()
    result = _audit(answer, _printed(answer, decimals))
    assert result.status == "pass", [f.message for f in result.findings]
    assert not {"A302", "A303", "A304", "A305", "A306", "A307", "A309", "A310", "A312"} & {
        f.rule for f in result.findings
    }


def test_a_delta_off_by_more_than_the_rounding_is_caught_with_advice_at_the_data_precision() -> None:
    answer = seed_answer()
    literals = _printed(answer, 3)
    answer["bench_report"]["comparison"]["delta_mean"] = -0.0121  # the full-value delta is -0.008685, ±0.001
    result = _audit(answer, literals)
    [finding] = [f for f in result.findings if f.rule == "A305"]
    assert "within ±" in finding.message
    assert finding.message.endswith("report -0.009")  # the printed values' delta, -0.008625, to their precision
    assert "0.00862" not in finding.message  # never more digits than the printed values carry


def test_accuracy_in_percent_with_two_decimals_passes() -> None:
    """Accuracy over 7,919 test examples, in percent: 100·k/7919 printed with 2 decimals."""
    kb = [7301, 7288, 7335, 7279, 7310, 7296, 7322, 7305]
    ki = [7312, 7291, 7349, 7290, 7309, 7310, 7331, 7317]
    base, idea = [100 * k / 7919 for k in kb], [100 * k / 7919 for k in ki]
    answer = rewrite_statistics(load_seed("000"), baseline=base, idea=idea)
    answer["bench_report"]["metric_direction"] = "higher is better"
    answer = rewrite_statistics(answer)  # the verdict and wins in the new direction
    del answer["bench_report"]["baseline"]["sweep"], answer["bench_report"]["idea_sweep"]  # lower-is-better sweeps
    literals = _printed(answer, 2)
    result = _audit(answer, literals)
    assert not _errors(result), [f.message for f in result.findings]
    answer["bench_report"]["comparison"]["idea_wins"] = 5  # 7 of 8 seeds are better, none within its rounding
    assert "A306" in _errors(_audit(answer, literals))


def test_a_win_within_the_rounding_of_zero_counts_either_way() -> None:
    base = [10.1234, 12.2345, 9.8765, 10.5555, 11.0101, 9.3333, 10.7777, 12.1212]
    idea = [b - 0.012 for b in base]
    idea[0] = base[0] + 0.00004  # a loss that the printing (4 decimals) cannot tell from a tie or a win
    answer = rewrite_statistics(load_seed("000"), baseline=base, idea=idea)
    literals = _printed(answer, 4)
    for wins in (7, 8):
        answer["bench_report"]["comparison"]["idea_wins"] = wins
        assert "A306" not in _errors(_audit(answer, literals))
    answer["bench_report"]["comparison"]["idea_wins"] = 6
    assert "A306" in _errors(_audit(answer, literals))


def _coarse_significance() -> tuple[dict, dict[str, str]]:
    """8 seeds, the idea better on every one (full p 2/256): printed with 2 decimals, four seeds tie, and the
    printed values' own p is 0.125."""
    base = [10.124, 12.064, 9.614, 10.004, 8.784, 11.804, 12.034, 13.044]
    idea = [b - 0.012 for b in base[:4]] + [b - 0.007 for b in base[4:]]
    answer = rewrite_statistics(load_seed("000"), baseline=base, idea=idea)
    assert answer["bench_report"]["comparison"]["p_value"] == 2 / 256
    return answer, _printed(answer, 2)


def test_a312_significance_resting_on_unprinted_digits_is_an_error_and_a_null_claim_a_warning() -> None:
    answer, literals = _coarse_significance()
    result = _audit(answer, literals)
    [finding] = [f for f in result.findings if f.rule == "A312"]
    assert finding.severity is Severity.ERROR and result.status == "fail"
    assert "V401" not in {f.rule for f in result.findings}  # one finding says it, not two
    report = answer["bench_report"]
    report["comparison"].update(verdict="no measurable effect", system_worked=False, p_value=0.15)
    answer.update(worked=False, system_verdict="failed", practical_verdict="no_effect")
    null = _audit(answer, literals)
    assert [f.severity for f in null.findings if f.rule == "A312"] == [Severity.WARNING]
    # Ignoring A312 never lets the coarse print pass the significance claim: V401 judges it as printed.
    answer, literals = _coarse_significance()
    assert "V401" in _errors(_audit(answer, literals, ignore=("A312",)))
    # Nor does lowering its severity: a rule the verdict rules defer to must still fail the run.
    lowered = _audit(answer, literals, severity_overrides={"A312": Severity.INFO})
    assert "V401" in _errors(lowered) and lowered.status == "fail"


def test_x901_reads_a_rounded_copy_of_a_baseline_as_the_same_baseline() -> None:
    full = seed_answer()["bench_report"]["baseline"]["full"]["per_seed"]

    def result(values: list[float], name: str) -> SimpleNamespace:
        cross = {
            "track": "tabular",
            "model": "mlp_tiny",
            "baseline_cfg": {"lr": 0.006},
            "baseline_per_seed": values,
            "baseline_pointer": "/bench_report/baseline/full/per_seed",
        }
        return SimpleNamespace(cross=cross, source=name)

    rounded = [round(x, 4) for x in full]
    assert x901([result(full, "a.txt"), result(rounded, "b.txt")]) == {}
    other = list(rounded)
    other[2] = round(other[2] + 0.0003, 4)  # a different run at seed 2, beyond the printing
    assert set(x901([result(full, "a.txt"), result(other, "b.txt")])) == {0, 1}


# --- item 6: the exact p of the printed decimals ---------------------------------------------------------

# float32 metrics (printed as float64 reprs), 21 seeds: the differences tie in binary, not in the decimals.
# Exact p over the binary values 0.04988574981689453; over the decimals, in exact arithmetic, 0.04143714904785156.
BASE6 = [
    10.82161808013916,
    10.330436706542969,
    8.696843147277832,
    10.905355453491211,
    10.446374893188477,
    9.46304702758789,
    10.581117630004883,
    10.364572525024414,
    10.294132232666016,
    10.028422355651855,
    10.546712875366211,
    9.263545989990234,
    9.837090492248535,
    9.5178804397583,
    10.598846435546875,
    10.039722442626953,
    9.70754337310791,
    9.21809196472168,
    9.742807388305664,
    10.008142471313477,
    9.724396705627441,
]
IDEA6 = [
    10.821614265441895,
    10.330429077148438,
    8.6968355178833,
    10.905336380004883,
    10.446386337280273,
    9.463050842285156,
    10.58112907409668,
    10.36454963684082,
    10.294136047363281,
    10.028407096862793,
    10.546709060668945,
    9.263557434082031,
    9.837075233459473,
    9.517884254455566,
    10.598827362060547,
    10.039710998535156,
    9.707554817199707,
    9.218084335327148,
    9.742803573608398,
    10.008127212524414,
    9.724377632141113,
]


@pytest.mark.parametrize(
    ("p_value", "honest"),
    [
        (0.04988574981689453, True),  # exact, binary float64
        (0.04143714904785156, True),  # exact, rational arithmetic on the printed decimals
        (0.0414, True),
        (0.0331, False),
        (0.0601, False),
    ],
)
def test_both_honest_exact_p_values_are_accepted(p_value: float, honest: bool) -> None:
    answer = rewrite_statistics(load_seed("000"), baseline=BASE6, idea=IDEA6)
    assert answer["bench_report"]["comparison"]["p_value"] == 0.04988574981689453
    answer["bench_report"]["comparison"]["p_value"] = p_value
    assert ("A307" in _errors(_audit(answer))) is not honest


@pytest.mark.parametrize("literal", ["1e1", "12e2", "9.1e+01", "1.50e-3"])
def test_a_literal_reads_the_same_whatever_else_the_text_holds(literal: str) -> None:
    """An exponent literal keeps its digits with or without another literal (or a "0e" in a string) beside it:
    the answer cannot choose its reading by what it prints elsewhere."""
    from auditor.parse.transcript import locate_text
    from auditor.stats.precision import printed

    readings = set()
    for extra in ("", ', "x": 0.10', ', "s": "0e"'):
        document = locate_text(f'{{"bench_report": {{"mean": {literal}{extra}}}}}', max_depth=64).document
        readings.add(printed(document["bench_report"]["mean"]).half_unit)
    assert len(readings) == 1
