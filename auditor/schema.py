"""JSON Schema validation of an answer (S201-S203) and its typed models.

An object with a ``bench_report`` key is an answer and is validated against
``schemas/answer.schema.json``; anything else is taken as a bare bench report
(``schemas/bench_report.schema.json``), whose pointers then start at ``""``.

Unknown keys (S203) are found with a *strict* copy of the schemas, derived
programmatically: every object schema that lists ``properties`` and says
nothing about ``additionalProperties`` is closed.  Objects meant to be
free-form (configs, ``metrics``, ``mechanism_signature``) say
``"additionalProperties": true`` explicitly and stay open.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Sequence
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource

from .findings import Finding, finding
from .model import Answer, BenchReport, TunedArm, join_pointer
from .rules import schema as _schema_rules  # noqa: F401  (registers S201-S203)

SUPPORTED_BENCH_VERSIONS = frozenset({1})
ANSWER_SCHEMA = "answer.schema.json"
BENCH_REPORT_SCHEMA = "bench_report.schema.json"
_CLAIMED_MAX_CHARS = 80


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
def _validator(name: str, *, strict: bool) -> Draft202012Validator:
    schemas = {n: load_schema(n) for n in (ANSWER_SCHEMA, BENCH_REPORT_SCHEMA)}
    if strict:
        schemas = {n: strict_copy(s) for n, s in schemas.items()}
    registry: Registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    return Draft202012Validator(schemas[name], registry=registry)


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


def validate(document: Any) -> list[Finding]:
    """S201/S202/S203 findings for a decoded answer or bare bench report, sorted."""
    if not isinstance(document, dict):
        return [
            finding(
                "S201",
                f"the answer must be a JSON object, got {_describe_value(document)}",
                claimed=_short(document),
            )
        ]
    name, root = (ANSWER_SCHEMA, "the answer") if is_answer(document) else (BENCH_REPORT_SCHEMA, "the bench report")
    found = list(_violations(_validator(name, strict=False).iter_errors(document), root))
    found.extend(_unknown_keys(_validator(name, strict=True).iter_errors(document), root))
    malformed = {f.pointer for f in found if f.rule == "S201"}
    found.extend(f for f in _unsupported_version(document) if f.pointer not in malformed)
    unique = {(f.pointer, f.rule, f.message): f for f in found}
    return sorted(unique.values(), key=lambda f: (_pointer_key(f.pointer), f.rule, f.message))


def _pointer_key(pointer: str) -> list[tuple[int, int | str]]:
    # Array indices sort numerically (per_seed/2 before per_seed/10).
    return [(0, int(t)) if t.isdigit() else (1, t) for t in pointer.split("/")[1:]]


def _violations(errors: Iterable[ValidationError], root: str) -> Iterator[Finding]:
    for error in errors:
        pointer = join_pointer("", *error.absolute_path)
        if error.validator == "required":
            yield from _missing(error, pointer, root)
        else:
            yield finding("S201", _explain(error, root), pointer=pointer, claimed=_short(error.instance))


def _missing(error: ValidationError, pointer: str, root: str) -> Iterator[Finding]:
    # jsonschema yields one error per missing key but does not name it apart
    # from its message; recompute the list (duplicates are merged by the caller).
    owner = _field_name(error.absolute_path, root)
    present = error.instance if isinstance(error.instance, dict) else {}
    for key in error.validator_value:
        if key not in present:
            yield finding(
                "S201",
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
    if error.validator == "enum":
        allowed = ", ".join(json.dumps(option) for option in rule)
        return f"{field} must be one of {allowed}; got {got}"
    return f"{field}: {error.message}"


def _unknown_keys(errors: Iterable[ValidationError], root: str) -> Iterator[Finding]:
    for error in errors:
        if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
            continue
        pointer = join_pointer("", *error.absolute_path)
        known = error.schema.get("properties", {})
        owner = _field_name(error.absolute_path, root)
        for key in error.instance:
            if key not in known:
                yield finding(
                    "S203",
                    f"unknown key '{key}' in {owner}: the auditor does not read it (a typo of a known field?)",
                    pointer=join_pointer(pointer, key),
                )


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
        yield finding(
            "S202",
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
        text = json.dumps(value, ensure_ascii=False, default=str)
        return value if len(text) <= _CLAIMED_MAX_CHARS else None
    return value


# --------------------------------------------------------------------------- models


def build_models(document: dict[str, Any]) -> tuple[Answer | None, BenchReport, str]:
    """Typed models of a schema-valid document, and the bench report's pointer.

    Returns ``(answer, report, "/bench_report")`` for an answer and
    ``(None, report, "")`` for a bare bench report.
    """
    if is_answer(document):
        answer = Answer.model_validate(document)
        report = _with_declared_idea_shape(answer.bench_report, document["bench_report"])
        if report is not answer.bench_report:
            answer = answer.model_copy(update={"bench_report": report})
        return answer, report, "/bench_report"
    report = BenchReport.model_validate(document)
    return None, _with_declared_idea_shape(report, document), ""


def _with_declared_idea_shape(report: BenchReport, raw: dict[str, Any]) -> BenchReport:
    # The schema decides the idea's shape by the presence of "full"; pydantic's
    # smart union may prefer the flat shape when both fit.  Follow the schema.
    idea = raw.get("idea")
    if isinstance(idea, dict) and "full" in idea and not isinstance(report.idea, TunedArm):
        return report.model_copy(update={"idea": TunedArm.model_validate(idea)})
    return report
