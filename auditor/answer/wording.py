"""How S201 names what was written and what the schema asks for ("'per_seed[3]' must be a number, got string "0.5"")."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema is imported on the first validation, not with the package
    from jsonschema import ValidationError

# A value or a key is quoted in a finding up to this many characters.
CLAIMED_MAX_CHARS = 80


def explain(error: ValidationError, root: str) -> str:
    """One jsonschema violation in words: the field, what the schema asks for, and what was written."""
    field, value, rule = field_name(error.absolute_path, root), error.instance, error.validator_value
    got = describe_value(value)
    if error.validator == "type":
        return f"{field} must be {_expected_types(rule)}, got {got}"
    if error.validator == "minimum":
        return f"{field} must be at least {rule}, got {got}"
    if error.validator == "maximum":
        return f"{field} must be at most {rule}, got {got}"
    if error.validator == "maxItems":
        return (
            f"{field} holds {len(value):,} items, more than the limit of {rule:,} (--max-seeds); "
            "it was not validated and the answer was not audited"
        )
    if error.validator == "enum":
        allowed = ", ".join(json.dumps(option) for option in rule)
        return f"{field} must be one of {allowed}; got {got}"
    return f"{field}: {error.message}"


def field_name(path: Sequence[str | int], root: str) -> str:
    """``'p_value'``, ``'per_seed[3]'``, or ``root`` (``the answer``) for the root."""
    tokens = list(path)
    indices = ""
    while tokens and isinstance(tokens[-1], int):
        indices = f"[{tokens.pop()}]" + indices
    if not tokens:
        return f"item {indices}" if indices else root
    return f"'{tokens[-1]}{indices}'"


_TYPE_WORDS = {
    "number": "a number",
    "integer": "an integer",
    "string": "a string",
    "object": "an object",
    "array": "an array",
    "boolean": "a boolean (true or false)",
    "null": "null",
}


def _expected_types(types: str | list[str]) -> str:
    words = [_TYPE_WORDS.get(name, name) for name in ([types] if isinstance(types, str) else types)]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def describe_value(value: Any) -> str:
    """``string "0.01"``, ``null``, ``an array of 3 items``: what was written."""
    kind = _json_type(value)
    if kind in ("null", "boolean"):
        return json.dumps(value)
    if kind == "array":
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if kind == "object":
        return "an object"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > CLAIMED_MAX_CHARS:
        text = text[: CLAIMED_MAX_CHARS - 3] + "..."
    return f"{kind} {text}"


def short_value(value: Any) -> Any:
    """The offending value when it is short enough to quote, else None."""
    if isinstance(value, str):
        return value if len(value) <= CLAIMED_MAX_CHARS else None
    if isinstance(value, (dict, list)):
        if len(value) > CLAIMED_MAX_CHARS:
            return None  # cannot be short; do not serialise a huge value to find out
        text = json.dumps(value, ensure_ascii=False, default=str)
        return value if len(text) <= CLAIMED_MAX_CHARS else None
    return value
