"""Which interpreter runs the experiment, what it can see, and on which device.

torch is never imported by the auditor: the chosen interpreter is asked in a
subprocess (its torch version, how many GPUs it sees, and the folders its
packages live in, which the sandbox must keep visible).
"""

from __future__ import annotations

import functools
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from .sandbox import SandboxUnavailable

DEVICES = ("auto", "cpu", "cuda")
# Variables that select or configure accelerators; passed through from the
# auditor's environment for GPU runs (the scrubbed sandbox sees nothing else).
DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")
# Deterministic cuBLAS (documented by NVIDIA and required by torch's
# use_deterministic_algorithms on CUDA).
CUBLAS_DETERMINISTIC = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}
PROBE_TIMEOUT_S = 180.0

_PROBE = r"""
import json, os, site, sys
paths = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
         os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))]
try:
    paths += site.getsitepackages()
except Exception:
    pass
paths += [p for p in sys.path if p and os.path.isabs(p)]
info = {"executable": sys.executable, "python": sys.version.split()[0], "paths": paths,
        "torch": None, "gpus": 0, "error": None}
try:
    import torch
    info["torch"] = torch.__version__
    info["gpus"] = torch.cuda.device_count() if torch.cuda.is_available() else 0
except Exception as exc:
    info["error"] = type(exc).__name__ + ": " + str(exc)[:300]
print("AUDITOR-PROBE " + json.dumps(info))
"""


class DeviceUnavailable(SandboxUnavailable):
    """``--device cuda`` was asked for but the chosen interpreter's torch sees no GPU."""


@dataclass(frozen=True)
class Interpreter:
    """What the chosen interpreter reported about itself."""

    path: str  # absolute path used to run the experiment
    python_version: str
    paths: tuple[str, ...]  # prefixes, site-packages, sys.path folders
    torch_version: str | None
    gpus: int
    torch_error: str | None


@dataclass(frozen=True)
class Device:
    kind: str  # "cpu" | "cuda"
    env: dict[str, str]
    device_nodes: tuple[str, ...]  # /dev entries to expose in the sandbox
    # RLIMIT_AS breaks CUDA, which reserves huge virtual address ranges; GPU
    # runs are capped on RLIMIT_DATA (private writable memory) instead.
    memory_resource: str  # "AS" | "DATA"


def resolve_python(python: str | None) -> str:
    """Absolute path of ``--python`` (default: the interpreter running the auditor)."""
    if not python:
        return sys.executable
    found = python if os.path.isabs(python) else shutil.which(python)
    if not found or not os.access(found, os.X_OK):
        raise SandboxUnavailable(f"--python {python!r} is not an executable interpreter")
    return os.path.abspath(found)


def probe_interpreter(python: str) -> Interpreter:
    """Ask ``python`` about itself; the GPU count follows the auditor's device variables."""
    visible = tuple((name, os.environ[name]) for name in DEVICE_VARIABLES if name in os.environ)
    return _probe(python, visible)


@functools.lru_cache(maxsize=8)
def _probe(python: str, visible: tuple[tuple[str, str], ...]) -> Interpreter:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", **dict(visible)}
    # An empty working folder: ``python -c`` puts the cwd on sys.path, and no
    # file of any workspace may be imported outside the sandbox.
    with tempfile.TemporaryDirectory(prefix="auditor-probe-") as empty:
        try:
            done = subprocess.run(
                [python, "-s", "-c", _PROBE], cwd=empty, env=env, stdin=subprocess.DEVNULL,
                capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailable(f"the interpreter {python!r} could not be started: {exc}") from None
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("AUDITOR-PROBE ")), None)
    if line is None:
        tail = (done.stderr or done.stdout)[-500:]
        raise SandboxUnavailable(f"the interpreter {python!r} did not answer the probe: {tail}")
    try:
        info = json.loads(line.split(" ", 1)[1])
        return Interpreter(
            path=python,
            python_version=str(info["python"]),
            paths=tuple(dict.fromkeys(str(p) for p in info["paths"])),
            torch_version=info["torch"],
            gpus=int(info["gpus"]),
            torch_error=info["error"],
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise SandboxUnavailable(f"the interpreter {python!r} gave an unreadable probe answer ({exc})") from None


def choose_device(requested: str, interpreter: Interpreter) -> Device:
    """``cpu`` hides every GPU; ``cuda`` requires one; ``auto`` is cuda when torch sees a GPU."""
    if requested not in DEVICES:
        raise SandboxUnavailable(f"--device must be one of {', '.join(DEVICES)}, not {requested!r}")
    if requested == "cuda" and interpreter.gpus == 0:
        why = (f"torch {interpreter.torch_version} sees no GPU" if interpreter.torch_version
               else f"torch cannot be imported ({interpreter.torch_error})")
        raise DeviceUnavailable(f"--device cuda needs a GPU, but in {interpreter.path} {why}")
    if requested == "cpu" or interpreter.gpus == 0:
        return Device("cpu", {"CUDA_VISIBLE_DEVICES": ""}, (), "AS")
    env = {name: os.environ[name] for name in DEVICE_VARIABLES if name in os.environ}
    env.update(CUBLAS_DETERMINISTIC)
    return Device("cuda", env, tuple(sorted(glob.glob("/dev/nvidia*"))), "DATA")
