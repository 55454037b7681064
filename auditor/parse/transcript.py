"""Find the answer's JSON object in a transcript, whatever surrounds it.

Stored answers are a header (any language), then the JSON object, sometimes in
a ```json fence, followed by prose, with CRLF line ends or a BOM.  This module
turns raw bytes into one decoded object plus parse findings (P101-P105):

1. :func:`decode_text` -- bytes to text (UTF-8 with/without BOM, UTF-16/32 with
   BOM); binary, invalid UTF-8, empty or oversized input is P105.
2. :func:`~auditor.parse.jsonscan.scan_objects` -- one linear pass that pairs every ``{`` with its
   ``}`` and measures nesting depth, so that no candidate is ever handed to
   :mod:`json` deeper than ``max_depth`` (P102 instead of a RecursionError) and
   no input makes the search quadratic.  The common transcript, one answer
   object alone, skips this search (:func:`_sole_answer`).
3. each JSON-looking span is decoded with hooks that turn NaN/Infinity, 1e999
   and integers too large for a double into null plus a P104 finding.
4. the best candidate is chosen (answer > bare bench report > answer-like);
   several distinct best candidates give P103, none at all P101 or P102.

Nothing here raises for bad input and nothing prints.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
import sys
from dataclasses import dataclass
from typing import Any

from auditor.findings import Finding
from auditor.parse.jsonscan import (
    LONE_SURROGATE,
    MAX_SCAN_EVENTS,
    SHAPE_OPEN,
    KeyIndex,
    ObjectSpan,
    ScanLimitExceeded,
    StrictDecoder,
    count_nodes,
    line_column,
    looks_like_json,
    nesting_depth,
    replace_nonfinite,
    scan_objects,
    thread_decoder,
)
from auditor.parse.strings import plural
from auditor.rules.parse import P101, P102, P103, P104, P105

# --------------------------------------------------------------------------- reading


def read_source(path: str, *, max_bytes: int) -> tuple[bytes | None, Finding | None]:
    """Bytes of the file at ``path`` (``-``: stdin), or a P105 finding.

    The size is checked before the whole file is read (stat, then at most
    ``max_bytes + 1`` bytes), so a huge file costs nothing.
    """
    try:
        if path == "-":
            data = _read_stdin(max_bytes)
        else:
            info = os.stat(path)
            if stat.S_ISDIR(info.st_mode):
                return None, P105.finding(f"cannot read {path!r}: it is a directory, not a file")
            regular = stat.S_ISREG(info.st_mode)
            if regular and info.st_size > max_bytes:
                return None, _too_large(info.st_size, max_bytes)
            data = _read_at_most(path, max_bytes + 1, info.st_size if regular else None)
    except FileNotFoundError:
        return None, P105.finding(f"cannot read {path!r}: no such file")
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return None, P105.finding(f"cannot read {path!r}: {reason}")
    if len(data) > max_bytes:
        return None, _too_large(len(data), max_bytes, at_least=True)
    if not data:
        return None, P105.finding("the input is empty (0 bytes): there is no answer to audit")
    return data, None


# Reads after the first (a pipe, a file that grew since stat): at most this many bytes each.
_READ_CHUNK = 1 << 16


def _read_at_most(path: str, limit: int, size: int | None) -> bytes:
    """The first ``limit`` bytes of the file at ``path`` (all of it when shorter).

    The first read asks for the ``size`` stat gave plus one byte, not for ``limit``:
    a read allocates what it asks for, and a 16 MiB buffer for a 4 KB answer cost
    more than the rest of reading it.  Plain descriptor reads, no buffered file
    object: a batch reads every transcript once.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        got = 0
        want = min(limit, size + 1) if size is not None else min(limit, _READ_CHUNK)
        while got < limit:
            chunk = os.read(fd, min(want, limit - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            want = _READ_CHUNK
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


def _read_stdin(max_bytes: int) -> bytes:
    stream = sys.stdin
    if stream is None:
        raise OSError("no standard input")
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        return buffer.read(max_bytes + 1)
    # A text-only stdin (embedded interpreters, tests): re-encode what it gives.
    return stream.read(max_bytes + 1).encode("utf-8", "surrogatepass")


def _too_large(size: int, max_bytes: int, *, at_least: bool = False) -> Finding:
    amount = f"more than {max_bytes:,}" if at_least else f"{size:,}"
    return P105.finding(
        f"the input is {amount} bytes, over the size limit of {max_bytes:,} bytes; it was not read",
        claimed=size,
        recomputed=max_bytes,
    )


# --------------------------------------------------------------------------- decoding

# Checked in order: a UTF-32 LE BOM starts with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BOM_PREFIXES = tuple(bom for bom, _ in _BOMS)


def decode_text(data: bytes | str, *, max_bytes: int, encoding: str | None = None) -> tuple[str | None, Finding | None]:
    """Text of a transcript, or the P105 finding that says why there is none.

    ``encoding`` (``--encoding``) decodes bytes with that codec instead of
    UTF-8 (a byte-order mark still wins).
    """
    if isinstance(data, str):
        if len(data) > max_bytes // 4 and len(data.encode("utf-8", "surrogatepass")) > max_bytes:
            return None, _too_large(len(data.encode("utf-8", "surrogatepass")), max_bytes)
        text = data[1:] if data.startswith("\ufeff") else data
        surrogate = None if _has_utf8_spelling(text) else LONE_SURROGATE.search(text)
        if surrogate is not None:  # no UTF-8 spelling: the text did not come from bytes
            return None, P105.finding(
                f"the input is not valid Unicode text: lone surrogate U+{ord(surrogate.group()):04X} "
                f"at character offset {surrogate.start()}",
                claimed=surrogate.start(),
            )
        problem = _nul_character(text)
    else:
        if len(data) > max_bytes:
            return None, _too_large(len(data), max_bytes)
        text, problem = _decode_bytes(data, encoding)
    if problem is not None:
        return None, problem
    if not text or text.isspace():
        what = "empty" if not text else "only whitespace"
        return None, P105.finding(f"the input is {what}: there is no answer to audit")
    return text, None


# What a file passed by mistake most often is, by its first bytes.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a legacy Microsoft Office document (.doc/.xls)"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"\x80\x04\x95", "a Python pickle"),
)
_MAGIC_PREFIXES = tuple(magic for magic, _ in _MAGIC)
_OFFICE_PARTS = (
    (b"word/", "a Word document (.docx)"),
    (b"xl/", "an Excel workbook (.xlsx)"),
    (b"ppt/", "a PowerPoint presentation (.pptx)"),
)


def sniff_binary(data: bytes) -> str | None:
    """What kind of non-text file ``data`` starts like ("a PNG image"), or None."""
    if not data.startswith(_MAGIC_PREFIXES):
        return None  # one test for the common case, a text
    for magic, what in _MAGIC:
        if data.startswith(magic):
            if what == "a ZIP archive":  # Office Open XML documents are ZIP archives of named parts
                head = data[:4096]
                return next((kind for part, kind in _OFFICE_PARTS if part in head), what)
            return what
    return None


def _decode_bytes(data: bytes, requested: str | None = None) -> tuple[str, Finding | None]:
    kind = sniff_binary(data)
    if kind is not None:
        return "", P105.finding(
            f"the input is {kind}, not a text transcript: pass the agent's answer as text (.txt, .md or .json)"
        )
    encoding, skip = requested or "utf-8", 0
    if data.startswith(_BOM_PREFIXES):
        encoding, skip = next((name, len(bom)) for bom, name in _BOMS if data.startswith(bom))
    if encoding == "utf-8":
        nul = data.find(b"\x00")
        if nul >= 0:  # UTF-8 text never holds NUL; UTF-16 without a BOM is not supported
            return "", P105.finding(f"the input is binary, not text: NUL byte at byte offset {nul}")
    try:
        text = data[skip:].decode(encoding)
    except UnicodeDecodeError as exc:
        offset = skip + exc.start
        bad = data[offset : offset + 1].hex()
        label = "UTF-8" if encoding == "utf-8" else encoding.upper()
        hint = (
            ""
            if requested
            else ("; if the file is in another encoding, name it with --encoding (e.g. --encoding cp1252)")
        )
        return "", P105.finding(
            f"the input is not valid {label}: byte 0x{bad} at byte offset {offset} ({exc.reason}){hint}",
            claimed=offset,
        )
    except LookupError:
        return "", P105.finding(f"unknown text encoding {requested!r} (--encoding)")
    # (UTF-8 spells NUL as the NUL byte alone, which was looked for above, in the bytes: a cheaper search)
    return text, None if encoding == "utf-8" else _nul_character(text)


def _has_utf8_spelling(text: str) -> bool:
    """``text`` holds no surrogate code point (only those have no UTF-8 spelling).

    Asked in C: an ASCII test, else a strict UTF-8 encoding, which fails at the first
    surrogate.  A regex over the text costs several times more, and nearly every text
    passes (a library caller's text, or a file's decoded with ``--encoding`` or a BOM).
    """
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _nul_character(text: str) -> Finding | None:
    nul = text.find("\x00")
    return None if nul < 0 else P105.finding(f"the input is binary, not text: NUL character at offset {nul}")


# --------------------------------------------------------------------------- choosing

# Candidate scores: what an object found in the text most likely is.
ANSWER, BARE_REPORT, ANSWER_LIKE, NOT_A_CANDIDATE = 3, 2, 1, 0
_ANSWER_KEYS = ("bench_report", "worked", "verdict", "system_verdict", "metrics")


def candidate_score(value: Any) -> int:
    """How likely a decoded JSON value is the answer (0: not a candidate)."""
    if not isinstance(value, dict):
        return NOT_A_CANDIDATE
    if isinstance(value.get("bench_report"), dict):
        return ANSWER
    if "comparison" in value and "baseline" in value:
        return BARE_REPORT
    if any(key in value for key in _ANSWER_KEYS):
        return ANSWER_LIKE  # the schema will say what is missing
    return NOT_A_CANDIDATE


_QUOTED_ANSWER_KEYS = tuple(f'"{key}"' for key in _ANSWER_KEYS)


def _failure_potential(keys: KeyIndex, start: int, stop: int) -> int:
    """What a span that failed to parse might have been, judged by the keys in its text."""
    if keys.occurs('"bench_report"', start, stop):
        return ANSWER
    if keys.occurs('"comparison"', start, stop) or keys.occurs('"baseline"', start, stop):
        return BARE_REPORT
    if any(keys.occurs(key, start, stop) for key in _QUOTED_ANSWER_KEYS):
        return ANSWER_LIKE
    return NOT_A_CANDIDATE


# -- ordinary files -------------------------------------------------------------------------
#
# A folder of answers may also hold ordinary files (data, notes).  A file found by a
# folder walk is skipped, and counted, only when it holds no answer signal at all;
# a file named on the command line is always audited (auditor.audit).  A signal is
# anything an agent's answer, complete or broken, shows: a JSON object's "{" or a
# ``` fence (however garbled what follows), a quoted answer key, a transcript header
# (a first line that is a label ending in ":", such as "Answer:"), a statistical
# claim in prose (a p-value with a number, a win count such as "7/8 wins") or a
# Python traceback.  A file with a signal but no decodable answer fails P1xx: an
# agent controls its answer's bytes, so broken must never read as absent.

_ANSWER_MEMBER = re.compile(
    r'"(?:bench_report|worked|verdict|system_verdict|practical_verdict|metrics|comparison|per_seed|how_to_run)"\s*:'
)
_P_VALUE_CLAIM = re.compile(r"\bp(?:[- ]?value)?\s*(?:=|<|≤|<=|of)\s*0?\.\d", re.IGNORECASE)
_WIN_COUNT = re.compile(
    r"\b\d+\s*(?:/|of|out of)\s*\d+\s*(?:paired\s+)?(?:seeds?\s+)?wins?\b|\bwins?\s+\d+\s*(?:/|of)\s*\d+", re.IGNORECASE
)
_TRACEBACK = "Traceback (most recent call last)"
# A header is one short line; longer first lines are not read as one.
_HEADER_CHARS = 1000


def holds_an_answer(text: str) -> bool:
    """Whether ``text`` shows any sign of an agent's answer (:data:`_ANSWER_MEMBER` and the rest),
    complete or not; False only for a file no answer could be in (a folder walk skips it)."""
    if "{" in text or "```" in text or _TRACEBACK in text or _ANSWER_MEMBER.search(text):
        return True
    if _starts_with_a_label(text):
        return True
    return bool(_P_VALUE_CLAIM.search(text) or _WIN_COUNT.search(text))


def _starts_with_a_label(text: str) -> bool:
    """Whether the first line with text on it ends in ":" ("Ответ агента:", "bench_report.json:"),
    the way a stored transcript's header opens; string methods, so a long line costs one pass."""
    first = text.lstrip()[:_HEADER_CHARS].split("\n", 1)[0].rstrip()
    return first.endswith(":")


@dataclass(frozen=True)
class Located:
    """The answer object found in a transcript, and what went wrong finding it.

    ``document`` is None when no object could be used; non-finite numbers in
    it were replaced by None and their pointers are in ``nonfinite_pointers``.
    """

    document: dict | None
    findings: tuple[Finding, ...]
    nonfinite_pointers: frozenset[str]
    # The decoded transcript and the offset of the chosen answer's "{" in it (None: no answer),
    # so findings can be placed at their line and column (auditor.parse.locate) without decoding again.
    text: str | None = None
    start: int | None = None
    # The answer's shape (jsonscan.shape_of of its text), when the decoder made one: its brackets, read again.
    shape: bytes | None = None


@dataclass
class _Parsed:
    start: int  # offset of the object's "{" in the text
    value: Any
    nonfinite: list[tuple[str, str, str]]  # (pointer, literal, description)
    score: int
    shape: bytes | None = None  # of the object's text, when the decoder made it (jsonscan.shape_of)


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


def plain_utf8(data: bytes, encoding: str | None) -> bool:
    """Whether the text :func:`decode_text` made of ``data`` passes its checks of a text unchanged:
    bytes decoded as UTF-8 (no ``--encoding``, no byte-order mark) hold no lone surrogate and no
    NUL (refused in the bytes), start with no BOM, and spell the same bytes again."""
    return encoding is None and not data.startswith(_BOM_PREFIXES)


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
            failed.append(_Failed(span, span.start, reason, _failure_potential(keys, span.start, stop)))
            skip_until = stop
            continue
        chunk = text[span.start : stop]
        before = decoder.created
        try:
            value, _ = decoder.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            error = span.start + exc.pos
            failed.append(_Failed(span, error, exc.msg, _failure_potential(keys, span.start, stop)))
            enclosing.append((stop, error))
            continue
        except RecursionError:  # only if max_depth exceeds what json can nest
            reason = "nesting too deep to decode"
            failed.append(_Failed(span, span.start, reason, _failure_potential(keys, span.start, stop)))
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
