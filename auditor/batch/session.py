"""One ``auditor audit`` run over a batch: the command line's orchestration.

discover (done by the caller) -> audit in parallel behind a progress bar ->
drop baselined findings -> stream jsonl lines -> cross-answer checks ->
write a baseline -> render the chosen format to stdout or ``--output``.

Part of the CLI layer: it writes to stdout, stderr and the files the command
line names, and nothing else.  What it writes is cleaned of terminal controls
by the output layer (:mod:`auditor.formats.safe`, applied by ``Run`` and the
jsonl stream); the baseline records the findings as they were found.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from auditor.batch.baseline import Baseline
from auditor.batch.executors import Finish, Task, make_pool
from auditor.batch.outputs import (
    format_writer,
    load_signer,
    names,
    render,
    write_attestations_of,
    write_baseline,
    write_file,
)
from auditor.batch.resume import Resumable, baseline_digest, resumable_mode
from auditor.batch.run import cross_check
from auditor.errors import UsageError
from auditor.extracts import compact_cross, shared
from auditor.files.atomic import open_append
from auditor.files.paths import key
from auditor.findings import Finding, Severity
from auditor.formats import DETAILED_FAILURES, Run
from auditor.options.config import Settings
from auditor.options.models import AuditOptions, RerunOptions
from auditor.parse.strings import plural
from auditor.result import AuditResult, Status

if TYPE_CHECKING:
    from auditor.formats.jsonl import Stream


@dataclass(frozen=True)
class SessionOptions:
    """What one run writes and how it runs, as the command line gave it (None: not given)."""

    format: str = "text"
    output: str | None = None  # a file instead of stdout (jsonl: appended line by line)
    resume: bool = False  # skip sources already in the ``output`` jsonl file
    jobs: int | None = None  # default: cores, 1 with --rerun
    dask: str | None = None  # scheduler address or "local"
    quiet: bool = False
    statistics: bool = False
    baseline: str | None = None
    write_baseline: str | None = None
    # --attest KEY --attest-output FILE: a signed in-toto statement of each result (auditor.attest).
    attest: str | None = None
    attest_output: str | None = None
    # Failing transcripts explained in full above a batch's table (text format); None: all.
    details: int | None = DETAILED_FAILURES
    # (format, path) of further reports written from the same run (--output-format FORMAT:PATH).
    outputs: tuple[tuple[str, str], ...] = ()


@contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """No cyclic garbage collection while a batch's results are gathered and cross-checked.

    The run keeps a small record of every transcript (10,000 of them are some 80,000
    objects) and makes no reference cycles while it gathers them, yet each full collection
    walks every one of them again: 80-100 ms of a 10,000-transcript batch, most of it in
    the serial tail.  When the batch is done, what is alive is frozen (``gc.freeze``): the
    records live until the run ends, so no later collection walks them again, the one at
    the interpreter's exit included.  Reference counting still frees them.  Audits make no
    cyclic garbage once warm (jsonschema's validator classes are built once), so a batch
    audited in this process grows no garbage either; runs that do make it (a dask client's
    event loop, sandboxed reruns) are not paused (:func:`run_session`).  Freezing suits the
    command line, one run per process; ``gc.unfreeze()`` hands everything back to the collector.
    """
    import gc

    if not gc.isenabled():  # a caller that manages collection itself
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _load_baseline(args: SessionOptions) -> Baseline | None:
    """The baseline to filter with; none while writing one (it must see every finding)."""
    if not args.baseline or args.write_baseline:
        return None
    from auditor.batch.baseline import load

    return load(args.baseline)


@contextmanager
def _jsonl_stream(args: SessionOptions, resumable: Resumable | None) -> Iterator[Stream | None]:
    """A jsonl line writer over stdout or the ``--output`` file (appended to, never through a link
    or into another user's file: :func:`~auditor.files.atomic.open_append`), or None."""
    if args.format != "jsonl":
        yield None
        return
    from auditor.formats.jsonl import Stream  # the output contract's models: only a jsonl run builds them

    sign = resumable.sign if resumable is not None else None
    if not args.output:
        yield Stream(sys.stdout, sign)
        return
    try:
        handle = open_append(args.output, mode=resumable_mode())
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc}") from None
    with handle:
        yield Stream(handle, sign)


def _audit(
    paths: Sequence[str],
    keys: Sequence[str],
    settings: Settings,
    args: SessionOptions,
    rerun: RerunOptions | None,
    on_result: Callable[[Any], AuditResult],
    caught_up: Callable[[], None],
    finish: Finish | None,
    walked: frozenset[str] = frozenset(),
) -> dict[str, AuditResult]:
    tasks = [Task(p, settings.options_for(p), k in walked) for p, k in zip(paths, keys, strict=True)]
    jobs = args.jobs or (1 if rerun is not None else os.cpu_count() or 1)
    out: dict[str, AuditResult] = {}
    try:
        _collect(tasks, keys, jobs, args, rerun, on_result, caught_up, finish, out)
    except KeyboardInterrupt:
        raise Interrupted(out, len(tasks)) from None
    return out


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a batch, with the results audited before it (the CLI prints them, as pytest does)."""

    def __init__(self, done: dict[str, AuditResult], total: int) -> None:
        super().__init__(f"{len(done)} of {total} transcripts audited")
        self.done, self.total = done, total


def _collect(
    tasks: list[Task],
    keys: Sequence[str],
    jobs: int,
    args: SessionOptions,
    rerun: RerunOptions | None,
    on_result: Callable[[Any], AuditResult],
    caught_up: Callable[[], None],
    finish: Finish | None,
    out: dict[str, AuditResult],
) -> None:
    """Audit ``tasks`` into ``out`` under ``keys`` (each task's :func:`~auditor.files.paths.key`), passing
    what the pool hands back for each (the result, or what ``finish`` made of it where it was audited)
    through ``on_result``; ``caught_up`` runs whenever every result that has arrived is handled,
    before the pool is waited on again."""
    from auditor.batch.progress import progress_bar, rerun_spinner, wanted

    # Reruns in this process report their progress to a spinner; worker processes cannot.
    spin = rerun is not None and jobs == 1 and not args.dask and wanted(quiet=args.quiet)
    with rerun_spinner(enabled=spin) as say:
        if say is not None:
            rerun = rerun.model_copy(update={"progress": say})  # type: ignore[union-attr]
        # The pool is entered first: its worker processes fork before the progress bar starts a thread.
        with (
            make_pool(tasks, jobs=jobs, rerun=rerun, dask=args.dask, finish=finish) as pool,
            progress_bar(len(tasks), enabled=wanted(quiet=args.quiet) and not spin) as advance,
        ):
            for arrived in pool.arrivals():
                for index, result in arrived:
                    result = on_result(result)
                    out[keys[index]] = result  # the key of its task's path, its source
                    advance(result)
                caught_up()


def _kept_after_streaming(result: AuditResult, options: AuditOptions) -> AuditResult:
    """What a result whose jsonl line is written must still hold for the end of the run.

    The cross-answer checks compare the source, status, claimed verdict, recomputed p and
    ``cross`` facts (:mod:`auditor.rules.cross`); the summary line counts statuses; a late
    finding settles the status again, and the exit status reads the failing findings.  So only
    the findings that can decide a status (at or above ``fail-on``, and every error, which the
    always-fail guard reads) stay: a batch of 100,000 keeps a few hundred bytes per transcript.
    """

    # Errors are the most severe findings, so "at or above fail-on, or an error" is one threshold.
    deciding = Severity.ERROR.rank if options.fail_on is None else options.fail_on.rank
    recomputed, claimed = result.recomputed, result.claimed
    return AuditResult(
        source=result.source,
        status=result.status,
        findings=tuple(f for f in result.findings if f.severity.rank >= deciding),
        recomputed=None if recomputed is None else {k: recomputed[k] for k in ("p_value",) if k in recomputed},
        # Verdict sentences repeat across a batch: one copy of each.
        claimed=None if claimed is None else {k: shared(claimed[k]) for k in ("verdict",) if k in claimed},
        # Compact (interned strings, one array of values): the line holding the dict is written.
        cross=compact_cross(result.cross),
        # A cross-answer finding is placed in the transcript only if its bytes are still these.
        transcript_sha256=result.transcript_sha256,
    )


class _Streamed(NamedTuple):
    """A result of a jsonl run as the worker that audited it sends it back (:func:`_ready_to_stream`)."""

    line: str  # its jsonl line
    kept: AuditResult  # what the run keeps of it (_kept_after_streaming), its transcript's sha256 too


def _ready_to_stream(result: AuditResult, options: AuditOptions) -> AuditResult | _Streamed:
    """Run where ``result`` was audited, when nothing changes it before its line is written (no
    baseline): the line and the kept result pickle far faster than the result, and the
    parent, which shares the cores with the workers, only writes the line."""
    if result.status is Status.SKIPPED:
        return result
    from auditor.formats.jsonl import result_line

    try:
        line = result_line(result)
    except (TypeError, ValueError):  # a value the contract refuses: the parent meets it as it always did
        return result
    return _Streamed(line, _kept_after_streaming(result, options))


def _shared_again(kept: AuditResult) -> AuditResult:
    """A kept result unpickled from a worker, holding the batch's one copy of its verdict sentence
    again, as :func:`_kept_after_streaming` made it (its cross facts share their strings once unpickled)."""
    if not kept.claimed:
        return kept
    return kept.with_claimed({k: shared(v) for k, v in kept.claimed.items()})


def _place_late_findings(
    before: Sequence[AuditResult], after: list[AuditResult], path_of: dict[str, str], settings: Settings
) -> None:
    """Place the findings the cross-answer pass added at their lines, in ``after``, each transcript
    read again (the audit keeps no text); one whose bytes changed since its audit keeps them unplaced.
    In place: each unplaced copy is freed as its placed one replaces it (a batch's peak memory)."""
    from auditor.audit import place_findings

    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        if new is not old:
            after[index] = place_findings(
                path_of.get(key(new.source), new.source), new, settings.options_for(new.source)
            )


def _late_findings(before: Sequence[AuditResult], after: Sequence[AuditResult]) -> list[tuple[str, Finding]]:
    """Findings the cross-answer pass added, for the jsonl summary line."""
    late: list[tuple[str, Finding]] = []
    for old, new in zip(before, after, strict=True):
        if new is not old:  # the cross-answer pass hands back a result it adds nothing to as it is
            late.extend((new.source, f) for f in new.findings if f not in old.findings)
    return late


def run_session(
    paths: Sequence[str],
    settings: Settings,
    args: SessionOptions,
    *,
    rerun: RerunOptions | None = None,
    walked: frozenset[str] = frozenset(),
    excluded: Sequence[str] = (),
) -> Run:
    """Audit ``paths`` as one batch, write every output, and return the final run.

    ``walked``: the keys of paths a folder walk found (skipped when they hold no sign of an answer;
    every other path is audited); ``excluded``: what include/exclude left out, named in the run.
    """
    if "html" in (args.format, *(name for name, _ in args.outputs)):  # its charts draw per-seed values and sweeps
        settings = replace(settings, options=settings.options.model_copy(update={"figure_data": True}))
    known = _load_baseline(args)
    signer = load_signer(args)  # before the audit: a key that cannot be read stops the run (exit 2)
    # jsonl lines are signed for --resume, which counts only the lines this user's auditor wrote
    # for the same bytes and options (auditor.batch.resume).
    applied = baseline_digest(known.root, known.fingerprints) if known is not None else None
    resumable = Resumable(settings.options_for, rerun, applied, walked) if args.format == "jsonl" else None
    done, untrusted = resumable.resume(args.output, paths) if args.resume and resumable and args.output else ({}, 0)
    # jsonl lines are written as results arrive; unless a baseline is written from every finding,
    # the run keeps only what the cross-answer checks and the summary line need (flat memory).
    # Kept for the memory budget: a full result holds ~4.5 KiB, a kept one ~1.3 KiB (100,000: 450 MB against 130 MB).
    # Signed statements hold every finding of the final result, so an attested run keeps them all.
    slim = args.format == "jsonl" and not args.write_baseline and signer is None
    if slim:
        done = {k: _kept_after_streaming(r, settings.options_for(r.source)) for k, r in done.items()}
    keys = [key(p) for p in paths]
    if args.resume and (not args.quiet or untrusted):
        resumed = sum(1 for k in keys if k in done)
        distrusted = f", {plural(untrusted, 'recorded line')} not trusted (re-audited)" if untrusted else ""
        print(
            f"auditor: resuming {args.output}: {plural(resumed, 'transcript')} already audited{distrusted}, "
            f"{len(paths) - resumed} to go",
            file=sys.stderr,
        )
    elif resumable and resumable.problem and args.output and not args.quiet:
        print(
            f"auditor: the jsonl lines are not signed, so --resume will audit them again: {resumable.problem}",
            file=sys.stderr,
        )
    # Not around a dask client's event loop or sandboxed reruns: both make cyclic garbage, and a
    # transcript takes long enough there that collecting it costs nothing.
    paused = _cycle_collection_paused() if args.dask is None and rerun is None else nullcontext()
    with _jsonl_stream(args, resumable) as stream, paused:

        def handle(result: AuditResult | _Streamed) -> AuditResult:
            if isinstance(result, _Streamed):
                # Streamed: a jsonl run.
                stream.write_line(result.line, result.kept.source, result.kept.transcript_sha256)  # type: ignore[union-attr]
                return _shared_again(result.kept)
            if result.status is Status.SKIPPED:
                return result
            if known is not None:
                result = known.apply(result, settings.options_for(result.source))
            if stream is not None:
                stream.write_result(result)
            return _kept_after_streaming(result, settings.options_for(result.source)) if slim else result

        try:
            # Lines written as results arrive reach the file before the pool is waited on.
            flush = stream.flush if stream is not None else lambda: None
            # Without a baseline to apply, workers make the lines and the kept results themselves.
            # Kept for the throughput budget: ~100 us per transcript (over 10% of 800 us) off the serial parent.
            finish = _ready_to_stream if slim and known is None else None
            pending = [(p, k) for p, k in zip(paths, keys) if k not in done]
            fresh = _audit(
                [p for p, _ in pending], [k for _, k in pending], settings, args, rerun, handle, flush, finish, walked
            )
        except Interrupted as stop:
            if args.format == "text":  # what was audited before Ctrl-C, as pytest prints it
                partial = [
                    stop.done[key(p)]
                    for p in paths
                    if key(p) in stop.done and stop.done[key(p)].status is not Status.SKIPPED
                ]
                render(Run(tuple(partial), None, config=None), args)
            raise
        everything = [done.get(k) or fresh[k] for k in keys]
        audited = [r for r in everything if r.status is not Status.SKIPPED]
        skipped = [r.source for r in everything if r.status is Status.SKIPPED]
        results, cross = cross_check(
            audited,
            settings.options_for,
            fdr=settings.fdr,
            alpha=settings.options.alpha,
            keep=known.new_findings if known is not None else (lambda findings, source: findings),
        )
        _place_late_findings(audited, results, {k: p for k, p in zip(keys, paths)}, settings)
        # The Run cleans agent text for display; the baseline fingerprints the findings as found.
        run = Run(
            tuple(results),
            cross,
            config=settings.report(),
            skipped=len(skipped),
            options=settings.options,
            skipped_paths=tuple(skipped),
            excluded=tuple(excluded),
        )
        if stream is not None:
            stream.write_summary(run, _late_findings(audited, results))
    if args.write_baseline:
        write_baseline(results, args)
    if signer is not None:  # after the cross-answer checks: a statement signs the final verdict
        write_attestations_of(run, args, signer)
    if run.skipped and (not args.quiet or not run.results):
        print(
            f"auditor: {plural(run.skipped, 'file')} without an answer skipped "
            f"(no JSON, header, claim or traceback in them): {names(run.skipped_paths)}",
            file=sys.stderr,
        )
    if run.excluded and (not args.quiet or not run.results):
        print(
            f"auditor: {plural(len(run.excluded), 'path')} excluded by include/exclude (the command line, "
            f"the config or the defaults), not audited: {names(run.excluded)}",
            file=sys.stderr,
        )
    if args.format != "jsonl" and (run.results or args.format != "text"):
        render(run, args)
    for name, path in args.outputs:  # each from the same results: one audit, several reports
        write_file(format_writer(name, args), run, path)
    return run
