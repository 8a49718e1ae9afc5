"""A rising item's released daily counts with their 95 % band, one panel per design — docs/math.md §12.6."""

from __future__ import annotations

import textwrap

import pandas as pd

from ldpsim.evaluation.confidence import Z95


def plot_trajectories(df: pd.DataFrame, path, title: str) -> None:
    """:func:`trajectory_figure` of ``df`` written to ``path`` as a PNG."""
    trajectory_figure(df, title).savefig(path, dpi=100, format="png")


def trajectory_figure(df: pd.DataFrame, title: str, ylabel: str = "devices using the item that day",
                      truth: str = "expected count n·π_t"):
    """One panel per design of ``df`` (columns design, day, expected, estimate, sd, threshold, meaning):
    the released daily estimate with its band estimate ± Z95·sd (sd of the release's error on that day),
    the ``expected`` count (legend ``truth``) and the detector's threshold divided by its window; a
    matplotlib Figure."""
    from matplotlib.figure import Figure

    designs = list(dict.fromkeys(df["design"]))
    fig = Figure(figsize=(5.0 * len(designs), 4.2))
    axes = fig.subplots(1, len(designs), sharey=True, squeeze=False)[0]
    for ax, name in zip(axes, designs):
        d = df[df["design"] == name]
        ax.fill_between(d["day"], d["estimate"] - Z95 * d["sd"], d["estimate"] + Z95 * d["sd"],
                        color="C0", alpha=0.25, lw=0, label="95 % band of the release")
        ax.plot(d["day"], d["estimate"], "-", color="C0", lw=1, label="released daily count")
        ax.plot(d["day"], d["expected"], "k--", lw=1, label=truth)
        ax.plot(d["day"], d["threshold"], ":", color="C3", lw=1, label="alarm threshold ÷ window")
        ax.set(xlabel="day of the run", title=f"{name}\n" + textwrap.fill(d["meaning"].iloc[0], 70))
        ax.title.set_fontsize(8)
    axes[0].set_ylabel(ylabel)
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(textwrap.fill(title, 14 * int(fig.get_figwidth())), fontsize=9)
    fig.tight_layout()
    return fig
