"""Text helpers shared by the pipeline and the output layer."""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii


def json_encoder(
    *,
    sort_keys: bool = False,
    ensure_ascii: bool = True,
    separators: tuple[str, str] = (", ", ": "),
    allow_nan: bool = True,
    default: Callable[[object], object] | None = None,
) -> Callable[[object], str]:
    """``json.dumps`` with these options, as a function built once.

    ``json.dumps`` and ``JSONEncoder.encode`` build the C encoder anew on every
    call, which costs more than encoding a small config (~7 us against ~2 us);
    an audit encodes a few dozen.  The values encoded here are decoded JSON and
    what the auditor builds from it, never cyclic, so no cycle check is kept
    (a value nested too deep still raises RecursionError, as json.dumps does).
    """
    if c_make_encoder is None:  # an interpreter without the _json accelerator
        return json.JSONEncoder(
            sort_keys=sort_keys, ensure_ascii=ensure_ascii, separators=separators, allow_nan=allow_nan, default=default
        ).encode
    encoder = c_make_encoder(
        None,  # no cycle check
        default if default is not None else json.JSONEncoder().default,  # the stock default raises TypeError
        encode_basestring_ascii if ensure_ascii else encode_basestring,
        None,  # no indent
        separators[1],
        separators[0],
        sort_keys,
        False,  # skipkeys
        allow_nan,
    )
    join = "".join
    return lambda value: join(encoder(value, 0))


# The canonical form is asked for per sweep entry, several times per audit.
_canonical_encoder = json_encoder(sort_keys=True, default=str)


def canonical_json(value: object) -> str:
    """``json.dumps(value, sort_keys=True, default=str)``: one spelling for equal config values."""
    return _canonical_encoder(value)


def shorten(text: str, limit: int, ellipsis: str = "...") -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``ellipsis`` when cut."""
    return text if len(text) <= limit else text[: limit - len(ellipsis)] + ellipsis


def plural(count: int, noun: str) -> str:
    """``1 file``, ``2 files``, ``0 errors``: the count with its noun, in agreement."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def config_text(cfg: object, limit: int = 200) -> str:
    """A config as people write it, ``lr=0.003, epochs=12``, cut at ``limit`` characters
    (a config may hold thousands of keys); anything but a dict as JSON."""
    if isinstance(cfg, dict):
        text = ", ".join(f"{key}={json.dumps(value, allow_nan=True)}" for key, value in cfg.items())
        text = text or "{}"
    else:
        text = json.dumps(cfg, allow_nan=True, default=str)
    return shorten(text, limit, " ...")


def grid_text(values: list[float]) -> str:
    """A grid of numbers, ``[0.001, 0.003, 0.006]``: numbers, not quoted strings."""
    return "[" + ", ".join(f"{value:g}" for value in values) + "]"
