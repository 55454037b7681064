"""What one ``auditor audit`` run writes besides the jsonl stream: the report in its format (stdout,
``--output``, each ``--output-format``), a baseline, signed statements (``--attest``), and the notes
on stderr that name skipped or excluded paths."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError
from auditor.files.atomic import atomic_write
from auditor.formats import Run, writer
from auditor.parse.strings import plural
from auditor.result import AuditResult

if TYPE_CHECKING:
    from auditor.batch.session import SessionOptions


def names(paths: Sequence[str], shown: int = 10) -> str:
    """The first ``shown`` paths (already cleaned by the Run), and how many more."""
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more


def load_signer(args: SessionOptions) -> Any:  # -> auditor.attest.keys.SigningKey | None
    if not args.attest:
        return None
    from auditor.attest.keys import load_signing_key
    from auditor.files.atomic import check_owned

    try:  # refused now, not after a long batch: a link or another user's file where the output goes
        check_owned(args.attest_output)  # type: ignore[arg-type]
    except OSError as exc:
        raise UsageError(f"cannot write {args.attest_output}: {exc}") from None
    return load_signing_key(args.attest)


def write_attestations_of(run: Run, args: SessionOptions, signer: Any) -> None:
    """One signed statement per result in ``--attest-output`` (:mod:`auditor.attest`)."""
    from auditor.attest.sign import write_attestations

    written, unsigned = write_attestations(args.attest_output, run.results, run.config, signer)  # type: ignore[arg-type]
    if unsigned:  # an unreadable file: no bytes to bind a digest to
        print(
            f"auditor: {plural(len(unsigned), 'transcript')} not attested (nothing was read of them): "
            f"{names(unsigned)}",
            file=sys.stderr,
        )
    if not args.quiet:
        print(f"auditor: signed {plural(written, 'statement')} in {args.attest_output}", file=sys.stderr)


def write_baseline(results: Sequence[AuditResult], args: SessionOptions) -> None:
    from auditor.batch.baseline import render

    assert args.write_baseline is not None  # called only when it is set
    try:
        atomic_write(args.write_baseline, render(results, args.write_baseline))
    except OSError as exc:
        raise UsageError(f"cannot write baseline {args.write_baseline}: {exc}") from None
    if not args.quiet:
        count = sum(len(r.findings) for r in results)
        print(
            f"auditor: recorded {plural(count, 'finding')} of {plural(len(results), 'transcript')} "
            f"in {args.write_baseline}",
            file=sys.stderr,
        )


def format_writer(name: str, args: SessionOptions) -> Callable[[Run, Any], None]:
    """The writer of format ``name``; text with the run's --details and --quiet."""
    if name != "text":
        return writer(name)
    from functools import partial

    from auditor.formats.text import write as write_text

    return partial(write_text, details=args.details, failures_only=args.quiet)


def render(run: Run, args: SessionOptions) -> None:
    write: Callable[[Run, Any], None]
    if args.statistics:
        from auditor.formats.text import write_statistics

        write = write_statistics
    else:
        write = format_writer(args.format, args)
    if not args.output:
        write(run, sys.stdout)
        sys.stdout.flush()
        return
    write_file(write, run, args.output)


def write_file(write: Callable[[Run, Any], None], run: Run, path: str) -> None:
    """``run`` rendered by ``write`` into ``path``, atomically (a half-written report is never read)."""
    buffer = io.StringIO()
    write(run, buffer)
    try:
        atomic_write(path, buffer.getvalue())
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc}") from None
