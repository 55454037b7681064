"""The shipped JSON Schemas of an answer, their strict copies, and the bounded validators that check them.

The strict copy closes every object schema that lists ``properties`` and says nothing
about ``additionalProperties`` (unknown keys are then errors, S203); refs are inlined once;
an array of more than ``max_items`` items is one error, and lists of plain numbers are
checked in one fast pass.  jsonschema is imported on the first validation.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator
from importlib import resources
from typing import TYPE_CHECKING, Any

from auditor.parse.literals import PrintedFloat

if TYPE_CHECKING:  # jsonschema is imported on the first validation, not with the package
    from jsonschema import Draft202012Validator, ValidationError

ANSWER_SCHEMA = "answer.schema.json"
BENCH_REPORT_SCHEMA = "bench_report.schema.json"


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """A schema shipped in ``auditor/schemas`` (``answer.schema.json``, ...)."""
    text = resources.files("auditor").joinpath("schemas", name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)  # (the shipped schemas are objects)
    return schema


def strict_copy(schema: Any) -> Any:
    """``schema`` with every object that lists ``properties`` closed to other keys.

    An explicit ``additionalProperties`` (``true`` for free-form objects) is kept.
    """
    if isinstance(schema, list):
        return [strict_copy(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {key: strict_copy(value) for key, value in schema.items()}
    if "properties" in schema and "additionalProperties" not in schema:
        copy["additionalProperties"] = False
    return copy


@functools.cache
def _strict_schema(name: str) -> dict[str, Any]:
    """The strict copy of schema ``name``, refs inlined."""
    schemas = {n: strict_copy(load_schema(n)) for n in (ANSWER_SCHEMA, BENCH_REPORT_SCHEMA)}
    # Following a $ref costs a registry lookup per instance node (half of the
    # validation time); the schemas are small and not recursive, so inline them.
    # Without "$schema", jsonschema also stays on our validator class.
    return {k: v for k, v in inline_refs(schemas[name], schemas).items() if k not in ("$schema", "$defs")}


@functools.cache
def validator(name: str, *, max_items: int | None = None) -> Draft202012Validator:
    """The validator of the strict copy of schema ``name``, arrays bounded at ``max_items`` (one per pair, kept)."""
    return _validator_class(max_items)(_strict_schema(name))


def inline_refs(schema: dict[str, Any], schemas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` replaced by what it points at.

    Handles the refs the shipped schemas use: ``#/$defs/name`` within a file and
    ``other.schema.json`` (a whole file, by name, out of ``schemas``).  Keys
    next to a ``$ref`` are kept, as 2020-12 applies both.
    """

    def resolve(node: Any, root: dict[str, Any]) -> Any:
        if isinstance(node, list):
            return [resolve(item, root) for item in node]
        if not isinstance(node, dict):
            return node
        out = {k: resolve(v, root) for k, v in node.items() if k not in ("$ref", "$defs")}
        ref = node.get("$ref")
        if ref is None:
            return out
        if ref.startswith("#/"):
            target, target_root = root, root
            for part in ref[2:].split("/"):
                target = target[part]
        else:
            target = target_root = schemas[ref]
        inlined = {k: v for k, v in resolve(target, target_root).items() if k not in ("$schema", "$id", "title")}
        return {**inlined, **out}

    inlined: dict[str, Any] = resolve(schema, schema)  # (an object resolves to an object)
    return inlined


@functools.cache
def _validator_class(max_items: int | None) -> type[Draft202012Validator]:
    """Draft 2020-12 with a bounded ``items``: an array of more than ``max_items``
    items is one error (reported like ``maxItems``) instead of being validated
    item by item, and a list of plain numbers is checked in one fast pass.

    jsonschema spends tens of microseconds per item, so a 16 MiB per-seed list
    would take minutes; the limit keeps validation time bounded for any input,
    and since any error stops the audit, unvalidated items never reach the models.
    """
    from jsonschema import Draft202012Validator, ValidationError, validators

    validate_items = Draft202012Validator.VALIDATORS["items"]

    def items(validator: Any, item_schema: Any, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
        if max_items is not None and validator.is_type(instance, "array") and len(instance) > max_items:
            yield ValidationError(
                f"holds {len(instance):,} items, more than the limit of {max_items:,}",
                validator="maxItems",
                validator_value=max_items,
            )
            return
        if _all_bounded_numbers(item_schema, instance):
            return
        yield from validate_items(validator, item_schema, instance, schema)

    extended: type[Draft202012Validator] = validators.extend(Draft202012Validator, {"items": items})
    return extended  # (jsonschema ships no types: its names are Any to mypy)


_NUMBER_ITEM_KEYS = frozenset({"type", "minimum", "maximum", "description"})


def _all_bounded_numbers(item_schema: Any, instance: Any) -> bool:
    """True when ``item_schema`` only asks for a number within bounds and every item is one.

    A fast path for per-seed lists (tens of nanoseconds per item instead of
    tens of microseconds); anything else, or any item that fails, goes the
    general way so that every error is reported exactly as jsonschema would.
    """
    if not isinstance(item_schema, dict) or item_schema.get("type") != "number" or not isinstance(instance, list):
        return False
    if not _NUMBER_ITEM_KEYS.issuperset(item_schema):
        return False
    low, high = item_schema.get("minimum", -math.inf), item_schema.get("maximum", math.inf)
    return all((type(x) is float or type(x) is int or type(x) is PrintedFloat) and low <= x <= high for x in instance)
