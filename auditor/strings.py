"""Text helpers shared by the pipeline and the output layer."""

from __future__ import annotations


def shorten(text: str, limit: int, ellipsis: str = "...") -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``ellipsis`` when cut."""
    return text if len(text) <= limit else text[: limit - len(ellipsis)] + ellipsis
