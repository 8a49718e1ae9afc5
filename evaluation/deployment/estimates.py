"""Measurement of a deployment run: estimates with the theory's intervals, pooled and per day.

Pure functions of a :class:`ldpsim.simulator.deployment.DeploymentResult` (and its config) returning tidy
DataFrames or dicts; the plots and the printed summary read those tables.

Truth comes at three levels, per collection day d:

* ``event``: share of item x among all emoji typed by all devices (what the population types);
* ``donated``: share of x among the donated records (what the LDP estimate targets: with a daily
  limit every donating device weighs about equally, so heavy typists are under-represented);
* ``device``: share of devices that typed x at least once.

**Intervals.** Given the true counts c of the n reports behind an estimate, a frequency oracle's count
estimate has a known bias b(c) and variance V(c) (``mech.bias``, ``mech.variance``; docs/math.md §4.1).
Both are linear in c (a sum over independent reports), so the share estimate p̂ = ĉ/n of n received
reports whose items are distributed as the donated counts D (total N) has bias b(D)/N and variance
V(D)/(N·n). The *theory's 95% interval* of the truth is p̂ − bias ± 1.96·sd: it holds the true share
in 95% of runs (tested in tests/evaluation/test_deployment_metrics.py).

**Pooling.** Aggregates merge by addition, so the estimate from all reports of all days is the estimate
of the summed aggregate, with the same theory at the summed counts. Its target is the share of x among
all donated records of the run: each report weighs the same, so a day with 20 reports counts 20/n of
the pooled estimate, not 1/days. Per-day errors are compared with theory one day at a time: the
daily MSE ÷ theory is mean_d (p̂_d − p_d)² / (sd_d² + bias_d²), each day weighted by its own
precision; it follows χ²_D / D (D days) when the theory holds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.evaluation.confidence import Z95
from ldpsim.evaluation.deployment.trust_estimates import trust_daily, trust_guarantees, trust_pooled, trust_summary
from ldpsim.simulator.attributes import debias_mean, debias_shares


#: units of the numeric readings (raw units of their value_range)
READING_UNITS = {"typing_speed": "wpm", "session_length": "s"}


def mechanism_label(uc) -> str:
    """"CMS, ε = 4 a report" for a use case: the ε of one report (ε_∞ too for a memoized one;
    docs/math.md §8.1); for a collected use case its trust model and ε per device over the run; for an
    interactive words protocol, its kind and ε (δ) per device over the run."""
    if uc.collected:  # exact reports to a trust model's collectors (evaluation/deployment/trust_estimates.py)
        t = dict(uc.trust)
        return f"{uc.aggregation}, ε = {t['epsilon_device']:.3g} per device over the run, δ = {t['delta']:.0e}"
    g = uc.guarantee
    if uc.interactive:  # rounds, not reports: the run's guarantee per device, with its kind (docs/math.md §10.8)
        plan = uc.make_mechanism()
        delta = f", δ = {plan.delta:.2g}" if plan.delta else ""
        return (f"{type(plan.protocol).__name__}, {g.label}: ε = {plan.epsilon:.3g}{delta} per device over the run, "
                f"{plan.rounds_per_day} rounds a night")
    label = f"{type(uc.make_mechanism()).__name__}, ε = {g.epsilon_report:.3g} a report"
    return label + (f", ε_∞ = {g.epsilon_permanent:.3g}" if uc.memoize else "")


def event_mechanism(cfg):
    """(the event use case, its mechanism, the items argument of its estimate) or (None, None, None)."""
    uc = cfg.use_case("event")
    if uc is None:
        return None, None, None
    mech = uc.make_mechanism()
    return uc, mech, (np.asarray(cfg.items, dtype=object) if mech.takes_tokens else None)


def share_theory(mech, donated: np.ndarray, n: int, items=None) -> tuple[np.ndarray, np.ndarray]:
    """(sd, bias) of every share estimate made from ``n`` reports whose items follow ``donated`` counts.

    Variance and bias of a frequency oracle's count estimate are linear in the true counts, so they
    scale from the donated counts (total N) to the n reports the server received:
    sd = sqrt(V(donated) / (N·n)), bias = b(donated) / N (share scale; NaN when n or N is 0).
    """
    donated = np.asarray(donated)
    total = int(donated.sum())
    if total == 0 or n <= 0:
        nan = np.full(donated.shape, np.nan)
        return nan, nan
    return np.sqrt(mech.variance(donated, items) / (total * n)), mech.bias(donated, items) / total


def _shares(counts: np.ndarray) -> np.ndarray:
    return counts / max(counts.sum(), 1)


def _estimate_rows(mech, items, agg, donated, events, **extra) -> dict:
    est = mech.estimate(agg, items) / max(agg.n, 1)
    sd, bias = share_theory(mech, donated, agg.n, items)
    centre = est - bias
    return {**extra, "reports": agg.n, "estimate": est, "sd": sd, "bias": bias,
            "ci_low": centre - Z95 * sd, "ci_high": centre + Z95 * sd,
            "true_event": _shares(events), "true_donated": _shares(donated)}


def _rsfd_rows(cfg, mech, items, row: dict, n: int, inputs: np.ndarray, n_fake: int) -> dict:
    """RS+FD (``simulator/attributes.py``): the shares of the real values debiased from the estimate over
    real and fake reports, with the theory of the debiased estimate (docs/math.md §7.5): per report,
    A²·(V(inputs) + n_fake·(1/D)(1 − 1/D))/N_in, ``inputs`` the real plus fake counts sent (total N_in)."""
    A, D = len(cfg.use_cases), len(cfg.items)
    total = max(int(np.sum(inputs)), 1)
    per_report = (mech.variance(inputs, items) + n_fake * (1 / D) * (1 - 1 / D)) / total
    row["estimate"] = debias_shares(row["estimate"], "rsfd", A, D)
    row["sd"] = A * np.sqrt(per_report / max(n, 1))
    row["bias"] = A * mech.bias(inputs, items) / total
    centre = row["estimate"] - row["bias"]
    row["ci_low"], row["ci_high"] = centre - Z95 * row["sd"], centre + Z95 * row["sd"]
    return row


def daily_estimates(cfg, result) -> pd.DataFrame:
    """One row per (day, item) of the event use case: estimate, theory sd, bias and 95% interval,
    true shares; ``running_estimate`` pools the days so far."""
    uc, mech, items = event_mechanism(cfg)
    if uc is None:
        return pd.DataFrame()
    if uc.collected:  # a trust model's nightly releases
        return trust_daily(cfg, result)
    t = result.truth
    rows, running = [], None
    for day in range(cfg.n_days):
        agg = result.aggregates.get((uc.name, day))
        if agg is None or agg.n == 0:
            continue
        running = agg if running is None else running + agg
        active = max(int(t["devices"][day].sum()), 1)
        row = _estimate_rows(mech, items, agg, t["donated"][day], t["events"][day], day=day,
                             item=np.arange(len(cfg.items)), token=list(cfg.items))
        row["running_estimate"] = mech.estimate(running, items) / running.n
        if cfg.policy == "rsfd":
            row = _rsfd_rows(cfg, mech, items, row, agg.n, t["donated"][day] + t["fake"][day], int(t["fake"][day].sum()))
            row["running_estimate"] = debias_shares(row["running_estimate"], "rsfd", len(cfg.use_cases), len(cfg.items))
        row["true_device"] = t["devices"][day] / active
        rows.append(pd.DataFrame(row))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def pooled_estimates(cfg, result) -> pd.DataFrame:
    """One row per item: the estimate of the summed aggregate of every day, its theory and interval,
    the true shares over the run, ranks and whether the interval holds the truth (``covered``)."""
    uc, mech, items = event_mechanism(cfg)
    if uc is not None and uc.collected:
        return trust_pooled(cfg, result)
    aggs = [a for (name, _), a in sorted(result.aggregates.items()) if uc is not None and name == uc.name]
    if not aggs or sum(a.n for a in aggs) == 0:
        return pd.DataFrame()
    pooled = sum(aggs[1:], aggs[0])
    t = result.truth
    row = _estimate_rows(mech, items, pooled, t["donated"].sum(axis=0), t["events"].sum(axis=0),
                         item=np.arange(len(cfg.items)), token=list(cfg.items))
    if cfg.policy == "rsfd":
        row = _rsfd_rows(cfg, mech, items, row, pooled.n, (t["donated"] + t["fake"]).sum(axis=0), int(t["fake"].sum()))
    out = pd.DataFrame(row)
    out["est_rank"] = out["estimate"].rank(ascending=False, method="first").astype(int)
    out["true_rank"] = out["true_donated"].rank(ascending=False, method="first").astype(int)
    out["covered"] = (out["ci_low"] <= out["true_donated"]) & (out["true_donated"] <= out["ci_high"])
    return out


def mse_ratio_interval(n_days: int, level: float = 0.95) -> tuple[float, float]:
    """Where the daily MSE ÷ theory of one item falls with probability ``level``: χ²_D / D quantiles."""
    from scipy.stats import chi2

    a = (1 - level) / 2
    return float(chi2.ppf(a, n_days) / n_days), float(chi2.ppf(1 - a, n_days) / n_days)


def accuracy_table(pooled: pd.DataFrame, daily: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """The pooled top-``k`` (by true donated share): pooled truth, estimate, 95% half-width, ranks,
    ΔE = |estimate − truth| / truth, and the daily MSE ÷ theory (each day weighted by its precision)."""
    top = pooled.nsmallest(k, "true_rank").copy()
    d = daily[daily["item"].isin(top["item"])]
    ratio = ((d["estimate"] - d["true_donated"]) ** 2 / (d["sd"] ** 2 + d["bias"] ** 2)).groupby(d["item"]).mean()
    top["half_width"] = Z95 * top["sd"]
    top["delta_e"] = (top["estimate"] - top["true_donated"]).abs() / top["true_donated"]
    top["mse_ratio"] = top["item"].map(ratio)
    top["days"] = top["item"].map(d.groupby("item").size())
    cols = ["true_rank", "item", "token", "true_donated", "estimate", "half_width", "covered", "est_rank",
            "delta_e", "mse_ratio", "days", "reports"]
    return top[cols].reset_index(drop=True)


def _em_unit_sd(em, agg, rng, repeats: int = 200) -> float:
    """sd of EM's mean from ``agg.n`` reports by a parametric bootstrap at EM's own estimate f̂: report
    histograms ~ Multinomial(n, Mᵀf̂) (M the exact transition matrix), EM rerun on each ([−1, 1] units)."""
    pi = em.matrix.T @ em.estimate(agg)
    pi = pi.clip(min=0) / pi.clip(min=0).sum()
    draws = rng.multinomial(agg.n, pi, size=repeats)
    return float(np.std(em.means(draws), ddof=1))


def reading_estimates(cfg, result, rng=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(daily, pooled): one row per (reading use case, day), and one per use case for the summed
    aggregate of every day. Estimated mean vs the mean of all sessions' readings (``true_event``) and
    of the donated ones as privatized, i.e. clipped to the use case's range (``true_donated``, what the
    estimate targets); raw units. ``sd`` is the estimate's sd (``sd_method``): for an unbiased report
    average its largest value over the input range, sqrt(max_x Var[x*|x] / n)/a, a the mechanism's
    ``mean_scale`` (1 but for SW, docs/math.md §2.5) (PM: |x| = 1; 1BitMean:
    x = m/2, docs/math.md §7.3); for an EM mean (no closed form) a
    parametric bootstrap of 200 EM runs at the pooled estimate, scaled to each day's n by sqrt(n_pooled / n)
    and capped at half the range (docs/math.md §4.1)."""
    rng = np.random.default_rng(rng)
    t, daily, pooled = result.truth, [], []
    A = len(cfg.use_cases)
    scale = A if cfg.policy == "rsfd" else 1  # RS+FD: μ̂ = A·μ̂_obs − (A − 1)·mid-range (simulator/attributes.py)
    for uc in cfg.readings():
        aggregator, mech = uc.make_aggregator(), uc.make_mechanism()
        lo, hi = uc.value_range
        days = [d for d in range(cfg.n_days) if result.aggregates.get((uc.name, d)) is not None
                and result.aggregates[(uc.name, d)].n > 0]
        if not days:
            continue
        aggs = {d: result.aggregates[(uc.name, d)] for d in days}
        total = sum(list(aggs.values())[1:], aggs[days[0]])
        a, b = uc.input_range(mech)
        if uc.em_bins is not None:
            per_report, method = _em_unit_sd(aggregator, total, rng) ** 2 * total.n, "EM bootstrap"
        else:  # PM: at |x| = 1; 1BitMean: at x = m/2 (π = 1/2); both on this grid
            per_report = float(mech.report_variance(np.linspace(a, b, 257)).max())
            per_report /= getattr(mech, "mean_scale", 1.0) ** 2  # SW: the estimate is the average over a
            method = "largest variance over the input range"
        # an EM mean lies in the range, so its sd is at most half the range (the scaling overshoots at tiny n)
        cap = (hi - lo) / 2 if uc.em_bins is not None else np.inf
        for out, ds, agg in [(daily, [d], aggs[d]) for d in days] + [(pooled, days, total)]:
            n_all = sum(t[f"{uc.name}:all_n"][d] for d in ds)
            n_don = sum(t[f"{uc.name}:donated_n"][d] for d in ds)
            out.append({"use_case": uc.name, **({"day": ds[0]} if out is daily else {}), "reports": agg.n,
                        "estimate": debias_mean(uc.estimate_mean(aggregator, agg), uc.value_range, cfg.policy, A),
                        "sd": scale * min((hi - lo) / (b - a) * np.sqrt(per_report / agg.n), cap), "sd_method": method,
                        "true_event": sum(t[f"{uc.name}:all_sum"][d] for d in ds) / max(n_all, 1),
                        "true_donated": sum(t[f"{uc.name}:donated_sum"][d] for d in ds) / max(n_don, 1)})
    return pd.DataFrame(daily), pd.DataFrame(pooled)


def trend_detection(cfg, daily: pd.DataFrame, k: int = 10) -> dict:
    """First day the trend item is in the estimated (daily and running) and the true top-``k``
    (None: not reached)."""
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
    """ε spent per device (sequential composition) against the budgets, and what memoization saved
    (ε the memoized re-sends would have cost without it; ``simulator/memoization.py``)."""
    spent, daily = result.ledger_spent, result.ledger_daily
    saved = getattr(result, "ledger_saved", None)
    saved = np.zeros(1) if saved is None or saved.size == 0 else saved
    return {"epsilon_device_mean": float(spent.mean()), "epsilon_device_max": float(spent.max()),
            "epsilon_daily_max": float(daily.max()), "budget_total": cfg.budget_total,
            "budget_daily": cfg.budget_daily, "donations_refused": int(result.refused),
            "epsilon_saved_mean": float(saved.mean()), "epsilon_saved_max": float(saved.max())}


def measure(cfg, result, rng=None, k: int = 10) -> dict:
    """Every table and summary of a run: ``daily``, ``pooled``, ``top``, ``readings``, ``pooled_readings``,
    ``budget`` (per day), ``words`` (the nightly discovery job, :mod:`.deployment_words`), ``summary``
    (a flat dict, JSON-ready, with the accountant's bound on one device's spend over the run).
    ``rng`` (seed, SeedSequence or Generator) drives the EM bootstrap of :func:`reading_estimates`."""
    from ldpsim.evaluation.adversary.observer import adversary
    from ldpsim.evaluation.deployment.budget import budget_by_day, top_k_threshold
    from ldpsim.evaluation.deployment.discovery_job import word_discovery
    from ldpsim.evaluation.deployment.distributions import reading_distributions
    from ldpsim.evaluation.privacy.accountant import spend_summary

    daily = daily_estimates(cfg, result)
    pooled = pooled_estimates(cfg, result)
    readings, pooled_readings = reading_estimates(cfg, result, rng)
    distributions = reading_distributions(cfg, result)
    top = accuracy_table(pooled, daily, k) if not pooled.empty else pd.DataFrame()
    summary = {"devices": cfg.n_devices, "days": cfg.n_days, "workers": result.shards,
               "seconds": result.seconds, "device_days_per_s": cfg.n_devices * cfg.n_days / max(result.seconds, 1e-9)}
    if not top.empty:
        n_days = int(daily["day"].nunique())
        lo, hi = mse_ratio_interval(n_days)
        summary.update(pooled_reports=int(pooled["reports"].iloc[0]), days_with_reports=n_days,
                       mse_ratio_low=lo, mse_ratio_high=hi, top_covered=int(top["covered"].sum()),
                       mean_delta_e_top=float(top["delta_e"].mean()),
                       rank_deviation_top=float((top["est_rank"] - top["true_rank"]).abs().mean()))
        in_top = pooled[pooled["item"].isin(top["item"])]
        for level in ("donated", "event"):  # the estimate targets donated shares, not all events
            summary[f"share_mae_vs_{level}"] = float((in_top["estimate"] - in_top[f"true_{level}"]).abs().mean())
        uc, mech, items = event_mechanism(cfg)
        if not uc.collected:  # (a trust model's detection floor: ldpsim compare --trust)
            summary.update(top_k_threshold(mech, result.truth["donated"].sum(axis=0), items, k))
    for _, r in pooled_readings.iterrows():
        summary.update({f"{r['use_case']}_{key}": float(r[key])
                        for key in ("estimate", "sd", "true_donated", "true_event", "reports")})
    budget = budget_by_day(cfg, result)
    summary["donating_devices"] = int(budget.attrs.get("donating_devices", 0))  # (the stored budget table's)
    words, words_summary = word_discovery(cfg, result)
    for part in (trust_summary(cfg, result), trend_detection(cfg, daily, k), words_summary, network_summary(cfg, result),
                 ledger_summary(cfg, result), spend_summary(cfg), adversary(cfg, result, rng)):
        summary.update(part)
    return {"daily": daily, "pooled": pooled, "top": top, "readings": readings,
            "pooled_readings": pooled_readings, "distributions": distributions, "budget": budget, "words": words,
            "summary": summary,
            "trust": trust_guarantees(cfg)}
