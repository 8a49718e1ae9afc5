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
from ldpsim.evaluation.report.distribution_plots import distribution_figure
from ldpsim.evaluation.report.numeric_use_plots import numeric_figures
from ldpsim.evaluation.report.plots import item_label
from ldpsim.evaluation.layout import AXIS, TITLE, label_depth, place, save_png, style, text_lines, title_height
from ldpsim.evaluation.report.trend_plots import trajectory_figure
from ldpsim.evaluation.legend import quiet_corner
from ldpsim.evaluation.confidence import Z95

DAY = "day of the run (0 = first)"


#: dots per inch of a run's PNGs
DPI = 110
#: inches under the axes for an axis, its label and a legend of up to two rows of 7 pt text
#: (``bbox_to_anchor=(0.5, -0.16)``: its top 0.16 of the axes' height under them)
LEGEND_BELOW = 1.3


def _save(fig: Figure, path: Path) -> Path:
    from ldpsim.runtime.durable import write_file
    return write_file(path, lambda tmp: save_png(fig, tmp, DPI))


def _bar(rows: pd.DataFrame) -> np.ndarray:
    """Error bar lengths from each estimate to its interval's ends (the interval is centred on
    estimate − bias, so the bar is slightly asymmetric when the sketch has a bias)."""
    return np.vstack([rows["estimate"] - rows["ci_low"], rows["ci_high"] - rows["estimate"]]).clip(min=0)


def _day_axis(ax) -> None:
    """Whole days on the x axis, labelled."""
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(DAY)


def _limits(*values, margin: float = 0.05) -> tuple[float, float]:
    """Axis limits holding every one of ``values`` (arrays or scalars), with a margin on each side."""
    v = np.concatenate([np.atleast_1d(np.asarray(x, dtype=float)) for x in values])
    v = v[np.isfinite(v)]
    if v.size == 0:
        return 0.0, 1.0
    lo, hi = float(v.min()), float(v.max())
    pad = margin * (hi - lo) if hi > lo else max(abs(hi), 1.0) * margin
    return lo - pad, hi + pad


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
    labels = [item_label(t) for t in top["token"]]
    ax.set_xticks(x, labels, rotation=55, ha="right", fontsize=7)
    ax.set(ylabel="share of donated emoji", xlabel="emoji (most donated first)",
           title=f"Top-{len(top)} emoji over all {cfg.n_days} days, pooled ({int(top['reports'].iloc[0]):,} reports; "
                 f"{mechanism_label(uc)})")
    ax.legend(fontsize=8, loc=quiet_corner(ax))
    return place(fig, bottom=label_depth(labels, 7, 55) + AXIS - text_lines(10))


def daily_panels(daily: pd.DataFrame, pooled: pd.DataFrame, cfg, n: int = 5) -> Figure:
    """One panel per top-``n`` item: each day's estimate with its 95% interval, the day's true share,
    and the pooled estimate's interval as a band."""
    uc = cfg.use_case("event")
    items = pooled.nsmallest(n, "true_rank")
    fig = Figure(figsize=(9, 1.6 * n + 1.2))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for ax, (_, p) in zip(axes, items.iterrows()):
        d = daily[daily["item"] == p["item"]]
        ax.errorbar(d["day"], d["estimate"], yerr=_bar(d), fmt="o", ms=3, capsize=2, color="C1",
                    label="day's estimate ± theory's 95% interval")
        ax.plot(d["day"], d["true_donated"], "-", color="C0", label="day's true share")
        ax.axhspan(p["ci_low"], p["ci_high"], color="C2", alpha=0.25,
                   label="pooled estimate's 95% interval (all days)")
        ax.set_ylim(*_limits(d["estimate"], d["ci_low"], d["ci_high"], d["true_donated"], [p["ci_low"], p["ci_high"]]))
        ax.set_ylabel("share of emoji", fontsize=8)
        ax.set_title(item_label(p["token"]), fontsize=9, loc="left")
    _day_axis(axes[-1])
    fig.suptitle(f"Daily emoji estimates of the {n} most donated emoji ({mechanism_label(uc)}); "
                 "a day with few reports has a wide interval", fontsize=10, y=1 - 0.1 / fig.get_figheight())
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8)
    panel_title = title_height("-", 9)  # each panel's title above it
    return place(fig, top=text_lines(10) + panel_title, bottom=AXIS + text_lines(8) + 0.1,
                 gap=panel_title + 0.1)


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
    _day_axis(ax)
    ax.set(ylabel="rank (1 = most frequent)", yscale="log",
           title=f"Trend detection: {item_label(cfg.items[cfg.trend_item])} ({mechanism_label(uc)})")
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.invert_yaxis()
    ax.legend(fontsize=8, loc=quiet_corner(ax))
    return place(fig)


def budget_panels(budget: pd.DataFrame, cfg, summary: dict, k: int = 10) -> Figure:
    """Reports per day per use case (with the top-``k`` threshold n*), and the share of donating devices
    whose budget is exhausted, by day."""
    from ldpsim.evaluation.report.run_summary import budget_caps
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
            title=f"Reports per day and privacy budget ({budget_caps(cfg)})")
    top.legend(fontsize=7, loc=quiet_corner(top))
    bottom.plot(budget["day"], 100 * budget["daily_full"], ":", color="black", label="daily budget full that day")
    _day_axis(bottom)
    bottom.set(ylabel="% of donating devices", ylim=(-2, 102),
               title=f"Budget exhausted, by day ({budget.attrs.get('donating_devices', 0):,} donating devices)")
    bottom.legend(fontsize=7, loc=quiet_corner(bottom))
    return place(fig, gap=TITLE + 0.1)


def reading_days(readings: pd.DataFrame, pooled: pd.DataFrame, uc) -> Figure:
    """A reading's daily mean estimate (95% band at the worst-case variance when known) vs truth."""
    unit = READING_UNITS.get(uc.name, "raw units")
    r = readings[readings["use_case"] == uc.name]
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    ax.errorbar(r["day"], r["estimate"], yerr=Z95 * r["sd"], fmt="o", ms=3, capsize=2,
                label=f"estimate ± 95% interval ({r['sd_method'].iloc[0]})")
    ax.plot(r["day"], r["true_donated"], "--", label="true mean of donated readings (clipped to range)")
    ax.plot(r["day"], r["true_event"], ":", label="true mean of all sessions")
    p = pooled[pooled["use_case"] == uc.name]
    if not p.empty:
        ax.axhline(p["estimate"].iloc[0], color="C2", lw=1,
                   label=f"pooled estimate, all days: {p['estimate'].iloc[0]:.2f} {unit}")
    ax.set_ylim(*_limits(r["estimate"] - Z95 * r["sd"], r["estimate"] + Z95 * r["sd"], r["true_event"],
                         r["true_donated"], p["estimate"]))
    ax.set(ylabel=f"mean {uc.name.replace('_', ' ')} ({unit})",
           title=f"Daily mean {uc.name.replace('_', ' ')} ({mechanism_label(uc)})")
    _day_axis(ax)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return place(fig, bottom=LEGEND_BELOW)


def _spelled(word: str) -> str:
    """A word with its emoji spelled as :names: (the figures' font has no emoji glyphs), quoted."""
    import emoji
    return "“" + emoji.demojize(word, delimiters=(":", ":")) + "”"


def words_found(words: pd.DataFrame, summary: dict, cfg) -> Figure:
    """The nightly discovery job: the slang word's estimated share among all word reports so far (when it
    is in the returned list) beside its true share, with the day it was found."""
    uc = cfg.use_case("word")
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    if uc.interactive:  # the list of the latest completed pass of rounds
        listed, truth, job = ("in the latest pass's list; gap: not in it or no estimate published",
                              "true share among the devices answering that night", "rounds each night")
    else:
        listed, truth, job = (f"in the nightly top {uc.top_k}; gap: not in it", "true share of donated words so far",
                              "nightly discovery over all reports so far")
    ax.plot(words["day"], 100 * words["slang_estimate"], "o-", color="C1", label=f"estimated share ({listed})")
    ax.plot(words["day"], 100 * words["slang_true"], "--", color="C0", label=truth)
    ax.axvline(summary["slang_start_day"], color="grey", ls=":", label=f"typed from day {summary['slang_start_day']}")
    found = summary.get("slang_first_day_found")
    if found is not None:
        ax.axvline(found, color="C2", lw=1.2, label=f"found on day {found} (stays in the list)")
    ax.set_ylim(*_limits(0, 100 * words["slang_estimate"], 100 * words["slang_true"]))
    _day_axis(ax)
    ax.set(ylabel="share of words (%)",
           title=f"New word {_spelled(summary['slang_word'])}: {job}\n"
                 f"({mechanism_label(uc)})" + ("" if found is not None else ": not found in the run"))
    ax.title.set_fontsize(9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return place(fig, top=title_height(ax.get_title(), 9), bottom=LEGEND_BELOW)


def central_epsilon(windows: pd.DataFrame, summary: dict) -> Figure:
    """Central ε of one shuffled report against its window's size, with this run's windows, for windows up to
    a hundred times the run's largest (:func:`ldpsim.evaluation.privacy.shuffle_ledger.central_figure`)."""
    from ldpsim.evaluation.privacy.shuffle_ledger import central_figure
    eps0s = sorted(set(windows["epsilon_report"])) if not windows.empty else (1.0,)
    largest = int(windows["n"].max()) if not windows.empty else 1000
    return central_figure(eps0s, summary["central_delta_per_partition"], windows, summary["central_delta"],
                          n_max=100 * largest)


def draw_figures(tables: dict, cfg, k: int = 10) -> list[tuple[str, Figure, str]]:
    """Every figure of a run as ``(file name, Figure, caption)``, in reading order, built in the figures'
    shared :func:`~ldpsim.evaluation.layout.style`."""
    with style():
        return _figures(tables, cfg, k)


def _figures(tables: dict, cfg, k: int) -> list[tuple[str, Figure, str]]:
    daily, pooled, summary = tables["daily"], tables["pooled"], tables["summary"]
    figures = []
    if not pooled.empty:
        figures.append(("emoji_top20_pooled.png", pooled_bars(pooled, cfg),
                        "Top-20 emoji over the whole run: the true share among all donated emoji vs the estimate "
                        "from all reports (aggregates summed over days), with the theory's 95% interval."))
        figures.append(("emoji_daily_top5.png", daily_panels(daily, pooled, cfg),
                        "Each day's estimate of the 5 most donated emoji with its 95% interval, the day's true "
                        "share, and the pooled interval (band): days with few reports are as uncertain as drawn."))
        if cfg.trend_item is not None and cfg.trend_start_day < cfg.n_days:
            figures.append(("emoji_trend_rank.png", trend_ranks(daily, cfg, k),
                            f"Rank of the trending emoji by day: estimated vs true, with the top-{k} boundary."))
    trajectory = tables.get("trend_trajectory", pd.DataFrame())
    if not trajectory.empty:
        title = (f"{item_label(summary['trend_token'])} trending from day {summary['trend_start_day']}: released "
                 f"daily count with its 95% band; {summary['trend_design']}, ε = {summary['trend_epsilon_person']:.3g} "
                 f"per person over the {cfg.n_days}-day run (local)")
        figures.append(("trend_trajectory.png", trajectory_figure(trajectory, title, "reports of the item that day",
                                                                  "true count among the reports"),
                        "The trending item's released daily count (reports × estimated share) with its 95% band "
                        "(± 1.96 sd of the release's error on that day), its true count among the reports, and "
                        "the rising-item detector's threshold divided by its window (trend_metrics.csv)."))
    if not tables["budget"].empty:
        figures.append(("budget_by_day.png", budget_panels(tables["budget"], cfg, summary, k),
                        "Reports received per day per use case and the share of donating devices whose "
                        "privacy budget (ε per device over the run) can no longer pay a report, by day."))
    readings = tables["readings"]
    for uc in cfg.readings():
        if not readings.empty and (readings["use_case"] == uc.name).any():
            figures.append((f"{uc.name}_daily.png", reading_days(readings, tables["pooled_readings"], uc),
                            f"Daily mean {uc.name.replace('_', ' ')} ({READING_UNITS.get(uc.name, 'raw units')}): "
                            "estimate with its 95% interval vs the truth of donated and of all readings."))
    dists = tables.get("distributions", pd.DataFrame())
    for uc in cfg.readings():
        d = dists[dists["use_case"] == uc.name] if not dists.empty else dists
        if not d.empty:
            unit = READING_UNITS.get(uc.name, "raw units")
            figures.append((f"{uc.name}_distribution.png",
                            distribution_figure(np.append(d["low"].to_numpy(), d["high"].iloc[-1]), d["true_count"],
                                                d["estimate"], f"{uc.name.replace('_', ' ')}: {mechanism_label(uc)} "
                                                f"+ EM over {len(d)} bins, {int(d['reports'].iloc[0]):,} reports",
                                                unit),
                            f"Distribution of {uc.name.replace('_', ' ')} ({unit}) over the run: the donated readings "
                            "(clipped to the use case's range) and EM's estimate from every report; ε is that of "
                            "one report, as the title says."))
    figures += numeric_figures(tables)
    words = tables.get("words", pd.DataFrame())
    if not words.empty and summary.get("slang_start_day", cfg.n_days) < cfg.n_days:
        job = ("The server's rounds each night over the devices that answer (" + mechanism_label(cfg.use_case("word"))
               + ")" if cfg.use_case("word").interactive else "The nightly discovery job over all word reports so far")
        figures.append(("words_new_word.png", words_found(words, summary, cfg),
                        f"{job}: the new word's estimated share while it is in the returned list, its true share, "
                        "the day it starts being typed and the day it was found (from then on always in the list)."))
    if "central_delta_per_partition" in summary:
        figures.append(("central_epsilon.png", central_epsilon(tables["central_windows"], summary),
                        "Shuffle amplification: the central ε of one device's report shuffled among the n reports "
                        "of its batch window (one use case, one day), for each local ε per report of this run, "
                        f"at δ = {summary['central_delta_per_partition']:.2g}. That δ is per partition: the run's "
                        f"δ = {summary['central_delta']:g} for one device over the whole run is split evenly "
                        "(δ / (2·P) for P partitions) so that composing every partition stays within it. The "
                        "crosses are this run's windows; the summary composes them into ε per device-day and "
                        "per run."))
    return figures


def write_plots(folder, tables: dict, cfg, k: int = 10, replace: bool = True) -> list[Path]:
    """Write every figure of a run into ``folder`` (and ``captions.json``); returns the paths in order. With
    ``replace`` False a figure whose file exists is kept as it is (and returned in its place)."""
    from ldpsim.runtime.durable import make_dirs, write_text
    folder = Path(folder)
    make_dirs(folder)
    figures = draw_figures(tables, cfg, k)
    paths = [folder / name if not replace and (folder / name).exists() else _save(fig, folder / name)
             for name, fig, _ in figures]
    write_text(folder / "captions.json", json.dumps({name: cap for name, _, cap in figures}, indent=1,
                                                    ensure_ascii=False))
    return paths
