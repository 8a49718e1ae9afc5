"""Seed 001: Warner randomized response for a sensitive yes/no question (docs/math.md §1.1).

Scenario: n users, a share π of whom would truthfully answer "yes", each answer through Warner's
coin (truth w.p. p = e^ε/(1 + e^ε)). The server computes the unbiased π̂ = (p − 1 + n₁/n)/(2p − 1),
the MLE (π̂ clipped to [0, 1]) and the normal-approximation interval π̂ ± z·sd,
sd = sqrt(p(1 − p)/n)/(2p − 1), all by :meth:`mechanisms.RR.proportion`.

For every (π, ε, n) cell, ``repeats`` aggregates are drawn from their exact distribution
(:meth:`RR.sample_aggregate`); the table gives the mean and sd of π̂ and the MLE, how often the MLE
was clipped, the mean interval width and the empirical coverage beside the nominal level and the
*exact* coverage of the interval. The exact coverage is P(|π̂ − π| ≤ z·sd) under the exact law of
n₁, the sum of Binomial(n_yes, p) and Binomial(n_no, 1 − p) (a convolution); clipping the bounds to
[0, 1] never removes π ∈ [0, 1], so it does not change coverage.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
from scipy import signal, stats

from ldpsim.scenarios.studies.scenario.schema import Field
from ldpsim.mechanisms import RR

from ldpsim.scenarios.reproductions.sdldp import Kind, epsilons, new_figure, positive, shares
from ldpsim.evaluation.legend import quiet_corner


def exact_coverage(n: int, n_yes: int, epsilon: float, confidence: float) -> float:
    """P(|π̂ − π| ≤ z·sd) for π = n_yes/n, under the exact distribution of the number of "yes" reports."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    pmf = signal.fftconvolve(stats.binom.pmf(np.arange(n_yes + 1), n_yes, p),
                             stats.binom.pmf(np.arange(n - n_yes + 1), n - n_yes, 1 - p))
    pmf = np.clip(pmf, 0.0, None)  # FFT round-off
    pi_hat = (p - 1 + np.arange(n + 1) / n) / (2 * p - 1)  # docs/math.md §1.1, for every possible n₁
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * math.sqrt(p * (1 - p) / n) / (2 * p - 1)
    inside = np.abs(pi_hat - n_yes / n) <= half * (1 + 1e-12)
    return float(pmf[inside].sum() / pmf.sum())


def _cell(share: float, eps: float, n: int, config: dict, rng: np.random.Generator) -> dict:
    mech = RR(eps)
    n_yes = int(round(share * n))
    counts = np.array([n - n_yes, n_yes])
    runs = np.array([mech.proportion(mech.sample_aggregate(counts, rng), config["confidence"])
                     for _ in range(config["repeats"])])  # R × (estimate, mle, low, high)
    pi = n_yes / n
    est, mle, low, high = runs.T
    covered = (low <= pi) & (pi <= high)
    z = NormalDist().inv_cdf(0.5 + config["confidence"] / 2)
    sd = math.sqrt(mech.p * (1 - mech.p) / n) / (2 * mech.p - 1)  # docs/math.md §1.1
    r = config["repeats"]
    return {"share": share, "pi": pi, "epsilon": eps, "n": n, "p": mech.p,
            "example_estimate": est[0], "example_mle": mle[0], "example_low": low[0], "example_high": high[0],
            "estimate_mean": est.mean(), "estimate_sd": est.std(ddof=1) if r > 1 else np.nan, "sd_theory": sd,
            "mle_mean": mle.mean(), "mle_clipped": float(np.mean(mle != est)),
            "width_mean": float(np.mean(high - low)), "width_theory": 2 * z * sd,
            "coverage": covered.mean(), "coverage_se": math.sqrt(covered.mean() * (1 - covered.mean()) / r),
            "coverage_exact": exact_coverage(n, n_yes, eps, config["confidence"]),
            "nominal": config["confidence"], "repeats": r}


def compute(config: dict) -> pd.DataFrame:
    """One row per (π, ε, n): estimates, interval widths and coverage over ``repeats`` surveys."""
    cells = [(s, e, n) for s in config["shares"] for e in config["epsilon"] for n in config["n_values"]]
    seeds = np.random.SeedSequence(config["seed"]).spawn(len(cells))
    return pd.DataFrame([_cell(s, e, n, config, np.random.default_rng(seed))
                         for (s, e, n), seed in zip(cells, seeds)])


def figure(table: pd.DataFrame, config: dict):
    """Left: interval width vs n per ε (markers: mean width, lines: 2·z·sd). Right: coverage vs n."""
    fig, (left, right) = new_figure(2, 5.0, 3.8)
    share = config["shares"][0]
    for k, (eps, rows) in enumerate(table[table["share"] == share].groupby("epsilon")):
        left.plot(rows["n"], rows["width_mean"], "o", ms=4, color=f"C{k}", label=f"ε={eps:g}")
        left.plot(rows["n"], rows["width_theory"], "-", lw=0.8, color=f"C{k}")
    left.set(xscale="log", yscale="log", xlabel="n", ylabel="CI width",
             title=f"mean width of the {config['confidence']:.0%} interval, π = {share:g}\n"
                   "markers: simulated (clipped to [0, 1]), lines: 2·z·sd")
    left.legend(fontsize=7, loc=quiet_corner(left))
    markers = "os^vD"
    for k, (eps, rows) in enumerate(table.groupby("epsilon")):
        for j, (s, sub) in enumerate(rows.groupby("share")):
            right.errorbar(sub["n"] * (1 + 0.04 * (k - 1)), sub["coverage"], yerr=sub["coverage_se"],
                           fmt=markers[j % len(markers)], ms=3, capsize=2, color=f"C{k}",
                           label=f"ε={eps:g}, π={s:.2g}")
            right.plot(sub["n"], sub["coverage_exact"], "-", lw=0.6, color=f"C{k}")
    right.axhline(config["confidence"], color="k", ls="--", lw=0.8, label="nominal")
    right.set(xscale="log", xlabel="n", ylabel="coverage",
              title=f"empirical coverage over {table['repeats'].iat[0]} surveys (± se)\n"
                    "thin lines: exact coverage of the normal interval")
    right.legend(fontsize=5, ncol=2, loc=quiet_corner(right))
    fig.suptitle(config["title"], fontsize=9)
    return fig


def summary(table: pd.DataFrame, config: dict) -> pd.DataFrame:
    """Per (π, ε, n): one survey's π̂, MLE and interval, the mean width and the coverage."""
    cols = ["example_estimate", "example_mle", "example_low", "example_high", "width_mean", "coverage",
            "coverage_exact"]
    return table.set_index(["share", "epsilon", "n"])[cols]


def _confidence(v):
    return None if 0 < v < 1 else "must be strictly between 0 and 1"


def _sizes(v):
    if not v or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 10 for x in v):
        return "must be a non-empty list of ints >= 10"
    return None if list(v) == sorted(set(v)) else "must be strictly increasing"


KIND = Kind(
    spec={"epsilon": Field(list, check=epsilons), "shares": Field(list, [0.1, 0.3], shares),
          "n_values": Field(list, [100, 1000, 10_000, 100_000], _sizes),
          "repeats": Field(int, 2000, positive), "confidence": Field(float, 0.95, _confidence)},
    compute=compute, figure=figure, summary=summary,
    doc="Warner RR: π̂, MLE and confidence interval vs ε and n; empirical vs exact coverage",
)
