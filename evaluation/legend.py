"""A fixed legend corner for every figure: the corner of the axes with the fewest plotted points.

Matplotlib's default ``loc="best"`` searches positions against all the drawn data and warns ("can be
slow") when that search takes more than a second — on a loaded machine that happens with small
figures too, and with warnings as errors a figure then failed on load alone. :func:`quiet_corner`
decides once, from the data only (points of lines and the tops of bars, in axes coordinates), so the
same data always gives the same corner, however busy the machine.
"""

from __future__ import annotations

import numpy as np

#: the corners in order of preference when several hold equally few points
CORNERS = ("upper right", "upper left", "lower left", "lower right")


def quiet_corner(ax) -> str:
    """The ``loc`` of the corner quadrant of ``ax`` holding the fewest data points (ties: :data:`CORNERS` order).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes whose lines and bars are drawn and whose limits and scales are set.
    """
    ax.autoscale_view()
    points = [line.get_xydata() for line in ax.get_lines()]
    points += [np.array([[p.get_x() + p.get_width() / 2, p.get_y() + p.get_height()]]) for p in ax.patches
               if hasattr(p, "get_width")]
    points = [p for p in points if len(p)]
    if not points:
        return CORNERS[0]
    xy = ax.transAxes.inverted().transform(ax.transData.transform(np.vstack(points)))
    xy = xy[np.isfinite(xy).all(axis=1)]
    right, upper = xy[:, 0] > 0.5, xy[:, 1] > 0.5
    counts = [int(np.sum(upper & right)), int(np.sum(upper & ~right)), int(np.sum(~upper & ~right)),
              int(np.sum(~upper & right))]
    return CORNERS[int(np.argmin(counts))]
