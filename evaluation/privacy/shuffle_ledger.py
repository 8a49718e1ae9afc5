"""The central (ε, δ) that the server's shuffle buys in a deployment run — docs/math.md §7.5.

The server shuffles each batch window's reports per (use case, collection day) partition
(``simulator/server.py``; the run records one row per window and partition in ``records["flushes"]``).
For a report shuffled among n reports of ε₀-LDP randomizers, :mod:`ldpsim.evaluation.privacy.amplification`
bounds the central ε at a δ (Feldman–McMillan–Talwar 2021, numerical bound).

Accounting, per device (the privacy unit):

* a use case with ``daily_limit`` L lets a device put at most L reports into one partition; those are
  treated as one (L·ε)-LDP randomizer output, and the window's n is its number of devices,
  at least ⌈reports / L⌉ (fewer devices, more privacy loss: the bound stays valid). With L = 1 (the
  shipped scenarios) this is exactly FMT's one-report-per-user setting. A device's reports of one
  partition are assumed to travel in one upload bundle, hence one window (always true for L = 1);
* a partition (use case, day) is read two ways: its least amplified window (a bound for every device)
  and the window of its median report (a typical device);
* a day composes its partitions (one per use case), the run composes all partitions, with
  ``dp-accounting`` (:func:`~ldpsim.evaluation.privacy.composition.compose`, the accountant's). Every partition gets
  δ_p = δ / (2·P) for P partitions, so the composed δ stays below the reported δ.

A central ε is never reported above the local one it amplifies (shuffling is post-processing).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd

from ldpsim.evaluation.privacy.amplification import numerical_epsilon
from ldpsim.evaluation.privacy.composition import compose
from ldpsim.evaluation.layout import place, title_height
from ldpsim.evaluation.legend import quiet_corner
from ldpsim.mechanisms.deltas import DELTA_SPEND



@lru_cache(maxsize=4096)
def _central(eps0: float, n: int, delta: float) -> float:
    return min(eps0, numerical_epsilon(eps0, n, delta, tol=1e-4))


def window_table(cfg, result, delta_p: float) -> pd.DataFrame:
    """One row per shuffled batch (window × use case × collection day × shard): n devices and central ε."""
    flushes = pd.DataFrame(result.records.get("flushes", []))
    cols = ["use_case", "day", "t_s", "reports", "n", "epsilon_report", "epsilon_central"]
    if flushes.empty:
        return pd.DataFrame(columns=cols)
    limits = {uc.name: (uc.daily_limit, uc.daily_limit * uc.ledger_cost) for uc in cfg.use_cases}
    lim = flushes["use_case"].map(lambda name: limits[name][0]).to_numpy()
    w = flushes.assign(n=np.ceil(flushes["reports"].to_numpy() / lim).astype(int),
                       epsilon_report=flushes["use_case"].map(lambda name: limits[name][1]))
    w["epsilon_central"] = [_central(float(e), int(n), delta_p) for e, n in zip(w["epsilon_report"], w["n"])]
    return w[cols]


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    order = np.argsort(values)
    cum = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cum, cum[-1] / 2)])


def partition_table(windows: pd.DataFrame, delta_p: float) -> pd.DataFrame:
    """One row per (use case, day) partition: its worst window and the window of the median report."""
    rows = []
    for (name, day), g in windows.groupby(["use_case", "day"]):
        eps0 = float(g["epsilon_report"].iloc[0])
        worst = float(g["epsilon_central"].max())
        typical = _weighted_median(g["epsilon_central"].to_numpy(), g["reports"].to_numpy())
        rows.append({"use_case": name, "day": int(day), "windows": len(g), "reports": int(g["reports"].sum()),
                     "n_min": int(g["n"].min()), "epsilon_report": eps0, "epsilon_central_worst": worst,
                     "delta_worst": 0.0 if worst >= eps0 else delta_p, "epsilon_central_median": typical,
                     "delta_median": 0.0 if typical >= eps0 else delta_p})
    return pd.DataFrame(rows)


def _composed(rows: pd.DataFrame, which: str, delta: float) -> tuple[float, str]:
    got = compose(zip(rows[f"epsilon_central_{which}"], rows[f"delta_{which}"]), delta)
    return min(got.epsilon, float(rows["epsilon_report"].sum())), got.method


def central_summary(cfg, result, delta: float = DELTA_SPEND) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Window table, per-day table and a flat summary of the central ε of a run at ``delta``.

    Two readings of every partition: ``worst`` (its least amplified window: a bound for every device)
    and ``median`` (the window of its median report: what a typical device gets).

    Returns
    -------
    (windows, days, summary)
        ``days``: per day the local ε (Σ over the day's partitions) and the composed central ε, worst
        and median; ``summary``: the run's composition, per-report medians and the accounting method.
    """
    flushes = result.records.get("flushes", [])
    n_parts = max(1, len({(r["use_case"], r["day"]) for r in flushes}))
    delta_p = delta / (2 * n_parts)
    windows = window_table(cfg, result, delta_p)
    if windows.empty:
        return windows, pd.DataFrame(), {"central_delta": delta}
    parts = partition_table(windows, delta_p)
    days = []
    for day, g in parts.groupby("day"):
        worst, _ = _composed(g, "worst", delta)
        median, _ = _composed(g, "median", delta)
        days.append({"day": int(day), "epsilon_day": float(g["epsilon_report"].sum()),
                     "epsilon_central_worst": worst, "epsilon_central_median": median, "delta": delta})
    days = pd.DataFrame(days)
    run_worst, method = _composed(parts, "worst", delta)
    run_median, _ = _composed(parts, "median", delta)
    # no device spends more than the ledger let it: the composition over every partition is a bound,
    # and so is the largest local ε actually spent (shuffling is post-processing)
    spent = getattr(result, "ledger_spent", None)
    local_run = float(parts["epsilon_report"].sum())
    if spent is not None and np.size(spent):
        local_run = min(local_run, float(np.max(spent)))
    run_worst, run_median = min(run_worst, local_run), min(run_median, local_run)
    unamplified = windows["epsilon_central"] >= windows["epsilon_report"]
    summary = {
        "central_delta": delta, "central_delta_per_partition": delta_p, "central_accounting": method,
        "central_epsilon_device_worst": run_worst, "central_epsilon_device_median": run_median,
        "local_epsilon_device_all_partitions": local_run,
        "central_epsilon_day_max_worst": float(days["epsilon_central_worst"].max()),
        "central_epsilon_day_max_median": float(days["epsilon_central_median"].max()),
        "local_epsilon_day_max": float(days["epsilon_day"].max()),
        "central_reports_unamplified": float(windows.loc[unamplified, "reports"].sum() / windows["reports"].sum()),
        "central_window_n_median": _weighted_median(windows["n"].to_numpy().astype(float),
                                                    windows["reports"].to_numpy()),
        "central_per_report": {name: [float(g["epsilon_report"].iloc[0]),
                                      _weighted_median(g["epsilon_central"].to_numpy(), g["reports"].to_numpy())]
                               for name, g in windows.groupby("use_case")},
    }
    return windows, days, summary


def format_central(summary: dict) -> list[str]:
    """The summary's central-ε lines: per report, per device-day and per run, and how they were computed."""
    if "central_epsilon_device_worst" not in summary:
        return ["no report was shuffled"]
    per_uc = ", ".join(f"{name} {local:g}→{central:.3f}" for name, (local, central)
                       in summary["central_per_report"].items())
    return [f"per report, local→central (median report, shuffled among {summary['central_window_n_median']:,.0f}): "
            f"{per_uc}; {100 * summary['central_reports_unamplified']:.1f}% of reports in windows too small to "
            f"amplify.",
            f"per device-day {summary['central_epsilon_day_max_median']:.3f} typical, "
            f"{summary['central_epsilon_day_max_worst']:.3f} worst window (local {summary['local_epsilon_day_max']:g}); "
            f"whole run {summary['central_epsilon_device_median']:.3f} typical, {summary['central_epsilon_device_worst']:.3f} "
            f"worst (local ≤ {summary['local_epsilon_device_all_partitions']:g}), δ = {summary['central_delta']:g}.",
            f"[shuffle: Feldman–McMillan–Talwar 2021 numerical bound; composition: {summary['central_accounting']}]"]


def central_figure(eps0s=(0.5, 1.0, 2.0, 4.0, 8.0), delta: float = DELTA_SPEND, windows=None,
                   run_delta: float | None = None, n_max: int = 10**7):
    """Central ε of one report shuffled among n reports, against n, for several local ε₀ (a Figure).

    Numerical bound (solid) and closed form (dashed) at ``delta`` for n from 100 to ``n_max`` (rounded up
    to a power of ten; five points a decade); ``windows`` (optional) a window table whose
    (n, epsilon_central) points are drawn on top (a run's actual windows). With ``run_delta`` the title says
    that ``delta`` is the run's δ split over its partitions (δ_p = δ / (2·P)).
    """
    from matplotlib.figure import Figure

    from ldpsim.evaluation.privacy.amplification import closed_form_epsilon

    decades = max(1, math.ceil(math.log10(max(n_max, 1000)) - 2))
    ns = np.unique(np.round(np.logspace(2, 2 + decades, 5 * decades + 1)).astype(int))
    fig = Figure(figsize=(7.2, 4.6))
    ax = fig.subplots()
    for eps0 in eps0s:
        num = [min(eps0, numerical_epsilon(eps0, n, delta, tol=1e-4)) for n in ns]
        line, = ax.plot(ns, num, label=f"local ε₀ = {eps0:g} per report")
        ax.plot(ns, [closed_form_epsilon(eps0, n, delta) for n in ns], "--", color=line.get_color(), lw=0.8)
    if windows is not None and not windows.empty:
        ax.scatter(windows["n"], windows["epsilon_central"], s=12, c="k", marker="x", label="this run's windows")
    why = ("" if run_delta is None else
           f" per (use case, day) partition = the run's {run_delta:g} / (2 × {round(run_delta / (2 * delta)):,})")
    ax.set(xscale="log", yscale="log", xlabel="reports per shuffled batch window (n)",
           ylabel=f"central ε of one report at δ = {delta:.2g}",
           title="Shuffle amplification (FMT21): central ε of one device's report in one batch window\n"
                 f"numerical bound (solid), closed form (dashed); δ = {delta:.2g}{why}")
    ax.title.set_fontsize(8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc=quiet_corner(ax))
    return place(fig, top=title_height(ax.get_title(), 8), right=0.6)  # room for the centred title's 2nd line
