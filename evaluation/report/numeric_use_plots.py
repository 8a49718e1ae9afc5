"""Figures of a deployment's numeric use cases: each estimated heat map or distribution beside the true one.

Drawn from the run's ``numeric_metrics`` and ``numeric_cells`` tables (:mod:`ldpsim.evaluation.deployment.numeric_runs`)
with :mod:`ldpsim.evaluation.report.distribution_plots`; each title names the use case, the design and what its
ε means (of one report or release, and per person over the run).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.evaluation.numeric_designs import SIDE
from ldpsim.evaluation.report.distribution_plots import distribution_figure, heatmap_figure


def numeric_title(row: pd.Series, key: str = "") -> str:
    """``<use case>: <design>[, key 'k'], ε = …[, δ = …] of one report (or nightly release), ε ≤ …[, δ ≤ …] per
    person over the run`` (the run's accountant: the nights composed, docs/math.md §9.14)."""
    scope = "one report" if row["trusts"] == "nobody" else "one nightly release"
    delta = f", δ = {row['delta']:g}" if row["delta"] > 0 else ""
    where = f", key {key!r}" if key else ""
    person = f"ε ≤ {row['epsilon_person']:g}" + (f", δ ≤ {row['delta_person']:.3g}" if row["delta"] > 0 else "")
    return (f"{row['use_case']}: {row['design']}{where}, ε = {row['epsilon_report']:g}{delta} of {scope}, "
            f"{person} per person over the run")


def numeric_figures(tables: dict) -> list[tuple]:
    """``(file name, Figure, caption)`` for every key of every heat-map use case and every reading use case."""
    metrics, cells = tables.get("numeric_metrics", pd.DataFrame()), tables.get("numeric_cells", pd.DataFrame())
    out = []
    if metrics.empty or cells.empty:
        return out
    for (name, key), c in cells.groupby(["use_case", "key"], sort=False):
        m = metrics[(metrics["use_case"] == name) & (metrics["key"] == key)]
        if m.empty:  # no device reported (nothing to draw against)
            continue
        row = m.iloc[0]
        trust = f"trusting {row['trusts']}"
        if row["family"] == "heatmap":
            l2 = float(m.loc[m["metric"] == "heatmap_l2", "value"].iloc[0])
            fig = heatmap_figure(c["true_count"].to_numpy().reshape(SIDE, SIDE),
                                 c["estimate"].to_numpy().reshape(SIDE, SIDE), numeric_title(row, key))
            out.append((f"numeric_{name}_{key}.png", fig,
                        f"Where fingers land on key {key!r} ({name}): the true tap map of the run's {row['reports']:,} "
                        f"reports and the {row['design']} estimate ({trust}), as shares of the key's taps; "
                        f"√Σ(p̂ − p)² = {l2:.3g}."))
        else:
            edges = np.append(c["low"].to_numpy(), c["high"].iloc[-1])
            w1 = float(m.loc[m["metric"] == "wasserstein", "value"].iloc[0])
            fig = distribution_figure(edges, c["true_count"], c["estimate"] / c["true_count"].sum(),
                                      numeric_title(row), row["unit"])
            out.append((f"numeric_{name}.png", fig,
                        f"Distribution of {name} ({row['unit']}) over the run's {row['reports']:,} reports: the truth and "
                        f"the {row['design']} estimate ({trust}); Wasserstein-1 = {w1:.3g} {row['unit']}."))
    return out
