"""Command line: a thin layer over the library.

``main(argv) -> int``: one function per command, one domain error
(:class:`AuditorError`) caught at the top.  Exit codes: 0 nothing at or above
``--fail-on``, 1 a transcript fails or could not be audited, 2 usage errors
(unknown option or format, missing path, unreadable config or baseline).
The batch run itself is :mod:`auditor.batch.session`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from auditor import __version__
from auditor.errors import AuditorError, UsageError

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

EPILOG = """\
examples:
  auditor audit answer.txt                       audit one answer, a panel of findings
  auditor audit answers/ --format concise        one line per finding: path:line:col: CODE message
  auditor audit answers/ --select A,V --extend-ignore D505
  auditor audit answers/ --format sarif -o auditor.sarif   for GitHub code scanning
  auditor audit answer.txt --rerun --device cpu  train again in a sandbox and compare
  auditor rule A307                              what a rule checks and how to fix it
  auditor keygen --out ci                        a key pair for signed verdicts: ci.key, ci.pub
  auditor audit answers/ --attest ci.key --attest-output v.intoto.jsonl   sign each verdict
  auditor verify v.intoto.jsonl --key ci.pub --require pass                check them

exit codes:
  0  no transcript fails --fail-on (or --exit-zero, --write-baseline)
  1  a transcript fails, or could not be audited
  2  usage error: unknown option, rule code, format or path; unreadable config or baseline
  130  interrupted (Ctrl-C); what was audited so far is printed
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # "auditor audit: argument --format: ..." reads best after the top-level "auditor: error:".
        where = self.prog.partition(" ")[2]
        raise UsageError(
            f"{where}: {message} (see `{self.prog} --help`)" if where else f"{message} (see `auditor --help`)"
        )


def build_parser() -> argparse.ArgumentParser:
    from auditor.formats import FORMATS
    from auditor.options.keys import add_arguments

    parser = _Parser(
        prog="auditor",
        description="Audit the claims AI research agents make about their ML experiments.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"auditor {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    audit = sub.add_parser(
        "audit",
        help="audit transcripts (files, directories, or - for stdin)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    audit.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="transcripts or folders of them (walked with --include/--exclude); - reads stdin",
    )
    add_arguments(audit, sorted(FORMATS))
    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--format", choices=("text", "json"), default="text")
    rule = sub.add_parser("rule", help="explain one rule: what it checks, why, an example, how to fix")
    rule.add_argument("code", metavar="CODE|NAME", help="a rule code (A307) or name (p-value-inconsistent)")
    from auditor.attest.cli import add_parsers

    add_parsers(sub)  # keygen, verify
    return parser


def _command_line(args: argparse.Namespace):  # -> option_model.CommandLine
    from auditor.options.keys import flag_fields, validate_command_line

    return validate_command_line({name: getattr(args, name) for name in flag_fields() if hasattr(args, name)})


def _details(text: str | None) -> int | None:
    """``--details``: a count of failing transcripts to explain in full, or None for all."""
    from auditor.formats import DETAILED_FAILURES

    if text is None:
        return DETAILED_FAILURES
    return None if text == "all" else int(text)


def _check_combinations(cli) -> None:  # cli: option_model.CommandLine
    fmt = cli.format or "text"
    if cli.resume and not (cli.output and fmt == "jsonl"):
        raise UsageError("--resume needs --format jsonl and --output FILE (the file to resume)")
    if cli.statistics and fmt != "text":
        raise UsageError("--statistics prints a table; it needs --format text")
    if bool(cli.attest) != bool(cli.attest_output):
        raise UsageError("--attest KEY and --attest-output FILE go together (docs/attestations.md)")
    from auditor.formats import check_available

    check_available(fmt)  # a missing extra (matplotlib for html) stops the run before it audits
    _check_outputs(cli)


def _check_outputs(cli) -> None:  # cli: option_model.CommandLine
    """``--output-format FORMAT:PATH``: known formats, each file written once, none of them stdout."""
    from auditor.formats import FORMATS, check_available

    seen = {cli.output} if cli.output else set()
    for name, path in cli.output_format or ():
        if name not in FORMATS:
            raise UsageError(f"--output-format: unknown format {name!r}; choose from {', '.join(sorted(FORMATS))}")
        if path == "-":
            raise UsageError("--output-format: stdout takes the --format report; name a file for each other one")
        if path in seen:
            raise UsageError(f"--output-format: {path} is written twice; give each report its own file")
        seen.add(path)
        check_available(name)


def _settings(cli, paths: Sequence[str] = ()):  # cli: option_model.CommandLine -> config.Settings
    from pathlib import Path

    from auditor.options import config
    from auditor.options.trust import Audited

    if cli.isolated:
        return config.resolve(config.Config(), cli)
    # A discovered file beside these transcripts (or the rerun's workspace) is the agent's to write.
    audited = Audited(paths, cli.workspace if cli.rerun else None)
    return config.resolve(config.load(Path(cli.config) if cli.config else None, audited=audited), cli)


def _announce_config(settings, cli) -> None:  # settings: config.Settings, cli: option_model.CommandLine
    """Say on stderr which discovered files were left unread (every format), which file applies
    and its values (text format), and what a discovered one could not do."""
    from auditor.formats.safe import clean
    from auditor.options.policy import describe, ignored_notes

    report = settings.report()
    for note in ignored_notes(report):  # the gate's policy is at stake: even with --quiet
        print(f"auditor: {clean(note)}", file=sys.stderr)
    if settings.config is None:
        return
    where = clean(str(settings.config))
    if (cli.format or "text") == "text" and not cli.quiet:
        how = "discovered" if settings.discovered else "from --config"
        values = describe(report)
        print(
            f"auditor: configuration {where} ({how})" + (f"; {clean(', '.join(values))}" if values else ""),
            file=sys.stderr,
        )
    if cli.rerun and settings.guarded:
        from auditor.options.config import protected_rules

        codes = protected_rules()
        print(
            f"auditor: note: {where} was discovered, not named with --config, so its "
            f"{', '.join(settings.guarded)} cannot silence or pass the rerun's findings "
            f"({codes[0]}-{codes[-1]}); name the file with --config, or use the command line, to do that",
            file=sys.stderr,
        )


def _note_partial_batch(given: Sequence[str], paths: Sequence[str], cli) -> None:  # cli: option_model.CommandLine
    """Files named one by one (a pre-commit hook's staged files) are not the whole batch: say
    that the cross-answer checks and their false-discovery rate saw only these."""
    import os

    if len(paths) < 2 or any(p != "-" and os.path.isdir(p) for p in given) or (cli.format or "text") != "text":
        return
    print(
        f"auditor: note: the cross-answer checks (X9xx) and their false-discovery rate saw only the "
        f"{len(paths)} files given; they need the whole batch: run `auditor audit FOLDER` on the folder",
        file=sys.stderr,
    )


def _all_named_excluded(given: Sequence[str], excluded: Sequence[str]) -> bool:
    """Whether every path given was left out by name (``--force-exclude``), rather than a folder
    walked and found empty, which stays a usage error: a gate given nothing to read must say so."""
    import os

    left_out = set(excluded)
    return all(p in left_out or p.rstrip("/" + os.sep) + os.sep in left_out for p in given)


def cmd_audit(args: argparse.Namespace) -> int:
    from auditor.batch.session import SessionOptions, run_session
    from auditor.files.discovery import survey

    cli = _command_line(args)
    _check_combinations(cli)
    rerun = cli.rerun_options()
    settings = _settings(cli, args.paths)
    found = survey(args.paths, settings.include, settings.exclude, force_exclude=settings.force_exclude)
    paths = found.paths
    if not paths:
        if _all_named_excluded(args.paths, found.excluded):  # a hook's staged README alone: nothing to gate
            if not cli.quiet:
                print(
                    f"auditor: nothing to audit: every path given is excluded ({len(found.excluded)})", file=sys.stderr
                )
            return EXIT_OK
        raise UsageError("no transcripts found in the given paths")
    _announce_config(settings, cli)
    _note_partial_batch(args.paths, paths, cli)
    session = SessionOptions(
        format=cli.format or "text",
        output=cli.output,
        resume=bool(cli.resume),
        jobs=cli.jobs,
        dask=cli.dask,
        quiet=bool(cli.quiet),
        statistics=bool(cli.statistics),
        baseline=cli.baseline,
        write_baseline=cli.write_baseline,
        details=_details(cli.details),
        attest=cli.attest,
        attest_output=cli.attest_output,
        outputs=cli.output_format or (),
    )
    run = run_session(paths, settings, session, rerun=rerun, walked=found.walked, excluded=found.excluded)
    if cli.write_baseline or cli.exit_zero:
        return EXIT_OK
    from auditor.result import gate_fails

    return EXIT_FAIL if gate_fails(run.results, settings.options) else EXIT_OK


def cmd_rules(args: argparse.Namespace) -> int:
    import json

    from auditor.findings import all_rules

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


def _find_rule(text: str):  # -> findings.Rule
    """A rule by code (``A307``, any case) or by name (``p-value-inconsistent``)."""
    from auditor.findings import all_rules
    from auditor.options.models import suggest

    wanted = text.strip()
    rules = all_rules()
    for rule in rules:
        if wanted.upper() == rule.code or wanted.lower() == rule.name:
            return rule
    hint = suggest(wanted.upper(), [r.code for r in rules]) or suggest(wanted.lower(), [r.name for r in rules])
    raise UsageError(f"unknown rule {text!r}{hint}; `auditor rules` lists them")


def cmd_rule(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markdown import Markdown

    rule = _find_rule(args.code)
    console = Console(highlight=False)
    text = f"# {rule.code} {rule.name}\n\n*{rule.family}, default severity {rule.severity.value}*\n\n{rule.doc}"
    if console.is_terminal:
        console.print(Markdown(text))
    else:  # piped or redirected: the markdown itself, for docs and grep
        print(text)
    return EXIT_OK


def cmd_keygen(args: argparse.Namespace) -> int:
    from auditor.attest.cli import cmd_keygen

    return cmd_keygen(args)


def cmd_verify(args: argparse.Namespace) -> int:
    from auditor.attest.cli import cmd_verify

    return cmd_verify(args)


COMMANDS = {"audit": cmd_audit, "rules": cmd_rules, "rule": cmd_rule, "keygen": cmd_keygen, "verify": cmd_verify}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except AuditorError as exc:
        # The message may quote a file name or an answer's text.
        from auditor.formats.safe import clean

        print(f"auditor: error: {clean(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        detail = f": {exc}" if str(exc) else ""  # session.Interrupted: how far the batch got
        print(f"auditor: interrupted{detail}", file=sys.stderr)
        return 130
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_OK
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
