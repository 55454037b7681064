"""``--format sarif``: SARIF 2.1.0 for code-scanning services (GitHub, GitLab, Azure DevOps).

One run; every rule in ``tool.driver.rules`` with its summary, its full
documentation as help (markdown) and its default level; one result per
finding, located at the transcript (a path relative to the working directory,
forward slashes), at the line and column of the value its JSON Pointer names
(a region; columns count Unicode code points, as ``columnKind`` says) and at
the pointer itself (a logical location, and in the message).

``partialFingerprints`` hold a fingerprint made by the baseline's recipe
(:func:`auditor.findings.fingerprint`: rule, source, pointer and claimed value,
no line numbers), so that a code-scanning service tracks a finding across
re-formatting as a baseline does.  Its source is rooted at the working
directory, like the artifact URIs, not at a baseline file's folder: it equals
the fingerprint a baseline records only for a baseline file in the working
directory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from auditor import __version__
from auditor.files.paths import portable
from auditor.findings import Finding, Rule, Severity, all_rules, fingerprint
from auditor.formats import Run
from auditor.result import AuditResult

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def artifact_uri(source: str) -> str:
    """The transcript as a relative URI with forward slashes (absolute paths under the cwd made relative)."""
    path = source
    if os.path.isabs(path):
        try:
            path = os.path.relpath(path)
        except ValueError:
            return Path(path).as_uri()
        if path.startswith(".."):
            return Path(source).as_uri()
    return quote(portable(path))  # "-" is "stdin"


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.doc or rule.summary},
        "help": {"text": rule.doc or rule.summary, "markdown": rule.doc or rule.summary},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"family": rule.family, "tags": [rule.family]},
    }


def _message(f: Finding) -> str:
    where = f.pointer or "(whole input)"
    text = f"{where}: {f.message}"
    if f.claimed is not None or f.recomputed is not None:
        text += f" (claimed {json.dumps(f.claimed, ensure_ascii=False)}, recomputed {json.dumps(f.recomputed, ensure_ascii=False)})"
    return text


def working_directory_fingerprint(f: Finding, source: str) -> str:
    """The baseline's fingerprint of ``f`` with ``source`` relative to the working directory (see the module)."""
    return fingerprint(f, source, Path.cwd())


def _physical_location(result: AuditResult, f: Finding) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(result.source)}}
    if f.line is not None:
        physical["region"] = {"startLine": f.line, "startColumn": f.column or 1}
    return physical


def _result(result: AuditResult, f: Finding, index: dict[str, int]) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": _physical_location(result, f)}
    if f.pointer:
        location["logicalLocations"] = [{"fullyQualifiedName": f.pointer, "kind": "object"}]
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "level": LEVEL[f.severity],
        "message": {"text": _message(f)},
        "locations": [location],
        "partialFingerprints": {"auditorFingerprint/v1": working_directory_fingerprint(f, result.source)},
    }
    if f.rule in index:
        out["ruleIndex"] = index[f.rule]
    return out


def document(run: Run) -> dict[str, Any]:
    rules = all_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    results = [_result(r, f, index) for r in run.results for f in r.findings]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "auditor",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule_descriptor(rule) for rule in rules],
                    }
                },
                "invocations": [{"executionSuccessful": True}],
                "columnKind": "unicodeCodePoints",
                "results": results,
                "properties": {
                    "summary": run.summary,
                    **({"cross": run.cross.to_dict()} if run.cross else {}),
                    # The policy in effect and where each value came from, as in the json format.
                    **({"config": run.config} if run.config is not None else {}),
                },
            }
        ],
    }


def write(run: Run, stream: TextIO) -> None:
    json.dump(document(run), stream, indent=2, ensure_ascii=False, allow_nan=False)
    stream.write("\n")
