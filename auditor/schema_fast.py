"""A compiled yes/no check that a document is valid under a schema: validation's fast path.

Most answers are valid, and for them jsonschema's pure-Python descent (an object
per keyword per node) is most of an audit's time.  :func:`compile_validity`
turns a schema, with its refs already inlined, into nested closures that only
answer "valid?".  A document they accept has no schema finding at all; any
other document goes to jsonschema, which explains each failure (S201, S203).

The closures may wrongly say "invalid" (a NaN against a bound, a number type
other than int or float, an enum of arrays): that only costs the slow path.
They never say "valid" where Draft 2020-12 would report an error, which
``tests/test_schema_fast.py`` checks against jsonschema on generated documents.
A schema with a keyword not handled here is refused (:class:`UnsupportedSchema`)
and validation then always takes the slow path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

# Keywords without effect on validity (refs are inlined before compiling, so "$id" is a name only).
_ANNOTATIONS = frozenset({"description", "title", "$comment", "examples", "default", "$id"})
_HANDLED = frozenset(
    {"type", "enum", "minimum", "maximum", "required", "properties", "additionalProperties", "items", "if", "then", "else"}
)


class UnsupportedSchema(ValueError):
    """The schema uses a keyword this compiler does not handle."""


def compile_validity(schema: Any, *, max_items: int | None = None) -> Check:
    """A function ``document -> bool``: True only when ``schema`` reports no error for it.

    ``max_items`` bounds every array that has an ``items`` schema, as the
    validator of :mod:`auditor.schema` does (a longer one is an error).
    """
    return _compile(schema, max_items)


def _accept(_: Any) -> bool:
    return True


def _reject(_: Any) -> bool:
    return False


def _compile(schema: Any, max_items: int | None) -> Check:
    if schema is True:
        return _accept
    if schema is False:
        return _reject
    if not isinstance(schema, dict):
        raise UnsupportedSchema(f"a schema must be an object or a boolean, got {type(schema).__name__}")
    unknown = set(schema) - _HANDLED - _ANNOTATIONS
    if unknown:
        raise UnsupportedSchema(f"keywords not compiled: {', '.join(sorted(unknown))}")
    checks: list[Check] = []
    if "type" in schema:
        checks.append(_type_check(schema["type"]))
    if "enum" in schema:
        checks.append(_enum_check(schema["enum"]))
    if "minimum" in schema or "maximum" in schema:
        checks.append(_bounds_check(schema.get("minimum"), schema.get("maximum")))
    if {"required", "properties", "additionalProperties"} & set(schema):
        checks.append(_object_check(schema, max_items))
    if "items" in schema:
        checks.append(_items_check(schema["items"], max_items))
    if "if" in schema:
        checks.append(_conditional_check(schema, max_items))
    return _all_of(checks)


def _all_of(checks: list[Check]) -> Check:
    if not checks:
        return _accept
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)
    return lambda value: all(check(value) for check in checks)


# --------------------------------------------------------------------------- types


def _is_integer(value: Any) -> bool:
    # Draft 2020-12: an integral float (8.0) is an integer; a bool is not.
    kind = type(value)
    return kind is int or (kind is float and value.is_integer())


_TYPE_TESTS: dict[str, Check] = {
    "null": lambda value: value is None,
    "boolean": lambda value: type(value) is bool,
    "integer": _is_integer,
    "number": lambda value: type(value) is int or type(value) is float,
    "string": lambda value: type(value) is str,
    "array": lambda value: type(value) is list,
    "object": lambda value: type(value) is dict,
}


def _type_check(types: str | list[str]) -> Check:
    names = [types] if isinstance(types, str) else list(types)
    if any(name not in _TYPE_TESTS for name in names):
        raise UnsupportedSchema(f"unknown type in {names}")
    tests = [_TYPE_TESTS[name] for name in names]
    if len(tests) == 1:
        return tests[0]
    return lambda value: any(test(value) for test in tests)


# --------------------------------------------------------------------------- values


def _same_json_value(value: Any, option: Any) -> bool:
    """JSON equality for scalars (a bool never equals a number); containers are left to jsonschema."""
    if type(value) is bool or type(option) is bool:
        return value is option
    if value is None or option is None:
        return value is option
    if type(value) in (int, float) and type(option) in (int, float):
        return value == option
    if type(value) is str and type(option) is str:
        return value == option
    return False  # an array or object, or an unexpected type: the slow path decides


def _enum_check(options: list[Any]) -> Check:
    return lambda value: any(_same_json_value(value, option) for option in options)


def _bounds_check(low: float | None, high: float | None) -> Check:
    # Bounds apply to numbers only (not to a bool); a NaN fails here and goes the slow way.
    def check(value: Any) -> bool:
        kind = type(value)
        if kind is not int and kind is not float:
            return kind in _PLAIN_TYPES
        return (low is None or value >= low) and (high is None or value <= high)

    return check


_PLAIN_TYPES = frozenset({type(None), bool, int, float, str, list, dict})


# --------------------------------------------------------------------------- containers


def _object_check(schema: dict[str, Any], max_items: int | None) -> Check:
    required = tuple(schema.get("required", ()))
    properties = {key: _compile(sub, max_items) for key, sub in schema.get("properties", {}).items()}
    additional = schema.get("additionalProperties", True)
    if additional not in (True, False):
        raise UnsupportedSchema("additionalProperties must be a boolean here")
    closed = additional is False

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return not isinstance(value, dict)  # object keywords ignore other types
        for key in required:
            if key not in value:
                return False
        for key, item in value.items():
            sub = properties.get(key)
            if sub is None:
                if closed:
                    return False
            elif not sub(item):
                return False
        return True

    return check


def _items_check(item_schema: Any, max_items: int | None) -> Check:
    item = _compile(item_schema, max_items)
    limit = max_items if max_items is not None else float("inf")
    bounded_number = _plain_bounded_number(item_schema)

    if bounded_number is not None:  # a per-seed list: one tight loop
        low, high = bounded_number

        def numbers(value: Any) -> bool:
            if type(value) is not list:
                return not isinstance(value, list)
            return len(value) <= limit and all(
                (type(x) is float or type(x) is int) and low <= x <= high for x in value
            )

        return numbers

    def check(value: Any) -> bool:
        if type(value) is not list:
            return not isinstance(value, list)
        return len(value) <= limit and all(map(item, value))

    return check


def _plain_bounded_number(item_schema: Any) -> tuple[float, float] | None:
    """(low, high) when ``item_schema`` asks for a number within bounds and nothing else."""
    if not isinstance(item_schema, dict) or item_schema.get("type") != "number":
        return None
    if not set(item_schema) <= {"type", "minimum", "maximum"} | _ANNOTATIONS:
        return None
    return item_schema.get("minimum", float("-inf")), item_schema.get("maximum", float("inf"))


# The condition of an if/then/else picks a branch, so it must be exact, not merely
# cautious: only keywords whose check is exact for plain JSON values may appear there.
_EXACT_CONDITION_KEYWORDS = frozenset({"type", "required"}) | _ANNOTATIONS


def _conditional_check(schema: dict[str, Any], max_items: int | None) -> Check:
    if not isinstance(schema["if"], dict) or not set(schema["if"]) <= _EXACT_CONDITION_KEYWORDS:
        raise UnsupportedSchema("an 'if' may only use type and required here")
    condition = _compile(schema["if"], max_items)
    then = _compile(schema.get("then", True), max_items)
    otherwise = _compile(schema.get("else", True), max_items)

    def check(value: Any) -> bool:
        if type(value) not in _PLAIN_TYPES:
            return False
        return then(value) if condition(value) else otherwise(value)

    return check
