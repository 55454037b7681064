"""Whether a *discovered* ``pyproject.toml`` may set the gate's policy.

The audited agent writes the answer and the files beside it, so a configuration
file found upward from the working directory is untrusted when:

- it sits in the same folder as a transcript under audit: a file the run would
  audit under the *default* include/exclude (so the file's own ``exclude`` cannot
  hide the transcript beside it), or a file named on the command line;
- it lies below a folder named on the command line, or in a rerun's ``--workspace``
  (a named folder itself is judged by the transcripts directly in it, so a
  repository's root ``pyproject.toml`` applies to ``auditor audit .`` run there);
- it, or the link that leads to it, is owned by another user than the auditor's;
- group or others can write to it, or to its folder (unless the folder is sticky,
  as ``/tmp`` is: there others cannot replace a file they do not own).

An untrusted file is left unread as a whole (:mod:`auditor.options.config`); ``--config``
names a file explicitly and is never judged here.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from auditor.files.paths import STDIN

BESIDE = "it sits beside the transcripts under audit (an audited agent could have written it)"
INSIDE = "it lies inside a folder under audit (an audited agent could have written it)"


class Audited:
    """The folders holding transcripts of one run, worked out only when a candidate file asks."""

    def __init__(self, paths: Sequence[str] = (), workspace: str | None = None) -> None:
        self.paths = [p for p in paths if p != STDIN]
        self.workspace = workspace
        self._walked: dict[str, set[str]] = {}  # named folder -> the folders of its transcripts

    def claims(self, folder: str) -> str | None:
        """Why ``folder`` (a real path) is the audited agent's: a transcript of this run sits in it,
        or it lies below a folder named for audit; None when neither."""
        if self.workspace is not None and _within(folder, _real(self.workspace)):
            return BESIDE if folder == _real(self.workspace) else INSIDE
        for raw in self.paths:
            if not os.path.isdir(raw):
                # A named file's folder is its agent's workspace (the rerun's default): below it too.
                for home in _folders_of(raw):
                    if _within(folder, home):
                        return BESIDE if folder == home else INSIDE
                continue
            root = _real(raw)
            if folder != root and _within(folder, root):
                return INSIDE
            if folder == root and folder in self._walk(raw):
                return BESIDE
        return None

    def _walk(self, raw: str) -> set[str]:
        # The default walk: the configuration's own include/exclude must not hide the transcripts.
        if raw not in self._walked:
            from auditor.files.discovery import discover

            folders: set[str] = set()
            for path in discover([raw]):
                folders.update(_folders_of(path))
            self._walked[raw] = folders
        return self._walked[raw]


def _real(path: str) -> str:
    return os.path.realpath(path)


def _folders_of(path: str) -> set[str]:
    """The folder a file is listed in and, when it is a link, the folder it leads to."""
    return {_real(os.path.dirname(os.path.abspath(path)) or "."), os.path.dirname(_real(path))}


def _within(folder: str, root: str) -> bool:
    return folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)


def untrusted(path: Path, audited: Audited | None) -> str | None:
    """Why the discovered file at ``path`` must not be read, or None when it may be."""
    try:
        link, target = os.lstat(path), os.stat(path)
        folder = os.stat(path.parent)
    except OSError as exc:
        return f"it cannot be inspected ({exc.strerror or exc})"
    me = os.geteuid()
    for what, owner in (("it", target.st_uid), ("the link to it", link.st_uid)):
        if owner != me:
            return f"{what} is owned by uid {owner}, not by the auditor's user (uid {me})"
    if target.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others can write to it (mode {stat.S_IMODE(target.st_mode):04o})"
    if folder.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not folder.st_mode & stat.S_ISVTX:
        return (
            f"group or others can write to its folder (mode {stat.S_IMODE(folder.st_mode):04o}), "
            "so they could replace it"
        )
    return audited.claims(_real(str(path.parent))) if audited is not None else None
