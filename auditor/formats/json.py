"""``--format json``: one document for the whole run (a stable contract other tools read)."""

from __future__ import annotations

import json
from typing import TextIO

from . import Run


def write(run: Run, stream: TextIO) -> None:
    json.dump(run.to_dict(), stream, indent=2, ensure_ascii=False, allow_nan=False)
    stream.write("\n")
