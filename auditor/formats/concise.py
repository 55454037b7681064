"""``--format concise``: one line per finding, ``path:line:col: CODE message`` (ruff's concise format).

Editors and terminals turn ``path:line:col`` into a link to the value the
finding is about.  Within a transcript the lines follow the text (line, then
column; the most severe first on one place); a finding that has no place in
the text (a file that could not be read, a cross-answer finding) is at line 1,
column 1, as ruff places a file-level diagnostic.  A message is kept on its
line: its line breaks become spaces.  The last line gives the totals.
"""

from __future__ import annotations

from typing import TextIO

from auditor.files.paths import portable
from auditor.findings import Finding
from auditor.formats import Run, place


def line(source: str, f: Finding) -> str:
    """The line of one finding of the transcript ``source``."""
    message = " ".join(f.message.splitlines())
    return f"{place(source, f) or portable(source) + ':1:1'}: {f.rule} {message}"


def _place(f: Finding) -> tuple[int, int]:
    return (f.line or 1, f.column or 1)


def write(run: Run, stream: TextIO) -> None:
    found = 0
    for result in run.results:
        for f in sorted(result.findings, key=_place):  # stable: the result's severity order at one place
            stream.write(line(result.source, f) + "\n")
            found += 1
    s = run.summary
    what = f"Found {found} finding{'s' if found != 1 else ''}" if found else "All checks passed!"
    skipped = f", {s['skipped']} skipped" if s.get("skipped") else ""
    stream.write(f"{what} ({s['files']} files: {s['pass']} pass, {s['fail']} fail, {s['error']} error{skipped})\n")
