"""Find the files an answer names, refuse the ones that lead outside, copy the rest.

The workspace is ``--workspace`` or, by default, the transcript's folder.  Every
name in ``files`` (and the script of ``how_to_run``) must be a regular file
inside it after symlinks are resolved.  The run happens on a fresh copy in a
temporary folder, so the experiment can never change the originals.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import Finding, finding
from .command import CommandRefused, relative_name

# The report the script writes.  The shipped copy is left out of the run's
# copy, so a script that writes nothing cannot pass off the old file as new.
REPORT_NAME = "bench_report.json"
MAX_FILES = 10_000
MAX_WORKSPACE_BYTES = 2 * 1024**3


@dataclass
class Workspace:
    """The validated files of one answer: relative name -> resolved source path."""

    root: Path
    files: dict[str, Path] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    @property
    def shipped_report(self) -> Path | None:
        return self.files.get(REPORT_NAME)


def workspace_root(transcript_path: str | None, workspace: str | None) -> Path | None:
    """``workspace`` if given, else the transcript's folder; None for stdin without one."""
    if workspace:
        return Path(workspace)
    if transcript_path:
        return Path(transcript_path).resolve().parent
    return None


def collect_files(root: Path, names: object, script: str | None) -> Workspace:
    """Validate ``names`` (the answer's ``files``) plus ``script`` against ``root``.

    Problems become findings: R802 for names that are refused, R801 for names
    that do not exist.  ``script`` was already validated by the command parser.
    """
    ws = Workspace(root=root)
    try:
        real_root = root.resolve(strict=True)
    except OSError:
        ws.findings.append(finding("R801", f"workspace folder {str(root)!r} does not exist", pointer="/files"))
        return ws
    ws.root = real_root
    entries = _named_entries(names, ws)
    if script is not None and script not in {name for name, _ in entries}:
        entries.append((script, "/how_to_run"))
    total = 0
    for name, pointer in entries:
        source = _resolve_inside(real_root, name, pointer, ws)
        if source is not None:
            ws.files[name] = source
            total += source.stat().st_size
    if total > MAX_WORKSPACE_BYTES:
        ws.findings.append(
            finding("R802", f"the files add up to {total} bytes, over the {MAX_WORKSPACE_BYTES}-byte limit",
                    pointer="/files", claimed=total, recomputed=MAX_WORKSPACE_BYTES)
        )
    return ws


def _named_entries(names: object, ws: Workspace) -> list[tuple[str, str]]:
    """(normalised name, JSON pointer) for each acceptable entry of ``files``."""
    if names is None:
        return []
    if not isinstance(names, list):
        ws.findings.append(finding("R802", "files is not a list of file names", pointer="/files"))
        return []
    if len(names) > MAX_FILES:
        ws.findings.append(finding("R802", f"files lists {len(names)} entries; at most {MAX_FILES} are copied",
                                   pointer="/files"))
        return []
    entries: list[tuple[str, str]] = []
    for index, name in enumerate(names):
        pointer = f"/files/{index}"
        try:
            entries.append((relative_name(name), pointer))
        except CommandRefused as exc:
            ws.findings.append(finding("R802", str(exc), pointer=pointer, claimed=name))
    return entries


def _resolve_inside(root: Path, name: str, pointer: str, ws: Workspace) -> Path | None:
    """The real path of ``root/name`` if it is a regular file inside ``root``."""
    candidate = root / name
    if not os.path.lexists(candidate):
        ws.findings.append(finding("R801", f"{name!r} is not in the workspace {str(root)!r}", pointer=pointer,
                                   claimed=name))
        return None
    real = candidate.resolve()
    if not real.is_relative_to(root):
        ws.findings.append(finding("R802", f"{name!r} leads outside the workspace (to {str(real)!r})",
                                   pointer=pointer, claimed=name, recomputed=str(real)))
        return None
    try:
        mode = real.stat().st_mode
    except OSError:  # a dangling symlink inside the workspace
        ws.findings.append(finding("R801", f"{name!r} is a broken link", pointer=pointer, claimed=name))
        return None
    if not stat.S_ISREG(mode):
        # Directories would need their own walk and checks; FIFOs and devices
        # would block or leak the host's data, so only plain files are copied.
        ws.findings.append(finding("R802", f"{name!r} is not a regular file; list the files themselves",
                                   pointer=pointer, claimed=name))
        return None
    return real


def copy_for_run(ws: Workspace) -> Path:
    """Copy the validated files (all but the shipped report) to a fresh temporary folder."""
    target = Path(tempfile.mkdtemp(prefix="auditor-rerun-"))
    try:
        for name, source in ws.files.items():
            if name == REPORT_NAME:
                continue
            dest = target / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
    except BaseException:
        remove_copy(target)
        raise
    return target


def remove_copy(path: Path) -> None:
    """Delete a run's copy, even folders the experiment made read-only.

    Links are never followed: the experiment may have planted a link to a host
    folder, and ``chmod`` follows links.
    """
    if not path.is_symlink() and path.is_dir():
        os.chmod(path, 0o700)
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            sub = os.path.join(dirpath, name)
            if not os.path.islink(sub):
                try:
                    os.chmod(sub, 0o700)
                except OSError:
                    pass
    shutil.rmtree(path, ignore_errors=True)
