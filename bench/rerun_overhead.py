"""The rerun's fixed overhead: the same experiment run bare and through ``auditor audit --rerun --no-cache``.

Usage: ``python bench/rerun_overhead.py [--seconds 9] [--kind sleep|train] [--repeat 3] [--write]``.

The experiment is a script that sleeps (``sleep``) or trains a small torch model
(``train``) for ``--seconds`` and prints a bench report.  The overhead is the
through-the-CLI wall time minus the bare wall time (the best of ``--repeat``
runs each): start-up of the auditor, finding bubblewrap, probing the interpreter,
staging the copy, the sandbox, and the comparison.  Goal: under 1 s.  ``--write``
replaces the overhead section of docs/rerun.md with the table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = "Стенд-проверка (stage-2) · промт оператора:\n\n(универсальный)\n\nОтвет агента:\n\n"
GOAL_S = 1.0
BEGIN, END = "<!-- rerun-overhead:begin -->", "<!-- rerun-overhead:end -->"

SCRIPT = """import json, sys, time
SECONDS = float(sys.argv[1])
start = time.monotonic()
if sys.argv[2] == "train":
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 8), torch.randn(64, 1)
    while time.monotonic() - start < SECONDS:
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
else:
    time.sleep(SECONDS)
with open("report.json") as f:
    print(f.read())
"""
CLAIM = ROOT / "fixtures" / "experiments" / "clip_honest" / "answer.txt"


def make_workspace(folder: Path, seconds: float, kind: str) -> Path:
    """A workspace whose answer (clip_honest's) reruns ``run.py``, which prints the claimed report."""
    text = CLAIM.read_text(encoding="utf-8")
    answer = json.loads(text[text.index("{") :])
    (folder / "run.py").write_text(SCRIPT)
    (folder / "report.json").write_text(json.dumps(answer["bench_report"]))
    answer.update(how_to_run=f"python3 run.py {seconds} {kind}", files=["run.py", "report.json"])
    (folder / "answer.txt").write_text(HEADER + json.dumps(answer, indent=1), encoding="utf-8")
    return folder / "answer.txt"


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(seconds: float, kind: str, repeat: int) -> dict:
    """Median wall times, bare and through the CLI, and their difference."""
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as scratch:
        folder = Path(scratch)
        answer = make_workspace(folder, seconds, kind)
        bare_argv = [sys.executable, "run.py", str(seconds), kind]
        cli_argv = [sys.executable, "-m", "auditor", "audit", str(answer), "--rerun", "--no-cache"]
        cli_argv += ["--device", "cpu", "--quiet", "--cache-dir", str(folder / "cache")]
        bare = min(timed(bare_argv, folder) for _ in range(repeat))
        cli = min(timed(cli_argv, folder) for _ in range(repeat))
    return {"kind": kind, "seconds": seconds, "bare_s": bare, "rerun_s": cli, "overhead_s": cli - bare}


def table(rows: list[dict]) -> str:
    lines = [
        "| experiment | bare | `--rerun --no-cache` | overhead | goal | |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        ok = "PASS" if r["overhead_s"] < GOAL_S else "FAIL"
        lines.append(
            f"| {r['kind']} {r['seconds']:g} s | {r['bare_s']:.2f} s | {r['rerun_s']:.2f} s | "
            f"{r['overhead_s']:.2f} s | < {GOAL_S:g} s | {ok} |"
        )
    return "\n".join(lines)


def write_into(doc: Path, text: str) -> None:
    body = doc.read_text(encoding="utf-8")
    start, end = body.index(BEGIN) + len(BEGIN), body.index(END)
    doc.write_text(body[:start] + "\n" + text + "\n" + body[end:], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=9.0)
    parser.add_argument("--kind", choices=["sleep", "train", "both"], default="both")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="write the table into docs/rerun.md")
    args = parser.parse_args()
    kinds = ["sleep", "train"] if args.kind == "both" else [args.kind]
    rows = [measure(args.seconds, kind, args.repeat) for kind in kinds]
    text = table(rows)
    print(text)
    if args.write:
        write_into(ROOT / "docs" / "rerun.md", text)


if __name__ == "__main__":
    main()
