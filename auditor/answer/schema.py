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
S201 and S203 findings are listed.  The schemas and their validators are
:mod:`auditor.answer.validators`; how findings word fields and values, :mod:`auditor.answer.wording`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic import ValidationError as ModelError

from auditor.answer.model import Answer, BenchReport
from auditor.answer.validators import ANSWER_SCHEMA, BENCH_REPORT_SCHEMA, validator
from auditor.answer.wording import CLAIMED_MAX_CHARS, describe_value, explain, field_name, short_value
from auditor.findings import Finding, Rule
from auditor.parse.pointers import join_pointer
from auditor.rules.schema import S201, S202, S203

if TYPE_CHECKING:  # jsonschema is imported on the first validation, not with the package
    from jsonschema import ValidationError

SUPPORTED_BENCH_VERSIONS = frozenset({1})
# Findings of one rule (S201, S203) listed per answer; the rest are summed up in one.
MAX_LISTED_FINDINGS = 100


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
                f"the answer must be a JSON object, got {describe_value(document)}",
                claimed=short_value(document),
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
        models = Models(None, typed, "")
    return _capped(_ordered(found)), models


def _explained(document: dict[str, Any], name: str, root: str, max_items: int | None) -> list[Finding]:
    """jsonschema's account of ``document``: S201 per violation, S203 per unknown key, S202."""
    # One pass with the strict copy: its errors are the plain schema's plus one
    # "additionalProperties" error per object with unknown keys (S203).
    errors = list(validator(name, max_items=max_items).iter_errors(document))
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
        f"{field_name(path, root)}: {error['msg']}",
        pointer=join_pointer("", *path),
        claimed=short_value(error.get("input")),
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
            yield S201.finding(explain(error, root), pointer=pointer, claimed=len(error.instance))
        else:
            yield S201.finding(explain(error, root), pointer=pointer, claimed=short_value(error.instance))


def _missing(error: ValidationError, pointer: str, root: str) -> Iterator[Finding]:
    # jsonschema yields one error per missing key but does not name it apart
    # from its message; recompute the list (duplicates are merged by the caller).
    owner = field_name(error.absolute_path, root)
    present = error.instance if isinstance(error.instance, dict) else {}
    for key in error.validator_value:
        if key not in present:
            yield S201.finding(
                f"{owner} is missing the required field '{key}'",
                pointer=join_pointer(pointer, key),
            )


def _unknown_keys(errors: Iterable[ValidationError], root: str) -> Iterator[Finding]:
    """One S203 per unknown key, the first :data:`MAX_LISTED_FINDINGS` of them, then one that counts the rest."""
    listed, more, first_more = 0, 0, ""
    for error in errors:
        if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
            continue
        pointer = join_pointer("", *error.absolute_path)
        known = error.schema.get("properties", {})
        owner = field_name(error.absolute_path, root)
        for key in error.instance:
            if key in known:
                continue
            if listed >= MAX_LISTED_FINDINGS:
                more += 1
                first_more = first_more or join_pointer(pointer, key)
                continue
            listed += 1
            shown = key if len(key) <= CLAIMED_MAX_CHARS else key[: CLAIMED_MAX_CHARS - 3] + "..."
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
