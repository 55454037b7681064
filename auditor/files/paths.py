"""How the auditor spells a transcript's path: one helper per spelling.

* :func:`key`: the spelling by which a batch recognises a source named twice
  (discovery, ``--resume``, the session's results);
* :func:`posix`: forward slashes, for globs and for reports read elsewhere;
* :func:`relative`: below a folder (a walk root, a configuration or baseline
  file's folder), with forward slashes;
* :func:`portable`: a source as reports name it (``-`` is ``stdin``).
"""

from __future__ import annotations

import os
from pathlib import Path

STDIN = "-"
# How standard input is named where people read it (the JSON keeps "-").
STDIN_NAME = "<stdin>"
# The report an experiment writes and a workspace ships beside its answer.
REPORT_NAME = "bench_report.json"


def key(source: str) -> str:
    """``source`` normalised (``a/./b.txt`` and ``a/b.txt`` are one transcript)."""
    return os.path.normpath(source)


def posix(path: str) -> str:
    """``path`` with forward slashes."""
    return path.replace(os.sep, "/")


def relative(path: str, root: str | Path) -> str:
    """``path`` relative to ``root`` with forward slashes; absolute when there is no
    relative path (another drive on Windows)."""
    absolute = os.path.abspath(path)
    try:
        return posix(os.path.relpath(absolute, root))
    except ValueError:
        return posix(absolute)


def portable(source: str) -> str:
    """``source`` normalised with forward slashes; ``stdin`` for ``-``."""
    return "stdin" if source == STDIN else posix(key(source))


def common_folder(sources: list[str]) -> str:
    """The folder every source lies in, shown once in a title instead of on every row
    ("" when there is none: stdin among them, or absolute and relative paths mixed)."""
    folders = [os.path.dirname(s) for s in sources if s != STDIN]
    if len(folders) != len(sources) or not folders:
        return ""
    try:
        return os.path.commonpath(folders)
    except ValueError:
        return ""


def name_in(source: str, folder: str) -> str:
    """``source`` as shown under the title's ``folder``; standard input by its display name."""
    if source == STDIN:
        return STDIN_NAME
    return os.path.relpath(source, folder) if folder else source
