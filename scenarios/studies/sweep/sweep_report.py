"""A sweep's figures and report page, drawn from its stored tables (never a simulation): the sweep study
owns its outputs, the figures themselves are :mod:`ldpsim.evaluation.report.plots`."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ldpsim.evaluation.numeric_use import NUMERIC_WORKLOADS
from ldpsim.evaluation.privacy.level_columns import COLUMNS as LEVEL_COLUMNS
from ldpsim.evaluation.report.html import report_from_run_dir
from ldpsim.evaluation.report.plots import (BOOKKEEPING, caption, discovery_curves, frequency_bars, km_heatmaps,
                                            metric_vs_epsilon, per_rank_curves)
from ldpsim.runtime.durable import make_dirs, write_text
from ldpsim.scenarios.studies.scenario.grid import load_scenario
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.scenarios.studies.sweep.store import RunStore


def sweep_results(run_dir: Path) -> pd.DataFrame:
    """One row per cell of a sweep: its varying parameters, the ε of its one report a user with what one
    item and one person get (``epsilon_report``, ``epsilon_item``, ``epsilon_person``) and every aggregate
    metric as "mean ± se"."""

    summary = RunStore(run_dir).read("summary")
    if summary.empty:
        return summary
    agg = summary[summary["rank"].isna()].copy()
    params = ["mechanism"] + [c for c in agg.columns if c not in BOOKKEEPING | {"mechanism"}
                              and agg[c].astype(str).nunique() > 1]
    agg["value"] = [f"{m:.4g} ± {s:.2g}" for m, s in zip(agg["mean"], agg["se"])]
    wide = agg.pivot_table(index="cell_index", columns="metric", values="value", aggfunc="first")
    scopes = [c for c in ("epsilon_report", *LEVEL_COLUMNS) if c in agg]   # a summary written before: absent
    labels = agg.groupby("cell_index")[params].first().astype(str).join(agg.groupby("cell_index")[scopes].first())
    return labels.join(wide[list(dict.fromkeys(agg["metric"]))]).reset_index()


def _cells(store: RunStore) -> dict:
    """cell id → Cell of the stored scenario ({} when it cannot be rebuilt)."""

    try:
        return {c.id: c for c in load_scenario(Path(store.root) / "scenario.toml").cells()}
    except (OSError, ScenarioError, ValueError, TypeError):  # no or a foreign scenario: empirical spread
        return {}


def plot_run(run_dir, mark: dict | None = None) -> list[Path]:
    """Write every applicable figure of the run in ``run_dir`` into ``run_dir/plots``.

    ``mark`` (e.g. ``{"k": 65535, "m": 32}``) overrides the scenario's ``[plots] mark``.
    """
    store = RunStore(run_dir)
    summary, estimates = store.read("summary"), store.read("estimates")
    if summary.empty:
        raise FileNotFoundError(f"{run_dir}: no finished cells to plot")
    if mark is None:
        mark = store.read_config()["scenario"].get("plots", {}).get("mark", {})
    out = make_dirs(Path(run_dir) / "plots")
    written = (metric_vs_epsilon(summary[~summary["metric"].str.startswith("adversary")], out)
               + metric_vs_epsilon(summary, out, prefix="adversary")
               + km_heatmaps(summary, out, mark) + per_rank_curves(summary[~summary["workload"].isin(NUMERIC_WORKLOADS)], out)
               + frequency_bars(estimates[~estimates["workload"].isin(NUMERIC_WORKLOADS)], out, mark, _cells(store))
               + discovery_curves(summary, out))
    pngs = [p for p in written if p.suffix == ".png"]
    order = ("_vs_epsilon", "heatmap_", "by_rank_", "top_items_")
    pngs.sort(key=lambda p: next(i for i, k in enumerate(order + ("",)) if k in p.name))
    write_text(out / "captions.json", json.dumps({p.name: caption(p.stem) for p in pngs}, indent=1,
                                                 ensure_ascii=False))
    return written


def report_sweep(run_dir, title: str | None = None) -> Path:
    """``RUN_DIR/report.html`` of a sweep: the run folder's page (:func:`report_from_run_dir`) with the
    sweep's results, one row per cell (:func:`sweep_results`)."""
    return report_from_run_dir(run_dir, title=title, results=sweep_results(Path(run_dir)))
