"""Which interpreter runs the experiment, what it can see, and on which device.

torch is never imported by the auditor, and the chosen interpreter never runs
on the host: it is asked about itself (its torch version, how many GPUs it
sees, its prefix and package folders) *inside the same bubblewrap sandbox*
the experiment gets, with the same limits, from an empty folder.  A ``.pth``
file in its packages therefore runs sandboxed like the experiment.

Before that, :func:`interpreter_refusal` refuses an interpreter that lies in
the workspace (as named or after links, itself or its prefix): an answer could
ship a virtual environment whose ``.pth`` files or ``sitecustomize`` run first.

What the sandbox binds back (read-only, where a mask would hide it) is only
the interpreter's own folders: its bin folder and prefix found from its path
(and a virtual environment's base interpreter named in ``pyvenv.cfg``), and,
of what the probe reports, the prefixes and site-packages folders that lie
inside those.  ``sys.path`` entries that ``.pth`` files add are never bound.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
import shutil
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from auditor.options.models import RerunDevice
from auditor.rerun import sandbox
from auditor.rerun.sandbox import SandboxUnavailable
from auditor.rerun.spec import MemoryResource
from auditor.rerun.stage import make_stage, remove_copy

DEVICES: tuple[RerunDevice, ...] = get_args(RerunDevice)
# The device an experiment runs on.
DeviceKind = Literal["cpu", "cuda"]
# Variables that select or configure accelerators; passed through from the
# auditor's environment for GPU runs (the scrubbed sandbox sees nothing else).
DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")
# Deterministic cuBLAS (documented by NVIDIA and required by torch's
# use_deterministic_algorithms on CUDA).
CUBLAS_DETERMINISTIC = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}
PROBE_TIMEOUT_S = 180.0
PROBE_TAG = "AUDITOR-PROBE "
MAX_PYVENV_CFG_BYTES = 64 * 1024

# Run as ``python -s -c _PROBE [gpus]`` in the sandbox: no user site, the cwd an empty copy.  torch
# is imported (a second or more) only with ``gpus``: where a GPU could be used and must be counted.
_PROBE = r"""
import json, os, site, sys
paths = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
try:
    paths += site.getsitepackages()
except Exception:
    pass
info = {"executable": sys.executable, "python": sys.version.split()[0], "paths": paths,
        "torch": None, "gpus": 0, "error": None}
try:
    if sys.argv[1:2] == ["gpus"]:
        import torch
        info["torch"] = torch.__version__
        info["gpus"] = torch.cuda.device_count() if torch.cuda.is_available() else 0
    else:  # no GPU to count: torch's version without the second it takes to import it
        import importlib.metadata, importlib.util
        if importlib.util.find_spec("torch") is None:
            raise ImportError("No module named 'torch'")
        info["torch"] = importlib.metadata.version("torch")
except Exception as exc:
    info["error"] = type(exc).__name__ + ": " + str(exc)[:300]
print("\n" + "AUDITOR-PROBE " + json.dumps(info), flush=True)
"""


class DeviceUnavailable(SandboxUnavailable):
    """``--device cuda`` was asked for but the chosen interpreter's torch sees no GPU."""


@dataclass(frozen=True)
class Interpreter:
    """What the chosen interpreter reported about itself."""

    path: str  # absolute path used to run the experiment
    paths: tuple[str, ...]  # folders to keep visible: its bin folder, prefixes, site-packages
    torch_version: str | None
    gpus: int
    torch_error: str | None
    reported: tuple[str, ...] = ()  # every folder the probe named (prefixes, site-packages)
    python_version: str | None = None  # what the interpreter reported (sys.version's first word)


@dataclass(frozen=True)
class Device:
    kind: DeviceKind
    env: dict[str, str]
    device_nodes: tuple[str, ...]  # /dev entries to expose in the sandbox
    # RLIMIT_AS breaks CUDA, which reserves huge virtual address ranges; GPU
    # runs are capped on RLIMIT_DATA (private writable memory) instead.
    memory_resource: MemoryResource


def resolve_python(python: str | None) -> str:
    """Absolute path of ``--python`` (default: the interpreter running the auditor)."""
    if not python:
        return sys.executable
    found = python if os.path.isabs(python) else shutil.which(python)
    if not found or not os.access(found, os.X_OK):
        raise SandboxUnavailable(f"--python {python!r} is not an executable interpreter")
    return os.path.abspath(found)


# -- where the interpreter lives, found without running it --------------------------------------


def interpreter_folders(python: str) -> tuple[str, ...]:
    """The interpreter's bin folders and prefixes, as named and after links, and its venv's base's.

    Found from paths and ``pyvenv.cfg`` only: nothing is executed.
    """
    found: list[str] = []
    for path in dict.fromkeys((os.path.abspath(python), os.path.realpath(python))):
        bin_dir = os.path.dirname(path)
        prefix = os.path.dirname(bin_dir) if os.path.basename(bin_dir) in ("bin", "Scripts") else bin_dir
        found += [bin_dir, prefix]
        home = _venv_home(bin_dir, prefix)
        if home:
            for base in dict.fromkeys((os.path.abspath(home), os.path.realpath(home))):
                found += [base, os.path.dirname(base) if os.path.basename(base) in ("bin", "Scripts") else base]
    return tuple(p for p in dict.fromkeys(found) if p and p != "/")


def _venv_home(bin_dir: str, prefix: str) -> str | None:
    """``home`` of the ``pyvenv.cfg`` beside or above the interpreter (a virtual environment's base)."""
    for folder in (bin_dir, prefix):
        try:
            with open(os.path.join(folder, "pyvenv.cfg"), "rb") as f:
                text = f.read(MAX_PYVENV_CFG_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip().lower() == "home" and os.path.isabs(value.strip()):
                return value.strip()
        return None
    return None


def interpreter_refusal(python: str, roots: Iterable[str], interpreter: Interpreter | None = None) -> str | None:
    """Why ``python`` may not run this answer's experiment: it lies inside the workspace; else None.

    Checks the interpreter as named and its real path, the folders
    :func:`interpreter_folders` finds and, once probed, the prefixes and
    package folders it reported; each as named and after links.
    """
    roots = [r for r in dict.fromkeys(os.path.abspath(r) for r in roots)]
    checks = [("path", os.path.abspath(python)), ("real path", os.path.realpath(python))]
    checks += [("folder", p) for p in interpreter_folders(python)]
    if interpreter is not None:
        checks += [("reported folder", p) for p in interpreter.reported]
    for what, path in checks:
        for candidate in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
            root = next((r for r in roots if _under(candidate, r)), None)
            if root is not None:
                return (
                    f"the interpreter {python!r} lies inside the workspace {root!r} (its {what} {candidate!r}): "
                    "an interpreter or virtual environment shipped in the workspace could run the answer's code "
                    "before the experiment, so it is never run; nothing was run. Pass --python with an "
                    "interpreter outside the workspace"
                )
    return None


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


# -- asking the interpreter, in the sandbox -----------------------------------------------------

_DEFAULT = object()
_cache: dict[tuple, Interpreter] = {}
_cache_lock = threading.Lock()


def probe_interpreter(
    python: str, bwrap: object = _DEFAULT, limits: sandbox.Limits | None = None, *, gpus: bool = True
) -> Interpreter:
    """Ask ``python`` about itself inside the sandbox; the GPU count follows the auditor's device variables.

    Without ``gpus`` torch is not imported: its version is read from its package
    metadata and the GPU count is 0 (for ``--device cpu``, or a host without GPUs).

    ``bwrap`` defaults to :func:`sandbox.find_bubblewrap`; None runs the probe
    without isolation (``--unsafe-no-sandbox`` only).  ``limits`` are the
    run's (the probe gets :data:`PROBE_TIMEOUT_S` as its timeout).  The answer
    is cached per interpreter, device variables and sandbox mode.
    """
    if bwrap is _DEFAULT:
        bwrap = sandbox.find_bubblewrap()
    visible = tuple((name, os.environ[name]) for name in DEVICE_VARIABLES if name in os.environ)
    key = (python, visible, repr(bwrap), gpus)  # by value: find_bubblewrap's answer may be made again
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        found = _probe(python, visible, bwrap, limits, gpus)  # type: ignore[arg-type]
        _cache[key] = found
        return found


def clear_probe_cache() -> None:
    with _cache_lock:
        _cache.clear()


def _probe(
    python: str,
    visible: tuple[tuple[str, str], ...],
    bwrap: sandbox.Bubblewrap | None,
    limits: sandbox.Limits | None,
    gpus: bool = True,
) -> Interpreter:
    nodes = gpu_device_nodes()
    resource: MemoryResource = "DATA" if nodes else "AS"
    base = limits or sandbox.Limits(timeout=PROBE_TIMEOUT_S, memory_bytes=8 * sandbox.GiB)
    limits = dataclasses.replace(base, timeout=PROBE_TIMEOUT_S, memory_resource=resource)
    folders = interpreter_folders(python)
    stage = make_stage(PROBE_TIMEOUT_S)  # empty: ``python -c`` puts the cwd on sys.path
    try:
        experiment = sandbox.Experiment(
            python=python,
            command=[python, "-s", "-c", _PROBE, *(["gpus"] if gpus else [])],
            stage=stage,
            report_name="auditor-probe.json",
            device_env=dict(visible),
            device_nodes=nodes,
            keep_paths=folders,
        )
        try:
            outcome = sandbox.run(bwrap, experiment, limits)
        except OSError as exc:
            raise SandboxUnavailable(f"the interpreter {python!r} could not be started: {exc}") from None
    finally:
        remove_copy(stage)
    line = next((ln for ln in reversed(outcome.stdout.splitlines()) if ln.startswith(PROBE_TAG)), None)
    if line is None:  # the tag is printed last: with it, the probe got through whatever the exit status
        why = (
            "timed out"
            if outcome.timed_out
            else f"was killed by {outcome.signal}"
            if outcome.signal
            else f"exited with code {outcome.exit_code}"
        )
        tail = (outcome.stderr.strip() or outcome.stdout.strip())[-500:]
        raise SandboxUnavailable(f"the interpreter {python!r} did not answer the probe in the sandbox ({why}): {tail}")
    try:
        info = json.loads(line[len(PROBE_TAG) :])
        reported = tuple(dict.fromkeys(str(p) for p in info["paths"] if isinstance(p, str) and os.path.isabs(p)))
        return Interpreter(
            path=python,
            paths=keep_paths(python, folders, reported),
            torch_version=info["torch"] if isinstance(info["torch"], str) else None,
            gpus=int(info["gpus"]),
            torch_error=info["error"] if isinstance(info["error"], str) else None,
            reported=reported,
            python_version=info.get("python") if isinstance(info.get("python"), str) else None,
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise SandboxUnavailable(f"the interpreter {python!r} gave an unreadable probe answer ({exc})") from None


def keep_paths(python: str, folders: tuple[str, ...], reported: tuple[str, ...]) -> tuple[str, ...]:
    """What the experiment's sandbox binds back: the bin folders, and reported folders inside ``folders``.

    A reported folder outside every folder the interpreter's path leads to
    (one a ``.pth`` file or a tampered probe could name) is dropped.
    """
    own = [os.path.dirname(os.path.abspath(python)), os.path.dirname(os.path.realpath(python))]
    inside = [
        p for p in reported if any(_under(c, f) for c in (os.path.abspath(p), os.path.realpath(p)) for f in folders)
    ]
    return tuple(dict.fromkeys(own + inside))


# What CUDA needs of /dev: the control node, unified memory and the GPUs themselves.
# Left out on purpose: nvidia-uvm-tools (profiling counters of every process),
# nvidia-modeset (display), nvidia-caps/ (MIG and admin capabilities) and
# nvidia-nvswitch* (fabric management).
_CUDA_NODES = re.compile(r"/dev/nvidia(?:ctl|-uvm|[0-9]+)")


def gpu_device_nodes() -> tuple[str, ...]:
    """The /dev/nvidia* nodes a CUDA run needs, and no more."""
    return tuple(sorted(node for node in glob.glob("/dev/nvidia*") if _CUDA_NODES.fullmatch(node)))


def choose_device(requested: str, interpreter: Interpreter) -> Device:
    """``cpu`` hides every GPU; ``cuda`` requires one; ``auto`` is cuda when torch sees a GPU."""
    if requested not in DEVICES:
        raise SandboxUnavailable(f"--device must be one of {', '.join(DEVICES)}, not {requested!r}")
    if requested == "cuda" and interpreter.gpus == 0:
        why = (
            f"torch {interpreter.torch_version} sees no GPU"
            if interpreter.torch_version
            else f"torch cannot be imported ({interpreter.torch_error})"
        )
        raise DeviceUnavailable(f"--device cuda needs a GPU, but in {interpreter.path} {why}")
    if requested == "cpu" or interpreter.gpus == 0:
        return Device("cpu", {"CUDA_VISIBLE_DEVICES": ""}, (), "AS")
    env = {name: os.environ[name] for name in DEVICE_VARIABLES if name in os.environ}
    env.update(CUBLAS_DETERMINISTIC)
    return Device("cuda", env, gpu_device_nodes(), "DATA")
