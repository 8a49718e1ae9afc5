"""The metric summaries of one sweep cell: mean and standard error over repeats — docs/math.md §4.

:func:`summarize` turns the truth (D counts, rank order) and ``R × D`` estimates into tidy rows
``metric, rank, mean, se, n_runs``: per-item metrics give one row per top-N item (``rank`` = its true
rank) plus one aggregate row (``rank`` = NaN) averaging the top-N items; scalar metrics give the
aggregate row only. Standard errors are those of :mod:`ldpsim.evaluation.metrics`: over runs of a per-run
statistic, by the delta method for ΔE. The aggregate ΔE's se, √(Σ se_d²)/N, ignores the (small)
correlation between items' estimates. The adversary metrics are exact expectations (se = 0) from the
mechanism's transition matrix (docs/math.md §3): the paper's adversary (uniform prior) against users drawn
from the workload, over all users and over the high-sensitivity ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.simulator.population import items_for

from ldpsim.evaluation.adversary import bayes as adversary
from ldpsim.evaluation import metrics as M


@dataclass(frozen=True)
class Context:
    """What some metrics need besides the numbers: the cell's mechanism and the items in rank order."""

    mechanism: object = None
    items: np.ndarray | None = None


def _frame(name: str, item_mean, item_se, agg_mean, agg_se, n_runs: int) -> pd.DataFrame:
    item_mean = np.atleast_1d(np.asarray(item_mean, float))
    ranks = np.append(np.arange(1, item_mean.size + 1, dtype=float), np.nan)
    return pd.DataFrame({"metric": name, "rank": ranks,
                         "mean": np.append(item_mean, agg_mean), "se": np.append(item_se, agg_se),
                         "n_runs": n_runs})


def _per_run_items(name, values, top, n_runs):
    """Per-item statistic given per run (R × D): mean ± se per top item, and of the top-N average."""
    v = values[:, :top]
    mean, se = M.with_standard_error(v)
    agg_mean, agg_se = M.with_standard_error(v.mean(axis=1))
    return _frame(name, mean, se, agg_mean, agg_se, n_runs)


def _per_run_scalar(name, per_run, n_runs):
    mean, se = M.with_standard_error(np.asarray(per_run, float))
    return _frame(name, [], [], mean, se, n_runs)


def _expectation_bias(true, est, top, ctx):
    de, se = M.expectation_bias_with_se(true, est)
    de, se = de[:top], se[:top]
    return _frame("expectation_bias", de, se, de.mean(), np.sqrt((se ** 2).sum()) / de.size, est.shape[0])


def _variance_ratio(true, est, top, ctx):
    theory = ctx.mechanism.variance(true.astype(np.int64), items_for(ctx.mechanism, ctx.items))
    ratio = M.variance_ratio(true[:top], est[:, :top], theory[:top])
    se = ratio * np.sqrt(2.0 / (est.shape[0] - 1))  # χ²_{R−1}/(R−1) for normal estimates
    return _frame("variance_ratio", ratio, se, ratio.mean(), np.sqrt((se ** 2).sum()) / ratio.size, est.shape[0])


def _adversary(name, high_only):
    def metric(true, est, top, ctx):
        subset = adversary.high_mask(ctx.mechanism) if high_only else None
        acc = adversary.expected_accuracy(ctx.mechanism.transition_matrix(), true_prior=true, subset=subset)
        return _frame(name, [], [], acc, 0.0, est.shape[0])
    return metric


#: metric name → f(true_counts, est_runs (R × D), top, Context) -> DataFrame of rows
CELL_METRICS = {
    "expectation_bias": _expectation_bias,
    "rank_deviation": lambda a, e, top, ctx: _per_run_items("rank_deviation", M.rank_errors(a, e), top, e.shape[0]),
    "variance": lambda a, e, top, ctx: _per_run_items("variance", M.squared_errors(a, e), top, e.shape[0]),
    "relative_variance": lambda a, e, top, ctx: _per_run_items("relative_variance", M.squared_errors(a, e, True),
                                                              top, e.shape[0]),
    "variance_ratio": _variance_ratio,
    "mse": lambda a, e, top, ctx: _per_run_scalar("mse", M.mse(a, e, per_run=True), e.shape[0]),
    "mae": lambda a, e, top, ctx: _per_run_scalar("mae", M.mae(a, e, per_run=True), e.shape[0]),
    "top_k_precision": lambda a, e, top, ctx: _per_run_scalar("top_k_precision", M.top_k_precision(a, e, top),
                                                             e.shape[0]),
    "top_k_recall": lambda a, e, top, ctx: _per_run_scalar("top_k_recall", M.top_k_recall(a, e, top), e.shape[0]),
    "ndcg_at_k": lambda a, e, top, ctx: _per_run_scalar("ndcg_at_k", M.ndcg_at_k(a, e, top), e.shape[0]),
    "kendall_tau_top_k": lambda a, e, top, ctx: _per_run_scalar("kendall_tau_top_k", M.kendall_tau_top_k(a, e, top),
                                                               e.shape[0]),
    "adversary_accuracy": _adversary("adversary_accuracy", high_only=False),
    "adversary_accuracy_high": _adversary("adversary_accuracy_high", high_only=True),
}
#: metrics that need ``mechanism.transition_matrix()`` (discrete oracles)
NEEDS_TRANSITION_MATRIX = ("adversary_accuracy", "adversary_accuracy_high")


def summarize(names, true_counts, est_runs, top: int, context: Context = Context()) -> pd.DataFrame:
    """Rows of every metric in ``names`` over the top ``top`` items (truth sorted by count, rank 1 first).

    ``context`` (the mechanism and items) is needed by ``variance_ratio`` and the adversary metrics.
    ``mse``/``mae`` follow the paper's eq. (20): all D items, frequency scale; top-k metrics use k = top.
    """
    true = np.asarray(true_counts, float)
    est = np.asarray(est_runs, float)
    top = min(top, true.size)
    return pd.concat([CELL_METRICS[name](true, est, top, context) for name in names], ignore_index=True)
