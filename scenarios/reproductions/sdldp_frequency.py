"""SDLDP paper, Fig. 5 and Fig. 6: frequency-estimation MSE vs ε on two census-like attributes.

Scenario (paper section 5.2.1): n = 2 458 285 users hold one value of an attribute — education
attainment (18 categories) or marital status (7). Each mechanism (GRR, URR-s, SDGRR-s,
SDGRR-Personalized) privatizes every user's value; the server estimates all D frequencies; the
error is the paper's eq. (20) MSE, averaged over the D values and the repeats (frequency scale,
:func:`ldpsim.evaluation.metrics.mse`), reported as mean ± standard error over repeats; ``mse_low`` is the
same over the mechanism's low-sensitivity (URR: non-sensitive) values only (NaN for GRR and the
personalized mechanism, whose classes differ by user). ``n_high`` is −1 where there is no one high set.

Each repeat's aggregate is drawn from its exact distribution (the mechanisms' direct samplers via
:func:`ldpsim.simulator.population.estimate_counts` with ``path="direct"``), so millions of users cost
microseconds. SDGRR-Personalized: every user independently picks the 25 / 50 / 75 % high set with
probabilities 0.4 / 0.3 / 0.3 (multinomial split of each value's users), groups combined by
inverse variance (paper eq. (19)). The table also carries the exact theoretical MSE (mean of the
mechanisms' exact variances; for SDGRR-Personalized the first-order variance at the expected split).

Substitute data: the census extract is not shipped; the census-like workloads of
:mod:`ldpsim.evaluation.workloads.synthetic` (illustrative shares, not measured figures) stand in for it.
Which values are high-sensitivity (``high_choice``) is not stated by the paper and changes SDGRR's
error (its low-value error grows with the share F_H of users holding a high value): the scenario
runs both the least and the most frequent categories.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.scenarios.studies.scenario.schema import Field
from ldpsim.evaluation.metrics import mse, with_standard_error
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms import PersonalizedSDGRR, make
from ldpsim.simulator.population import estimate_counts

from ldpsim.scenarios.reproductions.sdldp import HIGH_CHOICES, MIXED_EPSILON_AXIS, Kind, marked, epsilons, high_ids, labels, new_figure, one_of_each, parse_label, \
    positive, same_length, shares, weights
from ldpsim.evaluation.legend import quiet_corner

ATTRIBUTES = ("census-education", "census-marital")


def make_mechanism(label: str, epsilon: float, domain_size: int, choice: str, config: dict):
    """The mechanism a label names, with its high (URR: sensitive) set chosen by ``choice``."""
    name, share = parse_label(label)
    if name == "GRR":
        return make("grr", epsilon=epsilon, domain_size=domain_size)
    if share == "Personalized":
        parts = [high_ids(s, domain_size, choice) for s in config["personalized_shares"]]
        return make("personalized-sdgrr", epsilon=epsilon, domain_size=domain_size, partitions=parts)
    ids = high_ids(share, domain_size, choice)
    return make("urr", epsilon=epsilon, domain_size=domain_size, sensitive=ids) if name == "URR" else \
        make("sdgrr", epsilon=epsilon, domain_size=domain_size, high=ids)


def _estimates(mech, counts: np.ndarray, config: dict, repeats: int, rng: np.random.Generator) -> np.ndarray:
    """R × D count estimates, each from one exactly drawn aggregate."""
    items = np.arange(counts.size)
    if not isinstance(mech, PersonalizedSDGRR):
        return np.stack([estimate_counts(mech, items, counts, rng, path="direct") for _ in range(repeats)])
    w = np.asarray(config["personalized_weights"], float)
    runs = []
    for _ in range(repeats):
        split = rng.multinomial(counts, w / w.sum()).T  # G × D: each user picks a partition independently
        runs.append(mech.estimate(mech.sample_aggregate(split, rng)))
    return np.stack(runs)


def _theory_mse(mech, counts: np.ndarray, config: dict) -> float:
    """Exact expected MSE (frequency scale) = mean_x Var(count_x)/n² (estimates are unbiased)."""
    if isinstance(mech, PersonalizedSDGRR):
        w = np.asarray(config["personalized_weights"], float)
        split = np.round(np.outer(w / w.sum(), counts))  # the expected split, in whole users
        return float(mech.variance(split).mean()) / counts.sum() ** 2
    return float(mech.variance(counts).mean()) / counts.sum() ** 2


def compute(config: dict) -> pd.DataFrame:
    """One row per (attribute, high choice, mechanism, ε): MSE ± se over repeats and its theory."""
    cells = [(a, c, m, e) for a in config["attributes"] for c in config["high_choices"]
             for m in config["mechanisms"] for e in config["epsilon"]]
    seeds = np.random.SeedSequence(config["seed"]).spawn(len(cells))
    workloads = {a: make_workload(a, config["n"]) for a in config["attributes"]}
    rows = []
    for (attr, choice, label, eps), seed in zip(cells, seeds):
        counts = workloads[attr].counts
        mech = make_mechanism(label, eps, counts.size, choice, config)
        est = _estimates(mech, counts, config, config["repeats"], np.random.default_rng(seed))
        value, se = with_standard_error(mse(counts, est, per_run=True))
        high = getattr(mech, "high", getattr(mech, "sensitive", None))
        low = np.setdiff1d(np.arange(counts.size), high) if high is not None else np.arange(0)
        mse_low = mse(counts[low], est[:, low], scale="count") / counts.sum() ** 2 if low.size else np.nan
        rows.append({"attribute": attr, "domain_size": counts.size, "high_choice": choice, "mechanism": label,
                     "n_high": counts.size - low.size if high is not None else -1, "epsilon": eps,
                     "mse": float(value), "se": float(se), "mse_theory": _theory_mse(mech, counts, config),
                     "mse_low": mse_low, "repeats": config["repeats"], "n": int(counts.sum())})
    return pd.DataFrame(rows)


def figure(table: pd.DataFrame, config: dict):
    """One panel per (high choice, attribute): MSE vs ε (markers ± se), exact theory as thin lines."""
    panels = list(table.groupby(["high_choice", "attribute"], sort=False))
    fig, axes = new_figure(len(panels), 4.6, 3.8)
    for ax, ((choice, attr), sub) in zip(axes, panels):
        for k, (label, rows) in enumerate(sub.groupby("mechanism", sort=False)):
            ax.errorbar(rows["epsilon"], rows["mse"], yerr=rows["se"], marker="o", ms=3, capsize=2,
                        linestyle="none", color=f"C{k}", label=marked(label))
            ax.plot(rows["epsilon"], rows["mse_theory"], color=f"C{k}", linewidth=0.8)
        ax.set_yscale("log")
        ax.set(xlabel=MIXED_EPSILON_AXIS, ylabel="MSE (frequency)", title=f"{attr} (D={sub['domain_size'].iat[0]})\n"
                                                          f"high = {choice} values")
        ax.legend(fontsize=6, loc=quiet_corner(ax))
    fig.suptitle(f"{config['title']} — markers: simulated, lines: exact theory", fontsize=9)
    return fig


def summary(table: pd.DataFrame, config: dict) -> pd.DataFrame:
    """MSE at the smallest and largest ε, and each mechanism's ratio to GRR at the smallest ε."""
    lo, hi = config["epsilon"][0], config["epsilon"][-1]
    keys = ["attribute", "high_choice", "mechanism"]
    wide = table.pivot_table(index=keys, columns="epsilon", values="mse", sort=False)[[lo, hi]]
    wide.columns = [f"mse@ε={lo:g}", f"mse@ε={hi:g}"]
    if "GRR" in config["mechanisms"]:
        grr = wide.xs("GRR", level="mechanism")[f"mse@ε={lo:g}"]
        wide[f"GRR/this@ε={lo:g}"] = [grr[(a, c)] / v for (a, c, _), v in zip(wide.index, wide[f"mse@ε={lo:g}"])]
    return wide


KIND = Kind(
    spec={"epsilon": Field(list, check=epsilons),
          "attributes": Field(list, list(ATTRIBUTES), one_of_each(ATTRIBUTES)),
          "n": Field(int, 2_458_285, positive), "repeats": Field(int, 200, positive),
          "mechanisms": Field(list, check=labels(("GRR", "URR", "SDGRR"))),
          "high_choices": Field(list, list(HIGH_CHOICES), one_of_each(HIGH_CHOICES)),
          "personalized_shares": Field(list, [0.25, 0.5, 0.75], shares),
          "personalized_weights": Field(list, [0.4, 0.3, 0.3], weights)},
    compute=compute, figure=figure, summary=summary,
    doc="frequency MSE vs ε on census-like attributes (direct samplers)",
    check=same_length("personalized_shares", "personalized_weights"),
)
