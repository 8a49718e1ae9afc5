"""Figures of a stored sweep run (reads the Parquet results only; never runs a simulation).

* metric vs ε curves (log–log, one line per mechanism setting), as in the SDLDP paper's figures;
* k × m heatmaps of ΔR, ΔE and the variance with the chosen cell (``[plots] mark``) outlined;
* per-rank curves of ΔR / ΔE / variance over the top-N items, one curve per (k, m) — seed 003's
  figures, with its ΔR = 1 acceptance line;
* true vs estimated counts of the top-N items for the marked cell (or each workload's first cell);
* adversary accuracy vs ε when the results hold ``adversary*`` metrics.

Figures are built with :class:`matplotlib.figure.Figure` (Agg canvas, no pyplot state) and written
as PNG and SVG.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ldpsim.evaluation.sweep.store import RunStore


def item_label(item) -> str:
    """A tick label matplotlib's default font (DejaVu Sans, no emoji glyphs) can draw: emoji and other
    pictographs by their CLDR short name ("face with tears of joy"), everything else as is."""
    text = str(item)
    if not any(ord(c) >= 0x2000 for c in text):
        return text
    import emoji

    return emoji.demojize(text, delimiters=("", "")).replace("_", " ")

#: columns that are bookkeeping, not parameters of a cell
BOOKKEEPING = {"cell_id", "cell_index", "workload_index", "repeats", "path", "root_seed", "seed", "elapsed_s",
               "metric", "rank", "item", "mean", "se", "n_runs", "domain_size",
               "repeat", "true_rank", "true_count", "estimate", "est_rank"}
HEATMAP_METRICS = ("rank_deviation", "expectation_bias", "variance")
FORMATS = ("png", "svg")


def _params(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c not in BOOKKEEPING and df[c].nunique(dropna=False) > 1]


def _workload_params(df: pd.DataFrame) -> set[str]:
    return {c for c in df.columns if c in ("workload", "n") or c.startswith("workload.")}


def _groups(df: pd.DataFrame, exclude):
    """Split ``df`` by the varying parameters not in ``exclude``; yields (label, sub-frame)."""
    keys = [c for c in _params(df) if c not in exclude]
    if not keys:
        yield "", df
        return
    for values, sub in df.groupby(keys, dropna=False, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        yield ", ".join(f"{k}={_fmt(v)}" for k, v in zip(keys, values) if not _missing(v)), sub


def _missing(v) -> bool:
    return isinstance(v, (float, np.floating)) and np.isnan(v)


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, (float, np.floating)) else str(v)


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in text).strip("_")[:120] or "all"


def _save(fig: Figure, out: Path, stem: str) -> list[Path]:
    fig.tight_layout()
    from ldpsim.simulator.durable import write_file
    return [write_file(out / f"{stem}.{fmt}", lambda tmp, fmt=fmt: fig.savefig(tmp, dpi=120, format=fmt))
            for fmt in FORMATS]


def metric_vs_epsilon(summary: pd.DataFrame, out: Path, prefix: str = "") -> list[Path]:
    """One log–log figure per aggregate metric: mean ± se against ε, one line per other setting."""
    agg = summary[summary["rank"].isna() & summary["metric"].str.startswith(prefix)]
    if "epsilon" not in agg or agg["epsilon"].nunique() < 2:
        return []
    written = []
    for metric, rows in agg.groupby("metric"):
        fig = Figure(figsize=(6, 4))
        ax = fig.add_subplot()
        for label, sub in _groups(rows, {"epsilon"}):
            sub = sub.sort_values("epsilon")
            ax.errorbar(sub["epsilon"], sub["mean"], yerr=sub["se"], marker="o", capsize=2, label=label or metric)
        ax.set_xscale("log")
        grid = np.sort(rows["epsilon"].unique())
        ax.set_xticks(grid, [_fmt(v) for v in grid])
        ax.xaxis.set_minor_formatter(NullFormatter())
        if (rows["mean"] > 0).all():
            ax.set_yscale("log")
        ax.set(xlabel="ε", ylabel=metric, title=f"{metric} vs ε")
        ax.legend(fontsize=6)
        written += _save(fig, out, f"{_slug(metric)}_vs_epsilon")
    return written


def km_heatmaps(summary: pd.DataFrame, out: Path, mark: dict) -> list[Path]:
    """k × m heatmaps of the aggregate ΔR, ΔE and variance, with the marked cell outlined."""
    agg = summary[summary["rank"].isna() & summary["metric"].isin(HEATMAP_METRICS)]
    if not {"k", "m"} <= set(agg) or agg["k"].nunique() < 2 or agg["m"].nunique() < 2:
        return []
    written = []
    for metric, (label, sub) in ((m, g) for m, rows in agg.groupby("metric") for g in _groups(rows, {"k", "m"})):
        table = sub.pivot_table(index="k", columns="m", values="mean", aggfunc="mean")
        fig = Figure(figsize=(1.2 * table.shape[1] + 2, 0.6 * table.shape[0] + 2))
        ax = fig.add_subplot()
        image = ax.imshow(np.log10(table.to_numpy(dtype=float).clip(min=1e-12)), cmap="viridis_r", aspect="auto")
        fig.colorbar(image, ax=ax, label=f"log10 {metric}")
        ax.set_xticks(range(table.shape[1]), [_fmt(v) for v in table.columns])
        ax.set_yticks(range(table.shape[0]), [_fmt(v) for v in table.index])
        for (i, j), value in np.ndenumerate(table.to_numpy(dtype=float)):
            ax.text(j, i, f"{value:.3g}", ha="center", va="center", fontsize=7, color="white")
        if mark.get("k") in table.index and mark.get("m") in table.columns:
            i, j = table.index.get_loc(mark["k"]), table.columns.get_loc(mark["m"])
            ax.add_patch(_rectangle(j, i))
        ax.set(xlabel="m (sketch width)", ylabel="k (hash functions)", title=f"{metric} {label}".strip())
        written += _save(fig, out, f"heatmap_{_slug(metric)}_{_slug(label)}")
    return written


def _rectangle(x, y):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5)


def per_rank_curves(summary: pd.DataFrame, out: Path) -> list[Path]:
    """Per-item metric against true rank over the top-N: a figure per workload setting, a curve per
    mechanism setting (per (k, m) in seed 003's study)."""
    items = summary[summary["rank"].notna()]
    per_workload = _workload_params(items)
    written = []
    for metric, (label, sub) in ((m, g) for m, rows in items.groupby("metric")
                                 for g in _groups(rows, set(items.columns) - per_workload)):
        fig = Figure(figsize=(7, 4.5))
        ax = fig.add_subplot()
        for curve, rows in _groups(sub, per_workload):
            rows = rows.sort_values("rank")
            ax.plot(rows["rank"], rows["mean"], marker=".", linewidth=1, label=curve or metric)
        if metric == "rank_deviation":
            ax.axhline(1.0, color="black", linewidth=1.5)  # seed 003's acceptance line ΔR = 1
            ax.set_yscale("symlog", linthresh=1.0)  # linear up to the line, logarithmic above
            ax.set_ylim(bottom=0)
        elif (sub["mean"] > 0).all():
            ax.set_yscale("log")
        ax.set(xlabel="true rank", ylabel=metric, title=f"{metric} by rank {label}".strip())
        ax.legend(fontsize=5, ncol=2)
        written += _save(fig, out, f"by_rank_{_slug(metric)}_{_slug(label)}")
    return written


def frequency_bars(estimates: pd.DataFrame, out: Path, mark: dict) -> list[Path]:
    """True vs mean estimated counts (± sd over repeats) of the stored top items for chosen cells."""
    if estimates.empty:
        return []
    chosen = estimates
    for key, value in mark.items():
        if key in chosen:
            chosen = chosen[chosen[key] == value]
    if chosen.empty:
        chosen = estimates
    cell_ids = chosen.groupby("workload_index")["cell_id"].first()
    written = []
    for cell_id in cell_ids:
        rows = chosen[chosen["cell_id"] == cell_id]
        stats = rows.groupby("true_rank").agg(item=("item", "first"), true=("true_count", "first"),
                                               mean=("estimate", "mean"), sd=("estimate", "std"))
        fig = Figure(figsize=(max(6, 0.35 * len(stats)), 4))
        ax = fig.add_subplot()
        x = np.arange(len(stats))
        ax.bar(x - 0.2, stats["true"], width=0.4, label="true")
        ax.bar(x + 0.2, stats["mean"], width=0.4, yerr=stats["sd"].fillna(0), capsize=2, label="estimated (mean ± sd)")
        ax.set_xticks(x, [item_label(i) for i in stats["item"]], rotation=60, ha="right", fontsize=7)
        first = rows.iloc[0]
        params = ", ".join(f"{k}={_fmt(first[k])}" for k in _params(estimates)
                           if k in first and k != "item" and pd.notna(first[k]))
        ax.set(ylabel="count", title=f"top items: true vs estimated\n{params}")
        ax.legend(fontsize=7)
        written += _save(fig, out, f"frequencies_{cell_id}")
    return written


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
    from ldpsim.simulator.durable import make_dirs
    out = make_dirs(Path(run_dir) / "plots")
    return (metric_vs_epsilon(summary[~summary["metric"].str.startswith("adversary")], out)
            + metric_vs_epsilon(summary, out, prefix="adversary")
            + km_heatmaps(summary, out, mark) + per_rank_curves(summary, out)
            + frequency_bars(estimates, out, mark))
