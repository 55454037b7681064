"""Which transcripts a batch audits, and which per-file options each gets.

Pure path work: walking folders, ``--include``/``--exclude`` globs and the
``per-file-ignores`` globs of a configuration.  Nothing here audits, so the
configuration (:mod:`auditor.config`) can use it without the execution layer.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Sequence

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


def _glob_matcher(patterns: Sequence[str]) -> Callable[[str, str], bool]:
    """``match(name, relative)``: whether a glob matches a file or folder by its name or by its
    path below the walk root (``fnmatchcase``); all globs compiled into one pattern, once per walk."""
    if not patterns:
        return lambda name, relative: False
    match = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)).match
    return lambda name, relative: match(name) is not None or match(relative) is not None


def _walk(root: str, include: Sequence[str], exclude: Sequence[str]) -> list[str]:
    """Transcripts below ``root``, following symlinks but never entering a folder twice.

    ``os.scandir`` tells a regular file from the rest without a ``stat`` per file (a
    symlink is still followed), so a folder of 100,000 transcripts is listed in one pass.
    Sorted by the components of the path below ``root``.
    """
    included, excluded = _glob_matcher(include), _glob_matcher(exclude)
    seen: set[tuple[int, int]] = set()
    found: list[tuple[tuple[str, ...], str]] = []
    pending: list[tuple[str, tuple[str, ...]]] = [(root, ())]
    while pending:
        folder, parts = pending.pop()
        try:
            stat = os.stat(folder)
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:  # gone, or not readable: nothing to audit there
            continue
        if (stat.st_dev, stat.st_ino) in seen:  # a symlink loop, or two links to one folder
            continue
        seen.add((stat.st_dev, stat.st_ino))
        prefix = "/".join(parts) + "/" if parts else ""
        kinds = [(entry, _is_dir(entry)) for entry in entries]
        workspace = any(entry.name == WORKSPACE_MARKER and not is_dir for entry, is_dir in kinds)
        subfolders = []
        for entry, is_dir in kinds:
            name, relative = entry.name, prefix + entry.name
            if is_dir:
                if not excluded(name, relative):
                    subfolders.append((name, entry.path))
            elif workspace and name.lower().endswith(".json"):
                continue
            elif included(name, relative) and not excluded(name, relative) and _is_file(entry):
                # entry.path is os.path.join(folder, name), joined in C.
                found.append(((*parts, name), entry.path))
        # Depth first in name order, as os.walk goes: of two links to one folder, the first is walked.
        pending.extend((path, (*parts, name)) for name, path in sorted(subfolders, reverse=True))
    return [path for _, path in sorted(found)]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows a symlink, as os.walk(followlinks=True) does
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()  # a regular file, through a symlink too: no socket, pipe or broken link
    except OSError:
        return False


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
    if len(paths) == 1:  # one walk never lists a path twice (each folder once, each name once in it)
        return out
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
