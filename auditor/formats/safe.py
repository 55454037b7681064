"""Agent text made safe to show: the one sanitizer every output goes through.

Answers, file names and a rerun's output are written by the agent under audit.
Printed raw, they could drive the reader's terminal: OSC 52 writes the
clipboard, OSC 0 the window title, OSC 8 plants links, ``ESC[2K`` erases the
auditor's own line to print a fake green PASS, C1 controls (U+009B is CSI)
do the same in one character, and bidi overrides reorder what is shown
("Trojan Source").  :func:`clean` removes all of that and keeps everything else:

* whole escape sequences (CSI, OSC, DCS, SOS, PM, APC, and two- or
  three-character ESC sequences) in their 7-bit and C1 forms, so no
  ``[2K[32m`` debris is left; an unterminated string sequence loses only
  its introducer, so the text after it stays visible;
* every other C0 control but tab and newline, DEL, and every C1 control;
  a carriage return becomes a newline (``\\r\\n`` one newline), so a
  progress bar's ``\\r`` can no longer overwrite a line;
* the bidi embeddings, overrides and isolates U+202A-U+202E and
  U+2066-U+2069 (the marks U+200E, U+200F and U+061C stay: they reorder
  nothing around them);
* lone surrogates (a file name that is not UTF-8 decodes to them) become
  U+FFFD, so writing the output never fails on them.

Honest text (any printable Unicode, tabs, newlines) comes back unchanged,
the same object.  :func:`clean_result` applies it to every string of an
:class:`~auditor.result.AuditResult` and :func:`clean_value` to any JSON value
(keys included), leaving numbers, booleans and null as they are.  The output
layer applies it where data enters it: :class:`~auditor.formats.Run` cleans its
results when it is built (every format renders a Run), and the JSON contract
(:mod:`auditor.formats.contract`) cleans each result it is given, so every jsonl line is clean.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from auditor.findings import Finding
    from auditor.result import AuditResult

# Anything clean() would change: the fast path returns the text itself when none occurs.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

# A string sequence's body: printable characters only (a control ends it unterminated).
_BODY = "[^\x00-\x1f\x7f-\x9f]*"
_TERMINATOR = "(?:\x07|\x1b\\\\|\x9c)"
_SEQUENCE = re.compile(
    "|".join(
        (
            "\x1b\\[[0-?]*[ -/]*[@-~]",  # CSI ... final byte
            "\x9b[0-?]*[ -/]*[@-~]",  # C1 CSI
            f"(?:\x1b[\\]PX^_]|[\x90\x98\x9d\x9e\x9f]){_BODY}{_TERMINATOR}",  # OSC, DCS, SOS, PM, APC
            "\x1b[ -/]*[0-~]",  # other ESC sequences: ESC c, ESC 7, ESC ( B, and an unterminated ESC ]
        )
    )
)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(text: str) -> str:
    """``text`` without terminal controls, escape sequences and bidi overrides (see the module)."""
    if not _UNSAFE.search(text):
        return text
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _SEQUENCE.sub("", text)
    text = _CONTROL.sub("", text)
    return _SURROGATE.sub("\ufffd", text)


def clean_value(value: Any) -> Any:
    """A JSON-like value with every string (and string key) cleaned; other values unchanged.

    A container with nothing to clean is returned as it is, not copied: a batch of 100,000
    results would otherwise hold a second copy of every table.
    """
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        items = [(clean(k) if isinstance(k, str) else k, clean_value(v)) for k, v in value.items()]
        same = all(k is old_k and v is old_v for (k, v), (old_k, old_v) in zip(items, value.items()))
        return value if same else dict(items)
    if isinstance(value, (list, tuple)):
        cleaned = [clean_value(v) for v in value]
        if all(new is old for new, old in zip(cleaned, value)):
            return value
        return cleaned if isinstance(value, list) else tuple(cleaned)
    return value


def clean_finding(f: Finding) -> Finding:
    """``f`` with its message, pointer and values cleaned; ``f`` itself when nothing changes."""
    message, pointer = clean(f.message), clean(f.pointer)
    claimed, recomputed = clean_value(f.claimed), clean_value(f.recomputed)
    if message is f.message and pointer is f.pointer and claimed is f.claimed and recomputed is f.recomputed:
        return f
    return replace(f, message=message, pointer=pointer, claimed=claimed, recomputed=recomputed)


def clean_result(result: AuditResult) -> AuditResult:
    """``result`` with its source, findings, tables, rerun record, cross facts and log path cleaned;
    ``result`` itself when nothing changes (the common case: no copy, no ``replace``)."""
    fields = {
        "source": clean(result.source),
        "recomputed": clean_value(result.recomputed),
        "claimed": clean_value(result.claimed),
        "rerun": clean_value(result.rerun),
        "cross": clean_value(result.cross),
        "figures": clean_value(result.figures),
        "log": clean_value(result.log),
    }
    findings = tuple(clean_finding(f) for f in result.findings)
    if all(new is old for new, old in zip(findings, result.findings)):
        findings = result.findings
    changed = {name: value for name, value in fields.items() if value is not getattr(result, name)}
    if findings is not result.findings:
        changed["findings"] = findings
    return replace(result, **changed) if changed else result
