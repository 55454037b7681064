"""Findings, severities and the rule registry.

Every check the auditor makes is a *rule* with a stable code (``A307``), a short
kebab-case name and a default severity.  Rules are registered in one place,
``REGISTRY``; their documentation is the docstring of the function (or the text
given to :func:`declare`) and is what ``auditor rule CODE`` prints.

Two kinds of rules exist:

* *check rules* are plain functions ``fn(ctx) -> Iterable[Finding]`` decorated
  with :func:`check`; :mod:`auditor.audit` runs every one of them on each
  answer that could be parsed and validated.
* *stage rules* (parse, schema, rerun) are raised by the stage that detects the
  problem; they are registered with :func:`declare` so that they are listed and
  documented like the others.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

FAMILIES = {
    "P": "parse",
    "S": "schema",
    "A": "arithmetic",
    "V": "verdict",
    "D": "degenerate",
    "T": "tuning",
    "E": "effect",
    "R": "rerun",
    "X": "cross-answer",
    "X0": "internal",  # X000: the auditor's own failure, not the answer's
}


class Severity(str, enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls(text.strip().lower())
        except ValueError:
            raise ValueError(f"unknown severity {text!r}; expected info, warning or error") from None


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


def _jsonable(value: Any) -> Any:
    """Make a claimed/recomputed value safe for every output format.

    Non-finite floats have no JSON spelling, numpy scalars and arrays are not
    JSON types, and tuples should read as lists.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if hasattr(value, "tolist"):  # numpy scalar or array
        return _jsonable(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


@dataclass(frozen=True)
class Finding:
    """One problem found in one answer.

    ``pointer`` is an RFC 6901 JSON Pointer into the answer object as written
    (``/bench_report/comparison/p_value``), or ``""`` for the whole input.
    ``claimed`` and ``recomputed`` hold the two values being compared, when the
    finding is a comparison.
    """

    rule: str
    severity: Severity
    message: str
    pointer: str = ""
    claimed: Any = None
    recomputed: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "claimed", _jsonable(self.claimed))
        object.__setattr__(self, "recomputed", _jsonable(self.recomputed))

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "pointer": self.pointer,
            "claimed": self.claimed,
            "recomputed": self.recomputed,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Finding":
        return cls(
            rule=data["rule"],
            severity=Severity(data["severity"]),
            message=data["message"],
            pointer=data.get("pointer", ""),
            claimed=data.get("claimed"),
            recomputed=data.get("recomputed"),
        )


CheckFn = Callable[[Any], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    doc: str
    check: CheckFn | None = field(default=None, compare=False)

    @property
    def family(self) -> str:
        # The longest matching prefix wins, so X000 is "internal" while X901 is "cross-answer".
        prefixes = [p for p in FAMILIES if self.code.startswith(p)]
        return FAMILIES[max(prefixes, key=len)] if prefixes else "other"

    @property
    def summary(self) -> str:
        """First line of the documentation."""
        return self.doc.strip().splitlines()[0].strip() if self.doc.strip() else self.name


REGISTRY: dict[str, Rule] = {}


def _register(rule: Rule) -> None:
    if rule.code in REGISTRY and REGISTRY[rule.code].check is not rule.check:
        raise RuntimeError(f"rule {rule.code} registered twice")
    REGISTRY[rule.code] = rule


def check(code: str, name: str, severity: Severity) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn(ctx) -> Iterable[Finding]`` as the check for rule ``code``.

    The function's docstring is the rule's documentation.
    """

    def decorate(fn: CheckFn) -> CheckFn:
        _register(Rule(code, name, severity, inspect.cleandoc(fn.__doc__ or ""), fn))
        fn.rule_code = code  # type: ignore[attr-defined]
        return fn

    return decorate


def declare(code: str, name: str, severity: Severity, doc: str) -> None:
    """Register a rule that a pipeline stage (parse, schema, rerun) raises itself."""
    _register(Rule(code, name, severity, inspect.cleandoc(doc)))


def finding(
    code: str,
    message: str,
    *,
    pointer: str = "",
    claimed: Any = None,
    recomputed: Any = None,
    severity: Severity | None = None,
) -> Finding:
    """Build a finding for a registered rule, at its default severity unless given."""
    rule = get_rule(code)
    return Finding(code, severity or rule.severity, message, pointer, claimed, recomputed)


_RULE_MODULES = (
    "auditor.rules.parse",
    "auditor.rules.schema",
    "auditor.rules.arithmetic",
    "auditor.rules.verdict",
    "auditor.rules.degenerate",
    "auditor.rules.tuning",
    "auditor.rules.effect",
    "auditor.rules.rerun",
    "auditor.rules.cross",
    "auditor.rules.internal",
)


def load_rules() -> dict[str, Rule]:
    """Import every rule module once so that ``REGISTRY`` is complete."""
    for module in _RULE_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # a real import error inside the module
                raise
    return REGISTRY


def get_rule(code: str) -> Rule:
    if code not in REGISTRY:
        load_rules()
    try:
        return REGISTRY[code.upper()]
    except KeyError:
        raise KeyError(f"unknown rule {code!r}") from None


def all_rules() -> list[Rule]:
    load_rules()
    return sorted(REGISTRY.values(), key=lambda r: r.code)


def check_rules() -> Iterator[Rule]:
    for rule in all_rules():
        if rule.check is not None:
            yield rule


def matches(code: str, patterns: Iterable[str]) -> bool:
    """True when ``code`` equals or starts with one of ``patterns`` (``A3``, ``A307``, ``ALL``)."""
    code = code.upper()
    for pattern in patterns:
        p = pattern.strip().upper()
        if p == "ALL" or (p and code.startswith(p)):
            return True
    return False
