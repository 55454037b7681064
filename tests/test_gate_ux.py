"""The gate as users meet it (issue 11): selection typos, extend lists, the batch table,
interrupts, resume and baseline messages."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from conftest import SEED_000, SEED_001, as_transcript, seed_answer

from auditor.cli import main
from auditor.errors import UsageError
from auditor.formats.batch_table import results_table, wrap_path


def _pyproject(folder: Path, body: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


def _rules(capsys, *argv: str) -> set[str]:
    main(["audit", *argv, "--format", "json", "--quiet"])
    data = json.loads(capsys.readouterr().out)
    return {f["rule"] for r in data["results"] for f in r["findings"]}


# -- item 1: a typo is a usage error, never a silent empty gate ------------------------------


@pytest.mark.parametrize(
    "body, says",
    [
        ("ignore = ['T6O1']\n", "unknown rule code or prefix 'T6O1' (did you mean 'T601'?)"),
        ("select = ['XYZ']\n", "unknown rule code or prefix 'XYZ'"),
        ("extend-ignore = ['D5O1']\n", "extend-ignore"),
        ("[tool.auditor.per-file-ignores]\n'x/*' = ['Q1']\n", "'Q1'"),
        ("fial-on = 'error'\n", "unknown key 'fial-on' (did you mean 'fail-on'?)"),
    ],
)
def test_config_typos_exit_2_with_a_suggestion(tmp_path, monkeypatch, capsys, body, says) -> None:
    _pyproject(tmp_path, body if body.startswith("[") else "[tool.auditor]\n" + body)
    monkeypatch.chdir(tmp_path)
    assert main(["audit", str(SEED_000)]) == 2
    err = capsys.readouterr().err
    assert says in err and "pyproject.toml" in err, err


def test_valid_prefixes_and_all_are_accepted(capsys) -> None:
    for selection in ("A", "A3", "ALL", "x9", "R80"):
        assert main(["audit", str(SEED_000), "--select", selection, "--quiet"]) == 0, selection
    capsys.readouterr()


def test_extend_lists_add_to_the_configured_ones(tmp_path, monkeypatch, capsys) -> None:
    _pyproject(tmp_path, "[tool.auditor]\nselect = ['T6']\nignore = ['E701']\n")
    monkeypatch.chdir(tmp_path)
    assert _rules(capsys, str(SEED_001)) == {"T601"}
    assert _rules(capsys, str(SEED_001), "--extend-select", "D5") == {"T601", "D501"}
    assert _rules(capsys, str(SEED_001), "--extend-ignore", "T601") == set()
    # --select replaces the configured list; --extend-ignore still adds to the configured ignore.
    assert _rules(capsys, str(SEED_001), "--select", "D") == {"D501"}
    assert _rules(capsys, str(SEED_001), "--select", "D", "--extend-ignore", "D501") == set()


def test_rule_codes_are_validated_in_the_library_too() -> None:
    from auditor.options.keys import validate_command_line

    with pytest.raises(UsageError, match=r"--ignore: unknown rule code or prefix 'V40Q' \(did you mean 'V40"):
        validate_command_line({"ignore": ["V40Q"]})


# -- item 6: the batch table ----------------------------------------------------------------


def _batch(tmp_path: Path) -> list[Path]:
    paths = []
    for index, p_value in enumerate((0.0001, None, 0.2)):  # None: the honest answer as stored
        document = seed_answer("000")
        if p_value is not None:
            document["bench_report"]["comparison"]["p_value"] = p_value
        path = tmp_path / f"long_folder_name_{index}" / f"answer_with_a_long_descriptive_name_{index}.txt"
        path.parent.mkdir()
        path.write_text(as_transcript(document), encoding="utf-8")
        paths.append(path)
    return paths


def test_batch_table_lists_errors_first_and_fits_80_columns(tmp_path, capsys, monkeypatch) -> None:
    paths = _batch(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["audit", *map(str, paths), "--quiet", "--isolated"]) == 1
    out = capsys.readouterr().out
    table = out[out.index("3 transcripts in") :]
    assert all(len(line) <= 80 for line in table.splitlines()), table
    rows = [line for line in table.splitlines() if line.lstrip().startswith(("FAIL", "PASS"))]
    failing = [line for line in rows if line.lstrip().startswith("FAIL")]
    # The failing rule (A307, an error) leads the rules column, before the warnings.
    assert len(failing) == 2 and all(line.split()[3] in ("A307", "V401") for line in failing), failing
    # A disputed p shows claimed→recomputed; file names break at separators, never mid-word.
    assert "0.0001→0.0156" in table
    below_rule = table.split("─")[-1].splitlines()[1:]
    rows_and_continuations = list(itertools.takewhile(lambda line: line.strip(), below_rule))
    pieces = [line.split()[-1] for line in rows_and_continuations]
    assert pieces and all(piece.endswith(("/", "_", "-", ".", ".txt")) for piece in pieces), pieces


def test_wrap_path_breaks_after_separators() -> None:
    assert wrap_path("defects/A301_n_pairs_nine.txt", 22) == "defects/\nA301_n_pairs_nine.txt"
    assert wrap_path("a/b.txt", 40) == "a/b.txt"
    assert wrap_path("x" * 25, 10) == "x" * 10 + "\n" + "x" * 10 + "\n" + "x" * 5
    long_name = "very_long_file_name_without_folders.txt"
    assert all(len(line) <= 12 for line in wrap_path(long_name, 12).splitlines())
    assert wrap_path(long_name, 12).replace("\n", "") == long_name


def test_rerun_outcome_has_its_own_column() -> None:
    from auditor.formats import Run
    from auditor.result import AuditResult, Status

    fabricated = AuditResult(
        source="a.txt",
        status=Status.FAIL,
        findings=(),
        claimed={"verdict": "idea better (significant)", "p_value": 0.0078},
        recomputed={"verdict": "idea better (significant)", "p_value": 0.0078},
        rerun={"reproduced": False, "verdict": "no measurable effect", "seconds": 3.0},
    )
    honest = AuditResult(
        source="b.txt",
        status=Status.PASS,
        findings=(),
        rerun={"reproduced": True, "cached": True, "verdict": "idea better (significant)"},
    )
    from io import StringIO

    from rich.console import Console

    buffer = StringIO()
    Console(file=buffer, width=100).print(results_table(Run((fabricated, honest), None), 100))
    text = buffer.getvalue()
    assert "rerun" in text and "✗ none" in text and "✓ better (cached)" in text


# -- item 8: messages ------------------------------------------------------------------------


def test_resume_and_write_baseline_say_what_they_did(tmp_path, capsys) -> None:
    out = tmp_path / "results.jsonl"
    assert main(["audit", str(SEED_000), "--format", "jsonl", "-o", str(out), "--isolated"]) == 0
    capsys.readouterr()
    main(["audit", str(SEED_000), str(SEED_001), "--format", "jsonl", "-o", str(out), "--resume", "--isolated"])
    assert "1 transcript already audited, 1 to go" in capsys.readouterr().err
    baseline = tmp_path / "baseline.json"
    assert main(["audit", str(SEED_001), "--write-baseline", str(baseline), "--isolated"]) == 0
    err = capsys.readouterr().err
    assert "recorded 3 findings of 1 transcript in" in err and str(baseline) in err


def test_ctrl_c_prints_what_was_audited(tmp_path, capsys, monkeypatch) -> None:
    """An interrupt after two transcripts: their table is printed, the exit code is 130."""
    import auditor.batch.executors as executors

    real = executors.audit_task
    seen = []

    def interrupt_third(task, rerun):  # noqa: ANN001, ANN202
        if len(seen) == 2:
            raise KeyboardInterrupt
        seen.append(task.path)
        return real(task, rerun)

    monkeypatch.setattr(executors, "audit_task", interrupt_third)
    third = tmp_path / "third.txt"
    third.write_text(SEED_000.read_text(encoding="utf-8"), encoding="utf-8")
    code = main(["audit", str(SEED_000), str(SEED_001), str(third), "--jobs", "1", "--isolated"])
    out, err = capsys.readouterr()
    assert code == 130
    assert "2 transcripts" in out and "FAIL" in out  # the two audited before Ctrl-C
    assert "interrupted: 2 of" in err


def test_output_into_a_missing_folder_names_the_path_given(tmp_path, capsys) -> None:
    target = tmp_path / "missing" / "x.json"
    assert main(["audit", str(SEED_000), "--format", "json", "-o", str(target), "--isolated"]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {target}" in err and "does not exist" in err and ".tmp" not in err


# -- item 7: rule docs -------------------------------------------------------------------------


def test_rule_by_code_or_name_and_a_suggestion(capsys) -> None:
    assert main(["rule", "p-value-inconsistent"]) == 0
    by_name = capsys.readouterr().out
    assert main(["rule", "a307"]) == 0
    assert capsys.readouterr().out == by_name and by_name.startswith("# A307 p-value-inconsistent")
    assert main(["rule", "p-valu-inconsistent"]) == 2
    assert "did you mean 'p-value-inconsistent'" in capsys.readouterr().err


def test_rule_docs_render_as_markdown_on_a_terminal(capsys, monkeypatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(["rule", "A307"]) == 0
    out = capsys.readouterr().out
    assert "What it does" in out and "## What it does" not in out  # headings rendered, not raw


# -- named files, excludes and skipped files: tests/test_named_and_excluded.py ------------------------


def test_stdin_is_always_audited(monkeypatch, capsys) -> None:
    import io

    readme = "# Answers\n\nThe best run of the sweep reached p = 0.015.\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(readme.encode())))
    assert main(["audit", "-", "--format", "json", "--isolated"]) == 1
    assert json.loads(capsys.readouterr().out)["results"][0]["findings"][0]["rule"] == "P101"


def test_files_named_one_by_one_get_the_partial_batch_note(capsys) -> None:
    main(["audit", str(SEED_000), str(SEED_001), "--isolated"])
    assert "saw only the 2 files given" in capsys.readouterr().err
    main(["audit", str(SEED_000.parent), "--isolated"])
    assert "saw only" not in capsys.readouterr().err


def test_encoding_option_reads_a_legacy_file(tmp_path, capsys) -> None:
    path = tmp_path / "cp1251.txt"
    path.write_bytes(SEED_000.read_text(encoding="utf-8").encode("cp1251", errors="replace"))
    assert main(["audit", str(path), "--format", "json", "--isolated"]) == 1
    assert "--encoding" in json.loads(capsys.readouterr().out)["results"][0]["findings"][0]["message"]
    assert main(["audit", str(path), "--format", "json", "--isolated", "--encoding", "cp1251"]) == 0
    capsys.readouterr()
    assert main(["audit", str(path), "--encoding", "klingon"]) == 2
    assert "--encoding: unknown text encoding 'klingon'" in capsys.readouterr().err


def test_grids_and_configs_read_as_written(capsys) -> None:
    """T601 prints its grid as numbers, not quoted strings; no message shows a Python dict."""
    main(["audit", str(SEED_000), "--format", "json", "--isolated"])
    messages = [f["message"] for r in json.loads(capsys.readouterr().out)["results"] for f in r["findings"]]
    t601 = [m for m in messages if "largest value of its grid" in m]
    assert t601 and all("[0.001, 0.003, 0.006]" in m for m in t601), t601
    assert not any("{'" in m or "['" in m for m in messages)


def test_config_text_is_readable_and_bounded() -> None:
    from auditor.parse.strings import config_text, grid_text

    assert config_text({"lr": 0.003, "epochs": 12, "name": "adam"}) == 'lr=0.003, epochs=12, name="adam"'
    assert len(config_text({f"k{i}": i for i in range(1000)})) <= 200
    assert grid_text([0.001, 0.003, 0.006]) == "[0.001, 0.003, 0.006]"


# -- item 6: details and quiet ---------------------------------------------------------------


def test_details_all_explains_every_failure_and_quiet_prints_failures_only(capsys) -> None:
    from conftest import FIXTURES

    main(["audit", str(FIXTURES / "defects"), "--isolated"])
    default = capsys.readouterr().out
    main(["audit", str(FIXTURES / "defects"), "--isolated", "--details", "all"])
    every = capsys.readouterr().out
    assert "more failing transcripts in the table below" in default
    assert "more failing" not in every and every.count("╭─") > default.count("╭─") == 5
    main(["audit", str(FIXTURES / "silent"), "--isolated", "--quiet", "--details", "0"])
    quiet = capsys.readouterr().out
    assert "failures shown" in quiet and "PASS" not in quiet.split("─")[-1].split("\n\n")[0]
    assert main(["audit", str(SEED_000), "--isolated", "--quiet"]) == 0
    assert capsys.readouterr().out == ""  # nothing failed: nothing to say


def test_junit_names_the_failing_rules_and_the_time(capsys) -> None:
    import xml.etree.ElementTree as ET

    main(["audit", str(SEED_000), str(SEED_001), "--format", "junit", "--isolated"])
    root = ET.fromstring(capsys.readouterr().out)
    failure = root.find(".//failure")
    assert failure is not None and failure.get("message").startswith("D501: 1 error, ")
    times = [float(case.get("time")) for case in root.iter("testcase")]
    assert all(t > 0 for t in times)


def test_help_shows_examples_exit_codes_and_every_flag_explained(capsys) -> None:
    assert main(["--help"]) == 0
    top = capsys.readouterr().out
    assert "examples:" in top and "exit codes:" in top and "--format concise" in top
    assert main(["audit", "--help"]) == 0
    audit = capsys.readouterr().out
    for flag in ("--rerun", "--device", "--extend-select", "--extend-ignore", "--details", "--encoding", "--no-cache"):
        line = next(line for line in audit.splitlines() if line.strip().startswith(flag))
        assert len(line.split(None, 2)) >= 2, line  # the flag has help text beside it or below it
    assert "PATH" in audit and "transcripts or folders of them" in audit
    from auditor.options.keys import CommandLine

    undocumented = [name for name, field in CommandLine.model_fields.items() if not field.description]
    assert undocumented == []
