"""A compiled yes/no check that a document is valid under a schema: validation's fast path.

Most answers are valid, and for them jsonschema's pure-Python descent (an object
per keyword per node) is most of an audit's time.  :func:`compile_validity`
turns a schema, with its refs already inlined, into a check that only answers
"valid?".  A document it accepts has no schema finding at all; any other
document goes to jsonschema, which explains each failure (S201, S203).

Each schema compiles to a :data:`Table`: for each Python type a JSON value can
have, whether a value of that type is valid (``True``, ``False``) or the
statements that decide.  Every keyword applies to some types only (bounds to
numbers, ``properties`` to objects, ...), so one test of the value's type
replaces the type tests of every keyword, and most properties (``"type":
"number"``, ``["string", "null"]``) are decided by that test alone.  The tables
are then written out as the source of one Python function, compiled once: the
walk of a document runs as straight-line code (a known key is read by its
literal name, an array by a ``for`` loop), without a call or a table lookup
per value.

The check may wrongly say "invalid" (a NaN against a bound, a type other than
the plain JSON ones, an enum of arrays): that only costs the slow path.  It
never says "valid" where Draft 2020-12 would report an error, which
``tests/test_schema_fast.py`` checks against jsonschema on generated documents.
A schema with a keyword not handled here is refused (:class:`UnsupportedSchema`)
and validation then always takes the slow path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from auditor.parse.literals import PrintedFloat

Check = Callable[[Any], bool]
# Writes the statements that check the value held in a variable, given the source being
# written and the variable's name: they return False when the value is invalid.
Emit = Callable[["_Source", str], list[str]]
# Whether a value of a given Python type is valid: always, never, or as the emitted statements say.
Verdict = bool | Emit
Table = dict[type, Verdict]

# Keywords without effect on validity (refs are inlined before compiling, so "$id" is a name only).
_ANNOTATIONS = frozenset({"description", "title", "$comment", "examples", "default", "$id"})
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "minimum",
        "maximum",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "if",
        "then",
        "else",
    }
)
_OBJECT_KEYWORDS = frozenset({"required", "properties", "additionalProperties"})
# The Python types of decoded JSON values; a value of any other type is never called valid.
_PLAIN_TYPES = (type(None), bool, int, float, str, list, dict)
_NUMBER_TYPES = (int, float)
# How the generated code names each plain type, in the order it tests them (most frequent first).
_CODE_NAMES = {dict: "dict", float: "float", int: "int", str: "str", list: "list", bool: "bool", type(None): "NoneType"}


class UnsupportedSchema(ValueError):
    """The schema uses a keyword this compiler does not handle."""


def compile_validity(schema: Any, *, max_items: int | None = None) -> Check:
    """A function ``document -> bool``: True only when ``schema`` reports no error for it.

    ``max_items`` bounds every array that has an ``items`` schema, as the
    validator of :mod:`auditor.answer.schema` does (a longer one is an error).
    """
    source = _Source()
    body = source.node(_compile(schema, max_items), "document")
    # A required property is read by subscript: a KeyError is that property missing.
    lines = ["def valid(document):", "    try:", *_indent(body or ["pass"], 2)]
    lines += ["    except KeyError:", "        return False", "    return True"]
    try:
        code = compile("\n".join(lines), "<compiled schema>", "exec")
    except (SyntaxError, RecursionError, MemoryError) as exc:  # nested deeper than Python's blocks allow
        raise UnsupportedSchema(f"the schema is too deep to compile: {exc}") from exc
    exec(code, source.names)  # noqa: S102 -- source written above from the schema's keywords and our literals
    return source.names["valid"]


class _Source:
    """The names the generated check uses: fresh variables, and constants it refers to by name."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {"NoneType": type(None), "PrintedFloat": PrintedFloat}
        self._count = 0

    def variable(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def constant(self, value: Any) -> str:
        name = self.variable("_c")
        self.names[name] = value
        return name

    def literal(self, number: Any) -> str:
        """``number`` as source: written out when that is exact, else by name."""
        if type(number) in _NUMBER_TYPES and math.isfinite(number):
            return repr(number)
        return self.constant(number)

    def node(self, table: Table, var: str) -> list[str]:
        """The statements that check ``var`` against ``table``: one type test, then that type's statements."""
        if _accepts_all(table):
            return []
        groups: list[tuple[Verdict, list[type]]] = []  # kinds sharing one verdict share one branch
        for kind in _CODE_NAMES:
            verdict = table[kind]
            if verdict is False:
                continue
            for other, kinds in groups:
                if other is verdict:
                    kinds.append(kind)
                    break
            else:
                groups.append((verdict, [kind]))
        if not groups:
            return ["return False"]
        kind_var = self.variable("t")
        tests = [" or ".join(_is_kind(kind_var, kind) for kind in kinds) for _, kinds in groups]
        lines = [f"{kind_var} = type({var})"]
        if all(verdict is True for verdict, _ in groups):
            return [*lines, f"if not ({' or '.join(tests)}):", "    return False"]
        for index, ((verdict, _), test) in enumerate(zip(groups, tests)):
            body = [] if verdict is True else verdict(self, var)
            lines += [f"{'elif' if index else 'if'} {test}:", *_indent(body or ["pass"])]
        return [*lines, "else:", "    return False"]


def _is_kind(kind_var: str, kind: type) -> str:
    """The test that a value of type ``kind_var`` is of the plain type ``kind``: a float that keeps its
    literal (auditor.parse.literals) is a float."""
    test = f"{kind_var} is {_CODE_NAMES[kind]}"
    return f"{test} or {kind_var} is PrintedFloat" if kind is float else test


def _indent(lines: list[str], levels: int = 1) -> list[str]:
    return ["    " * levels + line for line in lines]


def _uniform(verdict: bool) -> Table:
    return dict.fromkeys(_PLAIN_TYPES, verdict)


def _accepts_all(table: Table) -> bool:
    return all(table[kind] is True for kind in _PLAIN_TYPES)


def _compile(schema: Any, max_items: int | None) -> Table:
    if schema is True or schema is False:
        return _uniform(schema)
    if not isinstance(schema, dict):
        raise UnsupportedSchema(f"a schema must be an object or a boolean, got {type(schema).__name__}")
    unknown = set(schema) - _HANDLED - _ANNOTATIONS
    if unknown:
        raise UnsupportedSchema(f"keywords not compiled: {', '.join(sorted(unknown))}")
    tables: list[Table] = []
    if "type" in schema:
        tables.append(_type_table(schema["type"]))
    if "enum" in schema:
        tables.append(_enum_table(schema["enum"]))
    if "minimum" in schema or "maximum" in schema:
        tables.append(_bounds_table(schema.get("minimum"), schema.get("maximum")))
    if _OBJECT_KEYWORDS & set(schema):
        tables.append(_object_table(schema, max_items))
    if "items" in schema:
        tables.append(_items_table(schema["items"], max_items))
    if "if" in schema:
        tables.append(_conditional_table(schema, max_items))
    combined = _uniform(True)
    for table in tables:
        combined = {kind: _both(combined[kind], table[kind]) for kind in _PLAIN_TYPES}
    return combined


def _both(first: Verdict, second: Verdict) -> Verdict:
    """The verdict of two keywords on one type: valid when both say so."""
    if first is False or second is False:
        return False
    if first is True:
        return second
    if second is True:
        return first
    return lambda source, var: first(source, var) + second(source, var)


# --------------------------------------------------------------------------- types and values


_TYPE_NAMES: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "integer": (int,),  # and an integral float, below
    "number": _NUMBER_TYPES,
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def _integral_float(var: str) -> str:
    return f"{var}.is_integer()"  # Draft 2020-12: 8.0 is an integer (a bool is not: bool is its own type)


def _type_table(types: str | list[str]) -> Table:
    names = [types] if isinstance(types, str) else list(types)
    if any(name not in _TYPE_NAMES for name in names):
        raise UnsupportedSchema(f"unknown type in {names}")
    allowed = {kind for name in names for kind in _TYPE_NAMES[name]}
    table: Table = {kind: kind in allowed for kind in _PLAIN_TYPES}
    if "integer" in names and float not in allowed:
        table[float] = lambda source, var: [f"if not {_integral_float(var)}: return False"]
    return table


def _enum_table(options: list[Any]) -> Table:
    """JSON equality for scalars (a bool never equals a number); arrays and objects are left to jsonschema."""
    table = _uniform(False)
    if any(option is None for option in options):
        table[type(None)] = True
    booleans = {option for option in options if type(option) is bool}
    if len(booleans) == 2:
        table[bool] = True
    elif booleans:
        (only,) = booleans
        table[bool] = lambda source, var: [f"if {var} is not {only}: return False"]
    # `in` on a tuple is `==` on each (after an identity test, which only a NaN could tell apart: none is kept).
    numbers = tuple(option for option in options if type(option) in _NUMBER_TYPES and option == option)
    if numbers:
        table[int] = table[float] = _member_of(numbers)
    strings = frozenset(option for option in options if type(option) is str)
    if strings:
        table[str] = _member_of(strings)
    return table


def _member_of(options: tuple[Any, ...] | frozenset[str]) -> Emit:
    return lambda source, var: [f"if {var} not in {source.constant(options)}: return False"]


def _bounds_table(low: float | None, high: float | None) -> Table:
    # Bounds apply to numbers only (not to a bool); a NaN fails here and goes the slow way.
    def emit(source: _Source, var: str) -> list[str]:
        low_test = "" if low is None else f"{source.literal(low)} <= "
        high_test = "" if high is None else f" <= {source.literal(high)}"
        return [f"if not ({low_test}{var}{high_test}): return False"]

    table = _uniform(True)
    table[int] = table[float] = emit
    return table


# --------------------------------------------------------------------------- containers


def _object_table(schema: dict[str, Any], max_items: int | None) -> Table:
    required = list(dict.fromkeys(schema.get("required", ())))
    properties = {key: _compile(sub, max_items) for key, sub in schema.get("properties", {}).items()}
    additional = schema.get("additionalProperties", True)
    if additional not in (True, False):
        raise UnsupportedSchema("additionalProperties must be a boolean here")
    if not all(type(key) is str for key in [*required, *properties]):
        raise UnsupportedSchema("property names must be strings")
    closed = additional is False
    table = _uniform(True)  # object keywords ignore other types
    if required or properties or closed:
        table[dict] = _object_check(required, properties, closed)
    return table


def _object_check(required: list[str], properties: dict[str, Table], closed: bool) -> Emit:
    def emit(source: _Source, var: str) -> list[str]:
        lines = []
        if closed:
            lines.append(f"if not {source.constant(frozenset(properties))}.issuperset({var}): return False")
        for key in required:
            if key not in properties or _accepts_all(properties[key]):
                lines.append(f"if {key!r} not in {var}: return False")
        for key, table in properties.items():
            if _accepts_all(table):
                continue
            item = source.variable("x")
            check = source.node(table, item)
            if key in required:  # a missing one raises KeyError: invalid
                lines += [f"{item} = {var}[{key!r}]", *check]
            elif table[type(None)] is True:  # absent reads as null, which is valid
                lines += [f"{item} = {var}.get({key!r})", f"if {item} is not None:", *_indent(check)]
            else:
                lines += [f"if {key!r} in {var}:", f"    {item} = {var}[{key!r}]", *_indent(check)]
        return lines

    return emit


def _items_table(item_schema: Any, max_items: int | None) -> Table:
    item_table = _compile(item_schema, max_items)

    def emit(source: _Source, var: str) -> list[str]:
        lines = [] if max_items is None else [f"if len({var}) > {max_items!r}: return False"]
        item = source.variable("x")
        check = source.node(item_table, item)
        if check:
            lines += [f"for {item} in {var}:", *_indent(check)]
        return lines or ["pass"]

    table = _uniform(True)  # items ignores other types
    table[list] = emit
    return table


# The condition of an if/then/else picks a branch, so it must be exact, not merely
# cautious: only keywords whose check is exact for plain JSON values may appear there.
_EXACT_CONDITION_KEYWORDS = frozenset({"type", "required"}) | _ANNOTATIONS
# Whether a value of a given type meets a condition: always, never, or as an expression
# (written for the variable named) says.
Condition = dict[type, bool | Callable[[str], str]]


def _conditional_table(schema: dict[str, Any], max_items: int | None) -> Table:
    if not isinstance(schema["if"], dict) or not set(schema["if"]) <= _EXACT_CONDITION_KEYWORDS:
        raise UnsupportedSchema("an 'if' may only use type and required here")
    condition = _condition(schema["if"])
    then = _compile(schema.get("then", True), max_items)
    otherwise = _compile(schema.get("else", True), max_items)
    return {kind: _branch(condition[kind], then[kind], otherwise[kind]) for kind in _PLAIN_TYPES}


def _condition(schema: dict[str, Any]) -> Condition:
    """The exact condition of an ``if`` made of ``type`` and ``required``."""
    condition: Condition = dict.fromkeys(_PLAIN_TYPES, True)
    if "type" in schema:
        types = _type_table(schema["type"])
        condition = {kind: verdict if type(verdict) is bool else _integral_float for kind, verdict in types.items()}
    required = list(schema.get("required", ()))
    if not all(type(key) is str for key in required):
        raise UnsupportedSchema("required names must be strings")
    if required and condition[dict] is True:
        condition[dict] = lambda var: " and ".join(f"{key!r} in {var}" for key in required)
    return condition


def _branch(condition: bool | Callable[[str], str], then: Verdict, otherwise: Verdict) -> Verdict:
    """The verdict on one type of ``if``/``then``/``else``: the condition picks the branch."""
    if condition is True or condition is False:
        return then if condition else otherwise

    def branch(verdict: Verdict, source: _Source, var: str) -> list[str]:
        if verdict is True or verdict is False:
            return ["pass" if verdict else "return False"]
        return verdict(source, var) or ["pass"]

    def emit(source: _Source, var: str) -> list[str]:
        test = condition(var)
        yes, no = branch(then, source, var), branch(otherwise, source, var)
        return [f"if {test}:", *_indent(yes), "else:", *_indent(no)]

    return emit
