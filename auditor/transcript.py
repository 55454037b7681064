"""Find the answer's JSON object in a transcript, whatever surrounds it.

Stored answers are a header (any language), then the JSON object, sometimes in
a ```json fence, followed by prose, with CRLF line ends or a BOM.  This module
turns raw bytes into one decoded object plus parse findings (P101-P105):

1. :func:`decode_text` -- bytes to text (UTF-8 with/without BOM, UTF-16/32 with
   BOM); binary, invalid UTF-8, empty or oversized input is P105.
2. :func:`scan_objects` -- one linear pass that pairs every ``{`` with its
   ``}`` and measures nesting depth, so that no candidate is ever handed to
   :mod:`json` deeper than ``max_depth`` (P102 instead of a RecursionError) and
   no input makes the search quadratic.
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

from .findings import Finding, finding
from .model import join_pointer
from .rules import parse as _parse_rules  # noqa: F401  (registers P101-P105)

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
                return None, finding("P105", f"cannot read {path!r}: it is a directory, not a file")
            if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
                return None, _too_large(info.st_size, max_bytes)
            with open(path, "rb") as handle:
                data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        return None, finding("P105", f"cannot read {path!r}: no such file")
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return None, finding("P105", f"cannot read {path!r}: {reason}")
    if len(data) > max_bytes:
        return None, _too_large(len(data), max_bytes, at_least=True)
    if not data:
        return None, finding("P105", "the input is empty (0 bytes): there is no answer to audit")
    return data, None


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
    return finding(
        "P105",
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


def decode_text(data: bytes | str, *, max_bytes: int) -> tuple[str | None, Finding | None]:
    """Text of a transcript, or the P105 finding that says why there is none."""
    if isinstance(data, str):
        if len(data) > max_bytes // 4 and len(data.encode("utf-8", "surrogatepass")) > max_bytes:
            return None, _too_large(len(data.encode("utf-8", "surrogatepass")), max_bytes)
        text = data[1:] if data.startswith("\ufeff") else data
    else:
        if len(data) > max_bytes:
            return None, _too_large(len(data), max_bytes)
        text, problem = _decode_bytes(data)
        if problem is not None:
            return None, problem
    nul = text.find("\x00")
    if nul >= 0:
        return None, finding("P105", f"the input is binary, not text: NUL character at offset {nul}")
    if not text.strip():
        what = "empty" if not text else "only whitespace"
        return None, finding("P105", f"the input is {what}: there is no answer to audit")
    return text, None


def _decode_bytes(data: bytes) -> tuple[str, Finding | None]:
    encoding, skip = "utf-8", 0
    for bom, name in _BOMS:
        if data.startswith(bom):
            encoding, skip = name, len(bom)
            break
    if encoding == "utf-8":
        nul = data.find(b"\x00")
        if nul >= 0:  # UTF-8 text never holds NUL; UTF-16 without a BOM is not supported
            return "", finding("P105", f"the input is binary, not text: NUL byte at byte offset {nul}")
    try:
        return data[skip:].decode(encoding), None
    except UnicodeDecodeError as exc:
        offset = skip + exc.start
        bad = data[offset : offset + 1].hex()
        label = "UTF-8" if encoding == "utf-8" else encoding.upper()
        return "", finding(
            "P105",
            f"the input is not valid {label}: byte 0x{bad} at byte offset {offset} ({exc.reason})",
            claimed=offset,
        )


# --------------------------------------------------------------------------- scanning

_BRACKET_OR_QUOTE = re.compile(r'[{}\[\]"]')
# The rest of a JSON string after its opening quote.  JSON strings cannot hold a
# raw newline, so a quote that does not close on its own line is prose (an inch
# mark, an apostrophe-like quote) and must not swallow the brackets after it.
_STRING_TAIL = re.compile(r'(?:[^"\\\n]|\\.)*+"')
_JSON_LOOKING = re.compile(r'\{\s*(?:["}]|\Z)')


@dataclass
class ObjectSpan:
    """A ``{`` and how far it reaches.

    ``end`` is the index of the bracket that closed it (its own ``}``, or a
    mismatched ``]``), or None when it is still open at the end of the text.
    ``depth`` is the nesting depth of everything inside, itself included.
    """

    start: int
    end: int | None = None
    depth: int = 1


def scan_objects(text: str) -> list[ObjectSpan]:
    """Every ``{`` of ``text`` with its extent and nesting depth, in text order.

    One pass over the brackets and quotes; each bracket is pushed and popped
    once, so the cost is linear even for 100k nested ``{``.  Quotes count only
    inside a bracket (prose quotes at top level are ignored), and a quote that
    cannot close on its line is treated as prose.
    """
    spans: list[ObjectSpan] = []
    # Parallel stacks: the open bracket, the deepest nesting below it so far,
    # and its span (None for "[").
    brackets: list[str] = []
    child_depths: list[int] = []
    open_spans: list[ObjectSpan | None] = []
    open_count = {"{": 0, "[": 0}
    skip_to = 0  # end of the last string jumped over
    quotes_dead_until = -1  # quotes before this index cannot open a string
    for match in _BRACKET_OR_QUOTE.finditer(text):
        i = match.start()
        if i < skip_to:
            continue  # inside a string
        char = match.group()
        if char == '"':
            if not brackets or i < quotes_dead_until:
                continue
            tail = _STRING_TAIL.match(text, i + 1)
            if tail is not None:
                skip_to = tail.end()
            else:
                newline = text.find("\n", i)
                quotes_dead_until = len(text) if newline < 0 else newline
        elif char == "{" or char == "[":
            span = ObjectSpan(i) if char == "{" else None
            if span is not None:
                spans.append(span)
            brackets.append(char)
            child_depths.append(0)
            open_spans.append(span)
            open_count[char] += 1
        else:
            opener = "{" if char == "}" else "["
            if open_count[opener] == 0:
                continue  # a stray closer in prose
            closed = ""
            while closed != opener:  # brackets left open inside close with it
                closed = _pop(brackets, child_depths, open_spans, open_count, end=i)
    while brackets:
        _pop(brackets, child_depths, open_spans, open_count, end=None)
    return spans


def _pop(
    brackets: list[str],
    child_depths: list[int],
    open_spans: list[ObjectSpan | None],
    open_count: dict[str, int],
    *,
    end: int | None,
) -> str:
    bracket = brackets.pop()
    depth = child_depths.pop() + 1
    span = open_spans.pop()
    open_count[bracket] -= 1
    if child_depths and child_depths[-1] < depth:
        child_depths[-1] = depth
    if span is not None:
        span.end, span.depth = end, depth
    return bracket


# --------------------------------------------------------------------------- decoding JSON


class _NonFinite:
    """Stands in for a number that has no finite double value."""

    __slots__ = ("literal", "description")

    def __init__(self, literal: str, description: str) -> None:
        self.literal = literal
        self.description = description


def _make_decoder(created: list[int]) -> json.JSONDecoder:
    """A decoder that turns non-finite numbers into :class:`_NonFinite`.

    ``created[0]`` counts them, so that documents without any are not walked.
    """

    def non_finite(literal: str, description: str) -> _NonFinite:
        created[0] += 1
        return _NonFinite(literal, description)

    def parse_constant(text: str) -> _NonFinite:  # NaN, Infinity, -Infinity
        return non_finite(text, f"{text} (not a JSON number)")

    def parse_float(text: str) -> float | _NonFinite:
        value = float(text)
        if value in (_INF, -_INF):
            return non_finite(_shorten(text), f"{_shorten(text)} (overflows a 64-bit float to infinity)")
        return value

    def parse_int(text: str) -> int | _NonFinite:
        # int() refuses more than 4300 digits, and past ~309 digits a value
        # overflows the doubles the statistics are computed in anyway.
        if len(text) <= _MAX_INT_CHARS:
            value = int(text)
            try:
                float(value)
                return value
            except OverflowError:
                pass
        digits = len(text.lstrip("-"))
        return non_finite(_shorten(text), f"an integer of {digits} digits (overflows a 64-bit float to infinity)")

    return json.JSONDecoder(parse_float=parse_float, parse_int=parse_int, parse_constant=parse_constant)


_INF = float("inf")
_MAX_INT_CHARS = 400


def _shorten(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def _failure_potential(chunk: str) -> int:
    """What a span that failed to parse might have been, judged by its text."""
    if '"bench_report"' in chunk:
        return ANSWER
    if '"comparison"' in chunk or '"baseline"' in chunk:
        return BARE_REPORT
    if any(f'"{key}"' in chunk for key in _ANSWER_KEYS):
        return ANSWER_LIKE
    return NOT_A_CANDIDATE


@dataclass(frozen=True)
class Located:
    """The answer object found in a transcript, and what went wrong finding it.

    ``document`` is None when no object could be used; non-finite numbers in
    it were replaced by None and their pointers are in ``nonfinite_pointers``.
    """

    document: dict | None
    findings: tuple[Finding, ...]
    nonfinite_pointers: frozenset[str]


@dataclass
class _Parsed:
    span: ObjectSpan
    value: Any
    nonfinite: list[tuple[str, str, str]]  # (pointer, literal, description)
    score: int


@dataclass
class _Failed:
    span: ObjectSpan
    offset: int  # where in the whole text the problem is
    reason: str
    potential: int


def locate(data: bytes | str, *, max_bytes: int, max_depth: int) -> Located:
    """Find, decode and choose the answer object in a transcript. Never raises."""
    text, problem = decode_text(data, max_bytes=max_bytes)
    if text is None:
        return Located(None, (problem,) if problem else (), frozenset())
    parsed, failed = _decode_spans(text, scan_objects(text), max_depth)
    candidates = [p for p in parsed if p.score > NOT_A_CANDIDATE]
    best_score = max((c.score for c in candidates), default=NOT_A_CANDIDATE)
    # A failed span matters when nothing parsed, or when it looks like more
    # than the best thing that did (a truncated answer around a valid inner
    # report); stray braces in prose next to a valid answer do not.
    blocking = [f for f in failed if not candidates or f.potential > best_score]
    if blocking:
        return Located(None, (_malformed(text, blocking, max_depth),), frozenset())
    if not candidates:
        return Located(None, (_nothing_found(text, parsed),), frozenset())
    chosen, several = _choose(text, [c for c in candidates if c.score == best_score])
    findings = [several] if several is not None else []
    for pointer, literal, description in chosen.nonfinite:
        findings.append(
            finding(
                "P104",
                f"non-finite number {description} at {pointer or '/'}: "
                "strict JSON allows only finite numbers, so the value was treated as null",
                pointer=pointer,
                claimed=literal,
            )
        )
    pointers = frozenset(pointer for pointer, _, _ in chosen.nonfinite)
    return Located(chosen.value, tuple(findings), pointers)


def _decode_spans(text: str, spans: list[ObjectSpan], max_depth: int) -> tuple[list[_Parsed], list[_Failed]]:
    """Decode every JSON-looking span that is not inside an already decoded one.

    When a span fails, the spans inside it are tried in turn (a ``{`` in the
    header may enclose the real object).  Spans deeper than ``max_depth`` are
    never decoded, so the total work is bounded by ``len(text) * max_depth``.
    """
    created = [0]
    decoder = _make_decoder(created)
    parsed: list[_Parsed] = []
    failed: list[_Failed] = []
    skip_until = -1
    open_span_tried = False  # spans open at the end of text nest in one chain
    for span in spans:
        if span.start < skip_until or (span.end is None and open_span_tried):
            continue
        if not _JSON_LOOKING.match(text, span.start):
            continue  # "{x}" in prose, or "{{": look inside instead
        open_span_tried = open_span_tried or span.end is None
        stop = len(text) if span.end is None else span.end + 1
        chunk = text[span.start : stop]
        if span.depth > max_depth:
            failed.append(_Failed(span, span.start, f"nesting deeper than {max_depth} levels", _failure_potential(chunk)))
            skip_until = stop
            continue
        before = created[0]
        try:
            value, _ = decoder.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            failed.append(_Failed(span, span.start + exc.pos, exc.msg, _failure_potential(chunk)))
            continue
        except RecursionError:  # only if max_depth exceeds what json can nest
            failed.append(_Failed(span, span.start, "nesting too deep to decode", _failure_potential(chunk)))
            skip_until = stop
            continue
        skip_until = stop
        nonfinite = []
        if created[0] != before:
            nonfinite = [(p, d.literal, d.description) for p, d in _collect_nonfinite(value)]
        parsed.append(_Parsed(span, value, nonfinite, candidate_score(value)))
    return parsed, failed


def _collect_nonfinite(value: Any) -> list[tuple[str, _NonFinite]]:
    """Replace stand-ins by None in place; (pointer, stand-in) in document order."""
    found: list[tuple[str, _NonFinite]] = []
    stack: list[tuple[Any, Any, str]] = [(_entries(value), value, "")]
    while stack:
        entries, container, pointer = stack[-1]
        step = next(entries, None)
        if step is None:
            stack.pop()
            continue
        key, item = step
        if isinstance(item, _NonFinite):
            found.append((join_pointer(pointer, key), item))
            container[key] = None  # same key: safe while iterating
        elif isinstance(item, (dict, list)):
            stack.append((_entries(item), item, join_pointer(pointer, key)))
    return found


def _entries(container: dict | list) -> Any:
    return iter(container.items()) if isinstance(container, dict) else enumerate(container)


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text`` (CRLF counts as one line end)."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _malformed(text: str, failed: list[_Failed], max_depth: int) -> Finding:
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
    return finding("P102", message)


def _span_length(text: str, span: ObjectSpan) -> int:
    return (len(text) if span.end is None else span.end + 1) - span.start


def _nothing_found(text: str, parsed: list[_Parsed]) -> Finding:
    if parsed:
        return finding(
            "P101",
            f"no answer object found: {len(parsed)} JSON object(s) were found, but none has a "
            "'bench_report' key, 'comparison' and 'baseline' keys, or an answer key "
            "('worked', 'verdict', 'system_verdict', 'metrics')",
        )
    lines = text.count("\n") + 1
    return finding("P101", f"no JSON object found in the input ({lines} lines, {len(text):,} characters)")


def _choose(text: str, top: list[_Parsed]) -> tuple[_Parsed, Finding | None]:
    """The most complete of the best-scoring candidates (the last on ties).

    Identical copies (an answer pasted twice) count once and are no P103.
    """
    distinct: dict[str, _Parsed] = {}
    for candidate in top:
        key = json.dumps(candidate.value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        distinct.pop(key, None)  # keep the later copy, in text order
        distinct[key] = candidate
    ranked = sorted(distinct.items(), key=lambda item: item[1].span.start)
    chosen = max(ranked, key=lambda item: (_node_count(item[1].value), len(item[0]), item[1].span.start))[1]
    if len(ranked) < 2:
        return chosen, None
    lines = [line_column(text, c.span.start)[0] for _, c in ranked]
    shown = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
    chosen_line = line_column(text, chosen.span.start)[0]
    return chosen, finding(
        "P103",
        f"found {len(ranked)} different candidate answer objects (starting at lines {shown}); "
        f"audited the most complete one, which starts at line {chosen_line}",
        claimed=len(ranked),
    )


def _node_count(value: Any) -> int:
    count, pending = 0, [value]
    while pending:
        item = pending.pop()
        count += 1
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return count
