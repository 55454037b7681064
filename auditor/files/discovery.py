"""Which transcripts a batch audits, and which per-file options each gets.

Pure path work: walking folders, ``--include``/``--exclude`` globs and the
``per-file-ignores`` globs of a configuration.  Nothing here audits, so the
configuration (:mod:`auditor.options.config`) can use it without the execution layer.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from auditor.errors import UsageError

# A folder holding this file is an experiment's workspace: its other .json
# files (configs, metrics) are the experiment's, while the agent's answer beside
# them is stored as text (.txt, .md), the way the pipeline writes answers.
from auditor.files.paths import REPORT_NAME as WORKSPACE_MARKER  # a folder holding a report is a rerun workspace
from auditor.files.paths import STDIN, posix
from auditor.files.paths import key as path_key

DEFAULT_INCLUDE = ("*.txt", "*.md", "*.json")
# Never walked into or picked up from a directory: an experiment workspace's
# own report (``bench_report.json`` beside its answer), hidden folders such as
# .git, and tool caches.  Named files are audited all the same, unless
# ``force_exclude`` applies the excludes to them too (the pre-commit hook).
DEFAULT_EXCLUDE = (WORKSPACE_MARKER, ".*", "__pycache__", "node_modules")
# A repository's ordinary files, by name whatever the case (README.md, readme.txt): files only,
# so a folder named notes/ is still walked.  They are excluded like DEFAULT_EXCLUDE.
ORDINARY_FILES = (
    "README*",
    "CHANGELOG*",
    "LICENSE*",
    "NOTES*",
    "CONTRIBUTING*",
    "requirements*.txt",
    "*.toml",
    "package*.json",
    ".pre-commit-*",
)


@dataclass(frozen=True)
class Discovery:
    """What a set of paths holds: the files to audit in order, which of them only a folder walk
    found (by :func:`~auditor.files.paths.key`; such a file is skipped when it holds no sign of an
    answer), and what include/exclude left out (files, and excluded folders as ``folder/``)."""

    paths: list[str]
    walked: frozenset[str] = frozenset()
    excluded: list[str] = field(default_factory=list)


def _globs(patterns: Sequence[str], *, ignore_case: bool = False) -> str:
    """One regular expression for ``patterns`` (``fnmatchcase``'s rules; never matches when empty)."""
    if not patterns:
        return "(?!)"
    joined = "|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)
    return f"(?i:{joined})" if ignore_case else joined


def _glob_matcher(patterns: Sequence[str]) -> Callable[[str, str], bool]:
    """``match(name, relative)``: whether a glob matches a file or folder by its name or by its
    path below the walk root (``fnmatchcase``); all globs compiled into one pattern, once per walk."""
    if not patterns:
        return lambda name, relative: False
    match = re.compile(_globs(patterns)).match
    return lambda name, relative: match(name) is not None or match(relative) is not None


class _Rules:
    """include/exclude of one discovery, compiled once: what is audited and what is reported left out."""

    def __init__(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        self.excluded = _glob_matcher(exclude)  # files and folders
        included = re.compile(_globs(include)).match
        by_path = re.compile(_globs(exclude)).match
        # A file's name against the excludes and the ordinary files' names in one match.
        by_name = re.compile(f"{_globs(exclude)}|{_globs(ORDINARY_FILES, ignore_case=True)}").match
        # A file left out is reported when it would be a candidate: included here or by default.
        candidate = re.compile(_globs((*include, *DEFAULT_INCLUDE))).match
        user_name = re.compile(_globs(exclude)).match
        ordinary = re.compile(_globs(ORDINARY_FILES, ignore_case=True)).match

        def ordinary_only(name: str, relative: str) -> bool:
            """Left out only for its ordinary name (a NOTES*.txt), not by an exclude of the run."""
            return (
                bool(included(name) or included(relative))
                and bool(ordinary(name))
                and not (user_name(name) or by_path(relative))
            )

        self.ordinary_only = ordinary_only

        def file(name: str, relative: str) -> bool | None:
            """True: audit it; False: left out, reported; None: not a candidate (a .py file), not reported."""
            if (included(name) or included(relative)) and not by_name(name) and not by_path(relative):
                return True
            return False if candidate(name) or candidate(relative) else None

        self.file = file  # a plain function: a walk calls it once per file

    def named(self, path: str, is_dir: bool) -> bool:
        """Whether a named path passes include/exclude (``force_exclude``): its name, the path as
        given and each folder on it are matched, as a walk from the current folder would see them."""
        relative = posix(os.path.normpath(path))
        parts = [p for p in relative.split("/") if p not in ("", ".", "..")]
        if not parts:
            return True
        if any(self.excluded(part, part) for part in parts[:-1]) or self.excluded(parts[-1], relative):
            return False
        return is_dir or bool(self.file(parts[-1], relative))


def _walk(root: str, rules: _Rules, excluded_out: list[tuple[tuple[str, ...], str]]) -> list[str]:
    """Transcripts below ``root``, following symlinks but never entering a folder twice.

    ``os.scandir`` tells a regular file from the rest without a ``stat`` per file (a
    symlink is still followed), so a folder of 100,000 transcripts is listed in one pass.
    Sorted by the components of the path below ``root``.  What include/exclude left out
    goes to ``excluded_out`` (an excluded folder once, as ``folder/``, its contents unread).
    """
    file = rules.file
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
                if not rules.excluded(name, relative):
                    subfolders.append((name, entry.path))
                else:
                    excluded_out.append(((*parts, name), entry.path + os.sep))
            elif workspace and name.lower().endswith(".json") and name != WORKSPACE_MARKER:
                continue  # the experiment's own files (config.json), not answers
            else:
                audited = file(name, relative)
                if audited is None or not _is_file(entry):
                    continue
                if not audited and rules.ordinary_only(name, relative):
                    audited = holds_a_report(entry.path)  # an answer saved as NOTES_run2.txt is audited
                # entry.path is os.path.join(folder, name), joined in C.
                (found if audited else excluded_out).append(((*parts, name), entry.path))
        # Depth first in name order, as os.walk goes: of two links to one folder, the first is walked.
        pending.extend((path, (*parts, name)) for name, path in sorted(subfolders, reverse=True))
    return [path for _, path in sorted(found)]


# A report's own members: what makes a file with an ordinary name an answer after all (an example in a
# README's prose or a p-value in NOTES.md is not one).
_REPORT_MEMBER = re.compile(rb'"(?:bench_report|comparison)"\s*:')
# How much of an ordinary-named file is read for it.
REPORT_PEEK_BYTES = 1 << 20


def holds_a_report(path: str) -> bool:
    """Whether the file at ``path`` holds a bench report's member in its first MiB (unreadable: no)."""
    try:
        with open(path, "rb") as fh:
            return _REPORT_MEMBER.search(fh.read(REPORT_PEEK_BYTES)) is not None
    except OSError:
        return False


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
    paths: Sequence[str],
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    *,
    force_exclude: bool = False,
) -> list[str]:
    """Files to audit, in a deterministic order: arguments in the order given, each
    directory walked recursively and sorted; ``-`` is stdin.  A path named twice
    is audited once.  ``exclude`` adds to :data:`DEFAULT_EXCLUDE` and :data:`ORDINARY_FILES`;
    named files are kept whatever they match unless ``force_exclude``.
    """
    return survey(paths, include, exclude, force_exclude=force_exclude).paths


def survey(
    paths: Sequence[str],
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    *,
    force_exclude: bool = False,
) -> Discovery:
    """:func:`discover`, with which files only a walk found and what include/exclude left out."""
    rules = _Rules(include, (*DEFAULT_EXCLUDE, *exclude))
    out: list[str] = []
    named: set[str] = set()
    left_out: list[str] = []
    for raw in paths:
        if raw == STDIN:
            out.append(raw)
            named.add(raw)
            continue
        is_dir = os.path.isdir(raw)
        if not is_dir and not os.path.exists(raw):
            raise UsageError(f"no such file or directory: {raw}")
        if (
            force_exclude
            and not rules.named(raw, is_dir)
            and not (
                not is_dir
                and rules.ordinary_only(os.path.basename(raw), posix(os.path.normpath(raw)))
                and holds_a_report(raw)
            )
        ):
            left_out.append(raw.rstrip("/" + os.sep) + os.sep if is_dir else raw)
        elif is_dir:
            excluded: list[tuple[tuple[str, ...], str]] = []
            out.extend(_walk(raw, rules, excluded))
            left_out.extend(path for _, path in sorted(excluded))
        else:
            out.append(raw)
            named.add(path_key(raw))
    walked = frozenset(path_key(p) for p in out if p != STDIN) - named
    if len(paths) == 1:  # one walk never lists a path twice (each folder once, each name once in it)
        return Discovery(out, walked, left_out)
    unique: dict[str, str] = {}
    for path in out:
        unique.setdefault(path_key(path), path)
    # A file one walk left out but named too is audited, so not reported.
    left_out = [p for p in dict.fromkeys(left_out) if path_key(p) not in unique]
    return Discovery(list(unique.values()), walked, left_out)
