"""``--format json``: one document for the whole run (a stable contract other tools read)."""

from __future__ import annotations

from typing import TextIO

from auditor.formats import Run
from auditor.formats.contract import RunDocument, json_text


def write(run: Run, stream: TextIO) -> None:
    stream.write(json_text(RunDocument.of(run), indent=2) + "\n")
