"""Measurement of a deployment run: daily estimates vs truth, trend detection, network, ledger, adversary.

Pure functions of a :class:`ldpsim.simulator.deployment.DeploymentResult` (and its config) returning tidy
DataFrames or dicts; the plots read those tables.

Truth comes at three levels, per collection day d:

* ``event``: share of item x among all emoji typed by all devices (what the population types);
* ``donated``: share of x among the donated records (what the LDP estimate targets: with a daily
  limit every donating device weighs about equally, so heavy typists are under-represented);
* ``device``: share of devices that typed x at least once.

The adversary is the server-side observer of docs/math.md §3 extended to many reports per device: with the
Bayes posterior P(x_r = x | y_r) ∝ P[y_r | x]·π(x) of each report (π the public workload
frequencies), it guesses for a device argmax_x Σ_r P(x_r = x | y_r) (the item with the largest
expected count among its reports) and wins when that is the device's favourite item. *Linked*: reports keep the device id, so the
observer uses all of a device's reports. *Stripped and shuffled*: the store holds no id, so the best
the observer can do is to attribute to the device random reports of the same day's partition.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ldpsim.mechanisms._validation import as_generator

from ldpsim.evaluation.adversary.sketch import support
from ldpsim.evaluation.report.plots import item_label


def _event_mech(cfg):
    uc = cfg.use_case("event")
    return uc, (uc.make_mechanism() if uc is not None else None)


def daily_estimates(cfg, result) -> pd.DataFrame:
    """One row per (day, item) of the event use case: estimated and true shares, daily and running."""
    uc, mech = _event_mech(cfg)
    if uc is None:
        return pd.DataFrame()
    items = np.asarray(cfg.items, dtype=object) if mech.takes_tokens else None
    t = result.truth
    rows, running = [], None
    for day in range(cfg.n_days):
        agg = result.aggregates.get((uc.name, day))
        if agg is None:
            continue
        running = agg if running is None else running + agg
        est = mech.estimate(agg, items) / max(agg.n, 1)
        run_est = mech.estimate(running, items) / max(running.n, 1)
        active = max(int(result.truth["devices"][day].sum()), 1)
        rows.append(pd.DataFrame({
            "day": day, "item": np.arange(len(cfg.items)), "token": list(cfg.items), "reports": agg.n,
            "estimate": est, "running_estimate": run_est,
            "true_event": t["events"][day] / max(t["events"][day].sum(), 1),
            "true_donated": t["donated"][day] / max(t["donated"][day].sum(), 1),
            "true_device": t["devices"][day] / active,
            "true_variance": mech.variance(t["donated"][day], items) / max(agg.n, 1) ** 2}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def daily_readings(cfg, result) -> pd.DataFrame:
    """One row per (reading use case, day): estimated mean vs the mean of all sessions' readings
    (``true_event``) and of the donated ones as privatized, i.e. clipped to the use case's range
    (``true_donated``, what the estimate targets); raw units."""
    t, rows = result.truth, []
    for uc in cfg.readings():
        aggregator = uc.make_aggregator()
        for day in range(cfg.n_days):
            agg = result.aggregates.get((uc.name, day))
            if agg is None:
                continue
            rows.append({"use_case": uc.name, "day": day, "reports": agg.n,
                         "estimate": uc.estimate_mean(aggregator, agg),
                         "true_event": t[f"{uc.name}:all_sum"][day] / max(t[f"{uc.name}:all_n"][day], 1),
                         "true_donated": t[f"{uc.name}:donated_sum"][day] / max(t[f"{uc.name}:donated_n"][day], 1)})
    return pd.DataFrame(rows)


def accuracy_summary(daily: pd.DataFrame, k: int = 10, truth: str = "true_donated") -> pd.DataFrame:
    """Per item of the pooled top-``k`` (by ``truth``): ΔE, ΔR and variance over the days (docs/math.md §4).

    The days play the role of seed 003's repeated runs, each compared with its own day's truth:
    ΔE = |mean_d(est − true)| / mean_d true, ΔR = mean_d |est rank − true rank|,
    variance = mean_d (est − true)² (frequency scale).
    """
    d = daily.copy()
    d["est_rank"] = d.groupby("day")["estimate"].rank(ascending=False, method="first")
    d["true_rank"] = d.groupby("day")[truth].rank(ascending=False, method="first")
    d["err"] = d["estimate"] - d[truth]
    d["abs_rank_err"] = (d["est_rank"] - d["true_rank"]).abs()
    d["sq_err"] = d["err"] ** 2
    g = d.groupby(["item", "token"])
    out = pd.DataFrame({"true": g[truth].mean(), "estimate": g["estimate"].mean(),
                        "delta_e": g["err"].mean().abs() / g[truth].mean(), "delta_r": g["abs_rank_err"].mean(),
                        "variance": g["sq_err"].mean(), "theory_variance": g["true_variance"].mean()})
    return out.sort_values("true", ascending=False).head(k).reset_index()


def trend_detection(cfg, daily: pd.DataFrame, k: int = 10) -> dict:
    """First day the trend item is in the estimated (daily and running) and the true top-``k``."""
    if cfg.trend_item is None or daily.empty:
        return {}
    out = {"trend_token": cfg.items[cfg.trend_item], "trend_start_day": cfg.trend_start_day}
    for col in ("estimate", "running_estimate", "true_event", "true_donated"):
        rank = daily.groupby("day")[col].rank(ascending=False, method="first")
        hit = daily.loc[(daily["item"] == cfg.trend_item) & (rank <= k) & (daily["day"] >= cfg.trend_start_day),
                        "day"]
        out[f"first_day_top{k}_{col}"] = int(hit.min()) if len(hit) else None
    first_est, first_true = out[f"first_day_top{k}_estimate"], out[f"first_day_top{k}_true_donated"]
    out["detection_lag_days"] = None if first_est is None or first_true is None else first_est - first_true
    return out


def network_summary(cfg, result) -> dict:
    """Upload success and loss, bandwidth per uploading device-day, queue lengths, server counters."""
    b = pd.DataFrame(result.records["bundles"])
    up = pd.DataFrame(result.records["uploads"])
    q = pd.DataFrame(result.records["queue"])
    by = b.groupby("status")["bundles"].sum() if not b.empty else pd.Series(dtype=int)
    total = max(int(by.sum()), 1)
    out = {f"bundles_{s}": int(by.get(s, 0)) for s in ("acked", "expired", "gave_up", "pending")}
    out["upload_success"] = out["bundles_acked"] / total
    out["attempts"] = int(up["bundles"].sum()) if not up.empty else 0
    out["attempt_loss"] = float(up["lost"].sum() / max(out["attempts"], 1)) if not up.empty else 0.0
    out["bytes_total"] = int(up["bytes"].sum()) if not up.empty else 0
    device_days = int(up["devices"].sum()) if not up.empty else 0
    out["bytes_per_uploading_device_day"] = out["bytes_total"] / max(device_days, 1)
    out["bytes_per_device_per_day"] = out["bytes_total"] / (cfg.n_devices * cfg.n_days)
    out["queue_mean"] = float(q["queue"].mean()) if not q.empty else 0.0
    out["queue_max"] = int(q["queue"].max()) if not q.empty else 0
    out.update({f"server_{k}": v for k, v in result.counters.items()})
    return out


def ledger_summary(cfg, result) -> dict:
    """ε spent per device (sequential composition) against the budgets."""
    spent, daily = result.ledger_spent, result.ledger_daily
    return {"epsilon_total_mean": float(spent.mean()), "epsilon_total_max": float(spent.max()),
            "epsilon_daily_max": float(daily.max()), "budget_total": cfg.budget_total,
            "budget_daily": cfg.budget_daily, "donations_refused": int(result.refused)}


def log_likelihoods(mech, reports, items) -> np.ndarray:
    """log P[y_r | x] up to a per-report constant, for every report r and item x (n_reports × n_items).

    Discrete oracles: the transition matrix. Sketches and unary/hashed oracles (docs/math.md §3): a report
    either supports a candidate or not, with a fixed log-likelihood gap (``adversary_sketch.support``).
    """
    if hasattr(mech, "transition_matrix"):
        with np.errstate(divide="ignore"):
            return np.log(mech.transition_matrix()[:, np.asarray(reports)].T)
    try:
        supported, gap = support(mech, reports, items)
    except TypeError as exc:
        raise NotImplementedError(str(exc)) from None
    return np.where(supported, gap, 0.0)


def adversary(cfg, result, rng=None) -> dict:
    """Accuracy of the observer guessing each tapped device's favourite item, linked vs stripped."""
    uc, mech = _event_mech(cfg)
    taps = [t for t in result.tap if uc is not None and t["use_case"] == uc.name]
    if not taps:
        return {}
    rng = as_generator(rng)
    device = np.concatenate([t["device"] for t in taps])
    day = np.concatenate([np.full(t["device"].size, t["day"]) for t in taps])
    rows = np.concatenate([t["rows"] for t in taps])
    try:
        ll = log_likelihoods(mech, mech.decode(rows.tobytes()), cfg.items)
    except NotImplementedError:
        return {"adversary_linked": np.nan, "adversary_stripped": np.nan}
    log_prior = np.log(np.asarray(cfg.item_weights))
    ids, dev_idx = np.unique(device, return_inverse=True)
    fav = np.array([result.favourite[i] for i in ids.tolist()])
    # stripped and shuffled: each report is attributed to a random report of the same day
    shuffled = np.empty_like(dev_idx)
    for d in np.unique(day):
        sel = np.flatnonzero(day == d)
        shuffled[sel] = sel[rng.permutation(sel.size)]
    out = {"adversary_devices": int(ids.size), "adversary_prior_only": float(np.mean(fav == np.argmax(log_prior)))}
    # posterior of each report's true item; a device's guess is the item with the largest expected
    # count among its reports (Σ_r P(x_r = x | y_r)) — the observer's estimate of its most used item
    post = ll + log_prior
    post = np.exp(post - post.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    for name, rows_of in (("linked", np.arange(dev_idx.size)), ("stripped", shuffled)):
        votes = np.zeros((ids.size, len(cfg.items)))
        np.add.at(votes, dev_idx, post[rows_of])
        out[f"adversary_{name}"] = float(np.mean(votes.argmax(axis=1) == fav))
    return out


def measure(cfg, result, rng=None, k: int = 10) -> dict:
    """Every table and summary of a run: ``daily``, ``readings``, ``top``, ``summary`` (a flat dict)."""
    daily = daily_estimates(cfg, result)
    readings = daily_readings(cfg, result)
    top = accuracy_summary(daily, k) if not daily.empty else pd.DataFrame()
    summary = {"devices": cfg.n_devices, "days": cfg.n_days, "workers": result.shards,
               "seconds": result.seconds, "device_days_per_s": cfg.n_devices * cfg.n_days / max(result.seconds, 1e-9)}
    if not top.empty:
        summary.update(mean_delta_e_top=float(top["delta_e"].mean()), mean_delta_r_top=float(top["delta_r"].mean()),
                       mean_variance_top=float(top["variance"].mean()))
        in_top = daily[daily["item"].isin(top["item"])]
        for level in ("donated", "event"):  # the estimate targets donated shares, not all events
            summary[f"share_mae_vs_{level}"] = float((in_top["estimate"] - in_top[f"true_{level}"]).abs().mean())
    for name, r in (readings.groupby("use_case") if not readings.empty else []):
        err = r["estimate"] - r["true_donated"]
        summary.update({f"{name}_bias": float(err.mean()), f"{name}_rmse": float(np.sqrt((err ** 2).mean()))})
    for part in (trend_detection(cfg, daily, k), network_summary(cfg, result), ledger_summary(cfg, result),
                 adversary(cfg, result, rng)):
        summary.update(part)
    return {"daily": daily, "readings": readings, "top": top, "summary": summary}


def write_plots(folder, daily: pd.DataFrame, readings: pd.DataFrame, cfg, k: int = 10) -> list:
    """Estimates over days, top-k bars and trend detection, from the stored tables; returns the paths."""
    from matplotlib.figure import Figure

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    if not daily.empty:
        top = daily.groupby("item")["true_donated"].mean().nlargest(5).index
        fig = Figure(figsize=(8, 4.5))
        ax = fig.subplots()
        for i, item in enumerate(top):
            d = daily[daily["item"] == item]
            ax.plot(d["day"], d["estimate"], "o-", color=f"C{i}", label=item_label(cfg.items[item]))
            ax.plot(d["day"], d["true_donated"], "--", color=f"C{i}")
        ax.set(xlabel="day", ylabel="share of donated emoji", title="daily estimates (solid) vs truth (dashed)")
        ax.legend(fontsize=7)
        paths.append(_save(fig, folder / "estimates_over_days.png"))

        last = daily[daily["day"] == daily["day"].max()].nlargest(20, "true_donated")
        fig = Figure(figsize=(9, 4.5))
        ax = fig.subplots()
        x = np.arange(len(last))
        ax.bar(x - 0.2, last["true_donated"], 0.4, label="true")
        ax.bar(x + 0.2, last["running_estimate"], 0.4, label="estimate (all days)")
        ax.set_xticks(x, [item_label(cfg.items[i]) for i in last["item"]], rotation=60, ha="right", fontsize=7)
        ax.set(ylabel="share", title="top-20 emoji: true vs estimated")
        ax.legend()
        paths.append(_save(fig, folder / "top_bars.png"))

        if cfg.trend_item is not None:
            fig = Figure(figsize=(8, 4))
            ax = fig.subplots()
            d = daily[daily["item"] == cfg.trend_item]
            rank = daily.groupby("day")["estimate"].rank(ascending=False)[d.index]
            ax.plot(d["day"], rank, "o-", label="estimated rank")
            ax.plot(d["day"], daily.groupby("day")["true_donated"].rank(ascending=False)[d.index], "--",
                    label="true rank")
            ax.axhline(k + 0.5, color="grey", lw=0.8)
            ax.axvline(cfg.trend_start_day, color="grey", ls=":")
            ax.set(xlabel="day", ylabel="rank", yscale="log", title=f"trend detection (top-{k} line)")
            ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500) if t <= len(cfg.items)]
            ax.set_yticks(ticks, [str(t) for t in ticks])
            ax.invert_yaxis()
            ax.legend()
            paths.append(_save(fig, folder / "trend.png"))
    for name, r in (readings.groupby("use_case") if not readings.empty else []):
        fig = Figure(figsize=(8, 4))
        ax = fig.subplots()
        ax.plot(r["day"], r["estimate"], "o-", label="estimate")
        ax.plot(r["day"], r["true_donated"], "--", label="true (donated)")
        ax.plot(r["day"], r["true_event"], ":", label="true (all sessions)")
        ax.set(xlabel="day", ylabel=f"mean {name.replace('_', ' ')}", title=name.replace("_", " "))
        ax.legend()
        paths.append(_save(fig, folder / f"{name}.png"))
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path
