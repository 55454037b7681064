"""Read a transcript and decode it to text, or say why not (P105).

:func:`read_source` reads a file or stdin, its size checked before it is read;
:func:`decode_text` turns bytes into text (UTF-8 with or without a BOM, UTF-16/32
with a BOM, or the ``--encoding`` codec), refusing binary files (named by
:func:`sniff_binary`), invalid text, NUL characters and empty input.
Nothing here raises for bad input.
"""

from __future__ import annotations

import codecs
import os
import stat
import sys

from auditor.findings import Finding
from auditor.parse.decoder import LONE_SURROGATE
from auditor.rules.parse import P105

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
        data: bytes = buffer.read(max_bytes + 1)  # (a binary stream, found by name: typed as Any)
        return data
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


def plain_utf8(data: bytes, encoding: str | None) -> bool:
    """Whether the text :func:`decode_text` made of ``data`` passes its checks of a text unchanged:
    bytes decoded as UTF-8 (no ``--encoding``, no byte-order mark) hold no lone surrogate and no
    NUL (refused in the bytes), start with no BOM, and spell the same bytes again."""
    return encoding is None and not data.startswith(_BOM_PREFIXES)
