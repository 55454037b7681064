"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

``::error file=answers/a.txt,line=94,col=15,title=A307::/bench_report/comparison/p_value: ...``
(``line`` and ``col`` where the finding was located in the transcript);
warnings become ``::warning``, info ``::notice``.  Escaping follows the
runner's rules: in the message ``%``, CR and LF; in property values also ``:``
and ``,``.
"""

from __future__ import annotations

from typing import TextIO

from auditor.files.paths import portable
from auditor.findings import Finding, Severity
from auditor.formats import Run

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(source: str, f: Finding) -> str:
    where = f.pointer or "(whole input)"
    place = f",line={f.line},col={f.column or 1}" if f.line is not None else ""
    properties = f"file={escape_property(portable(source))}{place},title={escape_property(f.rule)}"
    return f"::{COMMAND[f.severity]} {properties}::{escape_data(f'{where}: {f.message}')}"


def write(run: Run, stream: TextIO) -> None:
    for result in run.results:
        for f in result.findings:
            stream.write(annotation(result.source, f) + "\n")
    s = run.summary
    stream.write(f"auditor: {s['files']} files: {s['pass']} pass, {s['fail']} fail, {s['error']} error\n")
