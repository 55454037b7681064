"""``--format junit``: JUnit XML for CI test reports.

One ``<testsuite>``, one ``<testcase>`` per transcript (``name`` = its path):
a failing transcript carries a ``<failure>`` with its findings, one that could
not be audited an ``<error>``, and a passing one with warnings lists them in
``<system-out>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TextIO

from auditor.findings import Finding, Severity
from auditor.formats import Run, place
from auditor.parse.strings import plural
from auditor.result import AuditResult, Status

# Characters XML 1.0 cannot carry even escaped; an answer's text may hold them.
_INVALID_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _findings_text(result: AuditResult) -> str:
    lines = [f"{f.rule} {f.severity.value} {_where(result.source, f)}: {f.message}" for f in result.findings]
    return _clean("\n".join(lines))


def _where(source: str, f: Finding) -> str:
    at = place(source, f)
    return f"{at} {f.pointer or '(input)'}" if at else f.pointer or "(input)"


def _summary(result: AuditResult) -> str:
    """The failure's one-line message: the failing rule codes first, then the counts
    (``A307, V401: 2 errors, 1 warning``), so a CI page says which rules failed."""
    failing = [f.rule for f in result.findings if f.severity is Severity.ERROR] or [f.rule for f in result.findings]
    counts = f"{plural(result.count(Severity.ERROR), 'error')}, {plural(result.count(Severity.WARNING), 'warning')}"
    codes = ", ".join(dict.fromkeys(failing))
    return f"{codes}: {counts}" if codes else counts


# Seconds to the microsecond: a warm audit takes a fraction of a millisecond, which
# milliseconds would print as 0.000 for every transcript of a batch.
def _seconds(seconds: float) -> str:
    return f"{seconds:.6f}"


def _time(result: AuditResult) -> str:
    return _seconds(result.seconds) if result.seconds is not None else "0"


def _testcase(result: AuditResult) -> ET.Element:
    case = ET.Element("testcase", classname="auditor", name=_clean(result.source), time=_time(result))
    if result.status is Status.FAIL:
        ET.SubElement(case, "failure", message=_summary(result), type="auditor.fail").text = _findings_text(result)
    elif result.status is Status.ERROR:
        first = f"{result.findings[0].rule} {result.findings[0].message}" if result.findings else "could not be audited"
        ET.SubElement(case, "error", message=_clean(first), type="auditor.error").text = _findings_text(result)
    elif result.findings:
        ET.SubElement(case, "system-out").text = _findings_text(result)
    return case


def document(run: Run) -> ET.Element:
    s = run.summary
    counts = {"tests": str(s["files"]), "failures": str(s["fail"]), "errors": str(s["error"]), "skipped": "0"}
    root = ET.Element("testsuites", {"name": "auditor", **counts})
    total = sum(r.seconds or 0.0 for r in run.results)
    suite = ET.SubElement(root, "testsuite", {"name": "auditor", "time": _seconds(total), **counts})
    for result in run.results:
        suite.append(_testcase(result))
    return root


def write(run: Run, stream: TextIO) -> None:
    root = document(run)
    ET.indent(root)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(root, encoding="unicode"))
    stream.write("\n")
