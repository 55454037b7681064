"""The figure machinery the HTML report's charts share: matplotlib's settings, new axes, a legend
below the plot, and SVG fit to inline (:func:`to_svg`: no XML prologue or metadata, ``role="img"``, a
``<title>`` and an ``aria-label``, ids unique per chart, coordinates rounded to 0.01 pt).

Imported only by ``--format html`` (matplotlib is imported inside the functions that draw).
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from html import escape
from typing import Any

# Colour-blind-safe pair (Okabe-Ito) plus distinct marker shapes: never colour alone.
WIN = {"color": "#0072B2", "marker": "o", "label": "idea wins"}
LOSS = {"color": "#D55E00", "marker": "v", "label": "idea loses"}
TIE = {"color": "#6e7781", "marker": "s", "label": "tie"}
MAX_TICKS = 5
FIGSIZE = (4.4, 2.9)  # inches: two charts side by side on a laptop screen

MARGINS = {"left": 0.16, "right": 0.96, "bottom": 0.15, "top": 0.86}  # right: half a tick label at the end
RC: dict[str, Any] = {
    "svg.fonttype": "none",  # text stays text: small, selectable, searchable
    "text.usetex": False,
    "text.parse_math": False,
    "path.simplify": True,
    "font.size": 8,
    "axes.titlesize": 8.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 7,
    "legend.frameon": False,
    # A fixed title place: matplotlib's automatic one measures every tick label of every chart again.
    "axes.titley": 1.0,
    # One family, not matplotlib's fallback list of twelve, written on every text element.
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
}
_SVG_OPEN = re.compile(r"<svg\b[^>]*>")
_PROLOGUE = re.compile(r"^.*?(?=<svg\b)", re.DOTALL)
# matplotlib's metadata, and its "*{stroke-linejoin...}" sheet, which inline would style the
# whole page (the page's own CSS carries that rule for its charts).
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*|<style[^>]*>.*?</style>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_LONG_NUMBER = re.compile(r"(\d\.\d\d)\d+")
_GROUP_ID = re.compile(r'<g id="[^"]*">')
_GROUP_TAG = re.compile(r"<g\b[^>]*>|</g>")
# Set once by the page's CSS (svg.chart text) instead of on every text element.
_FONT_FAMILY = re.compile(r"font-family: [^;\"]*;? ?")
_NO_ROTATION = re.compile(r' transform="rotate\(-?0 [^)]*\)"')


@dataclass(frozen=True)
class Chart:
    """One inline SVG chart and the words that describe it to a screen reader."""

    title: str
    svg: str


def new_axes() -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE)
    # Fixed margins (room for a two-line title and the axis labels): a layout engine
    # would measure every text twice and triple the drawing time.
    fig.subplots_adjust(**MARGINS)
    ax = fig.add_subplot()
    ax.locator_params(nbins=MAX_TICKS)  # fewer tick labels: less text to lay out and to ship
    return fig, ax


def legend_below(fig: Any, ax: Any, ncols: int = 2) -> None:
    """The axes' legend in a band of its own under the chart, so that it never covers data (a legend
    inside the axes does wherever the data happen to be); the figure grows by the band."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    width, height = fig.get_size_inches()
    band = 0.06 + 0.13 * math.ceil(len(handles) / ncols)  # inches: one line of 6.5 pt text per row
    params = fig.subplotpars
    bottom, top = params.bottom * height + band, (1 - params.top) * height
    fig.set_size_inches(width, height + band)
    fig.subplots_adjust(bottom=bottom / (height + band), top=1 - top / (height + band))
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncols=ncols, fontsize=6.5)


def _drop_bare_groups(svg: str) -> str:
    """``svg`` without the attribute-less ``<g>`` wrappers matplotlib nests (and their ``</g>``)."""
    out: list[str] = []
    kept: list[bool] = []  # per open <g>: whether its tags are written
    last = 0
    for match in _GROUP_TAG.finditer(svg):
        out.append(svg[last : match.start()])
        last = match.end()
        tag = match.group(0)
        if tag == "</g>":
            if kept.pop():
                out.append(tag)
        else:
            kept.append(tag != "<g>")
            if tag != "<g>":
                out.append(tag)
    out.append(svg[last:])
    return "".join(out)


def _compact_tag(match: re.Match[str]) -> str:
    """A tag with coordinates to 0.01 pt and no line breaks (text between tags is left alone)."""
    tag = _LONG_NUMBER.sub(r"\1", match.group(0))
    return tag.replace(" \n", " ").replace("\n", " ")


def style(chart_id: str) -> Any:
    """The charts' settings for drawing and saving chart ``chart_id`` (one rc_context: copying
    matplotlib's settings is a visible share of the drawing time)."""
    import matplotlib

    settings: dict[Any, Any] = {**RC, "svg.hashsalt": chart_id, "svg.id": chart_id}
    return matplotlib.rc_context(settings)


def to_svg(fig: Any, title: str, chart_id: str) -> Chart:
    """``fig`` as an inline ``<svg role="img">`` titled ``title`` (escaped here); called inside ``style(chart_id)``."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = _METADATA.sub("", _PROLOGUE.sub("", buffer.getvalue(), count=1))
    # Group ids (figure_1, axes_1...) would repeat across the page's charts and nothing
    # refers to them; the ids that are referred to (clip paths, markers) hash in chart_id.
    svg = _NO_ROTATION.sub("", _FONT_FAMILY.sub("", _GROUP_ID.sub("<g>", svg)))
    svg = _drop_bare_groups(svg)
    svg = re.sub(r">\s+<", "><", _TAG.sub(_compact_tag, svg))
    label = escape(title)
    opening = _SVG_OPEN.search(svg)
    assert opening is not None  # matplotlib always writes one
    tag = opening.group(0)
    tag = re.sub(r'\s(width|height)="[^"]*"', "", tag)  # the page's CSS sizes it
    tag = tag[:-1] + f' role="img" aria-label="{label}" class="chart">'
    return Chart(title, tag + f"<title>{label}</title>" + svg[opening.end() :])


def nothing_to_draw(fig: Any, ax: Any, message: str, title: str, chart_id: str) -> Chart:
    """A chart that says, in its middle and its title, why it has nothing to draw (never blank)."""
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title)
    return to_svg(fig, title, chart_id)


def wrap_title(title: str, width: int = 56) -> str:
    """A title broken at spaces so that it fits the figure."""
    import textwrap

    return "\n".join(textwrap.wrap(title, width)) or title
