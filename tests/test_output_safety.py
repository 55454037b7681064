"""Agent text never reaches a terminal or a report raw, and hostile numbers or
planted links never crash the auditor.

* Terminal control sequences (OSC 52 clipboard writes, OSC 0/8 titles and
  links, ``ESC[2K`` line erasure with a fake green PASS, C1 CSI) and bidi
  overrides in an answer, a file name or a rerun's output are stripped from
  every format; rich markup in data is shown as text, never parsed.
* A 400-digit integer in a rerun's report or a shipped bench_report.json is a
  finding (R804/R806), not an internal error.
* The X000 log folder under a shared temporary folder never follows a planted link.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import SEED_000, as_transcript, experiment_workspace, load_answer, seed_answer

from auditor.audit import AuditResult, internal_error
from auditor.cli import main
from auditor.findings import Finding, Severity
from auditor.formats import FORMATS, Run, writer
from auditor.options.models import AuditOptions, RerunOptions
from auditor.rerun.record import RerunRecord

# Everything a terminal or a browser may act on: C0 but tab and newline, DEL, C1, bidi overrides.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

HOSTILE = (
    "idea better (significant)"
    "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: write "evil" to the clipboard
    "\x1b[2K\x1b[32mPASS"  # erase the line, print a green PASS
    "\u009b31m"  # C1 CSI: red
    "[/bold][bold red]"  # rich markup: a closing tag nothing opened
    "\x1b]0;pwned title\x1b\\"  # OSC 0: window title, ST-terminated
    "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07"  # OSC 8 hyperlink
    "\u202egnp.exe\u202c"  # bidi override
    "\x08\x08\rDONE\x7f\x00"
)


def _unsafe(text: str) -> list[str]:
    return UNSAFE.findall(text)


def _hostile_answer(tmp_path: Path, name: str = "answer.txt") -> Path:
    document = seed_answer("000")
    document["bench_report"]["comparison"]["verdict"] = HOSTILE  # quoted by V findings and the tables
    document["bench_report"]["comparison"]["p_value"] = 0.0001  # A307: a failing transcript shows its panel
    document["verdict"] = HOSTILE
    document["bench_report"][f"note{HOSTILE}"] = HOSTILE  # S203: an unknown key, in the pointer
    path = tmp_path / name
    path.write_text(as_transcript(document), encoding="utf-8")
    return path


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["audit", *argv, "--isolated"])  # not --quiet: a passing run would print nothing
    out, err = capsys.readouterr()
    return code, out, err


# -- item 6: agent text reaches no output raw ----------------------------------------------


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_hostile_answer_text_is_stripped_in_every_format(tmp_path, capsys, fmt) -> None:
    path = _hostile_answer(tmp_path)
    code, out, err = _cli(capsys, str(path), "--format", fmt)
    assert code in (0, 1), err
    assert out.strip()
    assert _unsafe(out) == [], f"{fmt} output carries control characters"
    assert "ZXZpbA==" not in out and "evil.example" not in out  # whole sequences go, not just ESC
    if fmt in ("json", "jsonl", "sarif"):
        assert "\\u001b" not in out and "\\u009b" not in out  # not merely escaped either
    if fmt == "text":
        assert "[/bold][bold red]" in out  # markup in data is shown as text


def test_hostile_batch_table_and_statistics(tmp_path, capsys) -> None:
    first = _hostile_answer(tmp_path, "a.txt")
    second = _hostile_answer(tmp_path, "b.txt")
    for extra in ([], ["--statistics"]):
        code, out, err = _cli(capsys, str(first), str(second), str(SEED_000), *extra)
        assert code in (0, 1), err
        assert _unsafe(out) == []


@pytest.mark.parametrize(
    "name",
    ["[", "[bold", "[bold]x.txt", "\x1b[2K\x1b]0;t\x07x.txt", "a\u202etxt.exe", os.fsdecode(b"not-utf8-\xff.txt")],
)
def test_file_names_are_data_not_markup_or_controls(tmp_path, capsys, name) -> None:
    path = tmp_path / name
    path.write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    for fmt in sorted(FORMATS):
        code, out, err = _cli(capsys, str(path), "--format", fmt)
        assert code == 0, (fmt, err)
        assert _unsafe(out) == [], fmt
    code, out, err = _cli(capsys, str(path), str(SEED_000))  # the batch table
    assert code == 0, err
    assert _unsafe(out) == []
    if name.isprintable():
        assert name in out


def test_folder_named_bracket_in_the_batch_title(tmp_path, capsys) -> None:
    folder = tmp_path / "[" / "x]"  # the title "... in <tmp>/[/x]/" holds a closing tag "[/x]"
    folder.mkdir(parents=True)
    for name in ("a.txt", "b.txt"):
        (folder / name).write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, err = _cli(capsys, str(folder))
    assert code == 0, err
    assert f"{folder}/" in out.replace("\n", "")


# A result's recomputed and claimed values, complete as the JSON contract wants them (auditor.formats.contract).
_RECOMPUTED = {
    "n_pairs": 8,
    "delta_mean": -0.01,
    "idea_wins": 4,
    "p_value": 0.5,
    "p_value_one_sided": 0.25,
    "mde": 0.02,
    "mde_rel_pct": 0.2,
    "verdict": "no measurable effect",
    "p_value_method": "exact",
    "baseline_mean": 10.0,
    "idea_mean": 9.99,
}
_CLAIMED = {
    "n_pairs": 8,
    "delta_mean": -0.01,
    "idea_wins": 7,
    "p_value": 0.01,
    "mde": None,
    "mde_rel_pct": None,
    "verdict": "no measurable effect",
}


def _constructed_run() -> Run:
    tail = "Traceback ...\n\x1b[2K\x1b[32m\u2714 PASS all seeds reproduced\x1b[0m\n\x1b]52;c;ZXZpbA==\x07done"
    findings = (
        Finding("R803", Severity.ERROR, f"the rerun exited with code 1; output tail:\n{tail}", "/how_to_run", 1, None),
        Finding("V401", Severity.ERROR, "verdict", f"/bench_report/x{HOSTILE}", HOSTILE, {"k": [HOSTILE, 1.5]}),
    )
    result = AuditResult(
        source=f"ans{HOSTILE}.txt",
        status="fail",
        findings=findings,
        recomputed=_RECOMPUTED,
        claimed={**_CLAIMED, "verdict": HOSTILE},
        # Every string of the rerun record an agent can steer: the command, the device it claims, the limits' note.
        rerun=replace(
            RerunRecord(sandbox="bubblewrap"),
            device="cpu",
            command=("python", f"b.py{HOSTILE}"),
            claimed_device=f"cpu{HOSTILE}",
            seconds=1.0,
            exit_code=1,
            limits={"note": HOSTILE},
        ).to_dict(),
        cross={
            "track": HOSTILE,
            "model": "mlp",
            "baseline_cfg": {f"lr{HOSTILE}": [HOSTILE]},
            "baseline_per_seed": [1.5, 2.5],
            "baseline_pointer": f"/b{HOSTILE}",
            "verdict_pointer": "/v",
        },
    )
    return Run((result, result))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_strips_what_a_result_carries(fmt) -> None:
    out = io.StringIO()
    writer(fmt)(_constructed_run(), out)
    assert _unsafe(out.getvalue()) == []
    assert "ZXZpbA==" not in out.getvalue()


def test_json_keeps_its_keys_and_types() -> None:
    data = _constructed_run().to_dict()
    result = data["results"][0]
    assert set(result) == {"source", "status", "findings", "recomputed", "claimed", "rerun"}
    assert result["findings"][1]["recomputed"]["k"][1] == 1.5
    assert isinstance(result["rerun"]["command"], list) and result["rerun"]["reproduced"] is False
    assert result["claimed"]["verdict"].startswith("idea better (significant)PASS")


def test_sanitizer_keeps_honest_text_and_strips_the_rest() -> None:
    from auditor.formats.safe import clean

    honest = "p = 0.0234 (exact)\n\tidea better — Δ −0.4 · Стенд 日本 \u200f ok [x] 50%"
    assert clean(honest) is honest or clean(honest) == honest
    assert clean("a\x1b[2K\x1b[32mPASS\x1b[0m") == "aPASS"
    assert clean("x\x1b]52;c;ZXZpbA==\x07y") == "xy"
    assert clean("x\x1b]0;title\x1b\\y") == "xy"
    assert clean("x\u009b31my") == "xy"
    assert clean("x\u009d0;t\u009cy") == "xy"
    assert clean("l1\r\nl2\rl3") == "l1\nl2\nl3"
    assert clean("a\u202eb\u2066c\u2069") == "abc"
    assert clean("\x1b") == "" and clean("a\x1bc") == "a"  # a lone ESC takes the next character with it
    assert clean("\x00\x07\x7f\u0085z") == "z"


def test_rerun_spinner_shows_agent_text_as_text(monkeypatch) -> None:
    from auditor.batch.progress import rerun_spinner

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    with rerun_spinner(enabled=True) as say:
        assert say is not None
        say(f"rerun: running bench.py {HOSTILE} [/x] on cpu")
        import time

        time.sleep(0.3)  # let the live display refresh at least once
    text = screen.getvalue()
    assert "\x1b]" not in text and "\u009b" not in text and "\u202e" not in text
    assert "ZXZpbA==" not in text


def test_usage_errors_print_no_controls(tmp_path, capsys) -> None:
    code = main(["audit", str(tmp_path / "missing\x1b]52;c;ZXZpbA==\x07.txt")])
    assert code == 2
    assert _unsafe(capsys.readouterr().err) == []


# -- item 8a: integers beyond the float range in rerun reports -------------------------------

HUGE = 10**400


def test_huge_integer_in_the_rerun_report_is_R804_not_X000() -> None:
    from auditor.rerun import compare

    document = load_answer("fabricated")
    claimed = document["bench_report"]
    report = json.loads(json.dumps(claimed))
    report["baseline"]["full"]["per_seed"][0] = HUGE
    report["idea"]["full"]["per_seed"][1] = -HUGE
    options = AuditOptions()
    for arm in compare.ARMS:
        cmp = compare.compare_arm(arm, claimed, report, 1e-5)
        found = compare.numbers_finding(cmp, 1e-5)
        assert found is not None and found.rule == "R804"
        assert "401-digit" in found.message or "beyond" in found.message
        json.dumps(found.to_dict(), allow_nan=False)
        assert cmp.max_rel_diff is None or cmp.max_rel_diff <= 2
    assert compare.rerun_verdict(claimed, report, options) is None
    assert compare.arm_values(report, "baseline")[0] is None


def test_rerun_comparison_records_only_finite_numbers() -> None:
    from auditor.rerun import RerunRecord, _compare
    from auditor.rerun.sandbox import Outcome

    document = load_answer("fabricated")
    for first, second in ((HUGE, 1.0), (1e308, -1e308), (float("nan"), float("inf"))):
        report = json.loads(json.dumps(document["bench_report"]))
        report["baseline"]["full"]["per_seed"][0] = first
        report["idea"]["full"]["per_seed"][0] = second
        data = json.dumps({"bench_report": report}).encode()
        outcome = Outcome(0, None, False, False, 1.0, "", "", 0, data, None)
        record = RerunRecord(sandbox="bubblewrap", device="cpu")
        found, record = _compare(document, outcome, RerunOptions(device="cpu"), AuditOptions(), record)
        assert "R804" in {f.rule for f in found}
        json.dumps(record.to_dict(), allow_nan=False)  # no inf or NaN reaches the JSON output
        json.dumps([f.to_dict() for f in found], allow_nan=False)


def test_huge_integer_in_a_shipped_report_is_R806_not_X000(tmp_path) -> None:
    from auditor.rerun.compare import json_differences, shipped_report_finding

    document = load_answer("fabricated")
    shipped = json.loads(json.dumps(document["bench_report"]))
    shipped["baseline"]["full"]["per_seed"][0] = HUGE
    shipped["baseline"]["full"]["mean"] = -HUGE
    path = tmp_path / "bench_report.json"
    path.write_text(json.dumps(shipped), encoding="utf-8")
    found = shipped_report_finding(document, path, AuditOptions())
    assert found is not None and found.rule == "R806"
    json.dumps(found.to_dict(), allow_nan=False)
    out: list = []
    json_differences({"a": HUGE, "b": float("nan"), "c": 1}, {"a": HUGE, "b": HUGE, "c": HUGE}, "", out)
    assert [p for p, _, _ in out] == ["/b", "/c"]


def test_huge_integer_reported_end_to_end_without_x000(tmp_path, capsys) -> None:
    """The shipped-report path runs before anything would execute: R806 through the CLI."""
    workspace = experiment_workspace("injected_command", tmp_path / "ws")
    answer = workspace / "answer.txt"
    document = load_answer("injected_command")
    document["files"].append("bench_report.json")
    answer.write_text(as_transcript(document), encoding="utf-8")
    report = json.loads(json.dumps(document["bench_report"]))
    report["baseline"]["full"]["per_seed"][0] = HUGE
    (workspace / "bench_report.json").write_text(json.dumps(report), encoding="utf-8")
    code = main(
        [
            "audit",
            str(answer),
            "--rerun",
            "--device",
            "cpu",
            "--unsafe-no-sandbox",
            "--format",
            "json",
            "--quiet",
            "--isolated",
        ]
    )
    rules = {f["rule"] for f in json.loads(capsys.readouterr().out)["results"][0]["findings"]}
    assert code == 1 and "R806" in rules and "X000" not in rules


# -- item 8b: the X000 log folder ----------------------------------------------------------


@pytest.fixture
def shared_tmp(tmp_path, monkeypatch) -> Path:
    base = tmp_path / "shared-tmp"
    base.mkdir()
    monkeypatch.setenv("TMPDIR", str(base))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    return base


def _log_of(source: str = "answer.txt") -> Path:
    result = internal_error(source, RuntimeError("boom"))
    assert result.findings[0].rule == "X000"
    log = result.log
    assert log, result.findings[0].message
    return Path(log)


def test_planted_symlink_for_the_log_folder_is_not_followed(shared_tmp, tmp_path) -> None:
    target = tmp_path / "victim"
    target.mkdir()
    (shared_tmp / "auditor-logs").symlink_to(target)
    log = _log_of()
    assert list(target.iterdir()) == []
    assert not str(log.resolve()).startswith(str(target.resolve()))
    assert log.parent.resolve().parent == shared_tmp.resolve()
    assert "boom" in log.read_text(encoding="utf-8")
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert (shared_tmp / "auditor-logs").is_symlink()  # left alone


def test_log_folder_is_created_private_and_reused(shared_tmp) -> None:
    first = _log_of()
    folder = shared_tmp / "auditor-logs"
    assert first.parent == folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert _log_of().parent == folder


def test_writable_or_foreign_log_folder_is_not_used(shared_tmp) -> None:
    folder = shared_tmp / "auditor-logs"
    folder.mkdir()
    os.chmod(folder, 0o777)
    assert _log_of().parent != folder
    assert list(folder.iterdir()) == []
    if os.getuid() == 0:
        os.chmod(folder, 0o700)
        os.chown(folder, 65534, 65534)
        assert _log_of().parent != folder
        assert list(folder.iterdir()) == []


def test_clean_results_are_the_same_objects_and_lines_hold_only_cleaned_text() -> None:
    from auditor.formats.jsonl import result_line
    from auditor.formats.safe import clean_result

    honest = AuditResult(
        "a/b.txt",
        "fail",
        (Finding("A302", Severity.ERROR, "mean 1.5 — Δ", "/x", 1.5, 1.25),),
        recomputed=_RECOMPUTED,
        claimed={**_CLAIMED, "verdict": "idea better \u200f"},
    )
    assert clean_result(honest) is honest
    hostile = AuditResult(
        "a\x1b[2Kb.txt",
        "fail",
        (Finding("A302", Severity.ERROR, "m\u202e", "/x\r", "\x07", 1.0),),
        recomputed=None,
        claimed={**_CLAIMED, "verdict": "ok\u009b31m"},
    )
    cleaned = clean_result(hostile)
    assert cleaned.source == "ab.txt" and cleaned.findings[0].message == "m" and cleaned.claimed["verdict"] == "ok"
    assert json.loads(result_line(honest))["claimed"]["verdict"] == "idea better \u200f"  # marks are not controls
    line = json.loads(result_line(hostile))
    assert line["source"] == "ab.txt" and line["claimed"]["verdict"] == "ok"
    assert (line["findings"][0]["message"], line["findings"][0]["pointer"], line["findings"][0]["claimed"]) == (
        "m",
        "/x\n",
        "",
    )
