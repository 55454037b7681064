"""The option layer: values, the given set, and the exact messages for every kind of bad value.

The messages are pinned as strings, since a user or a script may match them: a
wrong type in pydantic's words ("Input should be a valid string"), a wrong value
in the value rule's ("expected a positive number, got 0").
"""

from __future__ import annotations

import argparse

import pytest
from pydantic import ValidationError

from auditor.errors import UsageError
from auditor.findings import Severity
from auditor.options.keys import (
    CommandLine,
    FileOptions,
    Thresholds,
    add_arguments,
    flag_fields,
    validate_command_line,
    validate_file,
)

KNOWN = (
    "(known: select, ignore, extend-select, extend-ignore, fail-on, alpha, mc-resamples, resamples, fdr, include, "
    "exclude, force-exclude, thresholds, per-file-ignores, severity)"
)
THRESHOLD_KEYS = (
    "(known: thresholds.negligible-rel, thresholds.negligible-std, thresholds.inconclusive-mde-rel, "
    "thresholds.mechanism-factor)"
)


def _file_error(table: dict) -> str:
    with pytest.raises(UsageError) as raised:
        validate_file(table, "pyproject.toml")
    return str(raised.value).removeprefix("pyproject.toml: [tool.auditor] ")


def _flag_error(given: dict) -> str:
    with pytest.raises(UsageError) as raised:
        validate_command_line(given)
    return str(raised.value)


def test_a_valid_table_converts_every_kind_of_value() -> None:
    options = validate_file(
        {
            "select": "a3, V4",
            "ignore": ["T601", "e7"],
            "fail-on": " Warning ",
            "alpha": 0.01,
            "mc-resamples": 20000,
            "fdr": 1e-3,
            "include": ["*.txt,*.md"],
            "thresholds": {"negligible-rel": 2, "mechanism-factor": 3.5},
            "per-file-ignores": {"legacy/*": "D5,t603"},
            "severity": {"a307": " Info "},
        },
        "pyproject.toml",
    )
    assert (options.select, options.ignore, options.fail_on) == (("A3", "V4"), ("T601", "E7"), "warning")
    assert (options.alpha, options.mc_resamples, options.fdr, options.include) == (0.01, 20000, 1e-3, ("*.txt", "*.md"))
    assert options.thresholds == Thresholds.model_validate({"negligible-rel": 2.0, "mechanism-factor": 3.5})
    assert type(options.thresholds.negligible_rel) is float  # an int given for a number is a float
    assert options.per_file_ignores == {"legacy/*": ("D5", "T603")}
    assert options.severity == {"A307": Severity.INFO}
    assert options.extend_select is None and options.resamples is None  # not given


def test_the_command_line_converts_its_strings_and_the_file_does_not() -> None:
    cli = validate_command_line(
        {
            "alpha": "0.01",
            "mc_resamples": "1_000",
            "timeout": "60",
            "rtol": "0",
            "thresholds": {"negligible-rel": "0.5"},
            "quiet": True,
            "device": "cpu",
        }
    )
    assert (cli.alpha, cli.mc_resamples, cli.timeout, cli.rtol) == (0.01, 1000, 60.0, 0.0)
    assert cli.thresholds.negligible_rel == 0.5 and cli.quiet is True and cli.device == "cpu"
    assert _file_error({"alpha": "0.01"}) == "alpha: expected a number, got '0.01'"
    assert _file_error({"mc-resamples": "1_000"}) == "mc-resamples: expected a positive integer, got '1_000'"


def test_given_names_the_options_set_and_none_is_not_given() -> None:
    cli = validate_command_line({"select": ["A3"], "alpha": None, "quiet": False, "jobs": "2"})
    assert cli.given() == {"select": ("A3",), "quiet": False, "jobs": 2}
    assert CommandLine().given() == {} and FileOptions() == FileOptions()
    assert validate_file({"thresholds": {"negligible-std": 1}}, "p").thresholds.given() == {"negligible_std": 1.0}
    with pytest.raises(ValidationError, match="frozen"):
        cli.alpha = 0.5  # type: ignore[misc]
    with pytest.raises(ValidationError, match="alph\n  Extra inputs are not permitted"):
        CommandLine(alph=0.5)


@pytest.mark.parametrize(
    "table, message",
    [
        ({"selct": ["A"]}, f"unknown key 'selct' (did you mean 'select'?) {KNOWN}"),
        ({"extend_select": ["A"]}, f"unknown key 'extend_select' (did you mean 'extend-select'?) {KNOWN}"),
        ({"quiet": True}, f"unknown key 'quiet' {KNOWN}"),  # a command-line-only option
        # A nested table's unknown key is matched and listed against that table's keys.
        ({"thresholds": {"zz": 1}}, f"unknown key 'thresholds.zz' {THRESHOLD_KEYS}"),
        (
            {"thresholds": {"negligible_rel": 0.1}},
            f"unknown key 'thresholds.negligible_rel' (did you mean 'thresholds.negligible-rel'?) {THRESHOLD_KEYS}",
        ),
        ({1: 2}, "1: Keys should be strings"),
        ({"thresholds": 3}, "thresholds: Input should be a valid dictionary or instance of Thresholds"),
        (
            {"thresholds": ["negligible-rel"]},
            "thresholds: Input should be a valid dictionary or instance of Thresholds",
        ),
        ({"thresholds": {"negligible-rel": 0}}, "thresholds.negligible-rel: expected a positive number, got 0"),
        ({"thresholds": {"mechanism-factor": "2"}}, "thresholds.mechanism-factor: expected a number, got '2'"),
        ({"alpha": True}, "alpha: expected a number, got True"),
        ({"alpha": float("nan")}, "alpha: expected a number, got nan"),
        ({"alpha": float("inf")}, "alpha: expected a number, got inf"),
        ({"alpha": 10**400}, f"alpha: expected a number, got {10**400}"),  # pydantic let OverflowError through
        ({"alpha": [0.05]}, "alpha: expected a number, got [0.05]"),
        ({"alpha": 0}, "alpha: expected a number between 0 and 1, got 0"),
        ({"fdr": 1}, "fdr: expected a number between 0 and 1, got 1"),
        ({"mc-resamples": 1.5}, "mc-resamples: expected a positive integer, got 1.5"),
        ({"mc-resamples": 2.0}, "mc-resamples: expected a positive integer, got 2.0"),
        ({"resamples": 0}, "resamples: expected a positive integer, got 0"),
        ({"resamples": True}, "resamples: expected a positive integer, got True"),
        ({"fail-on": ["error"]}, "fail-on: expected one of error, warning, info, never, got ['error']"),
        ({"fail-on": "sometimes"}, "fail-on: expected one of error, warning, info, never, got 'sometimes'"),
        ({"select": 5}, "select: expected a list of rule codes or prefixes"),
        (
            {"select": ["V40Q"]},
            "select: unknown rule code or prefix 'V40Q' (did you mean 'V407'?); `auditor rules` lists them",
        ),
        ({"include": [1]}, "include: expected a list of glob patterns"),
        ({"exclude": {"a": 1}}, "exclude: expected a list of glob patterns"),
        ({"severity": "error"}, "severity: expected a table of CODE = severity"),
        ({"severity": {"A307": 5}}, "severity: A307: expected error, warning or info"),
        ({"severity": {"A307": "loud"}}, "severity: unknown severity 'loud'; expected info, warning or error"),
        ({"severity": {"A3O7": "error"}}, "severity: unknown rule 'A3O7' (did you mean 'A307'?)"),
        ({"per-file-ignores": []}, "per-file-ignores: expected a table of glob = [codes]"),
        (
            {"per-file-ignores": {"legacy/*": ["ZZ9"]}},
            "per-file-ignores: unknown rule code or prefix 'ZZ9'; `auditor rules` lists them",
        ),
    ],
)
def test_a_bad_table_is_a_usage_error_with_this_message(table: dict, message: str) -> None:
    assert _file_error(table) == message


@pytest.mark.parametrize(
    "tables, message",
    [
        # The first option in definition order, whatever the table's order ...
        ([{"fdr": 2, "alpha": 2}, {"alpha": 2, "fdr": 2}], "alpha: expected a number between 0 and 1, got 2"),
        # ... before any unknown key, which come in the table's order ...
        ([{"zzz": 1, "alpha": "x"}, {"alpha": "x", "zzz": 1}], "alpha: expected a number, got 'x'"),
        ([{"yyy": 1, "zzz": 1}], f"unknown key 'yyy' {KNOWN}"),
        # ... and a nested table where its option stands, its own options before its unknown keys.
        (
            [{"severity": 3, "thresholds": {"zz": 1, "mechanism-factor": -1}}],
            "thresholds.mechanism-factor: expected a positive number, got -1",
        ),
        ([{"thresholds": {"negligible-rel": 0}, "alpha": 3}], "alpha: expected a number between 0 and 1, got 3"),
    ],
)
def test_of_several_bad_keys_the_first_in_definition_order_is_reported(tables: list[dict], message: str) -> None:
    assert {_file_error(table) for table in tables} == {message}


@pytest.mark.parametrize(
    "given, message",
    [
        ({"zzz": "1"}, "unknown key 'zzz'"),
        ({"quiet": "maybe"}, "--quiet: Input should be a valid boolean, unable to interpret input"),
        ({"quiet": 2}, "--quiet: Input should be a valid boolean, unable to interpret input"),
        ({"quiet": 0.5}, "--quiet: Input should be a valid boolean"),
        ({"quiet": []}, "--quiet: Input should be a valid boolean"),
        ({"output": 5}, "--output: Input should be a valid string"),
        ({"output": b"\xff"}, "--output: Input should be a valid string, unable to parse raw data as a unicode string"),
        ({"device": "gpu"}, "--device: Input should be 'auto', 'cpu' or 'cuda', got 'gpu'"),
        ({"device": "CPU"}, "--device: Input should be 'auto', 'cpu' or 'cuda', got 'CPU'"),
        ({"alpha": "x"}, "--alpha: expected a number, got 'x'"),
        ({"alpha": "1"}, "--alpha: expected a number between 0 and 1, got 1"),
        ({"mc_resamples": "1e4"}, "--mc-resamples: expected a positive integer, got '1e4'"),
        ({"jobs": "0"}, "--jobs: expected a positive integer, got 0"),
        ({"timeout": "inf"}, "--timeout: expected a number, got inf"),
        ({"rtol": "-1"}, "--rtol: expected a non-negative number, got -1"),
        ({"details": "-1"}, "--details: expected a number or 'all', got '-1'"),
        ({"details": "\u00b2"}, "--details: expected a number or 'all', got '\u00b2'"),  # a digit int() refuses
        ({"encoding": "nope"}, "--encoding: unknown text encoding 'nope'"),
        ({"fail_on": "loud"}, "--fail-on: expected one of error, warning, info, never, got 'loud'"),
        ({"select": ["a3", "ZZ9"]}, "--select: unknown rule code or prefix 'ZZ9'; `auditor rules` lists them"),
        ({"thresholds": {"negligible-rel": "x"}}, "--thresholds.negligible-rel: expected a number, got 'x'"),
        ({"device": "gpu", "alpha": "x", "zzz": 1}, "--alpha: expected a number, got 'x'"),
    ],
)
def test_a_bad_flag_value_is_a_usage_error_with_this_message(given: dict, message: str) -> None:
    assert _flag_error(given) == message


@pytest.mark.parametrize(
    "raw, value",
    [
        (True, True),
        (False, False),
        (1, True),
        (0, False),
        (1.0, True),
        ("true", True),
        ("YES", True),
        ("on", True),
        ("t", True),
        ("y", True),
        ("1", True),
        ("False", False),
        ("no", False),
        ("OFF", False),
        ("f", False),
        ("0", False),
        (b"yes", True),
    ],
)
def test_a_switch_reads_what_pydantic_read_as_a_boolean(raw, value: bool) -> None:
    assert validate_command_line({"quiet": raw}).quiet is value


def test_snake_and_kebab_names_are_one_flag_and_details_encoding_convert() -> None:
    assert validate_command_line({"extend-select": ["X"]}) == validate_command_line({"extend_select": ["X"]})
    cli = validate_command_line({"details": " ALL ", "encoding": "UTF8", "output": b"out.json"})
    assert (cli.details, cli.encoding, cli.output) == ("all", "utf-8", "out.json")


def test_argparse_offers_every_command_line_option_and_no_table() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser, ["json", "text"])
    flags = {action.dest: action for action in parser._actions}
    assert set(flags) - {"help"} == set(CommandLine.model_fields) - {"thresholds", "per_file_ignores", "severity"}
    assert flags["jobs"].option_strings == ["--jobs", "-j"] and flags["quiet"].option_strings == ["--quiet", "-q"]
    assert flags["format"].choices == ["json", "text"] and list(flags["device"].choices) == ["auto", "cpu", "cuda"]
    args = parser.parse_args(["--select", "A3,V4", "--select", "d5", "-q", "-j", "3", "--max-bytes", "1_000"])
    cli = validate_command_line({name: getattr(args, name) for name in flag_fields() if hasattr(args, name)})
    assert cli.given() == {"select": ("A3", "V4", "D5"), "quiet": True, "jobs": 3, "max_bytes": 1000}
