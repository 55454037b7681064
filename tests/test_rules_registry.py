"""The rule model: every rule is one value, found by discovery, never by a hand-kept list."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import textwrap

import pytest

import auditor.rules
from auditor import findings
from auditor.findings import REGISTRY, Rule, Severity, all_rules, check_rules, get_rule


def _rule_modules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(auditor.rules.__path__, "auditor.rules.")]


def test_every_registered_rule_is_the_value_its_module_binds_under_its_code() -> None:
    bound = {}
    for name in _rule_modules():
        module = importlib.import_module(name)
        bound.update({attr: value for attr, value in vars(module).items() if isinstance(value, Rule)})
    assert sorted(bound) == [rule.code for rule in all_rules()]
    assert all(get_rule(code) is rule for code, rule in bound.items())


def test_stage_rules_are_imported_by_the_stage_that_raises_them() -> None:
    from auditor.rules.internal import X000
    from auditor.rules.parse import P101

    assert get_rule("p101") is P101 and P101.check is None and get_rule("X000") is X000
    found = P101.finding("no JSON here", pointer="/x", claimed=1)
    assert (found.rule, found.severity, found.message, found.pointer, found.claimed) == (
        "P101",
        Severity.ERROR,
        "no JSON here",
        "/x",
        1,
    )
    assert X000.finding("boom", severity=Severity.WARNING).severity is Severity.WARNING


def test_check_rules_take_their_documentation_from_the_check() -> None:
    from auditor.rules.arithmetic import A301

    assert A301.check is not None and A301 in list(check_rules())
    assert A301.doc.startswith("The seed counts of the report disagree with each other.")
    assert A301.doc == A301.doc.strip() and "\n    ## What it does" not in A301.doc


def test_a_rule_is_found_by_its_name_as_by_its_code() -> None:
    from auditor.rules.arithmetic_inference import A307

    assert get_rule("p-value-inconsistent") is A307 is get_rule("A307")
    assert get_rule(" P-Value-Inconsistent ") is A307  # as typed on a command line
    assert all(get_rule(rule.name) is rule for rule in all_rules())
    with pytest.raises(KeyError, match="p-value-inconsistant"):
        get_rule("p-value-inconsistant")


def test_a_correction_advises_one_value_in_one_phrasing() -> None:
    from auditor.rules.verdict import V404

    found = V404.correction(
        'practical_verdict is "helps"', "no_effect", shown='"no_effect"', pointer="/practical_verdict", claimed="helps"
    )
    assert found.message == 'practical_verdict is "helps"; set it to "no_effect"'
    assert (found.rule, found.pointer, found.claimed, found.recomputed) == (
        "V404",
        "/practical_verdict",
        "helps",
        "no_effect",
    )
    assert V404.correction("n is 9", 8, pointer="/n").message == "n is 9; set it to 8"


def test_no_code_string_shim_is_left() -> None:
    """Findings are built through their rule only: there is no ``finding(code, ...)`` to misspell a code in."""
    assert not hasattr(findings, "finding")


@pytest.fixture
def fresh_registry(monkeypatch, tmp_path):
    """load_rules over a throwaway package ``fake_rules`` instead of auditor.rules."""
    package = tmp_path / "fake_rules"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(findings, "REGISTRY", {})
    monkeypatch.setattr(findings, "_RULES_PACKAGE", "fake_rules")
    monkeypatch.setattr(findings, "_loaded", False)
    yield package
    for name in [m for m in sys.modules if m == "fake_rules" or m.startswith("fake_rules.")]:
        del sys.modules[name]


def _module(package, name: str, text: str) -> None:
    (package / f"{name}.py").write_text(textwrap.dedent(text))


def test_a_new_rule_module_needs_no_registration(fresh_registry) -> None:
    _module(
        fresh_registry,
        "extra",
        """
        from auditor.findings import Rule, Severity, check_rule

        Z001 = Rule("Z001", "stage-rule", Severity.INFO, doc="A stage rule.")

        @check_rule("Z002", "check-rule", Severity.WARNING)
        def Z002(ctx):
            \"\"\"A check rule.\"\"\"
            yield Z002.finding("found")
        """,
    )
    assert sorted(findings.load_rules()) == ["Z001", "Z002"]
    assert [f.rule for f in findings.get_rule("Z002").check(None)] == ["Z002"]


def test_a_rule_module_that_fails_to_import_is_an_error(fresh_registry) -> None:
    _module(fresh_registry, "broken", "import a_module_that_does_not_exist\n")
    with pytest.raises(ModuleNotFoundError, match="a_module_that_does_not_exist"):
        findings.load_rules()


def test_a_rule_bound_under_another_name_is_an_error(fresh_registry) -> None:
    _module(
        fresh_registry,
        "typo",
        """
        from auditor.findings import Rule, Severity

        Z01 = Rule("Z001", "typo", Severity.INFO)
        """,
    )
    with pytest.raises(RuntimeError, match="Z01 is rule Z001"):
        findings.load_rules()


def test_a_code_defined_twice_is_an_error(fresh_registry) -> None:
    for name in ("one", "two"):
        _module(
            fresh_registry,
            name,
            """
            from auditor.findings import Rule, Severity

            Z001 = Rule("Z001", "twice", Severity.INFO)
            """,
        )
    with pytest.raises(RuntimeError, match="Z001 is defined twice"):
        findings.load_rules()


def test_two_rules_of_one_name_are_an_error(fresh_registry) -> None:
    _module(
        fresh_registry,
        "names",
        """
        from auditor.findings import Rule, Severity

        Z001 = Rule("Z001", "same-name", Severity.INFO)
        Z002 = Rule("Z002", "same-name", Severity.INFO)
        """,
    )
    with pytest.raises(RuntimeError, match="Z001 and Z002 share the name 'same-name'"):
        findings.load_rules()


def test_the_real_registry_is_untouched_by_these_tests() -> None:
    assert findings.load_rules() is REGISTRY and "P101" in REGISTRY and "Z001" not in REGISTRY


def test_a_finding_is_built_as_its_dataclass_fields_declare() -> None:
    """Finding's hand-written __init__ takes exactly its fields, in order, with their defaults
    (dataclasses.replace and every keyword caller rely on it), and makes its values JSON-safe."""
    import dataclasses
    import inspect
    import pickle

    from auditor.findings import Finding

    parameters = list(inspect.signature(Finding).parameters.values())
    fields = dataclasses.fields(Finding)
    assert [p.name for p in parameters] == [f.name for f in fields]
    assert [p.default for p in parameters] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields
    ]
    found = Finding("T601", Severity.WARNING, "m", "/a", float("inf"), (0.5, float("nan")))
    assert (found.claimed, found.recomputed) == ("inf", [0.5, "nan"])
    assert dataclasses.replace(found, severity=Severity.ERROR).recomputed == [0.5, "nan"]
    assert pickle.loads(pickle.dumps(found)) == found
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.rule = "A301"  # type: ignore[misc]


def test_a_finding_keeps_only_json_values_whatever_it_was_given() -> None:
    import enum
    import json

    import numpy as np

    from auditor.findings import Finding

    class Level(enum.IntEnum):
        HIGH = 2

    grid = [0.001, 0.003, 0.006]
    cases = [
        (grid, grid),
        ([0.5, float("inf")], [0.5, "inf"]),  # a list of floats with a non-finite one: no shortcut
        ([1, 0.5, True, None, "x"], [1, 0.5, True, None, "x"]),
        ((0.5, (1.0, float("-inf"))), [0.5, [1.0, "-inf"]]),
        ({1: float("nan"), "k": [2.0]}, {"1": "nan", "k": [2.0]}),
        (np.float64(0.25), 0.25),
        (np.array([1.5, 2.5]), [1.5, 2.5]),
        (Level.HIGH, 2),
        (float("nan"), "nan"),
        (b"raw", "b'raw'"),
    ]
    for given, expected in cases:
        found = Finding("T601", Severity.WARNING, "m", recomputed=given)
        assert found.recomputed == expected, given
        assert json.dumps(found.recomputed, allow_nan=False) == json.dumps(expected), given
        assert found.recomputed is not given or not isinstance(
            given, list
        )  # a list is copied, never shared with the rule
