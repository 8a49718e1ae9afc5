"""How many fake devices push an item into the server's daily top 10, and for how many days?

Runs the SimPy deployment with a :class:`ldpsim.simulator.fakes.FakeFleet` (maximal gain attack on the
event use case, :func:`mga_reports`) and reads the daily estimated ranks of the target. The defenses
are the fleet's gate: device attestation (share of fakes that authenticate) and per-identity rate
limits. One row per (ε, fakes, defense): days in the top 10, first such day, mean estimated share of
the target beside its closed form (:func:`target_ranks`) and its true share.
"""

from __future__ import annotations

import dataclasses
import tempfile

import numpy as np
import pandas as pd

from ldpsim.evaluation.deployment_metrics import daily_estimates
from ldpsim.evaluation.poisoning.attacks import fake_reports
from ldpsim.simulator.deployment import run as run_deployment
from ldpsim.simulator.fakes import FakeFleet
from ldpsim.simulator.durable import write_file

#: defense settings of the sweep: name → FakeFleet keyword arguments
DEFENSES = {"none": {}, "attestation 50%": {"attested": 0.5},
            "rate limit 10 ids × 5/day": {"identities": 10, "rate_limit": 5}}


def mga_reports(mech, target, n: int, rng):
    """Maximal gain attack reports for one target (module-level, so fleets pickle)."""
    return fake_reports(mech, "mga", [target], n, rng)


def with_event_epsilon(cfg, epsilon: float):
    """``cfg`` with the event use case's ε replaced (budgets widened so no donation is refused for it)."""
    ucs = tuple(dataclasses.replace(uc, params=tuple({**dict(uc.params), "epsilon": epsilon}.items()))
                if uc.kind == "event" else uc for uc in cfg.use_cases)
    return dataclasses.replace(cfg, use_cases=ucs, budget_daily=float("inf"), budget_total=float("inf"))


def target_ranks(cfg, result, target_index: int, k: int = 10, fakes_per_day: int = 0, start_day: int = 0) -> dict:
    """Days the target is in the estimated top ``k``, the first one, its mean estimated and true share,
    and the closed-form expected share: per day (n·(f_t + b_t) + m·c)/(n + m) with n genuine and m fake
    reports, f_t, b_t the target's donated share and the sketch's bias on it, c the MGA contribution of
    one fake report (docs/math.md §7.5)."""
    from ldpsim.evaluation.poisoning.gains import fake_contribution

    daily = daily_estimates(cfg, result)
    rank = daily.groupby("day")["estimate"].rank(ascending=False, method="first")
    mine = daily.assign(rank=rank)[daily["item"] == target_index]
    top = mine[mine["rank"] <= k]
    uc = cfg.use_case("event")
    mech = uc.make_mechanism()
    items = list(cfg.items) if mech.takes_tokens else list(range(len(cfg.items)))
    c = fake_contribution(mech, "mga", [items[target_index]])
    expected = []
    for day, total in zip(mine["day"], mine["reports"]):
        m = fakes_per_day if day >= start_day else 0
        donated = np.asarray(result.truth["donated"][day], dtype=np.int64)
        n = int(total) - m
        bias = float(mech.bias(donated, items if mech.takes_tokens else None)[target_index]) \
            if hasattr(mech, "family") else 0.0
        share = (donated[target_index] + bias) / max(int(donated.sum()), 1)  # the genuine reports' law
        expected.append((n * share + m * c) / max(n + m, 1))
    return {"days_in_top": int(len(top)), "first_day_in_top": int(top["day"].min()) if len(top) else None,
            "estimated_share": float(mine["estimate"].mean()), "closed_form_share": float(np.mean(expected)),
            "true_share": float(mine["true_donated"].mean())}


def fake_sweep(cfg, target_index: int, fakes=(0, 50, 100, 200, 400), epsilons=(2.0, 4.0, 8.0),
               defenses=tuple(DEFENSES), progress=None) -> pd.DataFrame:
    """The sweep over ε × number of fakes × defense (serial deployments; store in a temp folder)."""
    target = cfg.items[target_index]
    rows = []
    jobs = [(e, f, d) for e in epsilons for f in fakes for d in defenses if f > 0 or d == "none"]
    for i, (eps, n_fakes, defense) in enumerate(jobs):
        run_cfg = with_event_epsilon(cfg, eps)
        mech = run_cfg.use_case("event").make_mechanism()
        fleet_target = target if mech.takes_tokens else target_index
        fleet = FakeFleet(n_fakes, fleet_target, mga_reports, **DEFENSES[defense])
        with tempfile.TemporaryDirectory(prefix="ldpsim-fakes-") as tmp:
            result = run_deployment(run_cfg, tmp, components=(fleet.component,))
        rows.append({"epsilon": eps, "fakes": n_fakes, "defense": defense,
                     "fakes_accepted_per_day": fleet.accepted_per_day(), "devices": cfg.n_devices,
                     "days": cfg.n_days, **target_ranks(run_cfg, result, target_index, 10,
                                                        fleet.accepted_per_day(), fleet.start_day)})
        if progress:
            progress(i + 1, len(jobs))
    return pd.DataFrame(rows)


def plot_fake_sweep(table: pd.DataFrame, path) -> str:
    """Days in the top 10 against the number of fake devices, one panel per defense, a line per ε."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    defenses = list(dict.fromkeys(table["defense"]))
    fig, axes = plt.subplots(1, len(defenses), figsize=(3.3 * len(defenses), 3.0), sharey=True, squeeze=False)
    base = table[table["fakes"] == 0]
    for ax, defense in zip(axes[0], defenses):
        for eps, g in table[(table["defense"] == defense) | (table["fakes"] == 0)].groupby("epsilon"):
            g = g.sort_values("fakes")
            ax.plot(g["fakes"], g["days_in_top"], "o-", ms=3, label=f"ε = {eps:g}")
        ax.set(title=defense, xlabel="fake devices")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"days in the estimated top 10 (of {int(table['days'].iloc[0])})")
    axes[0][0].legend(fontsize=7)
    if not base.empty:
        fig.suptitle(f"{int(table['devices'].iloc[0]):,} devices; target's true share "
                     f"{base['true_share'].mean():.4f}", fontsize=8)
    fig.tight_layout()
    write_file(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    plt.close(fig)
    return str(path)
