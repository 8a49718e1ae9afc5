"""Figures of an estimated heat map or distribution beside the true one (docs/math.md §2.5–§2.7).

Pure drawing: arrays in, a matplotlib Figure out (no simulation, no files). Titles name the mechanism and
what its ε means; axes carry units.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ldpsim.evaluation.layout import place, title_height


def heatmap_figure(true_counts, est_counts, title: str, unit: str = "key half-widths") -> Figure:
    """The true and the estimated heat map of one key side by side, as shares of the key's taps.

    Parameters
    ----------
    true_counts, est_counts : array_like, shape (side, side)
        Tap counts per cell (row 0 at the bottom of the key); the estimate may be negative (it is shown
        as it is, on the same colour scale, so noise is visible).
    title : str
        The figure's title: the mechanism and what its ε means.
    unit : str
        The unit of the key's coordinates (the box spans −1 … 1).

    Returns
    -------
    matplotlib.figure.Figure
    """
    t = np.asarray(true_counts, float)
    e = np.asarray(est_counts, float)
    n = t.sum()
    shares = (t / n, e / n)
    top = max(float(shares[0].max()), float(shares[1].max()))
    low = min(0.0, float(shares[1].min()))
    fig = Figure(figsize=(9.0, 4.2), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, grid, name in zip(axes, shares, ("true", "estimated")):
        im = ax.imshow(grid, origin="lower", extent=(-1, 1, -1, 1), vmin=low, vmax=top, cmap="viridis")
        ax.set_title(f"{name} (n = {n:,.0f} taps)")
        ax.set_xlabel(f"across the key ({unit})")
    axes[0].set_ylabel(f"up the key ({unit})")
    fig.colorbar(im, ax=axes, label="share of the key's taps per cell")
    fig.suptitle(title)
    return fig


def distribution_figure(edges, true_counts, est_shares, title: str, unit: str) -> Figure:
    """A reading's true histogram and its estimate (shares per bin) over the same bins.

    Parameters
    ----------
    edges : array_like, shape (d + 1,)
        Bin edges in the reading's unit.
    true_counts : array_like, shape (d,)
        True counts per bin.
    est_shares : array_like, shape (d,)
        Estimated shares per bin (e.g. EMS's distribution, or consistent tree leaves over n).
    title : str
        The mechanism and what its ε means.
    unit : str
        The reading's unit (axis label).

    Returns
    -------
    matplotlib.figure.Figure
    """
    x = np.asarray(edges, float)
    t = np.asarray(true_counts, float)
    fig = Figure(figsize=(7.5, 4.0))
    ax = fig.subplots()
    ax.stairs(t / t.sum(), x, label="true", linewidth=2)
    ax.stairs(np.asarray(est_shares, float), x, label="estimated", linewidth=1.5)
    ax.set_xlabel(unit)
    ax.set_ylabel("share of devices per bin")
    ax.legend(loc="upper right")
    ax.set_title(title)
    return place(fig, top=title_height(title))
