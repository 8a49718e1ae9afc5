"""Seed 004: privacy-budget allocation across the levels of a noisy quadtree (docs/math.md §6).

Scenario: n keyboard taps (``tap-positions``, points in [−1, 1]²) are counted in a quadtree of
height h (a 2^h × 2^h leaf grid, level 0 = leaves, level h = root); each level's counts get Laplace
noise of scale 1/ε_i with Σ ε_i = ε (:mod:`ldpsim.mechanisms.central.quadtree`). Allocations: uniform, Cormode's
geometric (q = 2^{1/3}), seed 004's arithmetic (difference d) and geometric (ratio q) series.

The table (column ``part``) holds

* ``budget`` — per-level budget ε_i and error Err(level_i) = n_i·2/ε_i² with Cormode's worst-case
  node count n_i = 8·2^{h−i} (``err_level``, as the seed) and capped by the 4^{h−i} nodes a level has
  (``err_level_capped``), for every d and q of the scenario (a d at or above 2ε/(h(h+1)) would give
  the root a budget ≤ 0 and is skipped);
* ``total-vs-d`` — total error Σ_i Err(level_i) against d (both node counts);
* ``optimum`` — per (ε, h): the d minimizing the total error, and the q making the per-level errors
  most nearly equal (smallest max/min ratio), both node counts;
* ``measured`` — random leaf-aligned rectangles answered by the noisy tree (canonical decomposition,
  :meth:`NoisyQuadtree.decomposition`), ``repeats`` noise draws: per level and in total (``level`` =
  −1), the empirical mean squared error over queries and draws ± se (over draws) against the
  analytic mean of Σ n_i(Q)·2/ε_i² for the nodes each query actually uses, and the worst-case bound.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
from scipy import optimize

from ldpsim.scenarios.studies.scenario.schema import Field
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms.central.quadtree import NoisyQuadtree, arithmetic_allocation, cormode_allocation, geometric_allocation, \
    level_errors, uniform_allocation, worst_case_nodes_per_level

from ldpsim.scenarios.reproductions.sdldp import Kind, epsilons, new_figure, positive
from ldpsim.evaluation.legend import quiet_corner


def d_bound(epsilon: float, h: int) -> float:
    """Largest admissible arithmetic difference (exclusive): 2ε/(h(h+1)) (docs/math.md §6)."""
    return 2 * epsilon / (h * (h + 1))


def total_error(budgets, h: int, capped: bool) -> float:
    """Σ_i n_i·2/ε_i² with the worst-case node counts (docs/math.md §6)."""
    return float(level_errors(budgets, worst_case_nodes_per_level(h, capped)).sum())


def optimal_d(epsilon: float, h: int, capped: bool) -> float:
    """The arithmetic d minimizing the total worst-case error (bounded scalar minimization)."""
    hi = d_bound(epsilon, h) * (1 - 1e-9)
    res = optimize.minimize_scalar(lambda d: total_error(arithmetic_allocation(epsilon, h, d), h, capped),
                                   bounds=(0.0, hi), method="bounded", options={"xatol": 1e-7})
    return float(res.x)


def equalizing_q(epsilon: float, h: int, capped: bool) -> float:
    """The geometric ratio q whose per-level worst-case errors have the smallest max/min ratio."""
    nodes = worst_case_nodes_per_level(h, capped)

    def spread(q):
        err = level_errors(geometric_allocation(epsilon, h, q), nodes)
        return float(np.log(err.max() / err.min()))
    return float(optimize.minimize_scalar(spread, bounds=(1.0, 3.0), method="bounded",
                                          options={"xatol": 1e-7}).x)


def allocations(epsilon: float, h: int, config: dict) -> dict[str, tuple[str, float, np.ndarray]]:
    """Label → (family, parameter, budgets) for every allocation of the scenario valid at ε."""
    out = {"uniform": ("uniform", 0.0, uniform_allocation(epsilon, h)),
           "cormode": ("cormode", 2 ** (1 / 3), cormode_allocation(epsilon, h))}
    for d in config["d_values"]:
        if d < d_bound(epsilon, h):
            out[f"d={d:g}"] = ("arithmetic", d, arithmetic_allocation(epsilon, h, d))
    for q in config["q_values"]:
        out[f"q={q:g}"] = ("geometric", q, geometric_allocation(epsilon, h, q))
    return out


def _analytic(config: dict) -> list[dict]:
    h, rows = config["h"], []
    for eps in config["epsilon"]:
        for label, (family, param, budgets) in allocations(eps, h, config).items():
            bound, capped = (level_errors(budgets, worst_case_nodes_per_level(h, c)) for c in (False, True))
            rows += [{"part": "budget", "epsilon": eps, "h": h, "allocation": label, "family": family,
                      "param": param, "level": i, "budget": budgets[i], "err_level": bound[i],
                      "err_level_capped": capped[i]} for i in range(h + 1)]
        for d in np.linspace(0.0, d_bound(eps, h), config["d_points"], endpoint=False):
            budgets = arithmetic_allocation(eps, h, d)
            rows.append({"part": "total-vs-d", "epsilon": eps, "h": h, "family": "arithmetic", "param": d,
                         "total": total_error(budgets, h, False), "total_capped": total_error(budgets, h, True)})
        for hh in config["heights"]:
            rows.append({"part": "optimum", "epsilon": eps, "h": hh,
                         "d_opt": optimal_d(eps, hh, False), "d_opt_capped": optimal_d(eps, hh, True),
                         "d_max": d_bound(eps, hh), "q_equal": equalizing_q(eps, hh, False),
                         "q_equal_capped": equalizing_q(eps, hh, True)})
    return rows


def random_rectangles(h: int, n_queries: int, rng: np.random.Generator) -> np.ndarray:
    """``n_queries`` leaf-aligned rectangles [x0, x1) × [y0, y1), both sides uniform over the pairs of cut lines."""
    side = 2 ** h
    cuts = np.sort(np.stack([rng.choice(side + 1, size=2, replace=False) for _ in range(2 * n_queries)]), axis=1)
    return np.concatenate([cuts[:n_queries], cuts[n_queries:]], axis=1)  # columns x0, x1, y0, y1


def _measured(config: dict) -> list[dict]:
    """Per ε and measured allocation: per-level and total query MSE over noise draws vs analytic.

    Streams by role, spawned from the scenario's seed: tap points, query rectangles, Laplace noise.
    """
    h, rows = config["h"], []
    wl_rng, query_rng, noise_rng = (np.random.default_rng(s) for s in
                                    np.random.SeedSequence(config["seed"]).spawn(3))
    points = make_workload("tap-positions", config["n"], wl_rng).values
    shape = NoisyQuadtree.build(points, uniform_allocation(1.0, h), noise_rng)
    rects = random_rectangles(h, config["queries"], query_rng)
    masks = [shape.decomposition(*r) for r in rects]  # Q × levels of boolean node masks
    used = [np.stack([m[i].ravel() for m in masks]).astype(float) for i in range(h + 1)]  # level → Q × N_i
    exact = sum(u @ c.ravel() for u, c in zip(used, shape.counts))
    truth = [shape.counts[0][x0:x1, y0:y1].sum() for x0, x1, y0, y1 in rects]
    if not np.array_equal(exact, truth):  # the decomposition must tile each rectangle exactly once
        raise RuntimeError("quadtree decomposition does not tile the query rectangles")
    nodes = np.stack([u.sum(axis=1) for u in used], axis=1)  # Q × levels: n_i(Q)
    for eps in config["epsilon"]:
        d_opt = optimal_d(eps, h, False)
        named = {"uniform": uniform_allocation(eps, h), "cormode": cormode_allocation(eps, h),
                 f"d_opt={d_opt:.4f}": arithmetic_allocation(eps, h, d_opt),
                 f"q={config['measured_q']:g}": geometric_allocation(eps, h, config["measured_q"])}
        for label, budgets in named.items():
            trees = [NoisyQuadtree.build(points, budgets, noise_rng) for _ in range(config["repeats"])]
            per_level = np.stack([np.stack([t.noisy[i].ravel() - t.counts[i].ravel() for t in trees]) @ used[i].T
                                  for i in range(h + 1)])  # levels × R × Q query errors
            analytic = nodes * 2 / np.asarray(budgets) ** 2  # Q × levels
            bound = level_errors(budgets, worst_case_nodes_per_level(h))
            for level, err, theory, worst in [(i, per_level[i], analytic[:, i], bound[i]) for i in range(h + 1)] \
                    + [(-1, per_level.sum(axis=0), analytic.sum(axis=1), bound.sum())]:
                per_draw = (err ** 2).mean(axis=1)
                r = per_draw.size
                rows.append({"part": "measured", "epsilon": eps, "h": h, "allocation": label, "level": level,
                             "mse": per_draw.mean(), "se": per_draw.std(ddof=1) / np.sqrt(r) if r > 1 else np.nan,
                             "mse_analytic": theory.mean(), "err_bound": worst,
                             "nodes_mean": nodes[:, level].mean() if level >= 0 else nodes.sum(axis=1).mean(),
                             "nodes_max": nodes[:, level].max() if level >= 0 else nodes.sum(axis=1).max(),
                             "repeats": r, "queries": len(rects), "n": config["n"]})
    return rows


def compute(config: dict) -> pd.DataFrame:
    """The analytic parts, then the measured one (seeded by the scenario's seed)."""
    return pd.DataFrame(_analytic(config) + _measured(config))


def figure(table: pd.DataFrame, config: dict):
    """Seed 004's figures: per-level budget and error for several d and q; total error vs d; measured."""
    eps = config["figure_epsilon"] if config["figure_epsilon"] in config["epsilon"] else config["epsilon"][-1]
    fig, (a, b, c, m) = new_figure(4, 5.0, 3.8)
    budget = table[(table["part"] == "budget") & (table["epsilon"] == eps)]
    for label, rows in budget.groupby("allocation", sort=False):
        family = rows["family"].iat[0]
        style = {"arithmetic": "-", "geometric": "--"}.get(family, ":")
        a.plot(rows["level"], rows["budget"], style, marker="o", ms=3, color=_color(rows, config), label=label)
        b.plot(rows["level"], rows["err_level"], style, marker="o", ms=3, color=_color(rows, config), label=label)
    a.set(xlabel=f"level i (0 = leaves, {config['h']} = root)", ylabel="ε_i",
          title=f"per-level budget, ε = {eps:g}, h = {config['h']}")
    b.set(xlabel="level i", ylabel="Err(level_i) = 8·2^(h−i)·2/ε_i²", yscale="log",
          title="per-level error (Cormode's worst-case node count)")
    a.legend(fontsize=6, ncol=2, loc=quiet_corner(a))
    b.legend(fontsize=6, ncol=2, loc=quiet_corner(b))
    curve = table[table["part"] == "total-vs-d"]
    opt = table[(table["part"] == "optimum") & (table["h"] == config["h"])].set_index("epsilon")
    for k, (e, rows) in enumerate(curve.groupby("epsilon")):
        c.plot(rows["param"], rows["total"], "-", color=f"C{k}", label=f"ε={e:g}, 8·2^(h−i)")
        c.plot(rows["param"], rows["total_capped"], "--", color=f"C{k}", label=f"ε={e:g}, capped at 4^(h−i)")
        c.axvline(opt.loc[e, "d_opt"], color=f"C{k}", lw=0.6)
        c.axvline(opt.loc[e, "d_opt_capped"], color=f"C{k}", lw=0.6, ls="--")
    low = curve[["total", "total_capped"]].min().min()
    c.set(xlabel="d", ylabel="total error Σ Err(level_i)", yscale="log", ylim=(0.7 * low, 30 * curve.groupby(
        "epsilon")["total"].min().max()), title=f"total worst-case error vs d, h = {config['h']} (vertical: optima)")
    c.legend(fontsize=6, loc=quiet_corner(c))
    measured = table[(table["part"] == "measured") & (table["epsilon"] == eps) & (table["level"] >= 0)
                     & (table["mse_analytic"] > 0)]
    for k, (label, rows) in enumerate(measured.groupby("allocation", sort=False)):
        m.errorbar(rows["level"], rows["mse"], yerr=rows["se"], fmt="o", ms=3, capsize=2, color=f"C{k}",
                   label=label)
        m.plot(rows["level"], rows["mse_analytic"], "-", lw=0.8, color=f"C{k}")
    m.set(xlabel="level i (0 = leaves)", ylabel="MSE of the level's share of the answer", yscale="log",
          title=f"{measured['queries'].iat[0]:.0f} random rectangles, ε = {eps:g}:\n"
                f"measured ± se (markers) vs mean n_i(Q)·2/ε_i² (lines)")
    m.legend(fontsize=6, loc=quiet_corner(m))
    fig.suptitle(config["title"], fontsize=9)
    return fig


def _color(rows: pd.DataFrame, config: dict):
    """Blues for the arithmetic d, oranges for the geometric q (darker = larger), black/grey for the rest."""
    family, param = rows["family"].iat[0], rows["param"].iat[0]
    if family in ("uniform", "cormode"):
        return "black" if family == "uniform" else "grey"
    values = config["d_values"] if family == "arithmetic" else config["q_values"]
    shade = 0.35 + 0.65 * values.index(param) / max(len(values) - 1, 1)
    return (matplotlib.colormaps["Blues"] if family == "arithmetic" else matplotlib.colormaps["Oranges"])(shade)


def summary(table: pd.DataFrame, config: dict) -> pd.DataFrame:
    """Optimal d and equalizing q per (ε, h); measured vs analytic total MSE per allocation."""
    opt = table[table["part"] == "optimum"].set_index(["epsilon", "h"])[
        ["d_opt", "d_opt_capped", "d_max", "q_equal", "q_equal_capped"]]
    tot = table[(table["part"] == "measured") & (table["level"] == -1)].set_index(["epsilon", "allocation"])[
        ["mse", "se", "mse_analytic", "err_bound"]]
    return pd.concat({"optimum": opt.reset_index().set_index(["epsilon", "h"]),
                      "measured total": tot}, names=["part"]).rename_axis(index=["part", "epsilon", "h/allocation"])


def _non_negative_list(v):
    if not v or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in v):
        return "must be a non-empty list of non-negative numbers"
    return None


def _ratios(v):
    if not v or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 1 for x in v):
        return "must be a non-empty list of ratios >= 1"
    return None


def _heights(v):
    if not v or not all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 12 for x in v):
        return "must be a non-empty list of ints between 1 and 12"
    return None


KIND = Kind(
    spec={"epsilon": Field(list, check=epsilons),
          "h": Field(int, 7, lambda v: None if 1 <= v <= 9 else "must be between 1 and 9"),
          "heights": Field(list, [5, 6, 7, 8, 9], _heights),
          "d_values": Field(list, [0.0, 0.01, 0.02, 0.025, 0.03], _non_negative_list),
          "q_values": Field(list, [1.0, 1.1, 1.26, 1.415, 1.5], _ratios),
          "d_points": Field(int, 200, positive),
          "figure_epsilon": Field(float, 1.0, lambda v: None if v > 0 else "must be > 0"),
          "n": Field(int, 100_000, positive), "queries": Field(int, 300, positive),
          "repeats": Field(int, 100, positive), "measured_q": Field(float, 1.415, lambda v: None if v >= 1
                                                                     else "must be >= 1")},
    compute=compute, figure=figure, summary=summary,
    doc="quadtree budget allocation: per-level and total error, optimal d and q, measured vs analytic",
)
