"""Command line: a thin layer over the library.

``main(argv) -> int``: one function per command, one domain error
(:class:`AuditorError`) caught at the top.  Exit codes: 0 every transcript
passes, 1 any fails or could not be audited, 2 usage errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from . import __version__
from .errors import AuditorError, UsageError
from .findings import Severity
from .options import MiB, AuditOptions, RerunOptions

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

DEFAULT_INCLUDE = ("*.txt", "*.md", "*.json")
# Files that belong to an experiment's workspace, not transcripts.
WORKSPACE_FILES = ("bench_report.json",)


def _codes(text: str) -> list[str]:
    return [c.strip().upper() for c in text.split(",") if c.strip()]


def _fail_on(text: str) -> Severity | None:
    if text == "never":
        return None
    try:
        return Severity.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _probability(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text}")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    from .formats import FORMATS

    parser = _Parser(prog="auditor", description="Audit the claims AI research agents make about their ML experiments.")
    parser.add_argument("--version", action="version", version=f"auditor {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    audit = sub.add_parser("audit", help="audit transcripts (files, directories, or - for stdin)")
    audit.add_argument("paths", nargs="+", metavar="PATH")
    audit.add_argument("--format", choices=sorted(FORMATS), default="text")
    audit.add_argument("--select", type=_codes, action="extend", default=[], help="only these codes or prefixes")
    audit.add_argument("--ignore", type=_codes, action="extend", default=[], help="skip these codes or prefixes")
    audit.add_argument("--fail-on", type=_fail_on, default=Severity.ERROR, metavar="error|warning|info|never")
    audit.add_argument("--exit-zero", action="store_true", help="exit 0 even when transcripts fail")
    audit.add_argument("--alpha", type=_probability, default=0.05, help="significance level (default 0.05)")
    audit.add_argument("--mc-resamples", type=_positive_int, default=10_000, help="B assumed for Monte-Carlo p-values")
    audit.add_argument("--max-bytes", type=_positive_int, default=16 * MiB, help="largest input read, in bytes")
    audit.add_argument("--max-depth", type=_positive_int, default=64, help="deepest JSON nesting accepted")
    audit.add_argument("--max-seeds", type=_positive_int, default=10_000, help="most per-seed values recomputed")
    rr = audit.add_argument_group("rerun", "run the referenced experiment again in a sandbox")
    rr.add_argument("--rerun", action="store_true")
    rr.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    rr.add_argument("--workspace", help="folder holding the answer's files (default: the transcript's folder)")
    rr.add_argument("--timeout", type=float, default=600.0, help="wall-clock seconds (default 600)")
    rr.add_argument("--python", help="interpreter for the experiment (default: this one)")
    rr.add_argument("--rtol", type=float, help="relative tolerance per seed (default 1e-5, 1e-2 across devices)")
    rr.add_argument("--memory", type=float, default=8.0, help="memory cap in GiB (default 8)")
    rr.add_argument("--unsafe-no-sandbox", action="store_true", help="run without bubblewrap (trusted code only)")

    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--format", choices=("text", "json"), default="text")
    rule = sub.add_parser("rule", help="explain one rule")
    rule.add_argument("code")
    return parser


def _expand(paths: Sequence[str]) -> list[str]:
    """Files to audit: files as given, directories walked (sorted), ``-`` for stdin."""
    out: list[str] = []
    for raw in paths:
        if raw == "-":
            out.append(raw)
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                str(p)
                for p in path.rglob("*")
                if p.is_file() and p.name not in WORKSPACE_FILES and any(p.match(g) for g in DEFAULT_INCLUDE)
            )
            out.extend(found)
        elif path.exists():
            out.append(raw)
        else:
            raise UsageError(f"no such file or directory: {raw}")
    return out


def _options(args: argparse.Namespace) -> AuditOptions:
    return AuditOptions(
        alpha=args.alpha,
        mc_resamples=args.mc_resamples,
        max_bytes=args.max_bytes,
        max_depth=args.max_depth,
        max_seeds=args.max_seeds,
        select=tuple(args.select),
        ignore=tuple(args.ignore),
        fail_on=args.fail_on,
    )


def _rerun_options(args: argparse.Namespace) -> RerunOptions | None:
    if not args.rerun:
        return None
    return RerunOptions(
        device=args.device,
        workspace=args.workspace,
        timeout=args.timeout,
        python=args.python,
        rtol=args.rtol,
        memory_bytes=int(args.memory * 1024 * MiB),
        unsafe_no_sandbox=args.unsafe_no_sandbox,
    )


def cmd_audit(args: argparse.Namespace) -> int:
    from .audit import STATUS_PASS, audit_path
    from .formats import Run, writer

    options = _options(args)
    rerun = _rerun_options(args)
    results = tuple(audit_path(p, options, rerun=rerun) for p in _expand(args.paths))
    if not results:
        raise UsageError("no transcripts found in the given paths")
    run = Run(results)
    writer(args.format)(run, sys.stdout)
    sys.stdout.flush()
    if args.exit_zero or all(r.status == STATUS_PASS for r in results):
        return EXIT_OK
    return EXIT_FAIL


def cmd_rules(args: argparse.Namespace) -> int:
    import json

    from .findings import all_rules

    rules = all_rules()
    if args.format == "json":
        data = [
            {"code": r.code, "name": r.name, "severity": r.severity.value, "family": r.family, "summary": r.summary}
            for r in rules
        ]
        print(json.dumps(data, indent=2))
        return EXIT_OK
    width = max(len(r.name) for r in rules)
    for r in rules:
        print(f"{r.code}  {r.severity.value:<7}  {r.name:<{width}}  {r.summary}")
    return EXIT_OK


def cmd_rule(args: argparse.Namespace) -> int:
    from .findings import get_rule

    try:
        rule = get_rule(args.code.strip().upper())
    except KeyError:
        raise UsageError(f"unknown rule {args.code!r}; `auditor rules` lists them") from None
    print(f"# {rule.code} {rule.name} ({rule.family}, default severity {rule.severity.value})\n")
    print(rule.doc)
    return EXIT_OK


COMMANDS = {"audit": cmd_audit, "rules": cmd_rules, "rule": cmd_rule}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except AuditorError as exc:
        print(f"auditor: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("auditor: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_OK
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
