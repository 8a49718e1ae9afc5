"""Measurement of a use case collected under a trust model (``UseCase.collected``) — docs/math.md §9.9.

The collectors (:mod:`ldpsim.simulator.nightly_collection`) release, each night p, a noisy count vector
r_p of the n_p reports they counted (exact one-hot reports: their counts c_p are the estimator's
target). Share estimate r_p / n_p with its exact theory:

* secagg — Σ over the night's published cohorts of their noise variance (each cohort's law given its
  size and arrivals, docs/math.md §9.2); unbiased;
* secagg_local — the local oracle's variance at c_p (the cohorts sum local reports); unbiased;
* two_server — the aggregators' noise (1 or 2 × Var(target)), plus with client randomization the
  oracle's variance and the noise scaled by 1/(p − q)² (docs/math.md §9.3); unbiased;
* threshold — the exact bias and MSE of (c + Z)·1{c + Z ≥ τ} (docs/math.md §9.4);
* sample_threshold — the exact bias and MSE of S/p·1{S ≥ τ}, S ~ Bin(c, p) (docs/math.md §9.4).

The nightly releases are independent, so the pooled estimate Σ_p r_p / Σ_p n_p has variance
Σ_p V_p / N² and bias Σ_p b_p / N. Night p mostly holds the donations of day p − 1 (reports not counted on
their first night are counted on a later one); its ``day`` column is p − 1. The guarantee a device gets
is the model's (:meth:`~ldpsim.evaluation.privacy.trust_accounting.TrustModel.guarantees`) for the calibrated
model, at the planning n the scenario calibrated it with.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.evaluation.confidence import Z95
from ldpsim.evaluation.privacy.trust_levels import COLUMNS as LEVEL_MEANINGS, trust_levels
from ldpsim.evaluation.privacy.trust_models import model_from


def collected_use_case(cfg):
    """The event use case when a trust model collects it, else None."""
    uc = cfg.use_case("event")
    return uc if uc is not None and uc.collected else None


def collectors_of(cfg) -> dict:
    """Collected use case → its calibrated trust model's protocol (for ``simulator.deployment.run``)."""
    return {uc.name: model_from(uc.trust).protocol(len(cfg.items)) for uc in cfg.use_cases if uc.collected}


def _theory(model, period: dict) -> tuple[np.ndarray, np.ndarray]:
    """(variance, bias) of one night's released counts (module docstring)."""
    return model.night_theory(period["counted"], period["variance"])


def trust_daily(cfg, result) -> pd.DataFrame:
    """One row per (night, item) of the collected event use case, with the columns of
    :func:`~ldpsim.evaluation.deployment.estimates.daily_estimates` (``day`` = night − 1)."""
    uc = collected_use_case(cfg)
    got = result.collections.get(uc.name) if uc is not None else None
    if got is None:
        return pd.DataFrame()
    model, t, rows = model_from(uc.trust), result.truth, []
    run_est, run_n = np.zeros(len(cfg.items)), 0
    for p in got.periods:
        n = int(p["counted"].sum())
        if n == 0:
            continue
        var, bias = _theory(model, p)
        day = p["period"] - 1
        run_est, run_n = run_est + p["estimate"], run_n + n
        est, sd, b = p["estimate"] / n, np.sqrt(var) / n, bias / n
        events = t["events"][day] if 0 <= day < cfg.n_days else p["counted"]
        devices = t["devices"][day] if 0 <= day < cfg.n_days else p["counted"]
        rows.append(pd.DataFrame({
            "day": day, "item": np.arange(len(cfg.items)), "token": list(cfg.items), "reports": n,
            "estimate": est, "sd": sd, "bias": b, "ci_low": est - b - Z95 * sd, "ci_high": est - b + Z95 * sd,
            "true_event": events / max(events.sum(), 1), "true_donated": p["counted"] / n,
            "running_estimate": run_est / run_n, "true_device": devices / max(int(devices.sum()), 1),
            "noise_sd": np.sqrt(var)}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def trust_pooled(cfg, result) -> pd.DataFrame:
    """One row per item: the pooled estimate of every night's release, its exact theory, ranks, ``covered``."""
    uc = collected_use_case(cfg)
    got = result.collections.get(uc.name) if uc is not None else None
    if got is None or got.counters["counted"] == 0:
        return pd.DataFrame()
    model = model_from(uc.trust)
    theory = [_theory(model, p) for p in got.periods]
    n = int(got.counted.sum())
    var = sum(v for v, _ in theory) / n ** 2
    bias = sum(b for _, b in theory) / n
    est, sd = got.estimate / n, np.sqrt(var)
    out = pd.DataFrame({"item": np.arange(len(cfg.items)), "token": list(cfg.items), "reports": n,
                        "estimate": est, "sd": sd, "bias": bias, "ci_low": est - bias - Z95 * sd,
                        "ci_high": est - bias + Z95 * sd,
                        "true_event": result.truth["events"].sum(axis=0) / max(int(result.truth["events"].sum()), 1),
                        "true_donated": got.counted / n})
    out["est_rank"] = out["estimate"].rank(ascending=False, method="first").astype(int)
    out["true_rank"] = out["true_donated"].rank(ascending=False, method="first").astype(int)
    out["covered"] = (out["ci_low"] <= out["true_donated"]) & (out["true_donated"] <= out["ci_high"])
    return out


def trust_guarantees(cfg) -> pd.DataFrame:
    """The collected use cases' guarantees: one row per (use case, scope) — report, day, run, misbehaving
    server, and one item and one person over the run
    (:func:`~ldpsim.evaluation.privacy.trust_levels.trust_levels`) — with ε, δ, their meaning and who
    must be trusted."""
    rows = []
    for uc in cfg.use_cases:
        if not uc.collected:
            continue
        p = dict(uc.trust)
        model = model_from(uc.trust)
        guarantees = model.guarantees(p["n_plan"], cfg.n_days, p["delta"])
        for g in guarantees:
            rows.append({"use_case": uc.name, "aggregation": model.kind, "scope": g.scope, "epsilon": g.epsilon,
                         "delta": g.delta, "meaning": g.meaning, "trusted": model.trusted})
        run_delta = next(g.delta for g in guarantees if g.scope == "run")
        for column, eps in trust_levels(model, p["n_plan"], cfg.n_days, p["delta"]).items():
            rows.append({"use_case": uc.name, "aggregation": model.kind, "scope": column.removeprefix("epsilon_"),
                         "epsilon": eps, "delta": run_delta, "meaning": LEVEL_MEANINGS[column],
                         "trusted": model.trusted})
    return pd.DataFrame(rows)


def trust_summary(cfg, result) -> dict:
    """Flat summary fields of the collected use case: its model, guarantees, counters and the collectors' log."""
    uc = collected_use_case(cfg)
    if uc is None or uc.name not in result.collections:
        return {}
    got, model, p = result.collections[uc.name], model_from(uc.trust), dict(uc.trust)
    g = {x.scope: x for x in model.guarantees(p["n_plan"], cfg.n_days, p["delta"])}
    log = pd.DataFrame(got.records)
    cohorts = log[log["event"] == "cohort"] if not log.empty else log
    out = {"aggregation": model.kind, "trusted": model.trusted,
           "trust_epsilon_report": g["report"].epsilon, "trust_epsilon_day": g["day"].epsilon,
           "trust_epsilon_device": g["run"].epsilon, "trust_delta": g["run"].delta,
           "trust_epsilon_misbehaving": g["misbehaving server"].epsilon,
           "trust_if_misbehaving": g["misbehaving server"].meaning,
           "trust_noise": None if (noise := model.central_noise()) is None else f"{noise.kind}({noise.scale:.4g})",
           "trust_donations": int(result.donations[uc.name][0].size), "trust_counted": got.counters["counted"],
           "trust_rejected": got.counters["rejected"], "trust_bytes_per_report": model.upload_bytes(len(cfg.items))}
    out["trust_lost"] = out["trust_donations"] - out["trust_counted"] - out["trust_rejected"]
    if not cohorts.empty:
        out.update(trust_cohorts=len(cohorts), trust_cohorts_published=int(cohorts["published"].sum()))
    if not log.empty:
        out["trust_collector_events"] = int(log["event"].str.contains("skipped|waits").sum())
    return out
