"""Compare what the rerun produced with what the answer claims (R804-R807).

Pure functions over decoded JSON values and per-seed lists; the only I/O is
reading the regenerated report (never following links the experiment planted).

Every numeric path is overflow-safe: a report is JSON that the experiment (or
the agent, for a shipped file) wrote, so it may hold integers of any length
(``10**400`` has no float), NaN or Infinity.  Such a value is a finding that
names it (R804 for the rerun's per-seed values, R806 for a shipped report),
never an exception, and no non-finite number reaches the ``rerun`` record.
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.answer.model import is_number
from auditor.files.paths import REPORT_NAME
from auditor.findings import Finding
from auditor.options.models import AuditOptions
from auditor.parse.pointers import join_pointer
from auditor.parse.strings import plural
from auditor.rules.rerun import R804, R805, R806
from auditor.stats.summary import NonFiniteStatistics, Recomputed, recompute
from auditor.stats.verdicts import Verdict, classify_verdict

ARMS = ("baseline", "idea")
# Same code, same seeds, same device kind: only float reassociation differs.
RTOL_SAME_DEVICE = 1e-5
# CPU against GPU kernels: different reduction orders, TF32, fused ops.
RTOL_OTHER_DEVICE = 1e-2
# The shipped file and the embedded report are the same numbers printed twice.
RTOL_SHIPPED = 1e-9
# A report that does not name its device is presumed to come from CPU: the
# benchmark's tracks are sized for CPU, and that is how the agents ran them.
PRESUMED_CLAIM_DEVICE = "cpu"
SHOWN = 4  # seeds or places listed in a message


def device_kind(name: object) -> str | None:
    """``"cuda:0"``, ``"GPU"`` -> ``"cuda"``; ``"cpu"`` -> ``"cpu"``; None when not named."""
    if not isinstance(name, str) or not name.strip():
        return None
    text = name.strip().lower()
    if text.startswith(("cuda", "gpu", "nvidia")):
        return "cuda"
    return text.split(":", 1)[0]


def claimed_device(document: dict[str, Any]) -> str | None:
    report = document.get("bench_report")
    for holder in (report if isinstance(report, dict) else {}, document):
        kind = device_kind(holder.get("device"))
        if kind:
            return kind
    return None


def choose_rtol(explicit: float | None, claim_device: str | None, rerun_device: str | None) -> float:
    if explicit is not None:
        return explicit
    same = (claim_device or PRESUMED_CLAIM_DEVICE) == rerun_device
    return RTOL_SAME_DEVICE if same else RTOL_OTHER_DEVICE


# -- reading the rerun's report ---------------------------------------------------------


def read_json_file(path: Path, max_bytes: int) -> tuple[Any, str | None]:
    """(value, None) or (None, why); refuses links, FIFOs and oversized files."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, "not written"
    except OSError as exc:
        return None, f"cannot be opened ({exc.strerror})"
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None, "is not a regular file"
        if info.st_size > max_bytes:
            return None, f"is {info.st_size} bytes, over the {max_bytes}-byte limit"
        data = f.read(max_bytes + 1)
    return parse_json_bytes(data)


def parse_json_bytes(data: bytes) -> tuple[Any, str | None]:
    """(value, None) or (None, why) for the bytes of a JSON file."""
    try:
        return json.loads(data.decode("utf-8-sig")), None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, f"is not valid JSON ({str(exc)[:200]})"


def as_report(value: Any) -> dict[str, Any] | None:
    """The bench report in an answer or a bare report; None for anything else."""
    if isinstance(value, dict) and isinstance(value.get("bench_report"), dict):
        return value["bench_report"]
    if isinstance(value, dict) and "baseline" in value and "idea" in value:
        return value
    return None


def report_from_stdout(stdout: str, options: AuditOptions) -> dict[str, Any] | None:
    """The bench report printed on stdout, found like an answer in a transcript."""
    from auditor.parse.transcript import locate

    if "{" not in stdout:
        return None
    located = locate(stdout, max_bytes=options.max_bytes, max_depth=options.max_depth)
    return as_report(located.document)


# -- per-seed comparison ------------------------------------------------------------------


def arm_values(report: dict[str, Any], arm: str) -> tuple[list[float] | None, str]:
    """Per-seed values of ``arm`` in either idea shape, and their pointer inside the report.

    None when they are missing or one is not a finite number (see :func:`per_seed_values`).
    """
    values, pointer, _ = per_seed_values(report, arm)
    return values, pointer


def per_seed_values(report: dict[str, Any], arm: str) -> tuple[list[float] | None, str, str | None]:
    """(values, pointer, None), or (None, pointer, why) when they are missing or one is unusable:
    not a number, NaN or infinite, or an integer beyond the float range."""
    node = report.get(arm)
    if not isinstance(node, dict):
        return None, f"/{arm}", "has no per-seed values"
    stats, pointer = (node["full"], f"/{arm}/full") if isinstance(node.get("full"), dict) else (node, f"/{arm}")
    values = stats.get("per_seed")
    pointer += "/per_seed"
    if not isinstance(values, list):
        return None, pointer, "has no per-seed values"
    out = []
    for index, value in enumerate(values):
        number = as_finite_float(value)
        if number is None:
            return None, pointer, f"has per-seed value {index} = {describe_number(value)}, not a finite number"
        out.append(number)
    return out, pointer, None


def as_finite_float(value: Any) -> float | None:
    """``value`` as a finite float; None for non-numbers, NaN, infinities and integers past the float range."""
    if not is_number(value):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def describe_number(value: Any, limit: int = 24) -> str:
    """A short, safe description of a JSON value for a message (a 400-digit integer is not printed whole)."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            text = str(abs(value))
        except ValueError:  # past Python's int-to-str digit limit (json.loads refuses those anyway)
            return f"an integer of {value.bit_length()} bits, beyond the float range"
        if len(text) <= limit:
            return str(value)
        beyond = ", beyond the float range" if as_finite_float(value) is None else ""
        return f"{'-' if value < 0 else ''}{text[:6]}… (a {len(text)}-digit integer{beyond})"
    if isinstance(value, float):
        return repr(value)
    return _short(value, limit)


def relative_difference(a: float, b: float) -> float:
    """|a - b| / max(|a|, |b|): 0 for equal values, at most 2 for finite ones (never overflows)."""
    if a == b:
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    scale = max(abs(a), abs(b))
    difference = abs(a - b)
    if math.isinf(difference):  # opposite signs near the float range
        return abs(a / scale - b / scale)
    return difference / scale


@dataclass
class ArmComparison:
    arm: str
    pointer: str  # of the claimed per-seed list, in the answer
    max_rel_diff: float | None = None
    differing: list[tuple[int, float, float]] = field(default_factory=list)  # (seed index, claimed, rerun)
    problem: str | None = None  # counts differ or values missing

    @property
    def reproduced(self) -> bool:
        return self.problem is None and not self.differing


def compare_arm(arm: str, claimed: dict[str, Any], rerun: dict[str, Any], rtol: float) -> ArmComparison:
    claimed_values, pointer, claimed_problem = per_seed_values(claimed, arm)
    rerun_values, _, rerun_problem = per_seed_values(rerun, arm)
    result = ArmComparison(arm, "/bench_report" + pointer)
    if claimed_values is None or rerun_values is None:
        who, why = ("answer", claimed_problem) if claimed_values is None else ("rerun", rerun_problem)
        result.problem = f"the {who}'s {arm} {why}"
        return result
    if len(claimed_values) != len(rerun_values):
        result.problem = f"the answer has {len(claimed_values)} {arm} seeds, the rerun {len(rerun_values)}"
    pairs = list(zip(claimed_values, rerun_values))
    diffs = [relative_difference(c, r) for c, r in pairs]
    result.max_rel_diff = max(diffs, default=None)
    result.differing = [(i, c, r) for i, ((c, r), d) in enumerate(zip(pairs, diffs)) if not d <= rtol]
    return result


def numbers_finding(cmp: ArmComparison, rtol: float) -> Finding | None:
    """R804 for one arm, or None when it was reproduced."""
    if cmp.reproduced:
        return None
    if cmp.problem is not None:
        return R804.finding(f"{cmp.problem}: the rerun does not reproduce the claim", pointer=cmp.pointer)
    shown = "; ".join(f"seed {i}: claimed {c:.10g}, rerun {r:.10g}" for i, c, r in cmp.differing[:SHOWN])
    more = f"; and {len(cmp.differing) - SHOWN} more" if len(cmp.differing) > SHOWN else ""
    return R804.finding(
        f"{cmp.arm}: {plural(len(cmp.differing), 'seed')} differ{'s' if len(cmp.differing) == 1 else ''} from the rerun beyond rtol {rtol:g} "
        f"(max relative difference {cmp.max_rel_diff:.3g}): {shown}{more}",
        pointer=cmp.pointer,
        claimed=[c for _, c, _ in cmp.differing],
        recomputed=[r for _, _, r in cmp.differing],
    )


# -- verdict ------------------------------------------------------------------------------


def rerun_statistics(claimed: dict[str, Any], rerun: dict[str, Any], options: AuditOptions) -> Recomputed | None:
    """The static recomputation (p-value, mean difference, verdict) on the rerun's per-seed numbers.

    None when they cannot be paired: missing, unequal counts, or too many seeds.
    """
    baseline, _ = arm_values(rerun, "baseline")
    idea, _ = arm_values(rerun, "idea")
    if not baseline or not idea or len(baseline) != len(idea):
        return None
    if len(baseline) > options.max_seeds or not all(map(math.isfinite, baseline + idea)):
        return None
    direction = claimed.get("metric_direction", rerun.get("metric_direction"))
    try:
        return recompute(
            baseline,
            idea,
            lower_is_better=direction != "higher is better",
            alpha=options.alpha,
            exact_max_n=options.exact_max_n,
            resamples=options.resamples,
            seed=options.random_seed,
        )
    except NonFiniteStatistics:  # values near the float range: R804 already says they differ
        return None


def rerun_verdict(claimed: dict[str, Any], rerun: dict[str, Any], options: AuditOptions) -> Verdict | None:
    """The verdict the static recomputation gives on the rerun's per-seed numbers."""
    statistics = rerun_statistics(claimed, rerun, options)
    return statistics.verdict if statistics is not None else None


def verdict_finding(claimed: dict[str, Any], verdict: Verdict | None) -> Finding | None:
    comparison = claimed.get("comparison")
    claimed_text = comparison.get("verdict") if isinstance(comparison, dict) else None
    claimed_verdict = classify_verdict(claimed_text)
    if verdict is None or claimed_verdict is None or claimed_verdict is verdict:
        return None
    return R805.finding(
        f"the answer claims {claimed_text!r}, but the rerun's numbers give {verdict.value!r}",
        pointer="/bench_report/comparison/verdict",
        claimed=claimed_text,
        recomputed=verdict.value,
    )


# -- shipped report (R806) ----------------------------------------------------------------


def json_differences(a: Any, b: Any, pointer: str, out: list[tuple[str, Any, Any]], limit: int = 50) -> None:
    """Append (pointer, a's value, b's value) for each place where two JSON values differ."""
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            child = join_pointer(pointer, str(key))
            if key not in a or key not in b:
                out.append((child, a.get(key, "<absent>"), b.get(key, "<absent>")))
            else:
                json_differences(a[key], b[key], child, out, limit)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append((pointer, f"{len(a)} items", f"{len(b)} items"))
        for index, (x, y) in enumerate(zip(a, b)):
            json_differences(x, y, f"{pointer}/{index}", out, limit)
    elif is_number(a) and is_number(b):
        if not same_number(a, b):
            out.append((pointer, a, b))
    elif a != b or type(a) is not type(b):
        out.append((pointer, a, b))


def same_number(a: float, b: float) -> bool:
    """Equal, both NaN, or within :data:`RTOL_SHIPPED`; exact for integers of any size (no overflow)."""
    if a == b:  # int == float compares exactly in Python, whatever the size
        return True
    try:
        x, y = float(a), float(b)
    except OverflowError:  # an integer past the float range, unequal to the other value
        return False
    return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=RTOL_SHIPPED)


def shipped_report_finding(document: dict[str, Any], shipped: Path, options: AuditOptions) -> Finding | None:
    """R806 when the workspace's bench_report.json is not the answer's embedded report."""
    embedded = document.get("bench_report")
    if not isinstance(embedded, dict):
        return None
    value, problem = read_json_file(shipped, options.max_bytes)
    if problem is not None:
        return R806.finding(f"the shipped {REPORT_NAME} {problem}", pointer="/bench_report")
    report = as_report(value)
    diffs: list[tuple[str, Any, Any]] = []
    json_differences(embedded, report if report is not None else value, "/bench_report", diffs)
    if not diffs:
        return None
    shown = "; ".join(f"{p}: answer {_shown(x)}, file {_shown(y)}" for p, x, y in diffs[:SHOWN])
    return R806.finding(
        f"the {REPORT_NAME} shipped in the workspace differs from the answer's bench_report "
        f"in {len(diffs)}{'+' if len(diffs) >= 50 else ''} place{'' if len(diffs) == 1 else 's'}: {shown}",
        pointer=diffs[0][0],
        claimed=diffs[0][1],
        recomputed=diffs[0][2],
    )


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: Any) -> str:
    return describe_number(value, 60) if isinstance(value, int) and not isinstance(value, bool) else _short(value)
