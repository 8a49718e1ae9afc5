"""Figures of a deployment run (``ldpsim run``), drawn from the tables of ``deployment_metrics.measure``.

Every estimate is drawn with the theory's 95% interval (docs/math.md §4.1; ``deployment_metrics``), every
axis has its unit, every title names the mechanism and ε, every reference line is in the legend.
:func:`write_plots` writes the PNGs and ``captions.json`` (file → caption, in reading order), which
the HTML report uses for order and captions.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ldpsim.evaluation.deployment.estimates import READING_UNITS, mechanism_label
from ldpsim.evaluation.report.plots import item_label

DAY = "day of the run (0 = first)"


def _save(fig: Figure, path: Path) -> Path:
    from ldpsim.runtime.durable import write_file
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    return write_file(path, lambda tmp: fig.savefig(tmp, dpi=110, format=path.suffix.lstrip(".")))


def _bar(rows: pd.DataFrame) -> np.ndarray:
    """Error bar lengths from each estimate to its interval's ends (the interval is centred on
    estimate − bias, so the bar is slightly asymmetric when the sketch has a bias)."""
    return np.vstack([rows["estimate"] - rows["ci_low"], rows["ci_high"] - rows["estimate"]]).clip(min=0)


def pooled_bars(pooled: pd.DataFrame, cfg, n: int = 20) -> Figure:
    """True vs estimated shares of the top-``n`` items over the whole run (pooled), with 95% intervals."""
    uc = cfg.use_case("event")
    top = pooled.nsmallest(n, "true_rank")
    fig = Figure(figsize=(10, 4.8))
    ax = fig.subplots()
    x = np.arange(len(top))
    ax.bar(x - 0.2, top["true_donated"], 0.4, label="true share (all donated emoji of the run)", color="C0")
    err = _bar(top)
    ax.bar(x + 0.2, top["estimate"], 0.4, yerr=err, capsize=2, color="C1", ecolor="black",
           label="estimate from all reports, with the theory's 95% interval")
    ax.set_xticks(x, [item_label(t) for t in top["token"]], rotation=55, ha="right", fontsize=7)
    ax.set(ylabel="share of donated emoji", xlabel="emoji (most donated first)",
           title=f"Top-{len(top)} emoji over all {cfg.n_days} days, pooled ({int(top['reports'].iloc[0]):,} reports; "
                 f"{mechanism_label(uc)})")
    ax.legend(fontsize=8)
    return fig


def daily_panels(daily: pd.DataFrame, pooled: pd.DataFrame, cfg, n: int = 5) -> Figure:
    """One panel per top-``n`` item: each day's estimate with its 95% interval, the day's true share,
    and the pooled estimate's interval as a band."""
    uc = cfg.use_case("event")
    items = pooled.nsmallest(n, "true_rank")
    fig = Figure(figsize=(9, 1.6 * n + 1.2), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for ax, (_, p) in zip(axes, items.iterrows()):
        d = daily[daily["item"] == p["item"]]
        ax.errorbar(d["day"], d["estimate"], yerr=_bar(d), fmt="o", ms=3, capsize=2, color="C1",
                    label="day's estimate ± theory's 95% interval")
        ax.plot(d["day"], d["true_donated"], "-", color="C0", label="day's true share")
        ax.axhspan(p["ci_low"], p["ci_high"], color="C2", alpha=0.25,
                   label="pooled estimate's 95% interval (all days)")
        scale = max(d["true_donated"].max(), p["ci_high"])  # wider intervals run off the panel
        low, high = d["ci_low"].min(), d["ci_high"].max()
        ax.set_ylim(max(low, -0.6 * scale) - 0.05 * scale, min(high, 2.2 * scale) + 0.05 * scale)
        ax.set_ylabel("share", fontsize=8)
        ax.set_title(item_label(p["token"]), fontsize=9, loc="left")
    axes[-1].set_xlabel(DAY)
    fig.suptitle(f"Daily emoji estimates of the {n} most donated emoji ({mechanism_label(uc)}); "
                 "a day with few reports has a wide interval", fontsize=10)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize=8)
    return fig


def trend_ranks(daily: pd.DataFrame, cfg, k: int = 10) -> Figure:
    """Estimated and true daily rank of the trend item, with the top-``k`` boundary and the trend start."""
    uc = cfg.use_case("event")
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    d = daily[daily["item"] == cfg.trend_item]
    ax.plot(d["day"], daily.groupby("day")["estimate"].rank(ascending=False)[d.index], "o-",
            label="estimated rank (that day's reports)")
    ax.plot(d["day"], daily.groupby("day")["true_donated"].rank(ascending=False)[d.index], "--",
            label="true rank (that day's donations)")
    ax.axhline(k + 0.5, color="grey", lw=0.8, label=f"top-{k} boundary")
    ax.axvline(cfg.trend_start_day, color="grey", ls=":", label=f"trend starts (day {cfg.trend_start_day})")
    ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500) if t <= len(cfg.items)]
    ax.set(xlabel=DAY, ylabel="rank (1 = most frequent)", yscale="log",
           title=f"Trend detection: {item_label(cfg.items[cfg.trend_item])} ({mechanism_label(uc)})")
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.invert_yaxis()
    ax.legend(fontsize=8)
    return fig


def budget_panels(budget: pd.DataFrame, cfg, summary: dict, k: int = 10) -> Figure:
    """Reports per day per use case (with the top-``k`` threshold n*), and the share of donating devices
    whose budget is exhausted, by day."""
    fig = Figure(figsize=(9, 6.5))
    top, bottom = fig.subplots(2, 1, sharex=True)
    for i, uc in enumerate(cfg.use_cases):
        reports = budget[f"reports_{uc.name}"].where(budget[f"reports_{uc.name}"] > 0)  # none: a gap (log axis)
        top.plot(budget["day"], reports, "o-", ms=3, color=f"C{i}",
                 label=f"{uc.name.replace('_', ' ')} ({mechanism_label(uc)})")
        bottom.plot(budget["day"], 100 * budget[f"exhausted_{uc.name}"], "o-", ms=3, color=f"C{i}",
                    label=f"total budget cannot pay one {uc.name.replace('_', ' ')} report (ε {uc.ledger_cost:g} charged)")
    n_star = summary.get(f"top{k}_n_star")
    if n_star is not None and math.isfinite(n_star):
        top.axhline(n_star, color="black", ls="--", lw=1,
                    label=f"top-{k} distinguishable above {n_star:,.0f} emoji reports (n*)")
    top.set(yscale="log", ylabel="reports received that day (gap: none)",
            title=f"Reports per day and privacy budget (budget: ε {cfg.budget_total:g} per device in total, "
                  f"{cfg.budget_daily:g} per day)")
    top.legend(fontsize=7)
    bottom.plot(budget["day"], 100 * budget["daily_full"], ":", color="black", label="daily budget full that day")
    bottom.set(xlabel=DAY, ylabel="% of donating devices", ylim=(-2, 102),
               title=f"Budget exhausted, by day ({budget.attrs.get('donating_devices', 0):,} donating devices)")
    bottom.legend(fontsize=7)
    return fig


def reading_days(readings: pd.DataFrame, pooled: pd.DataFrame, uc) -> Figure:
    """A reading's daily mean estimate (95% band at the worst-case variance when known) vs truth."""
    unit = READING_UNITS.get(uc.name, "raw units")
    r = readings[readings["use_case"] == uc.name]
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    ax.errorbar(r["day"], r["estimate"], yerr=1.96 * r["sd"], fmt="o", ms=3, capsize=2,
                label=f"estimate ± 95% interval ({r['sd_method'].iloc[0]})")
    ax.plot(r["day"], r["true_donated"], "--", label="true mean of donated readings (clipped to range)")
    ax.plot(r["day"], r["true_event"], ":", label="true mean of all sessions")
    p = pooled[pooled["use_case"] == uc.name]
    if not p.empty:
        ax.axhline(p["estimate"].iloc[0], color="C2", lw=1,
                   label=f"pooled estimate, all days: {p['estimate'].iloc[0]:.2f} {unit}")
    lo, hi = r["true_event"].min(), r["true_event"].max()
    pad = max(hi - lo, 0.15 * abs(hi)) * 2
    ax.set_ylim(lo - pad, hi + pad)
    ax.set(xlabel=DAY, ylabel=f"mean {uc.name.replace('_', ' ')} ({unit})",
           title=f"Daily mean {uc.name.replace('_', ' ')} ({mechanism_label(uc)})")
    ax.legend(fontsize=7)
    return fig


def write_plots(folder, tables: dict, cfg, k: int = 10) -> list[Path]:
    """Write every figure of a run into ``folder`` (and ``captions.json``); returns the paths in order."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    daily, pooled, summary = tables["daily"], tables["pooled"], tables["summary"]
    figures = []  # (file name, figure, caption)
    if not pooled.empty:
        figures.append(("emoji_top20_pooled.png", pooled_bars(pooled, cfg),
                        "Top-20 emoji over the whole run: the true share among all donated emoji vs the estimate "
                        "from all reports (aggregates summed over days), with the theory's 95% interval."))
        figures.append(("emoji_daily_top5.png", daily_panels(daily, pooled, cfg),
                        "Each day's estimate of the 5 most donated emoji with its 95% interval, the day's true "
                        "share, and the pooled interval (band): days with few reports are as uncertain as drawn."))
        if cfg.trend_item is not None:
            figures.append(("emoji_trend_rank.png", trend_ranks(daily, cfg, k),
                            f"Rank of the trending emoji by day: estimated vs true, with the top-{k} boundary."))
    if not tables["budget"].empty:
        figures.append(("budget_by_day.png", budget_panels(tables["budget"], cfg, summary, k),
                        "Reports received per day per use case and the share of donating devices whose "
                        "privacy budget can no longer pay a report, by day."))
    readings = tables["readings"]
    for uc in cfg.readings():
        if not readings.empty and (readings["use_case"] == uc.name).any():
            figures.append((f"{uc.name}_daily.png", reading_days(readings, tables["pooled_readings"], uc),
                            f"Daily mean {uc.name.replace('_', ' ')} ({READING_UNITS.get(uc.name, 'raw units')}): "
                            "estimate vs the truth of donated and of all readings."))
    paths = [_save(fig, folder / name) for name, fig, _ in figures]
    from ldpsim.runtime.durable import write_text
    write_text(folder / "captions.json", json.dumps({name: cap for name, _, cap in figures}, indent=1,
                                                    ensure_ascii=False))
    return paths
