"""Text helpers shared by the pipeline and the output layer."""

from __future__ import annotations

import json

# One encoder for the canonical form (json.dumps with options makes a new JSONEncoder per call).
_canonical_encoder = json.JSONEncoder(sort_keys=True, default=str).encode


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
