"""SDLDP paper, Fig. 2 and Fig. 4: theoretical variance curves (no simulation; instant).

Fig. 2 (paper section 4.2): frequency-estimate variance of GRR — which is also SDGRR's high-sensitivity
variance — by the paper's eq. (2), (D − 2 + e^ε)/(n(e^ε − 1)²), against SDGRR's low-sensitivity
variance by eq. (12), for uniform data (the hardest distribution, the paper's assumption) and a low
share α = |X_L|/D (the suffix of the paper's SDGRR_L-α curves). Beside each approximation the exact
fixed-population variance (``variance`` of :class:`GRR` / :class:`SDGRR`, averaged over the curve's
values) is tabulated and drawn dotted.

Fig. 4 (paper section 4.3): largest report variance of PM (= SDPM's high-sensitivity branch, at
|x| = 1, eq. (5)) against SDPM's low-sensitivity branch with X_L = [−c, c]: theorem 4's value at
x = 0, (C³ − c³)(e^ε − e^{ε/2})/(3e^ε(e^{ε/2} + 1)), and the exact largest value over X_L (at |x| = c).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldpsim.scenarios.studies.scenario.schema import Field
from ldpsim.evaluation.workloads.types import largest_remainder
from ldpsim.mechanisms import GRR, PM, SDGRR, SDPM

from ldpsim.scenarios.reproductions.sdldp import Kind, epsilons, n_of, new_figure, positive, shares
from ldpsim.evaluation.legend import quiet_corner


def grr_variance_eq2(epsilon: float, domain_size: int, n: int) -> float:
    """Paper eq. (2) (docs/math.md §1.2, small-f approximation): (D − 2 + e^ε)/(n(e^ε − 1)²)."""
    e = math.exp(epsilon)
    return (domain_size - 2 + e) / (n * (e - 1) ** 2)


def theorem4_variance(epsilon: float, c: float) -> float:
    """Paper theorem 4 (docs/math.md §2.2): SDPM low-branch report variance at x = 0 for X_L = [−c, c]."""
    t = math.exp(epsilon / 2)
    C = (t + 1) / (t - 1)
    return (C ** 3 - c ** 3) * (t * t - t) / (3 * t * t * (t + 1))


def frequency_variance(config: dict) -> pd.DataFrame:
    """Fig. 2 table: one row per (curve, ε) with the paper's approximation and the exact variance."""
    d, n = config["domain_size"], config["n"]
    uniform = largest_remainder(np.ones(d), n)
    rows = []
    for eps in config["epsilon"]:
        grr = GRR(eps, d)
        rows.append({"curve": "GRR = SDGRR_H", "low_share": 0.0, "n_low": 0, "epsilon": eps,
                     "variance_paper": grr_variance_eq2(eps, d, n),
                     "variance_exact": float(grr.variance(uniform).mean()) / n ** 2})
        for share in config["low_shares"]:
            n_low = n_of(share, d)
            sd = SDGRR(eps, d, high=range(d - n_low))
            rows.append({"curve": f"SDGRR_L-{round(100 * share)}", "low_share": share, "n_low": n_low,
                         "epsilon": eps, "variance_paper": sd.approx_variance_low(n),  # eq. (12), F_H = |X_H|/D
                         "variance_exact": float(sd.variance(uniform, items=sd.low).mean()) / n ** 2})
    return pd.DataFrame(rows)


def numeric_variance(config: dict) -> pd.DataFrame:
    """Fig. 4 table: PM's largest variance and SDPM_L's (theorem 4 at x = 0, exact largest at |x| = c)."""
    rows = []
    for eps in config["epsilon"]:
        rows.append({"curve": "PM = SDPM_H", "c": 1.0, "epsilon": eps,
                     "variance_paper": float(PM(eps).report_variance(1.0)),  # eq. (5) at |x| = 1
                     "variance_exact": float(PM(eps).report_variance(1.0))})
        for c in config["low_halfwidths"]:
            sdpm = SDPM(eps, (-c, c))
            rows.append({"curve": f"SDPM_L c={c:g}", "c": c, "epsilon": eps,
                         "variance_paper": theorem4_variance(eps, c),
                         "variance_exact": float(sdpm.report_variance(np.array([-c, 0.0, c])).max())})
    return pd.DataFrame(rows)


def _draw(table: pd.DataFrame, config: dict, ylabel: str):
    fig, (ax,) = new_figure(1, 6.0, 4.2, top=0.4)
    for k, (curve, rows) in enumerate(table.groupby("curve", sort=False)):
        color = f"C{k}"
        ax.plot(rows["epsilon"], rows["variance_paper"], marker="o", ms=3, color=color, label=curve)
        ax.plot(rows["epsilon"], rows["variance_exact"], linestyle=":", color=color)
    ax.set_yscale("log")
    ax.set(xlabel="ε", ylabel=ylabel)
    ax.set_title(config["title"], fontsize=9)
    ax.legend(fontsize=7, loc=quiet_corner(ax), title="solid: paper's formula, dotted: exact", title_fontsize=7)
    return fig


def _summary(table: pd.DataFrame, config: dict) -> pd.DataFrame:
    picked = table[table["epsilon"].isin(_ends(config["epsilon"]))]
    return picked.pivot_table(index="curve", columns="epsilon", values="variance_paper", sort=False)


def _ends(grid):
    """Up to three ε values to print: the first, one near 1 and the last."""
    near_one = min(grid, key=lambda e: abs(math.log(e)))
    return sorted({grid[0], near_one, grid[-1]})


FIG2 = Kind(
    spec={"epsilon": Field(list, check=epsilons), "domain_size": Field(int, 18, lambda v: None if v >= 3 else
                                                                        "must be >= 3"),
          "n": Field(int, 2_458_285, positive), "low_shares": Field(list, [0.25, 0.5, 0.75], shares)},
    compute=frequency_variance,
    figure=lambda t, c: _draw(t, c, "variance of a frequency estimate"),
    summary=_summary,
    doc="theoretical frequency variance: GRR eq. (2) vs SDGRR low eq. (12), uniform data",
)
FIG4 = Kind(
    spec={"epsilon": Field(list, check=epsilons), "low_halfwidths": Field(list, [0.25, 0.5, 0.75], shares)},
    compute=numeric_variance,
    figure=lambda t, c: _draw(t, c, "largest report variance"),
    summary=_summary,
    doc="theoretical report variance: PM eq. (5) vs SDPM low branch (theorem 4 and exact)",
)
