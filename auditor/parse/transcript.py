"""Find the answer's JSON object in a transcript, whatever surrounds it.

Stored answers are a header (any language), then the JSON object, sometimes in
a ```json fence, followed by prose, with CRLF line ends or a BOM.  This module
turns raw bytes into one decoded object plus parse findings (P101-P105):

1. :func:`~auditor.parse.source.decode_text` -- bytes to text (UTF-8 with/without
   BOM, UTF-16/32 with BOM); binary, invalid UTF-8, empty or oversized input is P105.
2. :func:`~auditor.parse.jsonscan.scan_objects` -- one linear pass that pairs every ``{`` with its
   ``}`` and measures nesting depth, so that no candidate is ever handed to
   :mod:`json` deeper than ``max_depth`` (P102 instead of a RecursionError) and
   no input makes the search quadratic.  The common transcript, one answer
   object alone, skips this search (:func:`_sole_answer`).
3. each JSON-looking span is decoded with hooks that turn NaN/Infinity, 1e999
   and integers too large for a double into null plus a P104 finding
   (:mod:`auditor.parse.decoder`).
4. the best candidate is chosen (answer > bare bench report > answer-like,
   :mod:`auditor.parse.candidates`); several distinct best candidates give P103,
   none at all P101 or P102.

Nothing here raises for bad input and nothing prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from auditor.findings import Finding
from auditor.parse.candidates import NOT_A_CANDIDATE, candidate_score, failure_potential
from auditor.parse.decoder import (
    SHAPE_OPEN,
    StrictDecoder,
    count_nodes,
    nesting_depth,
    replace_nonfinite,
    thread_decoder,
)
from auditor.parse.jsonscan import (
    MAX_SCAN_EVENTS,
    KeyIndex,
    ObjectSpan,
    ScanLimitExceeded,
    line_column,
    looks_like_json,
    scan_objects,
)
from auditor.parse.source import decode_text
from auditor.parse.strings import plural
from auditor.rules.parse import P101, P102, P103, P104, P105


@dataclass(frozen=True)
class Located:
    """The answer object found in a transcript, and what went wrong finding it.

    ``document`` is None when no object could be used; non-finite numbers in
    it were replaced by None and their pointers are in ``nonfinite_pointers``.
    """

    document: dict[str, Any] | None
    findings: tuple[Finding, ...]
    nonfinite_pointers: frozenset[str]
    # The decoded transcript and the offset of the chosen answer's "{" in it (None: no answer),
    # so findings can be placed at their line and column (auditor.parse.locate) without decoding again.
    text: str | None = None
    start: int | None = None
    # The answer's shape (decoder.shape_of of its text), when the decoder made one: its brackets, read again.
    shape: bytes | None = None


@dataclass
class _Parsed:
    start: int  # offset of the object's "{" in the text
    value: Any
    nonfinite: list[tuple[str, str, str]]  # (pointer, literal, description)
    score: int
    shape: bytes | None = None  # of the object's text, when the decoder made it (decoder.shape_of)


@dataclass
class _Failed:
    span: ObjectSpan
    offset: int  # where in the whole text the problem is
    reason: str
    potential: int


# Deepest nesting ever decoded, whatever ``max_depth`` asks for: every later
# stage (json.dumps, reprs, the rules) may recurse once per level, and Python
# allows about 1,000 frames in all.
HARD_MAX_DEPTH = 256


def locate(data: bytes | str, *, max_bytes: int, max_depth: int) -> Located:
    """Find, decode and choose the answer object in a transcript. Never raises.

    ``max_depth`` is capped at :data:`HARD_MAX_DEPTH`.
    """
    text, problem = decode_text(data, max_bytes=max_bytes)
    if text is None:
        return Located(None, (problem,) if problem else (), frozenset())
    return locate_text(text, max_depth=max_depth)


def locate_text(text: str, *, max_depth: int) -> Located:
    """:func:`locate` of a text that needs no checks (:func:`decode_text` made it, see :func:`plain_utf8`)."""
    max_depth = min(max_depth, HARD_MAX_DEPTH)
    sole = _sole_answer(text, max_depth)
    if sole is not None:  # the only candidate and no failure: nothing to choose or report
        return _answer(text, sole, None)
    try:
        spans = scan_objects(text, max_events=MAX_SCAN_EVENTS)
    except ScanLimitExceeded as exc:
        return Located(None, (_too_complex(text, exc),), frozenset())
    candidates, others, failed = _decode_spans(text, spans, max_depth)
    best_score = max((c.score for c in candidates), default=NOT_A_CANDIDATE)
    # A failed span matters when nothing parsed, or when it looks like more
    # than the best thing that did (a truncated answer around a valid inner
    # report); stray braces in prose next to a valid answer do not.
    blocking = [f for f in failed if not candidates or f.potential > best_score]
    if blocking:
        return Located(None, (_malformed(text, blocking),), frozenset())
    if not candidates:
        return Located(None, (_nothing_found(text, others),), frozenset())
    chosen, several = _choose(text, [c for c in candidates if c.score == best_score])
    return _answer(text, chosen, several)


def _answer(text: str, chosen: _Parsed, several: Finding | None) -> Located:
    """The chosen answer, with its P103 finding (``several``) if any and a P104 per non-finite number."""
    findings = [several] if several is not None else []
    for pointer, literal, description in chosen.nonfinite:
        findings.append(
            P104.finding(
                f"non-finite number {description} at {pointer or '/'}: "
                "strict JSON allows only finite numbers, so the value was treated as null",
                pointer=pointer,
                claimed=literal,
            )
        )
    pointers = frozenset(pointer for pointer, _, _ in chosen.nonfinite)
    return Located(chosen.value, tuple(findings), pointers, text=text, start=chosen.start, shape=chosen.shape)


def _sole_answer(text: str, max_depth: int) -> _Parsed | None:
    """The answer of the common transcript, found without the general search; None when unsure.

    Most transcripts are a header without brackets, one well-formed answer
    object and prose without braces.  The general search would then find that
    object as the only span outside it, decode it alone and choose it, so
    decoding it straight from the text gives the same result at a fraction of
    the cost.  Anything else -- a bracket before it, a brace after it, a value
    that does not decode, nests deeper than ``max_depth`` or is no candidate,
    a text too large for an uncounted scan -- is left to the general search.
    """
    start = text.find("{")
    if start < 0 or len(text) > MAX_SCAN_EVENTS or text.find("[", 0, start) >= 0:
        return None  # (a "[" opens a bracket in which the scan reads quotes: it may hide the "{")
    if not looks_like_json(text, start):
        return None
    decoder = thread_decoder()
    before = decoder.created
    # A header in another script makes the whole text wide, and json's decoder then narrows every
    # string it copies out of it: a copy from the answer on, narrow when the answer is, decodes faster.
    source, base = (text, 0) if text.isascii() else (text[start:], start)
    try:
        value, end, shape = decoder.raw_decode_shaped(source, start - base)
    except (ValueError, RecursionError):
        return None
    end += base
    if text.find("{", end) >= 0:
        return None
    # (The shape's brackets include those in strings: at least the depth.  They are counted as
    # what removing them shortens the shape by: a replace finds them with memchr, a count reads
    # every byte, and costs twice as much.)
    if len(shape) - len(shape.replace(SHAPE_OPEN, b"")) > max_depth and nesting_depth(value, max_depth) > max_depth:
        return None
    score = candidate_score(value)
    if score == NOT_A_CANDIDATE:
        return None
    return _Parsed(start, value, _replace_nonfinite(decoder, before, value), score, shape)


def _replace_nonfinite(decoder: StrictDecoder, created_before: int, value: Any) -> list[tuple[str, str, str]]:
    """(pointer, literal, description) of the non-finite numbers decoded into ``value``, now None."""
    if decoder.created == created_before:
        return []  # nothing to walk
    return [(pointer, d.literal, d.description) for pointer, d in replace_nonfinite(value)]


def _decode_spans(text: str, spans: list[ObjectSpan], max_depth: int) -> tuple[list[_Parsed], int, list[_Failed]]:
    """Decode every JSON-looking span that is not inside an already decoded one.

    Returns the candidates, the number of other objects decoded, and the
    failures.  When a span fails, the spans inside it are tried in turn (a
    ``{`` in the header may enclose the real object), except those that hold
    the place where it failed: the decoder parsed them as part of the outer
    span, so they fail there again.  Spans deeper than ``max_depth`` are never
    decoded.  Together this decodes each character a bounded number of times
    (a few), whatever the input.
    """
    decoder = thread_decoder()
    keys = KeyIndex(text)
    candidates: list[_Parsed] = []
    others = 0
    failed: list[_Failed] = []
    skip_until = -1
    open_span_tried = False  # spans open at the end of text nest in one chain
    enclosing: list[tuple[int, int]] = []  # (stop, error offset) of failed spans around the current one
    for span in spans:
        if span.start < skip_until or (span.end is None and open_span_tried):
            continue
        if not looks_like_json(text, span.start):
            continue  # "{x}" in prose, or "{{": look inside instead
        stop = len(text) if span.end is None else span.end + 1
        while enclosing and enclosing[-1][0] <= span.start:
            enclosing.pop()
        if any(span.start < error < stop for _, error in enclosing):
            continue  # the same error, deeper: nothing new to learn
        open_span_tried = open_span_tried or span.end is None
        if span.depth > max_depth:
            reason = f"nesting deeper than {max_depth} levels"
            failed.append(_Failed(span, span.start, reason, failure_potential(keys, span.start, stop)))
            skip_until = stop
            continue
        chunk = text[span.start : stop]
        before = decoder.created
        try:
            value, _ = decoder.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            error = span.start + exc.pos
            failed.append(_Failed(span, error, exc.msg, failure_potential(keys, span.start, stop)))
            enclosing.append((stop, error))
            continue
        except RecursionError:  # only if max_depth exceeds what json can nest
            reason = "nesting too deep to decode"
            failed.append(_Failed(span, span.start, reason, failure_potential(keys, span.start, stop)))
            skip_until = stop
            continue
        skip_until = stop
        score = candidate_score(value)
        if score == NOT_A_CANDIDATE:
            others += 1
            continue
        candidates.append(_Parsed(span.start, value, _replace_nonfinite(decoder, before, value), score))
    return candidates, others, failed


def _too_complex(text: str, exc: ScanLimitExceeded) -> Finding:
    line, column = line_column(text, exc.offset)
    return P105.finding(
        f"the input holds more than {exc.limit:,} brackets and strings (the limit against hostile input); "
        f"the search for the answer stopped at line {line}, column {column}",
        claimed=exc.offset,
        recomputed=exc.limit,
    )


def _malformed(text: str, failed: list[_Failed]) -> Finding:
    # Most relevant: the one that looks most like an answer, then the largest.
    worst = max(failed, key=lambda f: (f.potential, _span_length(text, f.span), -f.span.start))
    line, column = line_column(text, worst.offset)
    start_line, start_column = line_column(text, worst.span.start)
    opened = f"the object that starts at line {start_line}, column {start_column}"
    if worst.span.end is None:
        opened += " and is never closed"
    if worst.reason.startswith("nesting"):
        message = f"malformed JSON: {worst.reason} (found {worst.span.depth}) in {opened}"
    else:
        near = text[worst.offset : worst.offset + 20].split("\n")[0]
        where = f" near {near!r}" if near.strip() else " at the end of the input" if worst.offset >= len(text) else ""
        message = f"malformed JSON at line {line}, column {column}{where}: {worst.reason} (in {opened})"
    return P102.finding(message)


def _span_length(text: str, span: ObjectSpan) -> int:
    return (len(text) if span.end is None else span.end + 1) - span.start


def _nothing_found(text: str, others: int) -> Finding:
    if others:
        return P101.finding(
            f"no answer object found: {plural(others, 'JSON object')} {'was' if others == 1 else 'were'} found, but none has a "
            "'bench_report' key, 'comparison' and 'baseline' keys, or an answer key "
            "('worked', 'verdict', 'system_verdict', 'metrics')",
        )
    lines = text.count("\n") + 1
    return P101.finding(f"no JSON object found in the input ({lines} lines, {len(text):,} characters)")


def _choose(text: str, top: list[_Parsed]) -> tuple[_Parsed, Finding | None]:
    """The most complete of the best-scoring candidates (the last on ties).

    Identical copies (an answer pasted twice) count once and are no P103.
    """
    if len(top) == 1:
        return top[0], None
    distinct: dict[str, _Parsed] = {}
    for candidate in top:
        key = json.dumps(candidate.value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        distinct.pop(key, None)  # keep the later copy, in text order
        distinct[key] = candidate
    ranked = sorted(distinct.items(), key=lambda item: item[1].start)
    chosen = max(ranked, key=lambda item: (count_nodes(item[1].value), len(item[0]), item[1].start))[1]
    if len(ranked) < 2:
        return chosen, None
    lines = [line_column(text, c.start)[0] for _, c in ranked[:10]]
    shown = ", ".join(map(str, lines)) + (", ..." if len(ranked) > 10 else "")
    chosen_line = line_column(text, chosen.start)[0]
    return chosen, P103.finding(
        f"found {len(ranked)} different candidate answer objects (starting at lines {shown}); "
        f"audited the most complete one, which starts at line {chosen_line}",
        claimed=len(ranked),
    )
