"""Seed 002: the central-DP histogram release, side by side with LDP at the same ε (docs/math.md §6).

Scenario: n users hold one value of a categorical attribute (``emoji`` top-100, ``census-education``).
*Central* (trusted server, :class:`ldpsim.mechanisms.central.central_dp.LaplaceHistogram`): z = θ + Lap(Δ/ε) on the
normalized histogram θ, Δ = 2/n (one record replaced, seed 002's 2/(nα)); ``central-raw`` is z as
is, ``central-L1`` its minimum-L1 projection onto the simplex, ``central-lattice`` the projection
onto the 1/n lattice, ``central-synthetic`` the histogram of n synthetic records drawn from the
L1-projected release. *Local* (untrusted server): every user runs GRR, OUE or OLH at the same ε;
the aggregate is drawn from its exact distribution (population engine, ``path="direct"``).

Errors on the frequency scale, mean ± se over repeats: ``mse`` = mean over the D values of
(estimate − θ)², ``l1`` = Σ|estimate − θ|. ``mse_theory``: 2(Δ/ε)² for central-raw (the Laplace
variance), mean_x Var/n² of the mechanism for LDP (exact, fixed population); NaN where no closed
form is used (projections, synthetic data).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.scenarios.studies.scenario.schema import Field
from ldpsim.evaluation.metrics import with_standard_error
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms import make
from ldpsim.mechanisms.central.central_dp import LaplaceHistogram, project_lattice, project_simplex_l1, synthetic_data
from ldpsim.simulator.population import estimate_counts

from ldpsim.scenarios.reproductions.sdldp import Kind, epsilons, new_figure, one_of_each, positive
from ldpsim.evaluation.legend import quiet_corner

WORKLOADS = ("emoji", "census-education", "census-marital")
LOCAL = ("GRR", "OUE", "OLH")
CENTRAL = ("central-raw", "central-L1", "central-lattice", "central-synthetic")


def central_releases(release: LaplaceHistogram, counts: np.ndarray, rng: np.random.Generator) -> dict:
    """One noisy release of ``counts`` in its four forms (normalized histograms), one noise draw each."""
    n = int(counts.sum())
    z = release.noisy(counts, rng)
    projected = project_simplex_l1(z)
    synthetic = np.bincount(synthetic_data(projected, n, rng), minlength=counts.size) / n
    return {"central-raw": z, "central-L1": projected, "central-lattice": project_lattice(z, n) / n,
            "central-synthetic": synthetic}


def _errors(theta: np.ndarray, est: np.ndarray) -> tuple:
    """(mse, se, l1, l1 se) over the rows (repeats) of ``est`` (frequency scale)."""
    mse, mse_se = with_standard_error(((est - theta) ** 2).mean(axis=1))
    l1, l1_se = with_standard_error(np.abs(est - theta).sum(axis=1))
    return float(mse), float(mse_se), float(l1), float(l1_se)


def _cell(counts: np.ndarray, eps: float, config: dict, rng: np.random.Generator) -> list[dict]:
    n, d, r = int(counts.sum()), counts.size, config["repeats"]
    theta = counts / n
    results = {}
    for name in config["local"]:
        mech = make(name, epsilon=eps, domain_size=d)
        est = np.stack([estimate_counts(mech, np.arange(d), counts, rng, path="direct") for _ in range(r)]) / n
        results[name] = (est, float(mech.variance(counts).mean()) / n ** 2)
    release = LaplaceHistogram(eps, config["neighbour"])
    draws = [central_releases(release, counts, rng) for _ in range(r)]
    for name in CENTRAL:
        theory = 2 * release.noise_scale(n) ** 2 if name == "central-raw" else np.nan
        results[name] = (np.stack([draw[name] for draw in draws]), theory)
    rows = []
    for name, (est, theory) in results.items():
        mse, mse_se, l1, l1_se = _errors(theta, est)
        rows.append({"method": name, "model": "central" if name in CENTRAL else "local", "epsilon": eps,
                     "mse": mse, "se": mse_se, "mse_theory": theory, "l1": l1, "l1_se": l1_se,
                     "n": n, "domain_size": d, "repeats": r})
    return rows


def compute(config: dict) -> pd.DataFrame:
    """One row per (workload, ε, method)."""
    cells = [(w, e) for w in config["workloads"] for e in config["epsilon"]]
    seeds = np.random.SeedSequence(config["seed"]).spawn(len(cells))
    counts = {w: make_workload(w, config["n"]).counts for w in config["workloads"]}
    rows = []
    for (w, eps), seed in zip(cells, seeds):
        rows += [{"workload": w, **row} for row in _cell(counts[w], eps, config, np.random.default_rng(seed))]
    return pd.DataFrame(rows)


def figure(table: pd.DataFrame, config: dict):
    """Top: MSE vs ε per workload (markers ± se; lines: theory). Bottom: L1 error of the central forms."""
    workloads = list(dict.fromkeys(table["workload"]))
    fig, axes = new_figure(2 * len(workloads) if len(workloads) == 2 else len(workloads), 4.8, 3.8)
    for k, w in enumerate(workloads):
        sub = table[table["workload"] == w]
        ax = axes[k]
        for j, (method, rows) in enumerate(sub.groupby("method", sort=False)):
            ls = "none" if rows["model"].iat[0] == "local" else ":"
            ax.errorbar(rows["epsilon"], rows["mse"], yerr=rows["se"], marker="os^vD<>"[j % 7], ms=3,
                        capsize=2, linestyle=ls, lw=0.8, color=f"C{j}", label=method)
            ax.plot(rows["epsilon"], rows["mse_theory"], color=f"C{j}", lw=0.8)
        ax.set(xscale="log", yscale="log", xlabel="ε", ylabel="MSE (frequency)",
               title=f"{w}: D={sub['domain_size'].iat[0]}, n={sub['n'].iat[0]:,}")
        ax.legend(fontsize=6, loc=quiet_corner(ax))
        if len(axes) > len(workloads):
            ax = axes[k + len(workloads)]
            for j, (method, rows) in enumerate(sub.groupby("method", sort=False)):
                if rows["model"].iat[0] == "central":
                    ax.errorbar(rows["epsilon"], rows["l1"], yerr=rows["l1_se"], marker="o", ms=3, capsize=2,
                                lw=0.8, color=f"C{j}", label=method)
            ax.set(xscale="log", yscale="log", xlabel="ε", ylabel="L1 error Σ|θ̂ − θ|",
                   title=f"{w}: L1 error of the central release")
            ax.legend(fontsize=6, loc=quiet_corner(ax))
    fig.suptitle(f"{config['title']}\nsolid lines: exact theory (LDP variance, Laplace 2b²)", fontsize=9)
    return fig


def summary(table: pd.DataFrame, config: dict) -> pd.DataFrame:
    """MSE per method at the grid's ends, and how many times the best LDP method's MSE exceeds central-raw's."""
    lo, hi = config["epsilon"][0], config["epsilon"][-1]
    wide = table[table["epsilon"].isin([lo, hi])].pivot_table(index=["workload", "method"], columns="epsilon",
                                                              values="mse", sort=False)
    wide.columns = [f"mse@ε={e:g}" for e in wide.columns]
    local = table[table["model"] == "local"].groupby(["workload", "epsilon"])["mse"].min()
    raw = table[table["method"] == "central-raw"].set_index(["workload", "epsilon"])["mse"]
    ratio = (local / raw).unstack("epsilon")[[lo, hi]]
    for e in (lo, hi):
        wide[f"bestLDP/central@ε={e:g}"] = [ratio.loc[w, e] if m == "central-raw" else np.nan
                                            for w, m in wide.index]
    return wide


def _neighbour(v):
    return None if v in ("replace", "add-remove") else "must be 'replace' or 'add-remove'"


KIND = Kind(
    spec={"epsilon": Field(list, check=epsilons),
          "workloads": Field(list, ["emoji", "census-education"], one_of_each(WORKLOADS)),
          "n": Field(int, 1_000_000, positive), "repeats": Field(int, 20, positive),
          "local": Field(list, list(LOCAL), one_of_each(LOCAL)),
          "neighbour": Field(str, "replace", _neighbour)},
    compute=compute, figure=figure, summary=summary,
    doc="central DP (Laplace histogram, projections, synthetic data) vs LDP at the same ε",
)
