"""The interpreter's probe answer, remembered beside the rerun cache.

Probing imports torch in the sandbox, which takes seconds: on a cache hit it
would be most of the time left.  Its answer (torch version, GPU count, package
folders) is kept under a key of what it depends on that can be seen without
running anything: the interpreter as named and resolved, its file's size,
change time and inode, the device variables, the GPU device nodes, the
sandbox mode and the auditor's version.  Installing or removing a package
changes its folder, so the entry also records each reported folder's change
time and inode, and is not used when one differs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.rerun.cache import digest, load_entry, store_entry
from auditor.rerun.device import DEVICE_VARIABLES, Interpreter, gpu_device_nodes

KEY_PREFIX = "probe-"


def probe_key(python: str, bwrap: object, gpus: bool = True) -> str:
    real = os.path.realpath(python)
    material = {
        "kind": "probe",
        "auditor": __version__,
        "python": python,
        "real": real,
        "file": _stamp(real),
        "visible": [[name, os.environ[name]] for name in DEVICE_VARIABLES if name in os.environ],
        "nodes": list(gpu_device_nodes()),
        "sandbox": repr(bwrap),
        # Asked to count GPUs (torch imported), or not: the same answer where the host has no GPU nodes.
        "gpus": gpus and bool(gpu_device_nodes()),
    }
    return KEY_PREFIX + digest(material)


def recall(folder: Path, python: str, bwrap: object, gpus: bool = True) -> Interpreter | None:
    """The remembered probe answer, when nothing it depends on has changed since; else None."""
    value = load_entry(folder, probe_key(python, bwrap, gpus))
    if not isinstance(value, dict) or set(value) != {"interpreter", "folders"}:
        return None
    folders = value["folders"]
    if not isinstance(folders, dict) or any(_stamp(path) != stamp for path, stamp in folders.items()):
        return None
    return _interpreter_from_json(value["interpreter"])


def remember(folder: Path, python: str, bwrap: object, interpreter: Interpreter, gpus: bool = True) -> None:
    """Keep ``interpreter`` (best effort: an unwritable cache is no error)."""
    folders = sorted({*interpreter.paths, *interpreter.reported})
    value = {
        "interpreter": {
            "path": interpreter.path,
            "paths": list(interpreter.paths),
            "torch_version": interpreter.torch_version,
            "gpus": interpreter.gpus,
            "torch_error": interpreter.torch_error,
            "reported": list(interpreter.reported),
            "python_version": interpreter.python_version,
        },
        "folders": {path: _stamp(path) for path in folders},
    }
    store_entry(folder, probe_key(python, bwrap, gpus), value)


def _stamp(path: str) -> list[int] | None:
    """What changes when a file or folder is replaced or (for a folder) an entry is added or removed."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_ino, info.st_size]


def _interpreter_from_json(value: Any) -> Interpreter | None:
    try:
        return Interpreter(
            path=str(value["path"]),
            paths=tuple(map(str, value["paths"])),
            torch_version=value["torch_version"],
            gpus=int(value["gpus"]),
            torch_error=value["torch_error"],
            reported=tuple(map(str, value["reported"])),
            python_version=value["python_version"] if isinstance(value.get("python_version"), str) else None,
        )
    except (KeyError, TypeError, ValueError):
        return None
