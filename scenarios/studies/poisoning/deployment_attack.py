"""How many fake devices push an emoji into the daily top 10, or a made-up word into the nightly
discovered top-k, and for how many days?

Runs the SimPy deployment with a :class:`ldpsim.simulator.fakes.FakeFleet` — the maximal gain attack on
the event use case (:func:`mga_reports`) or on the words use case (:func:`word_reports`,
:mod:`.word_attack`) — sharded, serially or on Dask like any deployment, and reads the target's daily ranks.
The defenses are the fleet's gate: device attestation (share of fakes that authenticate) and
per-identity rate limits. One row per (ε, fakes, defense): days in the top list, the first such day,
the target's estimated share beside its closed form and its true share; for words also the nights
predicted from the genuine aggregate's per-round cut-offs and the last round's count bar (PEM,
:func:`.word_attack.pem_fakes_needed`).

A sweep given a locked run folder (:class:`ldpsim.runtime.runfolder.RunFolder`) writes each
deployment's server store under ``stores/<cell>/`` (deleted once the cell's row is journaled as
``cells/<cell>.json``): a killed sweep resumes from its journaled cells, and the unjournaled store
parts of the interrupted cell are deleted when the folder is reopened, so no report is counted twice.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ldpsim.evaluation.deployment.estimates import daily_estimates
from ldpsim.evaluation.privacy.accountant import device_spend
from ldpsim.evaluation.poisoning.attacks import fake_reports
from ldpsim.evaluation.poisoning import word_attack
from ldpsim.mechanisms.base import Aggregate
from ldpsim.simulator.deployment import run as run_deployment
from ldpsim.simulator.fakes import FakeFleet
from ldpsim.runtime.durable import write_file
from ldpsim.evaluation.legend import quiet_corner

#: defense settings of the sweep: name → FakeFleet keyword arguments
DEFENSES = {"none": {}, "attestation 50%": {"attested": 0.5},
            "rate limit 10 ids × 5/day": {"identities": 10, "rate_limit": 5}}


def mga_reports(mech, target, n: int, rng):
    """Maximal gain attack reports for one target (module-level, so fleets pickle)."""
    return fake_reports(mech, "mga", [target], n, rng)


def word_reports(mech, target: str, n: int, rng):
    """Maximal reports for one made-up word (:func:`.word_attack.word_mga_reports`; module-level, so fleets pickle)."""
    return word_attack.word_mga_reports(mech, target, n, rng)


def with_epsilon(cfg, kind: str, epsilon: float):
    """``cfg`` with the ε of the use case of ``kind`` replaced (budgets widened so no donation is refused for it)."""
    ucs = tuple(dataclasses.replace(uc, params=tuple({**dict(uc.params), "epsilon": epsilon}.items()))
                if uc.kind == kind else uc for uc in cfg.use_cases)
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


def word_nights(cfg, result, fleet: FakeFleet) -> dict:
    """The made-up word ``fleet.target`` in the nightly discovery job (all word reports so far, the use
    case's top_k): nights it is listed, the first, its estimated share on the last night beside the
    closed form (:func:`.word_attack.expected_count` over N), and — PEM — the nights predicted from the genuine
    aggregate's cut-offs and the last group's count bar (the run's aggregate minus the fakes' own, rebuilt
    from their day streams; :func:`.word_attack.pem_fakes_needed`), the first of them, and the fakes a day
    that the last night needs (R·max_i m_i*/days, spread evenly over the R groups)."""
    uc = cfg.use_case("word")
    mech = uc.make_mechanism()
    accepted = fleet.accepted_reports() if fleet.n_fakes else np.zeros(0, dtype=np.int64)
    running = fake = None
    found, predicted, need_per_day = [], [], np.nan
    share = closed = np.nan
    for day in range(cfg.n_days):
        agg = result.aggregates.get((uc.name, day))
        if agg is not None:
            running = agg if running is None else running + agg
        if day >= fleet.start_day and accepted.size:
            reports, _ = fleet.day_reports(mech, cfg, day)
            part = mech.aggregate(type(reports)(*(np.asarray(a)[accepted] for a in reports)))
            fake = part if fake is None else fake + part
        if running is None:
            continue
        res = mech.discover(running, top_k=uc.top_k)
        hit = res.words == fleet.target
        if hit.any():
            found.append(day)
        share = float(res.frequencies[hit][0]) if hit.any() else 0.0
        days = max(0, day - fleet.start_day + 1)  # nights with fakes so far
        m_round = word_attack.fakes_per_round(mech, accepted, days)
        n_round = word_attack.round_sizes(mech, running)
        closed = word_attack.expected_count(mech, running.n, n_round, m_round) / running.n
        if isinstance(mech, word_attack.PEM):
            genuine = running if fake is None else Aggregate(running.n - fake.n, running.data - fake.data, running.kind)
            need = word_attack.pem_fakes_needed(mech, genuine, fleet.target, uc.top_k)["need"]
            if (m_round >= need).all():
                predicted.append(day)
            need_per_day = mech.groups * float(need.max()) / max(days, 1)
    return {"days_in_top": len(found), "first_day_in_top": found[0] if found else None,
            "estimated_share": share, "closed_form_share": closed, "true_share": 0.0,
            "predicted_days_in_top": len(predicted) if isinstance(mech, word_attack.PEM) else None,
            "predicted_first_day_in_top": predicted[0] if predicted else None,
            "fakes_needed_per_day": need_per_day}


def _cell_name(eps: float, n_fakes: int, defense: str) -> str:
    return f"eps{eps:g}-fakes{n_fakes}-{re.sub(r'[^a-z0-9]+', '-', defense.lower()).strip('-')}"


def fake_sweep(cfg, target, fakes=(0, 50, 100, 200, 400), epsilons=(2.0, 4.0, 8.0), defenses=tuple(DEFENSES),
               use_case: str = "event", progress=None, folder=None, shards: int = 1, scheduler: str | None = None,
               n_workers: int | None = None) -> pd.DataFrame:
    """The sweep over ε × number of fakes × defense.

    Parameters
    ----------
    cfg : DeploymentConfig
    target : int or str
        ``use_case="event"``: the index of the pushed item in ``cfg.items``; ``"word"``: the made-up word.
    fakes, epsilons, defenses : sequences
        Numbers of fake devices, ε of the attacked use case, names of :data:`DEFENSES`.
    use_case : {"event", "word"}
    progress : callable, optional
        ``progress(done, total)`` after each deployment.
    folder : RunFolder, optional
        Resume from its journaled cells and keep stores inside it (module docstring); None: temporary stores.
    shards, scheduler, n_workers
        As :func:`ldpsim.simulator.deployment.run`; ``scheduler="local"`` starts one local cluster of
        ``n_workers`` for the whole sweep.

    Returns
    -------
    pandas.DataFrame
        One row per cell.
    """
    from ldpsim.runtime.cluster import local_cluster
    jobs = [(e, f, d) for e in epsilons for f in fakes for d in defenses if f > 0 or d == "none"]
    cluster = None
    if scheduler == "local":
        cluster = local_cluster(min(max(1, shards), n_workers or shards))
        scheduler = cluster.scheduler_address
    try:
        rows = []
        for i, (eps, n_fakes, defense) in enumerate(jobs):
            rows.append(_cell(cfg, target, use_case, eps, n_fakes, defense, folder, shards, scheduler))
            if progress:
                progress(i + 1, len(jobs))
    finally:
        if cluster is not None:
            cluster.close()
    return pd.DataFrame(rows)


def genuine_levels(cfg, kind: str) -> dict:
    """What one genuine device's reports of the use case of ``kind`` give one item of one person and one
    person over the run of ``cfg`` (``epsilon_item``, ``epsilon_person``: the accountant's
    :func:`~ldpsim.evaluation.privacy.accountant.device_spend`, δ = 0; NaN for a use case a trust model
    collects, whose guarantee is its own accountant's)."""
    spend = device_spend(cfg).table
    rows = spend[spend["use_case"] == cfg.use_case(kind).name]
    return {c: float(rows[c].iloc[0]) if len(rows) else math.nan for c in ("epsilon_item", "epsilon_person")}


def _cell(cfg, target, use_case: str, eps: float, n_fakes: int, defense: str, folder, shards, scheduler) -> dict:
    """One deployment of the sweep: its row (read back from the folder's journal when already done)."""
    name = _cell_name(eps, n_fakes, defense)
    part = f"cells/{name}.json"
    if folder is not None and part in folder.finished("cells/"):
        return json.loads((folder.root / part).read_text(encoding="utf-8"))
    run_cfg = with_epsilon(cfg, use_case, eps)
    mech = run_cfg.use_case(use_case).make_mechanism()
    if use_case == "word":
        fleet = FakeFleet(n_fakes, target, word_reports, use_case="word", **DEFENSES[defense])
    else:
        fleet = FakeFleet(n_fakes, cfg.items[target] if mech.takes_tokens else target, mga_reports, **DEFENSES[defense])
    with tempfile.TemporaryDirectory(prefix="ldpsim-fakes-") as tmp:
        out = Path(tmp) if folder is None else folder.root / "stores" / name
        result = run_deployment(run_cfg, out, shards, scheduler, components=(fleet.component,))
        measured = (word_nights(run_cfg, result, fleet) if use_case == "word" else
                    target_ranks(run_cfg, result, target, 10, fleet.accepted_per_day(), fleet.start_day))
    row = {"use_case": use_case, "epsilon": eps, **genuine_levels(run_cfg, use_case), "fakes": n_fakes,
           "defense": defense, "fakes_accepted_per_day": fleet.accepted_per_day(), "devices": cfg.n_devices,
           "days": cfg.n_days,
           "shards": result.shards, **{k: v for k, v in result.counters.items() if k.startswith("fake_")},
           **measured}
    if folder is not None:
        folder.write_text(part, json.dumps(row, default=float))
        folder.remove(f"stores/{name}")
    return row


def plot_fake_sweep(table: pd.DataFrame, path) -> str:
    """Days in the top list against the number of fake devices, one panel per defense, a line per ε
    (words: dashed, the nights predicted from the genuine cut-offs)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    defenses = list(dict.fromkeys(table["defense"]))
    fig, axes = plt.subplots(1, len(defenses), figsize=(3.3 * len(defenses), 3.0), sharey=True, squeeze=False)
    base = table[table["fakes"] == 0]
    for ax, defense in zip(axes[0], defenses):
        for eps, g in table[(table["defense"] == defense) | (table["fakes"] == 0)].groupby("epsilon"):
            g = g.sort_values("fakes")
            line, = ax.plot(g["fakes"], g["days_in_top"], "o-", ms=3, label=f"ε = {eps:g}")
            if "predicted_days_in_top" in g and g["predicted_days_in_top"].notna().any():
                ax.plot(g["fakes"], g["predicted_days_in_top"], "--", color=line.get_color(), lw=1)
        ax.set(title=defense, xlabel="fake devices")
        ax.grid(alpha=0.3)
    words = "use_case" in table and (table["use_case"] == "word").all()
    axes[0][0].set_ylabel(f"nights listed (of {int(table['days'].iloc[0])}); dashed: predicted"
                          if words else f"days in the estimated top 10 (of {int(table['days'].iloc[0])})")
    axes[0][0].legend(fontsize=7, loc=quiet_corner(axes[0][0]))
    if not base.empty and not words:
        fig.suptitle(f"{int(table['devices'].iloc[0]):,} devices; target's true share "
                     f"{base['true_share'].mean():.4f}", fontsize=8)
    fig.tight_layout()
    write_file(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    plt.close(fig)
    return str(path)
