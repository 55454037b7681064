"""One transcript in, one result out.

text -> located JSON object -> schema-valid models -> recomputed statistics ->
findings from every selected check rule -> status.
"""

from __future__ import annotations

import time
from typing import Any

from auditor.answer.model import arm_view
from auditor.answer.schema import Models, check_document
from auditor.context import AuditContext, rounding_of
from auditor.errors import AuditorError
from auditor.extracts import cross_facts, figure_data
from auditor.files.paths import STDIN
from auditor.findings import Finding, Severity, check_rules
from auditor.options.models import AuditOptions, RerunOptions
from auditor.parse.candidates import holds_an_answer
from auditor.parse.locate import with_locations
from auditor.parse.source import decode_text, plain_utf8, read_source
from auditor.parse.strings import shorten
from auditor.parse.transcript import Located, locate, locate_text
from auditor.result import AuditResult, Status, is_selected, select, settle, transcript_digest
from auditor.rules.internal import X000
from auditor.rules.schema import S201
from auditor.stats.summary import NonFiniteStatistics, recompute


def finish(source: str, findings: list[Finding], options: AuditOptions, **kwargs: Any) -> AuditResult:
    """Apply selection and severity overrides, order the findings, derive the status
    (:mod:`auditor.result`); ``kwargs`` are the result's other fields."""
    kept, status = settle(select(findings, options), options, auditable=kwargs.get("recomputed") is not None)
    return AuditResult(source=source, status=status, findings=kept, **kwargs)


def build_context(
    document: dict[str, Any], options: AuditOptions, models: Models | None = None
) -> tuple[AuditContext, list[Finding]]:
    """Arm views and recomputation for a valid document and its models (validated here when not given)."""
    if models is None:
        invalid, models = check_document(document, max_items=options.max_seeds)
        if models is None:
            raise ValueError(f"not a valid answer: {invalid[0].message if invalid else 'no models'}")
    answer, report, report_pointer = models.answer, models.report, models.report_pointer
    baseline = arm_view(report, "baseline", report_pointer)
    idea = arm_view(report, "idea", report_pointer)
    problems: list[Finding] = []
    recomputed = None
    n = len(baseline.per_seed)
    # Unpaired arms (A301 says so) are not recomputed; arrays over --max-seeds
    # never get here, the schema stage refuses them (S201).
    if n == len(idea.per_seed) and n > 0:
        try:
            recomputed = recompute(
                baseline.per_seed,
                idea.per_seed,
                lower_is_better=report.lower_is_better,
                alpha=options.alpha,
                exact_max_n=options.exact_max_n,
                resamples=options.resamples,
                seed=options.random_seed,
            )
        except NonFiniteStatistics as exc:  # the schema's bound on per-seed values prevents this
            message = f"{exc}; the paired statistics were not recomputed"
            problems.append(S201.finding(message, pointer=baseline.stats_pointer + "/per_seed"))
    rounding = None if recomputed is None else rounding_of(recomputed, baseline, idea, report, options)
    if rounding is not None:
        recomputed = rounding.recomputed  # of the most precise differences the answer gives
    ctx = AuditContext(
        document=document,
        answer=answer,
        report=report,
        report_pointer=report_pointer,
        baseline=baseline,
        idea=idea,
        recomputed=recomputed,
        rounding=rounding,
        options=options,
    )
    return ctx, problems


# Findings one check rule may report for one answer; a rule is a generator, so
# the rest is not even computed (a config with 100,000 differing keys).
MAX_FINDINGS_PER_RULE = 100


def run_checks(ctx: AuditContext) -> list[Finding]:
    findings: list[Finding] = []
    append = findings.append
    for rule in check_rules():
        if not is_selected(rule.code, ctx.options):
            continue
        count = 0
        for finding in rule.check(ctx):  # type: ignore[misc]
            if count == MAX_FINDINGS_PER_RULE:
                last = findings[-1]
                append(
                    rule.finding(
                        f"more {rule.code} findings were not listed (at most {MAX_FINDINGS_PER_RULE} per rule and answer)",
                        pointer=last.pointer,
                        severity=last.severity,
                    )
                )
                break
            append(finding)
            count += 1
    return findings


def audit_document(
    document: Any,
    source: str,
    options: AuditOptions,
    *,
    prior: list[Finding] | None = None,
    nonfinite_pointers: frozenset[str] = frozenset(),
    rerun: RerunOptions | None = None,
    transcript_path: str | None = None,
) -> AuditResult:
    """Audit an already-decoded JSON object (an answer or a bare bench report).

    ``prior`` are findings of the parse stage; ``nonfinite_pointers`` are the
    places where a NaN/Infinity literal stood (already reported as P104, and
    replaced by null), so the schema stage does not report them again.
    """
    findings = list(prior or [])
    all_schema_findings, models = check_document(document, max_items=options.max_seeds)
    schema_findings = [f for f in all_schema_findings if f.pointer not in nonfinite_pointers]
    findings.extend(schema_findings)
    # A null left by a NaN in a required field is not reported twice, but it
    # still makes the document unusable for the models.
    if models is None or any(f.severity is Severity.ERROR for f in all_schema_findings):
        return finish(source, findings, options, recomputed=None)
    ctx, problems = build_context(document, options, models)
    findings.extend(problems)
    findings.extend(run_checks(ctx))
    rerun_record = None
    if rerun is not None:
        from auditor.rerun import run_and_compare  # torch-free, but only needed here

        rerun_findings, rerun_record = run_and_compare(document, transcript_path, rerun, options)
        findings.extend(rerun_findings)
    recomputed = ctx.recomputed.to_dict() if ctx.recomputed is not None else None
    return finish(
        source,
        findings,
        options,
        recomputed=recomputed,
        claimed=ctx.claimed_summary(),
        rerun=rerun_record,
        cross=cross_facts(ctx),
        figures=figure_data(ctx) if options.figure_data else None,
    )


def audit_bytes(
    data: bytes | str,
    source: str,
    options: AuditOptions | None = None,
    *,
    rerun: RerunOptions | None = None,
    transcript_path: str | None = None,
) -> AuditResult:
    """Audit the text of one transcript (any header, fences, trailing prose).

    With ``rerun``, the referenced experiment is also run again in a sandbox
    (files are looked up next to ``transcript_path`` unless the rerun options
    name a workspace).
    """
    options = options or AuditOptions()
    located = locate(data, max_bytes=options.max_bytes, max_depth=options.max_depth)
    result = _audit_located(located, source, options, rerun=rerun, transcript_path=transcript_path)
    # Bound to the bytes given, as a path's audit is to the bytes it read (auditor.batch.resume).
    return result.with_transcript_sha256(
        transcript_digest(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data))
    )


def _audit_located(
    located: Located,
    source: str,
    options: AuditOptions,
    *,
    rerun: RerunOptions | None,
    transcript_path: str | None,
) -> AuditResult:
    if located.document is None:
        return _located(finish(source, list(located.findings), options, recomputed=None), None, None)
    result = audit_document(
        located.document,
        source,
        options,
        prior=list(located.findings),
        nonfinite_pointers=located.nonfinite_pointers,
        rerun=rerun,
        transcript_path=transcript_path,
    )
    return _located(result, located.text, located.start, located.shape, located.document)


def _located(
    result: AuditResult, text: str | None, start: int | None, shape: bytes | None = None, document: object = None
) -> AuditResult:
    """``result`` with the line and column of every finding in ``text``, whose answer
    starts at ``start`` (line 1, column 1 for all without an answer), has this ``shape``
    when the decoder made one and decodes to ``document``; once, after every check ran,
    so no check needs to know about the transcript's layout."""
    return result.with_findings(tuple(with_locations(result.findings, text, start, shape, document)))


def audit_path(
    path: str,
    options: AuditOptions | None = None,
    *,
    source: str | None = None,
    rerun: RerunOptions | None = None,
    walked: bool = False,
) -> AuditResult:
    """Audit the transcript at ``path`` (``-`` reads stdin); the result records how long it took.

    A file a folder walk found (``walked``) is skipped when it holds no sign of an answer
    (:func:`~auditor.parse.candidates.holds_an_answer`); any other file is always audited, and one
    without an answer fails P101.

    Never raises for an unexpected internal error: the result is then an
    ``error`` with rule X000 alone, and the traceback goes to a log file whose
    path the finding's message gives (see :func:`internal_error`).
    """
    started = time.perf_counter()
    result = _audit_path(path, options, source=source, rerun=rerun, walked=walked)
    return result.with_seconds(time.perf_counter() - started)


def _audit_path(
    path: str, options: AuditOptions | None, *, source: str | None, rerun: RerunOptions | None, walked: bool
) -> AuditResult:
    options = options or AuditOptions()
    digest = None  # of the bytes read: what a jsonl line's "resume" member binds it to (auditor.batch.resume)
    try:
        data, problem = read_source(path, max_bytes=options.max_bytes)
        digest = transcript_digest(data)
        text = None
        if data is not None:
            text, problem = decode_text(data, max_bytes=options.max_bytes, encoding=options.encoding)
        if data is None or text is None:
            assert problem is not None  # each stage gives its value or the finding that says why there is none
            result = _located(finish(source or path, [problem], options, recomputed=None), None, None)
            return result.with_transcript_sha256(digest)
        # Named files and stdin are always audited: what a person or a hook names must never pass unread.
        if walked and path != STDIN and not holds_an_answer(text):  # a data file beside the answers: counted
            return AuditResult(source or path, Status.SKIPPED, ())
        transcript_path = None if path == STDIN else path
        if plain_utf8(data, options.encoding):  # checked as bytes already: not checked again as text
            located = locate_text(text, max_depth=options.max_depth)
        else:
            located = locate(text, max_bytes=options.max_bytes, max_depth=options.max_depth)
        result = _audit_located(located, source or path, options, rerun=rerun, transcript_path=transcript_path)
        return result.with_transcript_sha256(digest)
    except AuditorError:
        raise  # a setup problem (no sandbox, no interpreter): the CLI's exit 2, not a bug
    except Exception as exc:  # noqa: BLE001 -- the one top-level handler per transcript
        return internal_error(source or path, exc).with_transcript_sha256(digest)


def place_findings(path: str, result: AuditResult, options: AuditOptions) -> AuditResult:
    """``result`` with its findings that have no line yet (the cross-answer X9xx, added once the whole
    batch was audited) placed in the transcript at ``path``, read again; as it is when the transcript
    cannot be read or its bytes are no longer those audited (``result.transcript_sha256``)."""
    unplaced = [f for f in result.findings if f.line is None and f.pointer]
    if not unplaced or path == STDIN or result.transcript_sha256 is None:
        return result
    data, _ = read_source(path, max_bytes=options.max_bytes)
    if data is None or transcript_digest(data) != result.transcript_sha256:
        return result
    text, _ = decode_text(data, max_bytes=options.max_bytes, encoding=options.encoding)
    if text is None:
        return result
    located = locate(text, max_bytes=options.max_bytes, max_depth=options.max_depth)
    if located.document is None:
        return result
    placed = with_locations(unplaced, located.text, located.start, located.shape, located.document)
    where = {id(f): g for f, g in zip(unplaced, placed)}
    return result.with_findings(tuple(where.get(id(f), f) for f in result.findings))


LOG_DIR_NAME = "auditor-logs"


def internal_error(source: str, exc: BaseException) -> AuditResult:
    """The ``error`` result for an exception the auditor raised on ``source`` (rule X000).

    The traceback is written to a new file under ``<tempdir>/auditor-logs/``;
    the finding's message names the exception and that file.  Selection and
    severity options do not apply: an internal error is always reported.
    """
    import traceback

    from auditor import __version__

    summary = shorten(f"{type(exc).__name__}: {exc}", 200)
    report = f"auditor {__version__} internal error while auditing {source!r}\n\n" + "".join(
        traceback.format_exception(type(exc), exc, exc.__traceback__)
    )
    log_path, log_problem = _write_log(report)
    where = f"the traceback is in {log_path}" if log_path else f"the traceback could not be written ({log_problem})"
    message = (
        f"internal error: {summary} -- this is a bug in the auditor, not necessarily in the answer; "
        f"please report it with the transcript ({where})"
    )
    return AuditResult(
        source=source,
        status=Status.ERROR,
        findings=(X000.finding(message, claimed=type(exc).__name__),),
        recomputed=None,
        log=log_path or None,
    )


def _write_log(text: str) -> tuple[str | None, str | None]:
    """Write ``text`` to a new log file; (its path, None) or (None, why not).

    The folder is ``<tempdir>/auditor-logs``, made with mode 0700.  The temporary
    folder may be shared (``/tmp``): when that name already exists it is used
    only if it is a real directory (not a link), owned by us, that neither group
    nor others may write to; otherwise the log goes to a fresh private folder
    (``mkdtemp``).  The file is created beside a descriptor of the checked
    folder, exclusively and without following links, with mode 0600.
    """
    import os
    import tempfile

    try:
        base = tempfile.gettempdir()
        folder = os.path.join(base, LOG_DIR_NAME)
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        fd = _open_private_folder(folder)
        if fd is None:
            folder = tempfile.mkdtemp(prefix=LOG_DIR_NAME + "-", dir=base)
            fd = _open_private_folder(folder)
            if fd is None:
                return None, f"no private folder for logs under {base}"
        try:
            return os.path.join(folder, _create_log(fd, text)), None
        finally:
            os.close(fd)
    except OSError as exc:
        return None, f"{type(exc).__name__}: {exc}"


def _open_private_folder(path: str) -> int | None:
    """A descriptor of ``path`` if it is a directory we own that only we may write to, else None."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None  # a link (ELOOP), not a directory, or gone
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022:
        return fd
    os.close(fd)
    return None


def _create_log(folder_fd: int, text: str) -> str:
    """A new ``auditor-x000-*.log`` inside the folder ``folder_fd``, holding ``text``; its name."""
    import os
    import secrets

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        name = f"auditor-x000-{secrets.token_hex(6)}.log"
        try:
            handle = os.open(name, flags, 0o600, dir_fd=folder_fd)
        except FileExistsError:
            continue
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(text)
        return name
    raise FileExistsError("no free log file name")
