"""SDLDP paper, Fig. 7 and Fig. 8: mean-estimation MSE vs ε on heights and weights.

Scenario (paper section 5.2.2): n = 25 000 users each hold one reading normalized to [−1, 1]
(:mod:`ldpsim.evaluation.workloads.readings`: Normal(68.0 in, 1.9) heights and Normal(127.1 lb, 11.7)
weights over the public range mean ± 4 sd — the SOCR set of the paper is itself such a sample; one
fixed sample per attribute, drawn from the run's seed). Every repeat perturbs every user's reading
(per-user path) and estimates the mean:

* ``PM``: the report average (unbiased; the paper's PM, section 3.3);
* ``PM+EM``: PM's reports post-processed by EM (not in the paper; isolates what EM alone buys);
* ``SDPM-s``: high-sensitivity share s of [−1, 1], i.e. the low range [−(1−s), 1−s] (the paper sets
  a low range of share p to [−p, p]); EM over ``bins`` equal bins (paper algorithm 1, tolerance
  e^ε·10⁻³), mean of the estimated distribution;
* ``SDPM-Personalized``: each user picks the 25 / 50 / 75 % high range w.p. 0.4 / 0.3 / 0.3; per-group
  EM means combined by inverse variance (paper eq. (19)).

MSE = mean over repeats of (estimate − true mean)², in normalized units (paper eq. (20)), ± se.
The runtime is dominated by EM (O(t·d²) per estimate): ``bins`` and ``repeats`` bound it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.scenarios.studies.scenario.schema import Field
from ldpsim.evaluation.metrics import with_standard_error
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms import EM, PM, SDPM, PersonalizedSDPM

from ldpsim.scenarios.reproductions.sdldp import MIXED_EPSILON_AXIS, Kind, marked, epsilons, labels, new_figure, parse_label, positive, same_length, shares, weights
from ldpsim.evaluation.legend import quiet_corner

ATTRIBUTES = ("weights", "heights")


def low_range(high_share: float) -> tuple[float, float]:
    """Low range [−p, p] of share p = 1 − high share (paper section 5.2.2)."""
    p = 1.0 - high_share
    return (-p, p)


class Estimator:
    """A mean estimator for one (label, ε): ``estimate(values, rng)`` perturbs and estimates once."""

    def __init__(self, label: str, epsilon: float, config: dict):
        name, share = parse_label(label)
        self.weights = None
        if share == "Personalized":
            ranges = [low_range(s) for s in config["personalized_shares"]]
            self.personalized = PersonalizedSDPM(epsilon, ranges, bins=config["bins"])
            w = np.asarray(config["personalized_weights"], float)
            self.weights = w / w.sum()
        elif name == "SDPM":
            self.em = EM(SDPM(epsilon, low_range(share)), config["bins"])
        else:
            self.em = EM(PM(epsilon), config["bins"]) if name == "PM+EM" else None
            self.pm = PM(epsilon)

    def estimate(self, values: np.ndarray, rng: np.random.Generator) -> float:
        if self.weights is not None:
            mech = self.personalized
            groups = rng.choice(self.weights.size, size=values.size, p=self.weights)
            return mech.estimate_mean(mech.aggregate(mech.perturb(values, groups, rng)))
        if self.em is None:
            return self.pm.estimate_mean(self.pm.aggregate(self.pm.perturb(values, rng)))
        return self.em.mean(self.em.aggregate(self.em.mechanism.perturb(values, rng)))


def compute(config: dict) -> pd.DataFrame:
    """One row per (attribute, mechanism, ε): MSE ± se of the mean over repeats, and the mean bias."""
    data_seed, *cell_seeds = np.random.SeedSequence(config["seed"]).spawn(
        1 + len(config["attributes"]) * len(config["mechanisms"]) * len(config["epsilon"]))
    data_rngs = [np.random.default_rng(s) for s in data_seed.spawn(len(config["attributes"]))]
    cells = [(a, m, e) for a in config["attributes"] for m in config["mechanisms"] for e in config["epsilon"]]
    data = {a: make_workload(a, config["n"], rng=r).values for a, r in zip(config["attributes"], data_rngs)}
    rows = []
    for (attr, label, eps), seed in zip(cells, cell_seeds):
        x = data[attr]
        truth = float(x.mean())
        estimator = Estimator(label, eps, config)
        rng = np.random.default_rng(seed)
        err = np.array([estimator.estimate(x, rng) - truth for _ in range(config["repeats"])])
        value, se = with_standard_error(err ** 2)
        theory = PM(eps).mean_variance(x) if label == "PM" else np.nan  # exact for the report average
        rows.append({"attribute": attr, "mechanism": label, "epsilon": eps, "mse": float(value), "se": float(se),
                     "bias": float(err.mean()), "mse_theory": theory, "true_mean": truth,
                     "repeats": config["repeats"], "n": x.size, "bins": config["bins"]})
    return pd.DataFrame(rows)


def figure(table: pd.DataFrame, config: dict):
    """One panel per attribute: MSE of the mean vs ε (± se); PM's exact variance as a thin line."""
    panels = list(table.groupby("attribute", sort=False))
    fig, axes = new_figure(len(panels), 5.2, 4.0, top=0.6)
    for ax, (attr, sub) in zip(axes, panels):
        for k, (label, rows) in enumerate(sub.groupby("mechanism", sort=False)):
            ax.errorbar(rows["epsilon"], rows["mse"], yerr=rows["se"], marker="o", ms=3, capsize=2,
                        color=f"C{k}", label=marked(label))
            if rows["mse_theory"].notna().all():
                ax.plot(rows["epsilon"], rows["mse_theory"], color=f"C{k}", linewidth=0.8, linestyle=":")
        ax.set_yscale("log")
        ax.set(xlabel=MIXED_EPSILON_AXIS, ylabel="MSE of the mean (normalized units)",
               title=f"{attr} (n={sub['n'].iat[0]}, EM bins d={sub['bins'].iat[0]})")
        ax.legend(fontsize=7, loc=quiet_corner(ax))
    fig.suptitle(config["title"], fontsize=9)
    return fig


def summary(table: pd.DataFrame, config: dict) -> pd.DataFrame:
    """MSE at the smallest and largest ε and PM's MSE over each mechanism's at the smallest ε."""
    lo, hi = config["epsilon"][0], config["epsilon"][-1]
    wide = table.pivot_table(index=["attribute", "mechanism"], columns="epsilon", values="mse", sort=False)[[lo, hi]]
    wide.columns = [f"mse@ε={lo:g}", f"mse@ε={hi:g}"]
    if "PM" in config["mechanisms"]:
        pm = wide.xs("PM", level="mechanism")[f"mse@ε={lo:g}"]
        wide[f"PM/this@ε={lo:g}"] = [pm[a] / v for (a, _), v in zip(wide.index, wide[f"mse@ε={lo:g}"])]
    return wide


KIND = Kind(
    spec={"epsilon": Field(list, check=epsilons),
          "attributes": Field(list, list(ATTRIBUTES), lambda v: None if v and set(v) <= set(ATTRIBUTES) else
                              f"must be a non-empty list of {', '.join(map(repr, ATTRIBUTES))}"),
          "n": Field(int, 25_000, positive), "repeats": Field(int, 50, positive),
          "bins": Field(int, 64, lambda v: None if v >= 2 else "must be >= 2"),
          "mechanisms": Field(list, check=labels(("PM", "PM+EM", "SDPM"))),
          "personalized_shares": Field(list, [0.25, 0.5, 0.75], shares),
          "personalized_weights": Field(list, [0.4, 0.3, 0.3], weights)},
    compute=compute, figure=figure, summary=summary,
    doc="mean MSE vs ε on heights/weights (per-user path, EM post-processing)",
    check=same_length("personalized_shares", "personalized_weights"),
)
