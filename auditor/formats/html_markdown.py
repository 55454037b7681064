"""The small Markdown subset the rule docs are written in, rendered as escaped HTML.

Supported: ``## headings``, paragraphs, ``-``/``*`` lists, fenced code blocks
and inline ``code``.  Everything else is text.  Every character of the input
is escaped before any tag is added, so nothing in a doc can become markup.
"""

from __future__ import annotations

import inspect
import re
from html import escape

_INLINE_CODE = re.compile(r"`([^`]+)`")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_ITEM = re.compile(r"^\s*[-*]\s+(.*)$")
# A doc's "## What it does" sits under the rule's own heading (h3): two levels down.
HEADING_OFFSET = 2


def _inline(text: str) -> str:
    """Escaped text with `code` spans as <code>."""
    parts = _INLINE_CODE.split(text)
    return "".join(f"<code>{escape(part)}</code>" if i % 2 else escape(part) for i, part in enumerate(parts))


def _heading(match: re.Match[str]) -> str:
    level = min(6, len(match.group(1)) + HEADING_OFFSET)
    return f"<h{level}>{_inline(match.group(2))}</h{level}>"


def render_markdown(doc: str) -> str:
    """``doc`` (a docstring: its indentation is removed first) as HTML."""
    out: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []
    code: list[str] | None = None

    def flush() -> None:
        if paragraph:
            out.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + "</ul>")
            items.clear()

    for line in inspect.cleandoc(doc).splitlines():
        if code is not None:
            if line.strip().startswith("```"):
                out.append(f"<pre><code>{escape(chr(10).join(code))}</code></pre>")
                code = None
            else:
                code.append(line)
            continue
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            code = []
        elif not stripped:
            flush()
        elif heading := _HEADING.match(stripped):
            flush()
            out.append(_heading(heading))
        elif item := _ITEM.match(line):
            if paragraph:
                flush()
            items.append(item.group(1))
        elif items and line.startswith((" ", "\t")):
            items[-1] += " " + stripped  # a list item's continuation line
        else:
            if items:
                flush()
            paragraph.append(stripped)
    if code is not None:  # an unclosed fence: still shown, as code
        out.append(f"<pre><code>{escape(chr(10).join(code))}</code></pre>")
    flush()
    return "".join(out)
