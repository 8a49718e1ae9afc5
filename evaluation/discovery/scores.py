"""Metrics of discovery without a dictionary — docs/math.md §7.4.

Pure functions of the truth (items in rank order with their counts) and one run's discovered list
(strings and estimated counts), then means with standard errors over runs:

* precision = |D ∩ T_k| / |D|, recall = |D ∩ T_k| / k, F1 = 2PR/(P + R) (0 when P + R = 0), with D
  the discovered list (at most k strings) and T_k the true top-k (ties keep the workload's rank order);
* NCR (normalized cumulative rank): a true top-k item of rank r scores k − r + 1; the sum over the
  discovered items divided by k(k + 1)/2;
* relative error: mean over discovered strings that are real items of |f̂ − f|/f (NaN if none);
* found: 1 if the planted word is in D, else 0 — its mean over runs is the discovery probability, and
  :func:`first_reaching` gives the smallest n (sweep) or first day (deployment) where it is ≥ 0.9.

>>> run_scores(["a", "b", "c"], [50, 30, 20], ["b", "z"], [33.0, 5.0], k=2, planted="b")["ncr"]
0.3333333333333333
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.evaluation.metrics import with_standard_error

#: per-run scores, in output order
DISCOVERY_METRICS = ("precision", "recall", "f1", "ncr", "relative_error", "found")


def run_scores(true_items, true_counts, found_words, found_counts, k: int, planted=None) -> dict:
    """The scores of one run (module docstring); ``planted`` None gives ``found`` = NaN."""
    items = [str(x) for x in true_items]
    top = {w: r for r, w in enumerate(items[:k], start=1)}
    truth = dict(zip(items, np.asarray(true_counts, float).tolist()))
    found = [str(w) for w in found_words][:k]
    hits = [w for w in found if w in top]
    precision = len(hits) / len(found) if found else 0.0
    recall = len(hits) / k
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    ncr = sum(k - top[w] + 1 for w in hits) / (k * (k + 1) / 2)
    rel = [abs(c - truth[w]) / truth[w] for w, c in zip(found, np.asarray(found_counts, float).tolist())
           if truth.get(w, 0) > 0]
    return {"precision": precision, "recall": recall, "f1": f1, "ncr": ncr,
            "relative_error": float(np.mean(rel)) if rel else np.nan,
            "found": np.nan if planted is None else float(str(planted) in found)}


def summarize_runs(runs: list[dict], names=DISCOVERY_METRICS) -> pd.DataFrame:
    """Rows ``metric, rank (NaN), mean, se, n_runs`` over the runs (NaN runs of a metric are skipped)."""
    rows = []
    for name in names:
        v = np.array([r[name] for r in runs], dtype=float)
        v = v[~np.isnan(v)]
        mean, se = with_standard_error(v) if v.size else (np.nan, np.nan)
        rows.append({"metric": name, "rank": np.nan, "mean": float(mean), "se": float(se), "n_runs": int(v.size)})
    return pd.DataFrame(rows)


def first_reaching(x, probability, level: float = 0.9):
    """The smallest ``x`` (n or day) whose discovery probability is ≥ ``level`` and stays so for every
    larger x; None if it never does. ``x`` and ``probability`` are aligned sequences."""
    order = np.argsort(np.asarray(x, dtype=float), kind="stable")
    xs = np.asarray(x)[order]
    ok = np.asarray(probability, dtype=float)[order] >= level
    if not ok.size or not ok[-1]:
        return None
    last_bad = np.flatnonzero(~ok)
    i = 0 if not last_bad.size else int(last_bad[-1]) + 1
    return xs[i].item() if hasattr(xs[i], "item") else xs[i]
