"""Text helpers shared by the pipeline and the output layer."""

from __future__ import annotations


def shorten(text: str, limit: int, ellipsis: str = "...") -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``ellipsis`` when cut."""
    return text if len(text) <= limit else text[: limit - len(ellipsis)] + ellipsis


def plural(count: int, noun: str) -> str:
    """``1 file``, ``2 files``, ``0 errors``: the count with its noun, in agreement."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
