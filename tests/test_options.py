"""AuditOptions and RerunOptions: one validated contract for the command line, the config file and the Python API."""

from __future__ import annotations

import argparse
import pickle
import types
import typing

import pytest
from conftest import SEED_000, SEED_001
from pydantic import ValidationError

from auditor.audit import audit_path
from auditor.cli import main
from auditor.findings import Severity
from auditor.options.keys import CommandLine, Thresholds, add_arguments, flag_fields
from auditor.options.models import AuditOptions, RerunOptions
from auditor.result import Status, failing


def _pyproject(folder, body: str):
    path = folder / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


# -- the Python API validates as the command line does ------------------------------------------


@pytest.mark.parametrize(
    "values, says",
    [
        ({"select": ("A3O7",)}, "unknown rule code or prefix 'A3O7' (did you mean 'A307'?)"),
        ({"ignore": "T6O1"}, "unknown rule code or prefix 'T6O1' (did you mean 'T601'?)"),
        ({"severity_overrides": {"A3O7": "error"}}, "unknown rule 'A3O7' (did you mean 'A307'?)"),
        ({"severity_overrides": {"A307": "loud"}}, "unknown severity 'loud'"),
        ({"always_fail": {"R8O1"}}, "unknown rule code or prefix 'R8O1'"),
        ({"alpha": 5}, "expected a number between 0 and 1, got 5"),
        ({"alpha": 0}, "expected a number between 0 and 1, got 0"),
        ({"alpha": "0.05"}, "expected a number, got '0.05'"),  # a string converts on the command line only
        ({"alpha": True}, "expected a number, got True"),
        ({"negligible_rel": float("nan")}, "expected a number, got nan"),
        ({"mechanism_factor": -2.0}, "expected a positive number, got -2"),
        ({"mc_resamples": 0}, "expected a positive integer, got 0"),
        ({"max_bytes": 1.5}, "expected a positive integer, got 1.5"),
        ({"random_seed": -1}, "expected a non-negative integer, got -1"),
        ({"exact_max_n": 41}, "expected an integer from 0 to 40, got 41"),
        ({"fail_on": "sometimes"}, "expected one of error, warning, info, never, got 'sometimes'"),
        ({"fail_on": 2}, "expected one of error, warning, info, never, got 2"),
        ({"encoding": "klingon"}, "unknown text encoding 'klingon'"),
        ({"alph": 0.05}, "alph\n  Extra inputs are not permitted"),
    ],
)
def test_a_bad_audit_option_raises_in_process(values: dict, says: str) -> None:
    with pytest.raises(ValidationError) as raised:
        AuditOptions(**values)
    assert says in str(raised.value)


def test_good_values_are_normalised() -> None:
    options = AuditOptions(
        select="a3, V4",
        ignore=["t6"],
        fail_on=" Warning ",
        encoding="UTF8",
        severity_overrides={"t601": "error"},
        always_fail=["R801"],
        alpha=1e-3,
    )
    assert (options.select, options.ignore, options.fail_on) == (("A3", "V4"), ("T6",), Severity.WARNING)
    assert options.encoding == "utf-8" and options.severity_overrides == {"T601": Severity.ERROR}
    assert options.always_fail == frozenset({"R801"}) and options.alpha == 1e-3
    assert AuditOptions(select=("ALL",), ignore=("x9",)).ignore == ("X9",)  # "ALL" and prefixes select rules
    assert AuditOptions(fail_on=Severity.INFO).fail_on is Severity.INFO
    assert AuditOptions(mechanism_factor=3).mechanism_factor == 3.0 and type(AuditOptions(alpha=0.1).alpha) is float


def test_the_exact_test_cap_is_the_statistics_cap() -> None:
    from auditor.options.models import EXACT_MAX_N_CAP
    from auditor.stats.signflip import EXACT_MAX_N_CAP as STATS_CAP

    assert EXACT_MAX_N_CAP == STATS_CAP and AuditOptions(exact_max_n=STATS_CAP).exact_max_n == STATS_CAP


def test_fail_on_never_works_and_never_fails_a_run(capsys) -> None:
    """It raised AttributeError ("never" has no rank) once a result was settled."""
    never = AuditOptions(fail_on="never")
    assert never.fail_on is None and AuditOptions(fail_on="NEVER") == never
    default = audit_path(str(SEED_001))
    assert default.status is Status.FAIL and any(f.severity is Severity.ERROR for f in default.findings)
    result = audit_path(str(SEED_001), never)
    assert result.status is Status.PASS and result.findings == default.findings
    assert not failing([result], never.fail_on)
    assert main(["audit", str(SEED_001), "--isolated", "--fail-on", "never", "-q"]) == 0
    assert main(["audit", str(SEED_001), "--isolated", "-q"]) == 1
    capsys.readouterr()


def test_options_are_frozen_copied_with_model_copy_and_pickle() -> None:
    options = AuditOptions(ignore=("D5",), severity_overrides={"T601": "error"}, fail_on="never")
    with pytest.raises(ValidationError, match="frozen"):
        options.alpha = 0.5  # type: ignore[misc]
    wider = options.model_copy(update={"ignore": (*options.ignore, "E7")})
    assert wider.ignore == ("D5", "E7") and options.ignore == ("D5",) and wider.fail_on is None
    assert pickle.loads(pickle.dumps(wider)) == wider  # as a worker process or a dask task gets it
    rerun = RerunOptions(device="cpu", progress=print)
    bare = rerun.model_copy(update={"progress": None})
    assert pickle.loads(pickle.dumps(bare)) == bare == RerunOptions(device="cpu")


@pytest.mark.parametrize(
    "values, says",
    [
        ({"device": "gpu"}, "Input should be 'auto', 'cpu' or 'cuda'"),
        ({"timeout": 0}, "expected a positive number, got 0"),
        ({"rtol": -1e-3}, "expected a non-negative number, got -0.001"),
        ({"memory_bytes": 0}, "expected a positive integer, got 0"),
        ({"disk_bytes": -1}, "expected a non-negative integer, got -1"),
        ({"max_processes": True}, "expected a positive integer, got True"),
        ({"use_cache": "maybe"}, "Input should be a valid boolean"),
        ({"sandbox": False}, "Extra inputs are not permitted"),
    ],
)
def test_a_bad_rerun_option_raises(values: dict, says: str) -> None:
    with pytest.raises(ValidationError, match=says.replace("(", r"\(")):
        RerunOptions(**values)


def test_the_rerun_flags_become_rerun_options_in_bytes() -> None:
    from auditor.options.keys import validate_command_line

    cli = validate_command_line(
        {
            "rerun": True,
            "device": "cpu",
            "memory": "0.5",
            "disk": "0",
            "max_output": "2",
            "no_cache": True,
            "timeout": "60",
        }
    )
    assert cli.rerun_options() == RerunOptions(
        device="cpu",
        memory_bytes=512 * 1024 * 1024,
        disk_bytes=0,
        output_limit_bytes=2 * 1024 * 1024,
        use_cache=False,
        timeout=60.0,
    )
    assert validate_command_line({"device": "cpu"}).rerun_options() is None  # no --rerun


def test_a_size_under_one_byte_is_a_usage_error(capsys) -> None:
    assert main(["audit", str(SEED_000), "--isolated", "--rerun", "--max-output", "1e-9"]) == 2
    assert capsys.readouterr().err == "auditor: error: --max-output: 1e-09 is less than one byte\n"


# -- one definition per option: its flag, its help, its key and its type -------------------------


def _value_type(field) -> object:
    """A field's type less None, its validators kept (``Annotated[float, BeforeValidator(...)]``)."""
    kind = field.annotation
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
    return typing.Annotated[(kind, *field.metadata)] if field.metadata else kind


# The file and the command line keep fail-on as written: "never" must differ from "not given" (None).
SAME_NAME_OTHER_TYPE = {"fail_on"}


def test_every_flag_is_a_model_field_with_its_help_and_the_options_type() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser, ["json", "text"])
    actions = {action.dest: action for action in parser._actions if action.dest != "help"}
    assert set(actions) == set(flag_fields())
    shared = 0
    for name, field in flag_fields().items():
        action = actions[name]
        assert action.help.startswith(field.description), name
        assert f"--{name.replace('_', '-')}" in action.option_strings, name
        # An option the audit or the rerun reads under the same name checks its value with the same rule.
        for model in (AuditOptions, RerunOptions):
            if name in model.model_fields and name not in SAME_NAME_OTHER_TYPE:
                assert _value_type(field) == _value_type(model.model_fields[name]), name
                shared += 1
    for name, field in Thresholds.model_fields.items():
        assert _value_type(field) == _value_type(AuditOptions.model_fields[name]), name
    assert shared >= 15  # alpha, select, ..., timeout, device: a rename would leave a flag unchecked here


def test_every_key_and_flag_given_reaches_the_options(tmp_path) -> None:
    """Each configuration value and limit flag lands on AuditOptions (a key dropped on the way fails here)."""
    from auditor.options import config
    from auditor.options.keys import validate_command_line

    path = _pyproject(
        tmp_path,
        "[tool.auditor]\nalpha = 0.02\nmc-resamples = 7\nresamples = 9\nfail-on = 'never'\n"
        "[tool.auditor.thresholds]\nnegligible-rel = 0.3\nnegligible-std = 0.4\n"
        "inconclusive-mde-rel = 0.6\nmechanism-factor = 5\n",
    )
    cli = validate_command_line(
        {"max_bytes": "100", "max_depth": "7", "max_seeds": "8", "encoding": "latin-1", "resamples": "11"}
    )
    o = config.resolve(config.load(path), cli).options
    assert (o.alpha, o.mc_resamples, o.resamples, o.fail_on) == (0.02, 7, 11, None)
    assert (o.negligible_rel, o.negligible_std, o.inconclusive_mde_rel, o.mechanism_factor) == (0.3, 0.4, 0.6, 5.0)
    assert (o.max_bytes, o.max_depth, o.max_seeds, o.encoding) == (100, 7, 8, "iso8859-1")


def test_an_unknown_key_exits_2_naming_the_key_and_the_file(tmp_path, monkeypatch, capsys) -> None:
    path = _pyproject(tmp_path, "[tool.auditor]\nalpha = 0.01\n[tool.auditor.thresholds]\nnegligible-rell = 0.1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["audit", str(SEED_000)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"auditor: error: {path}: [tool.auditor] unknown key 'thresholds.negligible-rell' "
        "(did you mean 'thresholds.negligible-rel'?) (known: thresholds.negligible-rel, "
        "thresholds.negligible-std, thresholds.inconclusive-mde-rel, thresholds.mechanism-factor)\n"
    )


def test_the_hand_made_value_rules_are_gone() -> None:
    with pytest.raises(ModuleNotFoundError):
        __import__("auditor.option_values")
    assert issubclass(CommandLine, __import__("pydantic").BaseModel)
