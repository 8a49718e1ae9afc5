"""Privacy budgets of a deployment run by day, and the number of reports a top-k needs.

When a per-device ε budget runs out, later days hold few reports, and a day's estimates are only as
good as its report count. This module says, per day, how many reports each use case received and which
share of the donating devices can no longer afford a use case, and computes the report count below
which a day's top-k cannot be told apart at the configured ε.

**Exhausted budget.** The ledger counts, at the end of every day, the devices that have donated so far
and can no longer afford each use case (``DeploymentResult.ledger_budget``; or, given a devices × days
matrix ``ledger_daily`` of ε spent, it is computed from that). A device *donates* when it ever spent ε. After day d, its total budget is exhausted for use case u when
budget_total − Σ_{d' ≤ d} ε spent < ε_u (one more report of u does not fit); its daily budget is full on
day d when budget_daily − ε spent on d < the smallest ε of any use case (nothing more fits that day).

**Distinguishable top-k** (docs/math.md §4.1). Let p_k > p_{k+1} be the k-th and (k+1)-th true shares
(pooled over the run) and σ_x² = V_x(D)/N the variance per report of item x's share estimate (V the
mechanism's variance at the donated counts D, total N; linear in the counts). From n reports the two
estimates differ by p_k − p_{k+1} with sd sqrt((σ_k² + σ_{k+1}²)/n); their covariance is neglected
(it widens that sd by about q/(1 − q) for GRR, 5% at D = 12 and ε = 2, and by O(1/m) for a sketch).
The top-k is distinguishable when that sd is at most
the gap: n ≥ n* = (σ_k² + σ_{k+1}²) / (p_k − p_{k+1})². At n = n* the two are swapped with
probability Φ(−1) ≈ 16%; days with fewer reports are flagged.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: slack for floating-point sums of ε
_TOL = 1e-9


def budget_by_day(cfg, result) -> pd.DataFrame:
    """One row per day: ``reports_<use case>`` received (a collected use case: counted in the night after the
    day; an interactive words protocol: devices answering its rounds), ``exhausted_<use case>`` (share of
    donating devices whose total budget no longer fits one report of that use case after the day) and
    ``daily_full`` (share of donating devices whose daily budget was full that day)."""
    rows = {"day": np.arange(cfg.n_days)}
    for uc in cfg.use_cases:  # an interactive protocol's "reports": the devices answering its rounds that day
        rows[f"reports_{uc.name}"] = result.truth["word_donated"].sum(axis=1) if uc.interactive else \
            [getattr(result.aggregates.get((uc.name, d)), "n", 0) for d in range(cfg.n_days)]
        got = getattr(result, "collections", {}).get(uc.name)
        if got is not None:  # a trust model's nightly releases: night p holds mostly day p − 1
            night = {p["period"] - 1: int(p["counted"].sum()) for p in got.periods}
            rows[f"reports_{uc.name}"] = [night.get(d, 0) for d in range(cfg.n_days)]
    state = getattr(result, "ledger_budget", None)
    if state is not None:  # counted by the ledger at the end of each day (O(days), not devices × days)
        n_donors = int(state["donors"])
        for j, uc in enumerate(cfg.use_cases):
            rows[f"exhausted_{uc.name}"] = state["exhausted"][:, j] / max(n_donors, 1)
        rows["daily_full"] = state["full"] / max(n_donors, 1)
    else:  # a devices × days matrix of ε per day
        daily = np.asarray(result.ledger_daily, dtype=float)
        donors = daily.sum(axis=1) > 0
        daily = daily[donors]
        spent = np.cumsum(daily, axis=1)
        cheapest = min(uc.ledger_cost for uc in cfg.use_cases)
        n_donors = int(donors.sum())
        for uc in cfg.use_cases:
            rows[f"exhausted_{uc.name}"] = ((cfg.budget_total - spent) < uc.ledger_cost - _TOL).sum(axis=0) / max(n_donors, 1)
        rows["daily_full"] = ((cfg.budget_daily - daily) < cheapest - _TOL).sum(axis=0) / max(n_donors, 1)
    out = pd.DataFrame(rows)
    out.attrs["donating_devices"] = n_donors
    return out


def milestones(shares, levels=(0.1, 0.5, 0.9)) -> dict:
    """First day on which ``shares`` (one per day, from day 0) reaches each level (None: not reached)."""
    shares = np.asarray(shares)
    return {lv: (int(np.argmax(shares >= lv)) if (shares >= lv).any() else None) for lv in levels}


def top_k_threshold(mech, donated, items=None, k: int = 10) -> dict:
    """n* of the module docstring for the pooled donated counts ``donated``: ``top{k}_n_star`` (inf when
    the k-th and (k+1)-th shares tie), the two shares and their items (positions)."""
    donated = np.asarray(donated)
    if donated.size <= k or donated.sum() == 0:
        return {}
    total = int(donated.sum())
    order = np.argsort(-donated, kind="stable")
    a, b = int(order[k - 1]), int(order[k])
    per_report = mech.variance(donated, items) / total
    gap = (donated[a] - donated[b]) / total
    n_star = (per_report[a] + per_report[b]) / gap ** 2 if gap > 0 else math.inf
    return {f"top{k}_n_star": float(n_star), f"top{k}_per_report_variance": float(per_report[a]),
            f"top{k}_kth_share": float(donated[a] / total),
            f"top{k}_next_share": float(donated[b] / total), f"top{k}_kth_item": a, f"top{k}_next_item": b}


def day_ranges(days) -> str:
    """Compact text of a list of days.

    >>> day_ranges([0, 1, 2, 5, 7, 8])
    '0–2, 5, 7–8'
    """
    days = sorted(int(d) for d in days)
    parts, start = [], None
    for i, d in enumerate(days):
        start = d if start is None else start
        if i + 1 == len(days) or days[i + 1] != d + 1:
            parts.append(str(d) if d == start else f"{start}–{d}")
            start = None
    return ", ".join(parts)
