"""Findings, severities and the rule model.

Every check the auditor makes is a *rule*: a :class:`Rule` value with a stable
code (``A307``), a short kebab-case name, a default severity and its
documentation, which is what ``auditor rule CODE`` prints.  A rule is defined
once, in the module of its family under :mod:`auditor.rules`, bound to a
module-level name equal to its code, and every finding of it is built through
it (``A307.finding(message, pointer=...)``): each code is written once.

There is one model and two ways a rule runs:

* a *check rule* runs on every answer that could be parsed and validated
  (:mod:`auditor.audit` calls ``rule.check(ctx)`` for each one).  It is
  declared with :func:`check_rule` on its check function, which is named by
  the code and whose docstring is the rule's documentation::

      @check_rule("A301", "count-mismatch", Severity.ERROR)
      def A301(ctx: AuditContext) -> Iterator[Finding]:
          \"\"\"The seed counts of the report disagree with each other. ...\"\"\"
          ...
          yield A301.finding("...", pointer=..., claimed=..., recomputed=...)

* a *stage rule* (parse, schema, rerun, cross-answer, internal) is raised by
  the stage that detects the problem, which imports it from its family::

      # auditor/rules/parse.py
      P101 = Rule("P101", "no-json-object", Severity.ERROR, doc=\"\"\"...\"\"\")

      # auditor/parse/transcript.py
      from .rules.parse import P101
      return P101.finding("no JSON object found in the input")

:func:`load_rules` imports every module of :mod:`auditor.rules` (found by
:mod:`pkgutil`, not listed by hand; an import error is raised) and collects
the rules they define into ``REGISTRY``, the lookup table behind
:func:`get_rule`, :func:`all_rules` and :func:`check_rules`.
"""

from __future__ import annotations

import enum
import hashlib
import importlib
import inspect
import json
import math
import pkgutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.files.paths import STDIN, relative

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
    """How bad a finding is; ``rank`` orders them (an ERROR fails the answer under the default ``fail-on``)."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls(text.strip().lower())
        except ValueError:
            raise ValueError(f"unknown severity {text!r}; expected info, warning or error") from None

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


def _jsonable(value: Any) -> Any:
    """Make a claimed/recomputed value safe for every output format.

    Non-finite floats have no JSON spelling, numpy scalars and arrays are not
    JSON types, and tuples should read as lists.
    """
    # Exact types first (nearly every value a rule passes); subclasses such as
    # numpy's float64 or an IntEnum take the isinstance tests below.
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else repr(value)
    if value is None or kind is str or kind is int or kind is bool:
        return value
    if kind is list and all(type(v) is float for v in value) and all(map(math.isfinite, value)):
        return list(value)  # a grid or per-seed values
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if hasattr(value, "tolist"):  # numpy scalar or array
        return _jsonable(value.tolist())
    return str(value)


@dataclass(frozen=True, init=False)
class Finding:
    """One problem found in one answer.

    ``pointer`` is an RFC 6901 JSON Pointer into the answer object as written
    (``/bench_report/comparison/p_value``), or ``""`` for the whole input.
    ``claimed`` and ``recomputed`` hold the two values being compared, when the
    finding is a comparison.  ``line`` and ``column`` (1-based, columns in
    characters) place the pointer's value in the transcript's text; they are
    None until the audit has located them (:mod:`auditor.parse.locate`), and for
    findings no transcript text stands behind.  They are not part of a
    finding's identity: re-indenting an answer moves its findings without
    making them different ones (as the baseline's fingerprint also holds).
    """

    rule: str
    severity: Severity
    message: str
    pointer: str = ""
    claimed: Any = None
    recomputed: Any = None
    line: int | None = field(default=None, compare=False)
    column: int | None = field(default=None, compare=False)

    def __init__(
        self,
        rule: str,
        severity: Severity,
        message: str,
        pointer: str = "",
        claimed: Any = None,
        recomputed: Any = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        # Written by hand, not by dataclass: its frozen __init__ sets each field through
        # object.__setattr__, and rules make a finding for every problem of every answer.
        self.__dict__.update(
            rule=rule,
            severity=severity,
            message=message,
            pointer=pointer,
            claimed=_jsonable(claimed),
            recomputed=_jsonable(recomputed),
            line=line,
            column=column,
        )

    def at(self, line: int | None, column: int | None) -> Finding:
        """This finding placed at ``line``:``column``.

        Its values are JSON-safe already, so the copy skips ``__init__``
        (``dataclasses.replace`` would convert them again: every finding of a
        batch is placed once).
        """
        placed = object.__new__(Finding)
        placed.__dict__.update(self.__dict__, line=line, column=column)
        return placed

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "pointer": self.pointer,
            "claimed": self.claimed,
            "recomputed": self.recomputed,
            "line": self.line,
            "column": self.column,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(
            rule=data["rule"],
            severity=Severity(data["severity"]),
            message=data["message"],
            pointer=data.get("pointer", ""),
            claimed=data.get("claimed"),
            recomputed=data.get("recomputed"),
            line=data.get("line"),
            column=data.get("column"),
        )


CheckFn = Callable[[Any], Iterable[Finding]]


def canonical(value: Any) -> Any:
    """``value`` in a spelling that survives re-formatting (integral floats as ints, sorted keys)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def source_key(source: str, root: Path) -> str:
    """``source`` relative to ``root`` with forward slashes (``-`` for stdin stays ``-``)."""
    return source if source == STDIN else relative(source, root)


def fingerprint(finding: Finding, source: str, root: Path) -> str:
    """SHA-256 of ``[rule, source relative to root, pointer, canonical claimed value]``.

    What a baseline records and SARIF's ``partialFingerprints`` carry: the message is left out,
    so rewording between versions does not make an old finding look new (:mod:`auditor.batch.baseline`).
    """
    key = [finding.rule, source_key(source, root), finding.pointer, canonical(finding.claimed)]
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Rule:
    """One rule: its code, name, default severity and documentation.

    ``check`` is the function a check rule runs on each answer
    (``fn(ctx) -> Iterable[Finding]``); it is None for a stage rule, which the
    stage that detects the problem raises itself.  ``doc`` is cleaned with
    :func:`inspect.cleandoc`, so it may be written as an indented block.
    """

    code: str
    name: str
    severity: Severity
    doc: str = ""
    check: CheckFn | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "doc", inspect.cleandoc(self.doc))

    @property
    def family(self) -> str:
        # The longest matching prefix wins, so X000 is "internal" while X901 is "cross-answer".
        prefixes = [p for p in FAMILIES if self.code.startswith(p)]
        return FAMILIES[max(prefixes, key=len)] if prefixes else "other"

    @property
    def summary(self) -> str:
        """First line of the documentation."""
        return self.doc.strip().splitlines()[0].strip() if self.doc.strip() else self.name

    def finding(
        self,
        message: str,
        *,
        pointer: str = "",
        claimed: Any = None,
        recomputed: Any = None,
        severity: Severity | None = None,
    ) -> Finding:
        """A finding of this rule, at its default severity unless ``severity`` is given."""
        return Finding(self.code, severity or self.severity, message, pointer, claimed, recomputed)

    def correction(self, message: str, value: Any, *, pointer: str, claimed: Any = None, shown: str = "") -> Finding:
        """A finding whose fix is to write ``value`` at ``pointer``: its message ends "; set it to <value>".

        ``shown`` is how the message spells ``value`` (``"no_effect"`` quoted, ``false``
        in JSON's words), when not as ``str(value)``.  Rules that know the right
        value of a field advise it through here, in one phrasing, so the advice
        of one answer's findings reads (and can be checked) alike.
        """
        return self.finding(
            f"{message}; set it to {shown or value}", pointer=pointer, claimed=claimed, recomputed=value
        )


def check_rule(code: str, name: str, severity: Severity) -> Callable[[CheckFn], Rule]:
    """Declare the check rule ``code`` whose check is the decorated ``fn(ctx) -> Iterable[Finding]``.

    The decorated name becomes the :class:`Rule` (name the function by its
    code); the function's docstring is the rule's documentation.
    """

    def decorate(fn: CheckFn) -> Rule:
        return Rule(code, name, severity, fn.__doc__ or "", fn)

    return decorate


REGISTRY: dict[str, Rule] = {}
_RULES_PACKAGE = "auditor.rules"
_loaded = False
_loading = threading.RLock()  # re-entrant: a rule module may look a rule up while it loads


def _collect(module_name: str) -> None:
    """Add the rules that module ``module_name`` binds at its top level to ``REGISTRY``."""
    module = importlib.import_module(module_name)
    for attr, value in vars(module).items():
        if not isinstance(value, Rule):
            continue
        if attr != value.code:
            raise RuntimeError(f"{module_name}.{attr} is rule {value.code}: bind a rule to the name of its code")
        known = REGISTRY.get(value.code)
        if known is not None and known is not value:
            raise RuntimeError(f"rule {value.code} is defined twice (again in {module_name})")
        namesake = next((r for r in REGISTRY.values() if r.name == value.name and r is not value), None)
        if namesake is not None:
            raise RuntimeError(f"rules {namesake.code} and {value.code} share the name {value.name!r}")
        REGISTRY[value.code] = value


def load_rules() -> dict[str, Rule]:
    """Import every module of :mod:`auditor.rules` once and collect its rules into ``REGISTRY``.

    The modules are found with :func:`pkgutil.iter_modules`; a module that
    fails to import raises, so no rule family is ever dropped silently.
    """
    global _loaded
    if _loaded:
        return REGISTRY
    with _loading:
        if not _loaded:
            package = importlib.import_module(_RULES_PACKAGE)
            for module in pkgutil.iter_modules(package.__path__, _RULES_PACKAGE + "."):
                _collect(module.name)
            _loaded = True
    return REGISTRY


def get_rule(code_or_name: str) -> Rule:
    """The rule with this code (``A307``, any case) or this name (``p-value-inconsistent``).

    Codes and names cannot collide: a code is a letter and digits, a name
    kebab-case words, and :func:`load_rules` refuses two rules of one name.
    """
    rules = load_rules()
    key = code_or_name.strip()
    rule = rules.get(key.upper()) or next((r for r in rules.values() if r.name == key.lower()), None)
    if rule is None:
        raise KeyError(f"unknown rule {code_or_name!r}")
    return rule


def all_rules() -> list[Rule]:
    """Every registered rule, by code."""
    load_rules()
    return sorted(REGISTRY.values(), key=lambda rule: rule.code)


def check_rules() -> tuple[Rule, ...]:
    """The rules with a check function (not stage rules), by code."""
    return tuple(rule for rule in all_rules() if rule.check is not None)


def matches(code: str, patterns: Iterable[str]) -> bool:
    """True when ``code`` equals or starts with one of ``patterns`` (``A3``, ``A307``, ``ALL``)."""
    code = code.upper()
    for pattern in patterns:
        p = pattern.strip().upper()
        if p == "ALL" or (p and code.startswith(p)):
            return True
    return False
