"""RFC 6901 JSON Pointers, the way every finding names its place in an answer."""

from __future__ import annotations


def escape_pointer_token(token: str | int) -> str:
    text = str(token)
    if "~" in text or "/" in text:
        return text.replace("~", "~0").replace("/", "~1")
    return text


def join_pointer(base: str, *tokens: str | int) -> str:
    """RFC 6901 pointer ``base`` extended by ``tokens``."""
    for token in tokens:
        base += "/" + escape_pointer_token(token)
    return base
