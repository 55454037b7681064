"""Validation of an answer (S201-S203) into its typed models.

An object with a ``bench_report`` key is an answer (:class:`~auditor.answer.model.Answer`,
``schemas/answer.schema.json``); anything else is taken as a bare bench report
(:class:`~auditor.answer.model.BenchReport`, ``schemas/bench_report.schema.json``), whose
pointers then start at ``""``.

The pydantic models validate; the JSON Schema, the published definition, explains.  A document
the models accept is typed in one pass, and its unknown keys (kept by the models) are S203
warnings.  A document they refuse is validated by jsonschema, whose errors name every field in the
schema's words (S201); should jsonschema find nothing wrong where the models did, the models'
first error is reported, so a disagreement fails closed.  ``tests/test_schema_models.py`` keeps
both in agreement.

Unknown keys (S203) are found with a *strict* copy of the schemas, derived
programmatically: every object schema that lists ``properties`` and says
nothing about ``additionalProperties`` is closed.  Objects meant to be
free-form (configs, ``metrics``, ``mechanism_signature``) say
``"additionalProperties": true`` explicitly and stay open.

Validation cost is bounded for any input: an array of more than ``max_items`` items
(``--max-seeds``) is one S201 instead of being checked item by item, refs are inlined once,
lists of plain numbers are checked in one fast pass, and at most :data:`MAX_LISTED_FINDINGS`
S201 and S203 findings are listed.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic import ValidationError as ModelError

from auditor.answer.model import Answer, BenchReport
from auditor.findings import Finding, Rule
from auditor.parse.literals import PrintedFloat
from auditor.parse.pointers import join_pointer
from auditor.rules.schema import S201, S202, S203

if TYPE_CHECKING:  # jsonschema is imported on the first validation, not with the package
    from jsonschema import Draft202012Validator, ValidationError

SUPPORTED_BENCH_VERSIONS = frozenset({1})
ANSWER_SCHEMA = "answer.schema.json"
BENCH_REPORT_SCHEMA = "bench_report.schema.json"
_CLAIMED_MAX_CHARS = 80
# Findings of one rule (S201, S203) listed per answer; the rest are summed up in one.
MAX_LISTED_FINDINGS = 100


# --------------------------------------------------------------------------- loading


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """A schema shipped in ``auditor/schemas`` (``answer.schema.json``, ...)."""
    text = resources.files("auditor").joinpath("schemas", name).read_text(encoding="utf-8")
    return json.loads(text)


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
def _validator(name: str, *, max_items: int | None = None) -> Draft202012Validator:
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

    return resolve(schema, schema)


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

    return validators.extend(Draft202012Validator, {"items": items})


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


# --------------------------------------------------------------------------- validating


_ANSWER_ONLY_KEYS = ("worked", "verdict", "system_verdict", "metrics")


def is_answer(document: dict[str, Any]) -> bool:
    """An answer has a ``bench_report`` key; anything else is a bare bench report.

    Except an object with only answer keys (``worked``, ``verdict``, ...) and
    no report keys: it is an answer that lacks its report, and saying so is
    clearer than listing every missing field of a bench report.
    """
    if "bench_report" in document:
        return True
    looks_like_report = "comparison" in document or "baseline" in document
    return not looks_like_report and any(key in document for key in _ANSWER_ONLY_KEYS)


@dataclass(frozen=True)
class Models:
    """The typed models of a valid document: the answer (None for a bare report), its report and
    the report's pointer (``"/bench_report"``, or ``""`` for a bare report)."""

    answer: Answer | None
    report: BenchReport
    report_pointer: str


def validate(document: Any, *, max_items: int | None = None) -> list[Finding]:
    """S201/S202/S203 findings for a decoded answer or bare bench report, sorted."""
    return check_document(document, max_items=max_items)[0]


def check_document(document: Any, *, max_items: int | None = None) -> tuple[list[Finding], Models | None]:
    """S201/S202/S203 findings for a decoded answer or bare bench report, sorted, and its models
    (None when the document does not validate).

    An array of more than ``max_items`` items (the per-seed limit) is one S201
    finding; at most :data:`MAX_LISTED_FINDINGS` S201 and S203 findings are
    listed, the rest counted in one more.
    """
    if not isinstance(document, dict):
        return [
            S201.finding(
                f"the answer must be a JSON object, got {_describe_value(document)}",
                claimed=_short(document),
            )
        ], None
    answer_shaped = is_answer(document)
    model = Answer if answer_shaped else BenchReport
    name, root = (ANSWER_SCHEMA, "the answer") if answer_shaped else (BENCH_REPORT_SCHEMA, "the bench report")
    try:
        typed = model.model_validate(document, context={"max_items": max_items})
    except ModelError as refused:
        found = _explained(document, name, root, max_items)
        if not any(f.rule == S201.code for f in found):
            found.append(_first_model_error(refused, root))
        return _capped(_ordered(found)), None
    found = list(_unsupported_version(document))
    if _holds_unknown_keys(typed):
        found.extend(_explained(document, name, root, max_items))
    if isinstance(typed, Answer):
        models = Models(typed, typed.bench_report, "/bench_report")
    else:
        models = Models(None, typed, "")  # type: ignore[arg-type]
    return _capped(_ordered(found)), models


def _explained(document: dict[str, Any], name: str, root: str, max_items: int | None) -> list[Finding]:
    """jsonschema's account of ``document``: S201 per violation, S203 per unknown key, S202."""
    # One pass with the strict copy: its errors are the plain schema's plus one
    # "additionalProperties" error per object with unknown keys (S203).
    errors = list(_validator(name, max_items=max_items).iter_errors(document))
    found = list(_violations((e for e in errors if e.validator != "additionalProperties"), root))
    found.extend(_unknown_keys(errors, root))
    malformed = {f.pointer for f in found if f.rule == S201.code}
    found.extend(f for f in _unsupported_version(document) if f.pointer not in malformed)
    return found


def _ordered(found: list[Finding]) -> list[Finding]:
    unique = {(f.pointer, f.rule, f.message): f for f in found}
    return sorted(unique.values(), key=lambda f: (_pointer_key(f.pointer), f.rule, f.message))


def _holds_unknown_keys(model: BaseModel) -> bool:
    """Whether ``model`` or a model inside it kept keys its schema object does not declare."""
    if model.model_extra:
        return True
    for value in model.__dict__.values():
        if isinstance(value, BaseModel):
            if _holds_unknown_keys(value):
                return True
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            if any(_holds_unknown_keys(item) for item in value):
                return True
    return False


def _first_model_error(refused: ModelError, root: str) -> Finding:
    """The models' first error, for a document jsonschema accepts but the models refuse."""
    error = refused.errors(include_url=False)[0]
    path = [token for token in error["loc"] if not (isinstance(token, str) and token in ("tuned", "flat"))]
    return S201.finding(
        f"{_field_name(path, root)}: {error['msg']}",
        pointer=join_pointer("", *path),
        claimed=_short(error.get("input")),
    )


def _capped(findings: list[Finding]) -> list[Finding]:
    """The first :data:`MAX_LISTED_FINDINGS` S201 findings, and one that counts the rest.

    (S203 is capped where it is found, before its findings are built.)
    """
    violations = [f for f in findings if f.rule == S201.code]
    if len(violations) <= MAX_LISTED_FINDINGS:
        return findings
    rest = violations[MAX_LISTED_FINDINGS:]
    dropped = {id(f) for f in rest}
    kept = [f for f in findings if id(f) not in dropped]
    return kept + [_more(S201, len(rest), "schema violations", rest[0].pointer)]


def _more(rule: Rule, count: int, what: str, first: str) -> Finding:
    return rule.finding(
        f"{count:,} more {what} were not listed (at most {MAX_LISTED_FINDINGS} are); the first is at {first or '/'}",
        pointer=first,
        claimed=count,
    )


def _pointer_key(pointer: str) -> list[tuple[int, int | str]]:
    # Array indices sort numerically (per_seed/2 before per_seed/10).
    return [(0, int(t)) if t.isdecimal() else (1, t) for t in pointer.split("/")[1:]]


def _violations(errors: Iterable[ValidationError], root: str) -> Iterator[Finding]:
    for error in errors:
        pointer = join_pointer("", *error.absolute_path)
        if error.validator == "required":
            yield from _missing(error, pointer, root)
        elif error.validator == "maxItems":
            yield S201.finding(_explain(error, root), pointer=pointer, claimed=len(error.instance))
        else:
            yield S201.finding(_explain(error, root), pointer=pointer, claimed=_short(error.instance))


def _missing(error: ValidationError, pointer: str, root: str) -> Iterator[Finding]:
    # jsonschema yields one error per missing key but does not name it apart
    # from its message; recompute the list (duplicates are merged by the caller).
    owner = _field_name(error.absolute_path, root)
    present = error.instance if isinstance(error.instance, dict) else {}
    for key in error.validator_value:
        if key not in present:
            yield S201.finding(
                f"{owner} is missing the required field '{key}'",
                pointer=join_pointer(pointer, key),
            )


def _explain(error: ValidationError, root: str) -> str:
    field, value, rule = _field_name(error.absolute_path, root), error.instance, error.validator_value
    got = _describe_value(value)
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


def _unknown_keys(errors: Iterable[ValidationError], root: str) -> Iterator[Finding]:
    """One S203 per unknown key, the first :data:`MAX_LISTED_FINDINGS` of them, then one that counts the rest."""
    listed, more, first_more = 0, 0, ""
    for error in errors:
        if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
            continue
        pointer = join_pointer("", *error.absolute_path)
        known = error.schema.get("properties", {})
        owner = _field_name(error.absolute_path, root)
        for key in error.instance:
            if key in known:
                continue
            if listed >= MAX_LISTED_FINDINGS:
                more += 1
                first_more = first_more or join_pointer(pointer, key)
                continue
            listed += 1
            shown = key if len(key) <= _CLAIMED_MAX_CHARS else key[: _CLAIMED_MAX_CHARS - 3] + "..."
            yield S203.finding(
                f"unknown key '{shown}' in {owner}: the auditor does not read it (a typo of a known field?)",
                pointer=join_pointer(pointer, key),
            )
    if more:
        yield _more(S203, more, "unknown keys", first_more)


def _unsupported_version(document: dict[str, Any]) -> Iterator[Finding]:
    report, prefix = (document.get("bench_report"), "/bench_report") if is_answer(document) else (document, "")
    if not isinstance(report, dict):
        return
    version = report.get("bench_version")
    # Wrong types are S201's business; only a well-formed but unknown version is S202.
    if isinstance(version, bool) or not isinstance(version, (int, float)) or not float(version).is_integer():
        return
    if version not in SUPPORTED_BENCH_VERSIONS:
        supported = ", ".join(str(v) for v in sorted(SUPPORTED_BENCH_VERSIONS))
        yield S202.finding(
            f"bench_version {version} is not supported (this auditor reads version {supported}); "
            "its fields may mean something else, so the report was not audited",
            pointer=prefix + "/bench_version",
            claimed=version,
        )


# --------------------------------------------------------------------------- wording


def _field_name(path: Sequence[str | int], root: str) -> str:
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


def _describe_value(value: Any) -> str:
    """``string "0.01"``, ``null``, ``an array of 3 items``: what was written."""
    kind = _json_type(value)
    if kind in ("null", "boolean"):
        return json.dumps(value)
    if kind == "array":
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if kind == "object":
        return "an object"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > _CLAIMED_MAX_CHARS:
        text = text[: _CLAIMED_MAX_CHARS - 3] + "..."
    return f"{kind} {text}"


def _short(value: Any) -> Any:
    """The offending value when it is short enough to quote, else None."""
    if isinstance(value, str):
        return value if len(value) <= _CLAIMED_MAX_CHARS else None
    if isinstance(value, (dict, list)):
        if len(value) > _CLAIMED_MAX_CHARS:
            return None  # cannot be short; do not serialise a huge value to find out
        text = json.dumps(value, ensure_ascii=False, default=str)
        return value if len(text) <= _CLAIMED_MAX_CHARS else None
    return value
