"""The auditor's probe in the experiment's interpreter: what the run did, read from a signed record.

:data:`HOOK` (the source of :mod:`.hook`, never imported here) runs first in
the experiment's process; :func:`probed_argv` builds that command.  The command
holds only :data:`BOOTSTRAP`, a few fixed lines (what ``ps`` shows): they read
the probe's source from the key pipe the supervisor fills (:func:`key_pipe_bytes`:
the source's length, the source, then the run's key, which the probe itself
reads) and run it.  Under ``-I`` nothing in the workspace is on ``sys.path``
before the probe is in place, and the source comes from the auditor through an
inherited pipe, never from a path the workspace could shadow.  The
sandbox's supervisor checks the record the probe signs (see
``auditor/rerun/supervisor.py``) and :func:`activity` turns the checked record
into the ``rerun.activity`` object:

* ``"trained"``: torch was imported and an optimizer step (with gradients), a
  module forward call or an autograd backward pass was seen;
* ``"no training"``: torch was imported, the probe stayed in place, and none of
  these happened (R808);
* ``"not observed"``: torch was never imported (another framework, or none),
  or the record is missing, unsigned, or says the probe was undone.  A script
  that tampers with the probe can at worst reach this, never ``"trained"``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

HOOK = Path(__file__).with_name("hook.py").read_text(encoding="utf-8")
HOOK_DIGEST = hashlib.sha256(HOOK.encode("utf-8")).hexdigest()  # in the rerun cache's key
# Run as ``python -I -c BOOTSTRAP SCRIPT ARGS``: reads the probe's source (its length in 8 ASCII digits, then
# the source) from the key pipe named by AUDITOR_PROBE and runs it; the key that follows is the probe's to read.
# Without the pipe the script is not run: an unprobed run would read as "not observed", a probe missing quietly.
BOOTSTRAP = """\
def _auditor_probe_source():
    import os
    spec = os.environ.get("AUDITOR_PROBE", "")
    fd = int(spec.split(",")[0]) if spec else -1
    def take(n):
        data = b""
        while len(data) < n:
            chunk = os.read(fd, n - len(data)) if fd >= 0 else b""
            if not chunk:
                raise SystemExit("auditor: the probe's source did not arrive; the script was not run")
            data += chunk
        return data
    return compile(take(int(take(8))), "<auditor probe>", "exec")
exec(_auditor_probe_source())
"""
ActivityStatus = Literal["trained", "no training", "not observed"]
COUNTS = ("optimizer_steps", "forward_calls", "backward_calls")


def probed_argv(python: str, script: str, args: list[str] | tuple[str, ...]) -> list[str]:
    """``python SCRIPT ARGS`` run under the probe: ``-I`` keeps the workspace off ``sys.path`` until it is in."""
    return [python, "-I", "-c", BOOTSTRAP, script, *args]


def key_pipe_bytes(source: bytes, key: bytes) -> bytes:
    """What the key pipe holds for :data:`BOOTSTRAP` (the supervisor, standard library only, writes the same)."""
    return b"%08d" % len(source) + source + key


def activity(said: dict | None) -> dict[str, Any]:
    """The ``rerun.activity`` object from the supervisor's check of the probe's record (None: unprobed)."""
    if not isinstance(said, dict):
        return _not_observed("the run was not probed")
    if said.get("status") == "invalid":  # a second or unsigned record: something wrote to the probe's channel
        return {**_not_observed(str(said.get("why") or "the probe's record is invalid")), "status": "undone"}
    if said.get("status") != "ok" or not isinstance(said.get("record"), dict):
        return _not_observed(str(said.get("why") or "the probe's record is missing"))
    record = said["record"]
    counts = {name: _count(record.get(name)) for name in COUNTS}
    out: dict[str, Any] = {
        "status": "not observed",
        "why": None,
        "torch_version": record.get("torch_version") if isinstance(record.get("torch_version"), str) else None,
        **counts,
        "devices": [str(d)[:40] for d in _list(record.get("devices"))][:16],
        "seeds_set": [_seed_entry(e) for e in _list(record.get("seeds_set"))][:64],
        "seeds_total": _count(record.get("seeds_total")) or 0,
        "seed_offset": _count(record.get("seed_offset")) or 0,
        "frameworks": [str(f)[:40] for f in _list(record.get("frameworks"))][:8],
    }
    tampered = [str(t)[:200] for t in _list(record.get("tampered"))]
    if tampered:  # the probe's own signed record says it was taken apart: evidence, not a lack of it
        out["status"], out["why"] = "undone", "the probe was undone: " + "; ".join(tampered[:4])
    elif record.get("torch_imported") is not True:
        others = f" ({', '.join(out['frameworks'])} imported)" if out["frameworks"] else ""
        out["why"] = f"torch was never imported{others}: training is only observed in torch"
    elif any(counts[n] is None for n in COUNTS):
        out["why"] = "the probe's counts are unreadable"
    elif not any(counts.values()):
        out["status"] = "no training"
    else:
        out["status"] = "trained"
    return out


def _not_observed(why: str) -> dict[str, Any]:
    return {
        "status": "not observed",
        "why": why,
        "torch_version": None,
        **dict.fromkeys(COUNTS),
        "devices": [],
        "seeds_set": [],
        "seeds_total": 0,
        "seed_offset": 0,
        "frameworks": [],
    }


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _seed_entry(entry: object) -> dict[str, Any]:
    entry = entry if isinstance(entry, dict) else {}
    return {
        "call": str(entry.get("call", ""))[:60],
        "seed": _plain(entry.get("seed")),
        "used": _plain(entry.get("used")),
    }


def _plain(value: object) -> Any:
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**64 else str(value)[:40]
    return str(value)[:64]
