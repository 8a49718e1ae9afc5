"""SDLDP paper, Fig. 9: Bayesian adversary's accuracy on high-sensitivity data vs ε.

Scenario (paper sections 4.4 and 5.2.3): the adversary sees a user's report y and guesses the MAP
input argmax_x P[y|x] (uniform prior, ties broken at random — :mod:`ldpsim.evaluation.adversary.bayes`). For each
attribute (education 18 categories, marital status 7) and high share s, the high set X_H (SDGRR) =
X_S (URR) is ``round(s·D)`` values chosen by ``high_choice``; GRR is attacked on the same users.

* expected accuracy on high inputs: exact, from the transition matrix
  (:func:`ldpsim.evaluation.adversary.bayes.expected_accuracy` over X_H), next to the paper's reference values
  eq. (17) e^ε/(D + e^ε − 1) (GRR, SDGRR) and eq. (18) e^ε/(|X_S| + e^ε − 1) (URR) — docs/math.md §3;
* empirical accuracy (paper eq. (21)) over the high-sensitivity users of a simulated population of
  ``n`` users (per-user path: every user's report is drawn and attacked), ± binomial se.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldpsim.evaluation.adversary.bayes import empirical_accuracy, expected_accuracy
from ldpsim.scenarios.studies.scenario.schema import Field
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms import make

from ldpsim.scenarios.reproductions.sdldp import (GUARANTEE_OF, HIGH_CHOICES, MIXED_EPSILON_AXIS, Kind,
                                                 epsilons, high_ids, new_figure, one_of_each, shares)
from ldpsim.evaluation.legend import quiet_corner

ATTRIBUTES = ("census-education", "census-marital")


def reference_accuracy(label: str, epsilon: float, domain_size: int, n_high: int) -> float:
    """Paper eqs. (17), (18) (docs/math.md §3): e^ε/(D+e^ε−1) for GRR and SDGRR, e^ε/(|X_S|+e^ε−1) for URR."""
    e = math.exp(epsilon)
    return e / ((n_high if label == "URR" else domain_size) + e - 1)


def make_mechanism(label: str, epsilon: float, domain_size: int, high: tuple):
    """The mechanism a label (GRR, URR, SDGRR) names, its sensitive/high ids ``high``."""
    if label == "GRR":
        return make("grr", epsilon=epsilon, domain_size=domain_size)
    return make("urr", epsilon=epsilon, domain_size=domain_size, sensitive=high) if label == "URR" else \
        make("sdgrr", epsilon=epsilon, domain_size=domain_size, high=high)


def compute(config: dict) -> pd.DataFrame:
    """One row per (attribute, share, mechanism, ε): expected, reference and empirical accuracy."""
    cells = [(a, s, m, e) for a in config["attributes"] for s in config["high_shares"]
             for m in config["mechanisms"] for e in config["epsilon"]]
    seeds = np.random.SeedSequence(config["seed"]).spawn(len(cells))
    workloads = {a: make_workload(a, config["n"]) for a in config["attributes"]}
    rows = []
    for (attr, share, label, eps), seed in zip(cells, seeds):
        w = workloads[attr]
        d = w.domain_size
        high = high_ids(share, d, config["high_choice"])
        mech = make_mechanism(label, eps, d, high)
        pop_rng, mech_rng, attack_rng = (np.random.default_rng(s) for s in seed.spawn(3))
        values = w.values(pop_rng)
        measured = empirical_accuracy(mech, values, mech.perturb(values, mech_rng), rng=attack_rng, high=high)
        rows.append({"attribute": attr, "domain_size": d, "high_share": share, "n_high": len(high),
                     "mechanism": label, "epsilon": eps,
                     "expected": expected_accuracy(mech.transition_matrix(), subset=list(high)),
                     "reference": reference_accuracy(label, eps, d, len(high)),
                     "empirical": measured["high"], "empirical_se": measured["high_se"],
                     "n_high_users": measured["n_high"]})
    return pd.DataFrame(rows)


def figure(table: pd.DataFrame, config: dict):
    """One panel per attribute: expected accuracy (lines) and empirical (markers) vs ε."""
    panels = list(table.groupby("attribute", sort=False))
    fig, axes = new_figure(len(panels), 5.2, 4.0, top=0.6)
    styles = {"GRR": "-", "SDGRR": "--", "URR": ":"}
    for ax, (attr, sub) in zip(axes, panels):
        for k, (share, by_share) in enumerate(sub.groupby("high_share", sort=False)):
            for label, rows in by_share.groupby("mechanism", sort=False):
                if label == "GRR" and k:  # GRR's accuracy does not depend on the share: draw it once
                    continue
                color = "black" if label == "GRR" else f"C{k}"
                name = label if label == "GRR" else f"{label}-{round(100 * share)}"
                ax.plot(rows["epsilon"], rows["expected"], linestyle=styles[label], color=color,
                        label=f"{name} ({GUARANTEE_OF[label]})")
                ax.errorbar(rows["epsilon"], rows["empirical"], yerr=rows["empirical_se"], marker="o", ms=3,
                            linestyle="none", color=color)
        ax.set(xlabel=MIXED_EPSILON_AXIS, ylabel="adversary accuracy on high-sensitivity users", ylim=(0, 1.02),
               title=f"{attr} (D={sub['domain_size'].iat[0]}), high = {config['high_choice']} values")
        ax.legend(fontsize=7, loc=quiet_corner(ax))
    fig.suptitle(f"{config['title']} — lines: expected (transition matrix), markers: simulated", fontsize=9)
    return fig


def summary(table: pd.DataFrame, config: dict) -> pd.DataFrame:
    """Expected and empirical accuracy at the smallest and largest ε."""
    picked = table[table["epsilon"].isin({config["epsilon"][0], config["epsilon"][-1]})]
    return picked.pivot_table(index=["attribute", "high_share", "mechanism"], columns="epsilon",
                              values=["expected", "empirical"], sort=False)


KIND = Kind(
    spec={"epsilon": Field(list, check=epsilons),
          "attributes": Field(list, list(ATTRIBUTES), one_of_each(ATTRIBUTES)),
          "n": Field(int, 2_458_285, lambda v: None if v >= 1 else "must be >= 1"),
          "mechanisms": Field(list, ["GRR", "SDGRR", "URR"], one_of_each(("GRR", "SDGRR", "URR"))),
          "high_shares": Field(list, [0.25, 0.5, 0.75], shares),
          "high_choice": Field(str, "least-frequent", lambda v: None if v in HIGH_CHOICES else
                               f"must be one of {', '.join(map(repr, HIGH_CHOICES))}")},
    compute=compute, figure=figure, summary=summary,
    doc="Bayesian adversary accuracy on high-sensitivity users: expected and simulated",
)
