"""A compiled yes/no check that a document is valid under a schema: validation's fast path.

Most answers are valid, and for them jsonschema's pure-Python descent (an object
per keyword per node) is most of an audit's time.  :func:`compile_validity`
turns a schema, with its refs already inlined, into a check that only answers
"valid?".  A document it accepts has no schema finding at all; any other
document goes to jsonschema, which explains each failure (S201, S203).

Each schema compiles to a :data:`Table`: for each Python type a JSON value can
have, whether a value of that type is valid (``True``, ``False``) or the
function that decides.  Every keyword applies to some types only (bounds to
numbers, ``properties`` to objects, ...), so one dictionary lookup on the
value's type replaces the type tests of every keyword, and most properties
(``"type": "number"``, ``["string", "null"]``) are decided by that lookup alone,
without a call.

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

Check = Callable[[Any], bool]
# Whether a value of a given Python type is valid: always, never, or as a function of the value says.
Verdict = bool | Check
Table = dict[type, Verdict]

# Keywords without effect on validity (refs are inlined before compiling, so "$id" is a name only).
_ANNOTATIONS = frozenset({"description", "title", "$comment", "examples", "default", "$id"})
_HANDLED = frozenset(
    {"type", "enum", "minimum", "maximum", "required", "properties", "additionalProperties", "items", "if", "then", "else"}
)
_OBJECT_KEYWORDS = frozenset({"required", "properties", "additionalProperties"})
# The Python types of decoded JSON values; a value of any other type is never called valid.
_PLAIN_TYPES = (type(None), bool, int, float, str, list, dict)
_NUMBER_TYPES = (int, float)


class UnsupportedSchema(ValueError):
    """The schema uses a keyword this compiler does not handle."""


def compile_validity(schema: Any, *, max_items: int | None = None) -> Check:
    """A function ``document -> bool``: True only when ``schema`` reports no error for it.

    ``max_items`` bounds every array that has an ``items`` schema, as the
    validator of :mod:`auditor.schema` does (a longer one is an error).
    """
    table = _compile(schema, max_items)
    return lambda document: _holds(table, document)


def _holds(table: Table, value: Any) -> bool:
    verdict = table.get(type(value), False)
    return verdict is True or (verdict is not False and verdict(value))


def _uniform(verdict: bool) -> Table:
    return dict.fromkeys(_PLAIN_TYPES, verdict)


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
    return lambda value: first(value) and second(value)


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


def _type_table(types: str | list[str]) -> Table:
    names = [types] if isinstance(types, str) else list(types)
    if any(name not in _TYPE_NAMES for name in names):
        raise UnsupportedSchema(f"unknown type in {names}")
    allowed = {kind for name in names for kind in _TYPE_NAMES[name]}
    table: Table = {kind: kind in allowed for kind in _PLAIN_TYPES}
    if "integer" in names and float not in allowed:
        table[float] = float.is_integer  # Draft 2020-12: 8.0 is an integer (a bool is not: bool is its own type)
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
        table[bool] = lambda value: value is only
    numbers = [option for option in options if type(option) in _NUMBER_TYPES]
    if numbers:
        table[int] = table[float] = lambda value: any(value == option for option in numbers)
    strings = frozenset(option for option in options if type(option) is str)
    if strings:
        table[str] = strings.__contains__
    return table


def _bounds_table(low: float | None, high: float | None) -> Table:
    # Bounds apply to numbers only (not to a bool); a NaN fails here and goes the slow way.
    low = -math.inf if low is None else low
    high = math.inf if high is None else high
    table = _uniform(True)
    table[int] = table[float] = lambda value: low <= value <= high
    return table


# --------------------------------------------------------------------------- containers


def _object_table(schema: dict[str, Any], max_items: int | None) -> Table:
    required = frozenset(schema.get("required", ()))
    properties = {key: _compile(sub, max_items) for key, sub in schema.get("properties", {}).items()}
    additional = schema.get("additionalProperties", True)
    if additional not in (True, False):
        raise UnsupportedSchema("additionalProperties must be a boolean here")
    closed = additional is False
    table = _uniform(True)  # object keywords ignore other types
    if required or properties or closed:
        table[dict] = _object_check(required, properties, closed)
    return table


def _object_check(required: frozenset[str], properties: dict[str, Table], closed: bool) -> Check:
    names = properties.keys()

    def closed_check(value: dict[str, Any]) -> bool:
        if not (value.keys() >= required and value.keys() <= names):
            return False
        for key, item in value.items():
            verdict = properties[key].get(type(item), False)  # _holds, inlined: this loop is most of the work
            if verdict is not True and (verdict is False or not verdict(item)):
                return False
        return True

    def open_check(value: dict[str, Any]) -> bool:
        if not value.keys() >= required:
            return False
        for key, item in value.items():
            table = properties.get(key)
            if table is not None:
                verdict = table.get(type(item), False)
                if verdict is not True and (verdict is False or not verdict(item)):
                    return False
        return True

    return closed_check if closed else open_check


def _items_table(item_schema: Any, max_items: int | None) -> Table:
    item_table = _compile(item_schema, max_items)
    limit = max_items if max_items is not None else math.inf
    bounded_number = _plain_bounded_number(item_schema)
    table = _uniform(True)  # items ignores other types

    if bounded_number is not None:  # a per-seed list: one tight loop
        low, high = bounded_number

        def numbers(value: list[Any]) -> bool:
            if len(value) > limit:
                return False
            for x in value:
                if not ((type(x) is float or type(x) is int) and low <= x <= high):
                    return False
            return True

        table[list] = numbers
        return table

    def check(value: list[Any]) -> bool:
        if len(value) > limit:
            return False
        for item in value:
            verdict = item_table.get(type(item), False)
            if verdict is not True and (verdict is False or not verdict(item)):
                return False
        return True

    table[list] = check
    return table


def _plain_bounded_number(item_schema: Any) -> tuple[float, float] | None:
    """(low, high) when ``item_schema`` asks for a number within bounds and nothing else."""
    if not isinstance(item_schema, dict) or item_schema.get("type") != "number":
        return None
    if not set(item_schema) <= {"type", "minimum", "maximum"} | _ANNOTATIONS:
        return None
    return item_schema.get("minimum", -math.inf), item_schema.get("maximum", math.inf)


# The condition of an if/then/else picks a branch, so it must be exact, not merely
# cautious: only keywords whose check is exact for plain JSON values may appear there.
_EXACT_CONDITION_KEYWORDS = frozenset({"type", "required"}) | _ANNOTATIONS


def _conditional_table(schema: dict[str, Any], max_items: int | None) -> Table:
    if not isinstance(schema["if"], dict) or not set(schema["if"]) <= _EXACT_CONDITION_KEYWORDS:
        raise UnsupportedSchema("an 'if' may only use type and required here")
    condition = _compile(schema["if"], max_items)
    then = _compile(schema.get("then", True), max_items)
    otherwise = _compile(schema.get("else", True), max_items)
    return {kind: _branch(condition[kind], then[kind], otherwise[kind]) for kind in _PLAIN_TYPES}


def _branch(condition: Verdict, then: Verdict, otherwise: Verdict) -> Verdict:
    """The verdict on one type of ``if``/``then``/``else``: the condition picks the branch."""
    if condition is True or condition is False:
        return then if condition else otherwise

    def check(value: Any) -> bool:
        verdict = then if condition(value) else otherwise
        return verdict is True or (verdict is not False and verdict(value))

    return check
