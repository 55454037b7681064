"""Command line: a thin layer over the library.

``main(argv) -> int``: one function per command, one domain error
(:class:`AuditorError`) caught at the top.  Exit codes: 0 nothing at or above
``--fail-on``, 1 a transcript fails or could not be audited, 2 usage errors
(unknown option or format, missing path, unreadable config or baseline).
The batch run itself is :mod:`auditor.session`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import __version__
from .errors import AuditorError, UsageError
from .options import MiB, RerunOptions

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _checked(convert, raw):  # noqa: ANN001, ANN202
    """Validate a command-line value with the same rule the configuration file uses (auditor.config)."""
    try:
        return convert(raw)
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _codes(text: str) -> list[str]:
    from . import config

    return list(_checked(config.parse_codes, text))


def _globs(text: str) -> list[str]:
    from . import config

    return list(_checked(config.parse_globs, text))


def _fail_on(text: str) -> str:
    from . import config

    return _checked(config.parse_fail_on, text)


def _positive_int(text: str) -> int:
    from . import config

    return _checked(config.parse_positive_int, int(text))


def _finite(text: str, *, positive: bool) -> float:
    import math

    value = float(text)
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise argparse.ArgumentTypeError(f"expected a {'positive' if positive else 'non-negative'} number, got {text}")
    return value


def _positive_number(text: str) -> float:
    return _finite(text, positive=True)


def _nonnegative_number(text: str) -> float:
    return _finite(text, positive=False)


# argparse names the type in "invalid ... value: 'x'".
_positive_number.__name__, _nonnegative_number.__name__ = "positive number", "non-negative number"


def _probability(text: str) -> float:
    from . import config

    return _checked(config.parse_probability, float(text))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        # "auditor audit: argument --format: ..." reads best after the top-level "auditor: error:".
        where = self.prog.partition(" ")[2]
        raise UsageError(f"{where}: {message} (see `{self.prog} --help`)" if where else f"{message} (see `auditor --help`)")


def _add_audit_arguments(audit: argparse.ArgumentParser) -> None:
    from .formats import FORMATS

    # Defaults of None mean "not given": [tool.auditor] or the built-in default applies.
    audit.add_argument("paths", nargs="+", metavar="PATH")
    audit.add_argument("--format", choices=sorted(FORMATS), default="text")
    audit.add_argument("--output", "-o", metavar="FILE", help="write there (atomically; jsonl appends per line)")
    audit.add_argument("--select", type=_codes, action="extend", help="only these codes or prefixes")
    audit.add_argument("--ignore", type=_codes, action="extend", help="skip these codes or prefixes")
    audit.add_argument("--fail-on", type=_fail_on, metavar="error|warning|info|never", help="default: error")
    audit.add_argument("--exit-zero", action="store_true", help="exit 0 even when transcripts fail")
    audit.add_argument("--alpha", type=_probability, help="significance level (default 0.05)")
    audit.add_argument("--mc-resamples", type=_positive_int,
                       help="B assumed for a claimed Monte-Carlo p when the answer states none (10,000), "
                       "tried beside the usual counts")
    audit.add_argument("--resamples", type=_positive_int,
                       help="resamples of the auditor's own randomized test above 40 seeds (100,000)")
    audit.add_argument("--max-bytes", type=_positive_int, default=16 * MiB, help="largest input read, in bytes")
    audit.add_argument("--max-depth", type=_positive_int, default=64, help="deepest JSON nesting accepted")
    audit.add_argument("--max-seeds", type=_positive_int, default=10_000, help="most per-seed values recomputed")
    batch = audit.add_argument_group("batch", "directories, parallelism, cross-answer checks")
    batch.add_argument("--include", type=_globs, action="extend", help="file globs (default *.txt,*.md,*.json)")
    batch.add_argument("--exclude", type=_globs, action="extend", help="globs of files or folders to skip")
    batch.add_argument("--jobs", "-j", type=_positive_int, help="parallel processes (default: cores; 1 with --rerun)")
    batch.add_argument("--dask", metavar="ADDRESS|local",
                       help="audit (and rerun) on a dask.distributed cluster: a scheduler address, or local")
    batch.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    batch.add_argument("--statistics", action="store_true", help="count findings per rule (text format)")
    batch.add_argument("--resume", action="store_true", help="skip sources already in the --output jsonl file")
    batch.add_argument("--fdr", type=_probability, help="X902 false-discovery rate (default 0.05)")
    gate = audit.add_argument_group("gate", "configuration and baselines")
    gate.add_argument("--config", metavar="FILE", help="pyproject.toml to read [tool.auditor] from")
    gate.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    gate.add_argument("--baseline", metavar="FILE", help="report only findings not recorded in FILE")
    gate.add_argument("--write-baseline", metavar="FILE", help="record every current finding in FILE, exit 0")
    rr = audit.add_argument_group("rerun", "run the referenced experiment again in a sandbox")
    rr.add_argument("--rerun", action="store_true")
    rr.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    rr.add_argument("--workspace", help="folder holding the answer's files (default: the transcript's folder)")
    rr.add_argument("--timeout", type=_positive_number, default=600.0, help="wall-clock seconds (default 600)")
    rr.add_argument("--python", help="interpreter for the experiment (default: this one)")
    rr.add_argument("--rtol", type=_nonnegative_number, help="relative tolerance per seed (default 1e-5, 1e-2 across devices)")
    rr.add_argument("--memory", type=_positive_number, default=8.0, help="memory cap in GiB (default 8)")
    rr.add_argument("--disk", type=_nonnegative_number, default=2.0, help="GiB the run's copy may grow by, in RAM (default 2)")
    rr.add_argument("--max-processes", type=_positive_int, default=1024,
                    help="processes and threads the experiment may have (default 1024)")
    rr.add_argument("--max-output", type=_positive_number, default=1024.0,
                    help="MiB the experiment may print before it is killed (default 1024)")
    rr.add_argument("--unsafe-no-sandbox", action="store_true", help="run without bubblewrap (trusted code only)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="auditor", description="Audit the claims AI research agents make about their ML experiments.")
    parser.add_argument("--version", action="version", version=f"auditor {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_audit_arguments(sub.add_parser("audit", help="audit transcripts (files, directories, or - for stdin)"))
    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--format", choices=("text", "json"), default="text")
    rule = sub.add_parser("rule", help="explain one rule")
    rule.add_argument("code")
    return parser


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
        disk_bytes=int(args.disk * 1024 * MiB),
        max_processes=args.max_processes,
        output_limit_bytes=int(args.max_output * MiB),
        unsafe_no_sandbox=args.unsafe_no_sandbox,
    )


def _check_combinations(args: argparse.Namespace) -> None:
    if args.resume and not (args.output and args.format == "jsonl"):
        raise UsageError("--resume needs --format jsonl and --output FILE (the file to resume)")
    if args.statistics and args.format != "text":
        raise UsageError("--statistics prints a table; it needs --format text")


def _settings(args: argparse.Namespace):  # -> config.Settings
    from pathlib import Path

    from . import config

    loaded = config.Config() if args.isolated else config.load(Path(args.config) if args.config else None)
    return config.resolve(
        loaded,
        select=args.select,
        ignore=args.ignore,
        fail_on=args.fail_on,
        alpha=args.alpha,
        mc_resamples=args.mc_resamples,
        resamples=args.resamples,
        fdr=args.fdr,
        include=args.include,
        exclude=args.exclude,
        max_bytes=args.max_bytes,
        max_depth=args.max_depth,
        max_seeds=args.max_seeds,
    )


def _announce_config(settings, args: argparse.Namespace) -> None:  # settings: config.Settings
    """Name the configuration file on stderr (text format), and what a discovered one could not do."""
    from .formats.safe import clean

    if settings.config is None:
        return
    where = clean(str(settings.config))
    if args.format == "text":
        how = "discovered" if settings.discovered else "from --config"
        print(f"auditor: configuration {where} ({how})", file=sys.stderr)
    if args.rerun and settings.guarded:
        from .config import protected_rules

        codes = protected_rules()
        print(
            f"auditor: note: {where} was discovered, not named with --config, so its "
            f"{', '.join(settings.guarded)} cannot silence or pass the rerun's findings "
            f"({codes[0]}-{codes[-1]}); name the file with --config, or use the command line, to do that",
            file=sys.stderr,
        )


def _gate_fails(results, options) -> bool:  # results: Sequence[AuditResult], options: AuditOptions
    """The exit status: a result fails ``--fail-on``, or holds an error the guard always fails."""
    from .findings import Severity
    from .result import failing

    if failing(results, options.fail_on):
        return True
    guarded = options.always_fail
    return any(f.severity is Severity.ERROR and f.rule in guarded for r in results for f in r.findings)


def cmd_audit(args: argparse.Namespace) -> int:
    from .discovery import discover
    from .session import SessionOptions, run_session

    _check_combinations(args)
    settings = _settings(args)
    paths = discover(args.paths, settings.include, settings.exclude)
    if not paths:
        raise UsageError("no transcripts found in the given paths")
    _announce_config(settings, args)
    session = SessionOptions(
        format=args.format, output=args.output, resume=args.resume, jobs=args.jobs, dask=args.dask,
        quiet=args.quiet, statistics=args.statistics, baseline=args.baseline, write_baseline=args.write_baseline,
    )
    run = run_session(paths, settings, session, rerun=_rerun_options(args))
    if args.write_baseline or args.exit_zero:
        return EXIT_OK
    return EXIT_FAIL if _gate_fails(run.results, settings.options) else EXIT_OK


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
        from .formats.safe import clean  # the message may quote a file name or an answer's text

        print(f"auditor: error: {clean(str(exc))}", file=sys.stderr)
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
