"""A check shared by the figure tests: which parts of a drawn figure fall off its canvas."""

from __future__ import annotations


def texts_off_canvas(fig, tolerance: float = 1.0) -> list[str]:
    """The parts of ``fig`` that reach past its canvas after a draw (in pixels), each as ``"part: its box"``:
    an axes with whatever it draws (tick labels, axis labels, title, legend), a figure text (a suptitle) or a
    figure legend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer, (width, height) = canvas.get_renderer(), canvas.get_width_height()
    parts = [(f"axes {ax.get_title() or ax.get_ylabel()!r}", ax.get_tightbbox(renderer)) for ax in fig.axes]
    parts += [(repr(t.get_text()), t.get_window_extent(renderer)) for t in fig.texts if t.get_text()]
    if fig._suptitle is not None:
        parts.append((repr(fig._suptitle.get_text()), fig._suptitle.get_window_extent(renderer)))
    parts += [("figure legend", legend.get_window_extent(renderer)) for legend in fig.legends]
    return [f"{name}: {box}" for name, box in parts if box.x0 < -tolerance or box.y0 < -tolerance
            or box.x1 > width + tolerance or box.y1 > height + tolerance]
