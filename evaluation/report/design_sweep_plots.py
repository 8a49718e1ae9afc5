"""The numeric designs' errors against ε per person (docs/math.md §4.2, §9.12): one figure of four panels.

Pure drawing: the long table of :func:`~ldpsim.evaluation.numeric_designs.design_sweep` in, a matplotlib
Figure out. Every panel's axis says its unit; the title says what ε means for each family of designs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure


def design_sweep_figure(table: pd.DataFrame, range_epsilon: float = 1.0) -> Figure:
    """Range-query MSE across range sizes (at ``range_epsilon``), Wasserstein-1, quantile error and the mean
    per-key heat-map error against ε, one line per design (log scales; bars: ± 2 standard errors).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`~ldpsim.evaluation.numeric_designs.design_sweep`'s table.
    range_epsilon : float, default 1
        The ε of the range-size panel (one of the table's).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = Figure(figsize=(12.0, 8.0), layout="constrained")
    axes = fig.subplots(2, 2).ravel()
    reading = table[table["family"] == "reading"]
    at = reading[np.isclose(reading["epsilon"], range_epsilon) & reading["metric"].str.startswith("range_mse_")]
    for design, rows in at.groupby("design"):
        sizes = rows["metric"].str.removeprefix("range_mse_").astype(int)
        order = np.argsort(sizes.to_numpy())
        axes[0].errorbar(sizes.to_numpy()[order], rows["mean"].to_numpy()[order], 2 * rows["se"].to_numpy()[order],
                         marker="o", label=design)
    axes[0].set(xscale="log", yscale="log", xlabel="range size (bins of 1.5625 words/min)",
                ylabel="MSE of the range's share", title=f"Typing speed: range queries at ε = {range_epsilon:g}")
    panels = [(reading, "wasserstein_wpm", "Wasserstein-1 (words/min)", "Typing speed: whole distribution"),
              (reading, "quantile_error_wpm", "|error| of p50, p90, p95 (words/min)", "Typing speed: quantiles"),
              (table[table["family"] == "heatmap"], "heatmap_l2", "√Σ(p̂ − p)² over 16 × 16 cells",
               "Key tap maps (mean over keys e, space, q)")]
    for ax, (frame, metric, ylabel, title) in zip(axes[1:], panels):
        rows = frame[frame["metric"] == metric].groupby(["design", "epsilon"], as_index=False).agg(
            mean=("mean", "mean"), se=("se", lambda s: float(np.sqrt((s ** 2).sum())) / len(s)))
        for design, r in rows.groupby("design"):
            ax.errorbar(r["epsilon"], r["mean"], 2 * r["se"], marker="o", label=design)
        ax.set(xscale="log", yscale="log", xlabel="ε per person over the run", ylabel=ylabel, title=title)
        eps = sorted(rows["epsilon"].unique())
        ax.set_xticks(eps, [f"{e:g}" for e in eps], minor=False)
        ax.set_xticks([], minor=True)
    for ax in axes:
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle("Numeric designs at equal ε per person — ldp-*: ε-LDP, one report; secagg-*: (ε, δ = 1e-9) "
                 "after secure aggregation; central-*: ε-DP on a trusted server", fontsize=10)
    return fig
