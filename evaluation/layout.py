"""Figure margins fixed in inches, decided once from what the figure holds, and a fast PNG write.

Matplotlib's tight and constrained layouts measure every text of a figure (each tick label, title and
legend entry) to place the axes, and the save measures and draws them all again: for a run's figures
that layout was about a third of the figures' time. A figure of ours holds known parts — a title of a
known number of lines, axis labels, tick labels at a known font size, a legend row under the axes —
so :func:`place` sets its margins in inches from those parts, without drawing anything; the one part
whose size depends on the data, rotated item names under a bar chart, is measured from the font's
metrics (:func:`label_depth`, no renderer). The figure then draws once, when it is saved.

Titles sit at the top of their axes (:data:`STYLE`, the figures' shared settings, applied with
:func:`style`): matplotlib otherwise measures every axes' tick labels once more per title, to lift the
title over labels our figures never put at the top. :func:`save_png` writes a PNG with zlib's fastest
level: the same pixels, about a tenth larger.
"""

from __future__ import annotations

import math

#: points per inch
POINTS = 72.0
#: height of one line of text, in units of its font size (ascent, descent and leading)
LINE = 1.25
#: inches taken by an axis' tick labels and its label at the default sizes (10 pt), beside or under the axes
AXIS = 0.55
#: inches taken by a y axis' tick labels and label at the default sizes (up to six characters a tick label)
Y_AXIS = 0.85
#: inches above the axes taken by a title's first line at the default size (12 pt, with its pad)
TITLE = 0.32
#: outer pad on every side, inches
PAD = 0.08
#: zlib level of :func:`save_png` (1: fastest; the pixels are the same at every level)
PNG_LEVEL = 1
#: matplotlib settings of every figure drawn inside :func:`style`: titles at the top of the axes, never moved
#: after measuring the tick labels (our figures have no tick labels above the axes: the same pixels)
STYLE = {"axes.titley": 1.0}


def style():
    """A context in which figures are built with :data:`STYLE` (``with style(): fig = ...``)."""
    import matplotlib

    return matplotlib.rc_context(STYLE)


def text_lines(points: float, lines: int = 1) -> float:
    """Inches taken by ``lines`` lines of text at ``points`` pt."""
    return lines * LINE * points / POINTS


def title_height(title: str, points: float = 12.0) -> float:
    """Inches above the axes taken by ``title`` (its lines at ``points`` pt, with matplotlib's 6 pt pad)."""
    return text_lines(points, title.count("\n") + 1) + 6.0 / POINTS if title else 0.0


def label_depth(labels, points: float, rotation: float) -> float:
    """Inches under the axis taken by tick ``labels`` at ``points`` pt rotated by ``rotation`` degrees: the
    longest label's width times sin(rotation) plus its height times cos(rotation), measured with the font's
    metrics (the text-to-path engine: no figure, no renderer)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    prop = FontProperties(size=points)
    widths = [text_to_path.get_text_width_height_descent(str(s), prop, ismath=False)[0] for s in labels if str(s)]
    a = math.radians(rotation)
    return (max(widths, default=0.0) * math.sin(a) + LINE * points * math.cos(a)) / POINTS


def place(fig, *, left: float = Y_AXIS, right: float = 0.2, bottom: float = AXIS, top: float = TITLE,
          gap: float = 0.0, wgap: float = 0.0):
    """Put the axes grid of ``fig`` inside margins given in inches (``gap``, ``wgap``: inches between rows and
    between columns of axes); returns ``fig``. The figure keeps no layout engine, so nothing is measured again
    when it is drawn."""
    fig.set_layout_engine("none")
    width, height = fig.get_size_inches()
    left, right, bottom, top = left + PAD, right + PAD, bottom + PAD, top + PAD
    rows, cols = _grid(fig)
    axes_h = (height - top - bottom - (rows - 1) * gap) / rows
    axes_w = (width - left - right - (cols - 1) * wgap) / cols
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height,
                        hspace=gap / axes_h if rows > 1 else 0.0, wspace=wgap / axes_w if cols > 1 else 0.0)
    return fig


def _grid(fig) -> tuple[int, int]:
    """Rows and columns of the grid the figure's subplots sit in (1 × 1 without subplots)."""
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        if spec is not None:
            return spec.get_gridspec().get_geometry()
    return 1, 1


def save_png(fig, path, dpi: float) -> None:
    """Write ``fig`` to ``path`` as a PNG at ``dpi`` (zlib level :data:`PNG_LEVEL`)."""
    fig.savefig(path, dpi=dpi, format="png", pil_kwargs={"compress_level": PNG_LEVEL})
