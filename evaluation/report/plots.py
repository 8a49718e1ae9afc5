"""Figures of a stored sweep run (reads the Parquet results only; never runs a simulation).

* metric vs ε curves (log–log, one line per mechanism setting; a proportion such as top-k precision on a
  linear [0, 1] axis), as in the SDLDP paper's figures;
* k × m heatmaps of ΔR, ΔE and the variance with the chosen cell (``[plots] mark``) outlined;
* per-rank curves of ΔR / ΔE / variance over the top-N items, one curve per (k, m) — seed 003's
  figures, with its ΔR = 1 acceptance line;
* true vs estimated counts of the top-N items for the marked cell (or each workload's first cell),
  with the theory's 95% interval of one estimate (mechanism variance at the true counts);
* adversary accuracy vs ε when the results hold ``adversary*`` metrics;
* discovery runs: F1 of the top-k vs ε and the planted word's discovery probability vs n.

Metric names are spelled out with their units (:data:`METRIC_LABELS`), titles name the mechanism
and ε, file names say what they show. Figures are built with :class:`matplotlib.figure.Figure` (Agg
canvas, no pyplot state) and written as PNG and SVG; ``captions.json`` lists them in reading order.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ldpsim.evaluation.legend import quiet_corner
from ldpsim.evaluation.confidence import Z95


def item_label(item) -> str:
    """A tick label matplotlib's default font (DejaVu Sans, no emoji glyphs) can draw: emoji and other
    pictographs by their CLDR short name ("face with tears of joy"), characters the font lacks (Chinese,
    unless a font that has them is configured) as code points ("U+6211"), everything else as is."""
    text = str(item)
    if not any(ord(c) >= 0x2000 for c in text):
        return text
    import emoji

    text = emoji.demojize(text, delimiters=("", "")).replace("_", " ")
    drawable = _drawable()
    return "".join(c if ord(c) in drawable else f" U+{ord(c):04X} " for c in text).strip().replace("  ", " ")


@functools.lru_cache(maxsize=1)
def _drawable() -> frozenset:
    """The code points matplotlib's configured default font can draw."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(font_manager.findfont(font_manager.FontProperties())).get_charmap())

#: columns that are bookkeeping, not parameters of a cell
BOOKKEEPING = {"cell_id", "cell_index", "workload_index", "repeats", "path", "root_seed", "seed", "elapsed_s",
               "metric", "rank", "item", "mean", "se", "n_runs", "domain_size",
               "repeat", "true_rank", "true_count", "estimate", "est_rank",
               "epsilon_report", "guarantee",  # the ε axis and its panels (epsilon_panels)
               "epsilon_item", "epsilon_person"}  # and its user-level scopes (level_columns)
HEATMAP_METRICS = ("rank_deviation", "expectation_bias", "variance")
FORMATS = ("png", "svg")

#: metric name → axis label with its unit
METRIC_LABELS = {
    "expectation_bias": "expectation bias ΔE (|mean estimate − truth| / truth)",
    "rank_deviation": "rank deviation ΔR (ranks)",
    "variance": "variance of the count estimate (count²)",
    "relative_variance": "relative variance (variance / true count²)",
    "variance_ratio": "empirical ÷ theoretical variance",
    "mse": "MSE of frequency (share²)",
    "mae": "MAE of frequency (share)",
    "top_k_precision": "top-k precision (share of the estimated top-k)",
    "top_k_recall": "top-k recall (share of the true top-k)",
    "ndcg_at_k": "NDCG@k (0–1)",
    "kendall_tau_top_k": "Kendall τ of the top-k (−1–1)",
    "adversary_accuracy": "adversary accuracy (share of users guessed)",
    "adversary_accuracy_high": "adversary accuracy, high-sensitivity users (share guessed)",
}


#: metrics that are proportions in [0, 1]: drawn on a linear [0, 1] axis, never a log one
PROPORTIONS = {"top_k_precision", "top_k_recall", "ndcg_at_k", "adversary_accuracy", "adversary_accuracy_high",
               "f1", "ncr", "found", "p_found"}


def is_proportion(metric: str) -> bool:
    """Whether ``metric`` is a proportion (:data:`PROPORTIONS`, or one of them with a prefix)."""
    return metric in PROPORTIONS or any(metric.endswith("_" + p) for p in PROPORTIONS)


def metric_label(metric: str) -> str:
    """The axis label of a metric: :data:`METRIC_LABELS`, else the name with spaces."""
    return METRIC_LABELS.get(metric, metric.replace("_", " "))


def _setting(df: pd.DataFrame, *skip: str) -> str:
    """The mechanism(s) and ε of the rows, for a title: "grr, sdgrr; ε = 1, 4"."""
    parts = []
    for col, name in (("mechanism", ""), ("epsilon", "ε = ")):
        if col in df and col not in skip:
            values = sorted(df[col].dropna().unique())
            if values:
                parts.append(name + ", ".join(_fmt(v) for v in values))
    return "; ".join(parts)


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
    from ldpsim.runtime.durable import write_file
    return [write_file(out / f"{stem}.{fmt}", lambda tmp, fmt=fmt: fig.savefig(tmp, dpi=120, format=fmt))
            for fmt in FORMATS]


def epsilon_panels(rows: pd.DataFrame) -> tuple[str, list[tuple[str, pd.DataFrame]]]:
    """The ε axis of ``rows`` and one panel per guarantee kind (docs/math.md §8.1).

    The axis is ε of one report (``epsilon_report``: RAPPOR at its ε₁, not its ε_∞) when the rows
    carry it, else the mechanisms' parameter ``epsilon``; rows of different guarantee kinds (ε-LDP,
    ε-SDLDP, ε-ULDP) never share a panel.

    Returns
    -------
    (column, panels)
        The x column and a list of (kind label, its rows); one panel ("") for rows without a kind.
    """
    x = "epsilon_report" if "epsilon_report" in rows and rows["epsilon_report"].notna().all() else "epsilon"
    if "guarantee" not in rows:
        return x, [("", rows)]
    return x, [(kind, sub) for kind, sub in rows.groupby("guarantee", sort=True)]


EPSILON_AXIS = {"epsilon_report": "ε of one report", "epsilon": "ε (the mechanisms' parameter)"}
#: the ε axis of a panel holding interactive protocols, whose ε is per user over a pass of rounds
ROUNDS_AXIS = "ε per user (a report, or a pass of rounds)"


def epsilon_label(rows: pd.DataFrame, x: str) -> str:
    """What the ε axis of ``rows`` means: :data:`EPSILON_AXIS`, or :data:`ROUNDS_AXIS` when the rows hold an
    interactive protocol (:data:`~ldpsim.mechanisms.registry.INTERACTIVE`)."""
    from ldpsim.mechanisms.registry import INTERACTIVE

    interactive = "mechanism" in rows and rows["mechanism"].isin(list(INTERACTIVE)).any()
    return ROUNDS_AXIS if interactive and x == "epsilon_report" else EPSILON_AXIS[x]


def metric_vs_epsilon(summary: pd.DataFrame, out: Path, prefix: str = "") -> list[Path]:
    """One log–log figure per aggregate metric: mean ± se against ε of one report, one line per other
    setting, one panel per guarantee kind (:func:`epsilon_panels`); a proportion on a linear [0, 1] axis."""
    agg = summary[summary["rank"].isna() & summary["metric"].str.startswith(prefix)]
    if "epsilon" not in agg or agg["epsilon"].nunique() < 2:
        return []
    written = []
    for metric, rows in agg.groupby("metric"):
        x, panels = epsilon_panels(rows)
        fig = Figure(figsize=(6 * len(panels), 4))
        for i, (kind, panel) in enumerate(panels):
            ax = fig.add_subplot(1, len(panels), i + 1)
            for label, sub in _groups(panel, {"epsilon"}):
                sub = sub.sort_values(x)
                ax.errorbar(sub[x], sub["mean"], yerr=Z95 * sub["se"], marker="o", capsize=2,
                            label=(label or metric) + " (mean ± 95%)")
            ax.set_xscale("log")
            grid = np.sort(panel[x].unique())
            ax.set_xticks(grid, [f"{v:.3g}" for v in grid])
            ax.xaxis.set_minor_formatter(NullFormatter())
            if is_proportion(metric):
                ax.set_ylim(0, 1)
            elif (panel["mean"] > 0).all():
                ax.set_yscale("log")
            ax.set(xlabel=f"{epsilon_label(panel, x)}{', ' + kind if kind else ''}", ylabel=metric_label(metric),
                   title=f"{metric_label(metric).split(' (')[0]} vs ε{' (' + kind + ')' if kind else ''} "
                         f"({_setting(panel, 'epsilon')})")
            ax.title.set_fontsize(9)
            ax.legend(fontsize=7, loc=quiet_corner(ax))
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
        fig.colorbar(image, ax=ax, label=f"log10 of {metric_label(metric)}")
        ax.set_xticks(range(table.shape[1]), [_fmt(v) for v in table.columns])
        ax.set_yticks(range(table.shape[0]), [_fmt(v) for v in table.index])
        for (i, j), value in np.ndenumerate(table.to_numpy(dtype=float)):
            ax.text(j, i, f"{value:.3g}", ha="center", va="center", fontsize=7, color="white")
        if mark.get("k") in table.index and mark.get("m") in table.columns:
            i, j = table.index.get_loc(mark["k"]), table.columns.get_loc(mark["m"])
            ax.add_patch(_rectangle(j, i))
        ax.set(xlabel="m (sketch width, cells)", ylabel="k (hash functions)",
               title=f"{metric_label(metric).split(' (')[0]} ({_setting(sub)}) {label}".strip())
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
            ax.axhline(1.0, color="black", linewidth=1.5, label="acceptance line ΔR = 1")  # seed 003's
            ax.set_yscale("symlog", linthresh=1.0)  # linear up to the line, logarithmic above
            ax.set_ylim(bottom=0)
        elif is_proportion(metric):
            ax.set_ylim(0, 1)
        elif (sub["mean"] > 0).all():
            ax.set_yscale("log")
        ax.set(xlabel="true rank (1 = most frequent)", ylabel=metric_label(metric),
               title=f"{metric_label(metric).split(' (')[0]} by rank ({_setting(sub)}) {label}".strip())
        ax.legend(fontsize=6, ncol=2, loc=quiet_corner(ax))
        written += _save(fig, out, f"by_rank_{_slug(metric)}_{_slug(label)}")
    return written


def _theory_sd(cells: dict, cell_id: str, rows: pd.DataFrame):
    """(sd of one count estimate of each stored item, their items) from the mechanism's variance at the
    true counts, or None. Only the top items are stored; the other items' counts (n minus the stored
    ones) are filled in two different ways, and the theory is used only when the stored items'
    variances do not depend on that (GRR: they depend on n and their own count only). None too when
    the cell cannot be rebuilt or the mechanism hashes tokens."""
    cell = cells.get(cell_id)
    if cell is None:
        return None
    try:
        mech = cell.make_mechanism()
        domain = getattr(mech, "domain_size", None)
        truth = rows.groupby("item")["true_count"].first()
        ids = pd.to_numeric(pd.Series(truth.index), errors="coerce")  # item ids are stored as text
        if getattr(mech, "takes_tokens", False) or domain is None or ids.isna().any():
            return None
        truth.index = ids.astype(np.int64).to_numpy()
        if not truth.index.isin(range(domain)).all():
            return None
        rest = int(rows["n"].iloc[0]) - int(truth.sum())
        others = np.setdiff1d(np.arange(domain), truth.index)
        fills = []
        for spread in (False, True):
            counts = np.zeros(domain, dtype=np.int64)
            counts[truth.index] = truth.to_numpy()
            if others.size:
                share = np.full(others.size, rest // others.size) if spread else np.eye(1, others.size, 0)[0] * rest
                share[: rest - int(share.sum())] += 1 if spread else 0
                counts[others] = share.astype(np.int64)
            fills.append(mech.variance(counts)[truth.index])
        if not np.allclose(fills[0], fills[1], rtol=1e-9):
            return None
        return np.sqrt(fills[0]), truth.index.astype(str).to_numpy()
    except (TypeError, ValueError, NotImplementedError, KeyError):
        return None


def frequency_bars(estimates: pd.DataFrame, out: Path, mark: dict, cells: dict | None = None) -> list[Path]:
    """True vs mean estimated counts of the stored top items for chosen cells, with the theory's 95%
    interval of one estimate around the truth (when computable, else ± Z95·sd over the repeats, Z95 ≈ 1.96)."""
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
        top = stats.head(40)
        fig = Figure(figsize=(max(6, 0.3 * len(top) + 2), 4.2))
        ax = fig.add_subplot()
        x = np.arange(len(top))
        theory = _theory_sd(cells or {}, cell_id, rows)
        if theory is not None:
            sd = pd.Series(theory[0], index=theory[1]).reindex(top["item"]).to_numpy()
            what = "truth ± the theory's 95% interval of one estimate"
        else:
            sd = top["sd"].fillna(0).to_numpy()
            what = "truth ± 1.96 sd of the estimates over the repeats (empirical)"
        ax.bar(x - 0.2, top["true"], width=0.4, yerr=Z95 * sd, capsize=2, label=what)
        ax.bar(x + 0.2, top["mean"], width=0.4, label=f"mean estimate over {rows['repeat'].nunique()} repeats")
        ax.set_xticks(x, [item_label(i) for i in top["item"]], rotation=60, ha="right", fontsize=7)
        first = rows.iloc[0]
        params = ", ".join(f"{k}={_fmt(first[k])}" for k in _params(estimates)
                           if k in first and k not in ("item", "mechanism", "epsilon") and pd.notna(first[k]))
        ax.set(ylabel="count (users)", xlabel="item (most frequent first)",
               title=f"Top items: true vs estimated counts ({_setting(rows)})\n{params}")
        ax.legend(fontsize=7, loc=quiet_corner(ax))
        stem = "_".join(_slug(f"{prefix}{_fmt(first[k])}") for k, prefix in
                        (("mechanism", ""), ("epsilon", "eps"), ("workload", "")) if k in first)
        written += _save(fig, out, f"top_items_{stem}_{cell_id[:6]}")
    return written


def _panels(summary: pd.DataFrame, metric: str, x: str, panel: str):
    rows = summary[summary["rank"].isna() & (summary["metric"] == metric)]
    if rows.empty or x not in rows or rows[x].nunique() < 2 or "mechanism" not in rows:
        return None
    return rows, (sorted(rows[panel].unique()) if panel in rows else [None])


def discovery_curves(summary: pd.DataFrame, out: Path) -> list[Path]:
    """Discovery cells: F1 of the top-k vs ε (a panel per n) and the planted word's discovery
    probability vs n (a panel per ε, the 0.9 line drawn); a line per protocol, mean ± se; and a panel per
    guarantee kind (pure ε-LDP apart from an interactive protocol's central (ε, δ): :func:`epsilon_panels`)."""
    written = []
    for metric, x, panel, stem in (("f1", "epsilon", "n", "discovery_f1_by_epsilon"),
                                   ("found", "n", "epsilon", "discovery_probability_by_n")):
        found = _panels(summary, metric, x, panel)
        if found is None:
            continue
        rows, values = found
        kinds = epsilon_panels(rows)[1]  # one row of panels per guarantee kind
        panels = [(kind, value, part if value is None else part[part[panel] == value])
                  for kind, part in kinds for value in values]
        fig = Figure(figsize=(4.2 * len(values), 3.4 * len(kinds)))
        for i, (kind, value, sub) in enumerate(panels):
            if sub.empty:
                continue
            ax = fig.add_subplot(len(kinds), len(values), i + 1)
            for mech, line in sub.groupby("mechanism", sort=True):
                line = line.sort_values(x)
                ax.errorbar(line[x], line["mean"], yerr=line["se"], marker="o", capsize=2, label=mech)
            ax.set_xscale("log")
            grid = np.sort(rows[x].unique())
            ax.set_xticks(grid, [_fmt(v) if x == "epsilon" else f"{v:.0e}" for v in grid])
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_ylim(-0.02, 1.02)
            if metric == "found":
                ax.axhline(0.9, color="black", linewidth=1, linestyle="--")
            where = "" if value is None else (f"ε = {_fmt(value)}" if panel == "epsilon" else f"n = {value:.0e}")
            ax.set(xlabel=f"{epsilon_label(sub, 'epsilon_report')}, {kind or 'ε-LDP'}" if x == "epsilon" else "n (users)",
                   ylabel="F1 of the top-k" if metric == "f1" else "P(planted word found)",
                   title=", ".join(t for t in (where, kind) if t))
            ax.title.set_fontsize(8)
            ax.xaxis.label.set_fontsize(7)
            if i % len(values) == 0:
                ax.legend(fontsize=7, loc=quiet_corner(ax))
        written += _save(fig, out, stem)
    return written


def caption(stem: str) -> str:
    """The caption of a sweep figure, from its file name."""
    if stem.endswith("_vs_epsilon"):
        return (f"{metric_label(stem[:-len('_vs_epsilon')])} against ε of one report: mean ± 95% over repeats, "
                "one line per setting, one panel per guarantee kind.")
    if stem.startswith("heatmap_"):
        return "A metric over the k × m grid of the sketch (log colour scale); the chosen cell is outlined."
    if stem.startswith("by_rank_"):
        return "A per-item metric against the item's true rank, one curve per mechanism setting."
    if stem.startswith("discovery_f1"):
        return ("Discovery: F1 of the discovered top-k against the true top-k vs ε per user, one panel per n and "
                "guarantee kind; mean ± se.")
    if stem.startswith("discovery_probability"):
        return ("Discovery: share of repeats whose discovered top-k holds the planted slang word vs n, one panel "
                "per ε and guarantee kind; mean ± se, dashed line at 0.9.")
    if stem.startswith("top_items_"):
        return ("True vs mean estimated counts of the top items of one cell, with the theory's 95% interval of "
                "one estimate (or the repeats' spread where the theory needs items not stored).")
    return stem.replace("_", " ")
