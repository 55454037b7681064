"""The auditor's probe in the experiment's interpreter: what the run did, read from a signed record.

:data:`HOOK` (the source of :mod:`.hook`, never imported here) runs first in
the experiment's process; :func:`probed_argv` builds that command.  The
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

from pathlib import Path
from typing import Any, Literal

HOOK = Path(__file__).with_name("hook.py").read_text(encoding="utf-8")
ActivityStatus = Literal["trained", "no training", "not observed"]
COUNTS = ("optimizer_steps", "forward_calls", "backward_calls")


def probed_argv(python: str, script: str, args: list[str] | tuple[str, ...]) -> list[str]:
    """``python SCRIPT ARGS`` run under the probe: ``-I`` keeps the workspace off ``sys.path`` until it is in."""
    return [python, "-I", "-c", HOOK, script, *args]


def activity(said: dict | None) -> dict[str, Any]:
    """The ``rerun.activity`` object from the supervisor's check of the probe's record (None: unprobed)."""
    if not isinstance(said, dict):
        return _not_observed("the run was not probed")
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
    if tampered:
        out["why"] = "the probe was undone: " + "; ".join(tampered[:4])
    elif record.get("torch_imported") is not True:
        others = f" ({', '.join(out['frameworks'])} imported)" if out["frameworks"] else ""
        out["why"] = f"torch was never imported{others}: training is only observed in torch"
    elif any(counts[n] is None for n in COUNTS):
        out["why"] = "the probe's counts are unreadable"
    elif sum(counts.values()) == 0:
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
