"""Which transcripts a batch audits, and which per-file options each gets.

Pure path work: walking folders, ``--include``/``--exclude`` globs and the
``per-file-ignores`` globs of a configuration.  Nothing here audits, so the
configuration (:mod:`auditor.config`) can use it without the execution layer.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Sequence

from .errors import UsageError
from .options import AuditOptions
from .paths import STDIN, posix
from .paths import key as path_key
from .paths import relative as relative_path

# A folder holding this file is an experiment's workspace: its other .json
# files (configs, metrics) are the experiment's, while the agent's answer beside
# them is stored as text (.txt, .md), the way the pipeline writes answers.
from .paths import REPORT_NAME as WORKSPACE_MARKER  # a folder holding a report is a rerun workspace
DEFAULT_INCLUDE = ("*.txt", "*.md", "*.json")
# Never walked into or picked up from a directory: an experiment workspace's
# own report (``bench_report.json`` beside its answer), hidden folders such as
# .git, and tool caches.  Paths named explicitly are always audited.
DEFAULT_EXCLUDE = (WORKSPACE_MARKER, ".*", "__pycache__", "node_modules")


def _matches_any(name: str, relative: str, patterns: Iterable[str]) -> bool:
    """A glob matches a file or folder by its name or by its path below the walk root."""
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(relative, p) for p in patterns)


def _walk(root: str, include: Sequence[str], exclude: Sequence[str]) -> list[str]:
    """Transcripts below ``root``, following symlinks but never entering a folder twice."""
    seen: set[tuple[int, int]] = set()
    found: list[str] = []
    for folder, dirs, files in os.walk(root, followlinks=True):
        try:
            stat = os.stat(folder)
        except OSError:
            dirs[:] = []
            continue
        if (stat.st_dev, stat.st_ino) in seen:  # a symlink loop, or two links to one folder
            dirs[:] = []
            continue
        seen.add((stat.st_dev, stat.st_ino))
        prefix = relative_path(folder, root)
        prefix = "" if prefix == "." else prefix + "/"
        dirs[:] = sorted(d for d in dirs if not _matches_any(d, prefix + d, exclude))
        workspace = WORKSPACE_MARKER in files
        for name in files:
            relative = prefix + name
            if workspace and name.lower().endswith(".json"):
                continue
            if _matches_any(name, relative, include) and not _matches_any(name, relative, exclude):
                path = os.path.join(folder, name)
                if os.path.isfile(path):
                    found.append(path)
    return sorted(found, key=lambda p: Path(p).parts)


def discover(
    paths: Sequence[str], include: Sequence[str] = DEFAULT_INCLUDE, exclude: Sequence[str] = ()
) -> list[str]:
    """Files to audit, in a deterministic order: arguments in the order given, each
    directory walked recursively and sorted; ``-`` is stdin.  A path named twice
    is audited once.  ``exclude`` adds to :data:`DEFAULT_EXCLUDE`.
    """
    exclude = (*DEFAULT_EXCLUDE, *exclude)
    out: list[str] = []
    for raw in paths:
        if raw == STDIN:
            out.append(raw)
        elif os.path.isdir(raw):
            out.extend(_walk(raw, include, exclude))
        elif os.path.exists(raw):
            out.append(raw)
        else:
            raise UsageError(f"no such file or directory: {raw}")
    unique: dict[str, str] = {}
    for path in out:
        unique.setdefault(path_key(path), path)
    return list(unique.values())


def options_for(
    path: str, options: AuditOptions, per_file_ignores: dict[str, tuple[str, ...]], root: Path | None
) -> AuditOptions:
    """``options`` plus the per-file ignores whose glob matches ``path``.

    Globs are matched against the path relative to ``root`` (the configuration
    file's folder) and, when they hold no ``/``, against the file name too.
    """
    if not per_file_ignores or path == STDIN:
        return options
    relative = relative_path(path, root) if root is not None else posix(path)
    extra: list[str] = []
    for glob, codes in per_file_ignores.items():
        if fnmatch.fnmatchcase(relative, glob) or ("/" not in glob and fnmatch.fnmatchcase(os.path.basename(path), glob)):
            extra.extend(codes)
    return replace(options, ignore=(*options.ignore, *extra)) if extra else options
