"""The discovery kind of sweep cell: a protocol that finds strings without a dictionary (SFP, PEM,
TreeHist; docs/math.md §7.4) instead of a frequency oracle estimating known items.

Per repeat the population engine draws the protocol's aggregate (``path``: direct sampler or per-user
reports, :mod:`ldpsim.simulator.population`), ``discover(agg, top_k=cell.top)`` finds the top list,
and :func:`ldpsim.evaluation.discovery.scores.run_scores` scores it against the workload's true top-k
(and the planted slang word, the first of ``workload.params["slang"]`` when the workload has one).
Output rows have the shapes of a frequency cell's: estimates (one row per discovered string and
repeat; ``true_rank``/``true_count`` NaN/0 for strings that are not items) and summary rows
``metric, rank (NaN), mean, se, n_runs``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.simulator.population import simulate_aggregate

from ldpsim.evaluation.discovery.scores import run_scores, summarize_runs


def discovery_rows(cell, mech, workload, seeds) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(estimates, summary) of ``cell.repeats`` discovery runs; ``seeds(r)`` is repeat r's stream."""
    planted = (workload.params.get("slang") or (None,))[0]
    rank = {str(w): r for r, w in enumerate(workload.items.tolist(), start=1)}
    runs, frames = [], []
    for r in range(cell.repeats):
        agg = simulate_aggregate(mech, workload.items, workload.counts, seeds(r), path=cell.path)
        res = mech.discover(agg, top_k=cell.top)
        runs.append(run_scores(workload.items, workload.counts, res.words, res.counts, cell.top, planted))
        true_rank = np.array([rank.get(str(w), np.nan) for w in res.words], dtype=float)
        true_count = np.array([workload.counts[int(t) - 1] if t == t else 0 for t in true_rank], dtype=float)
        frames.append(pd.DataFrame({"repeat": r, "item": np.asarray(res.words, dtype=object),
                                    "true_rank": true_rank, "true_count": true_count,
                                    "estimate": res.counts, "est_rank": np.arange(1, len(res.words) + 1)}))
    estimates = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return estimates, summarize_runs(runs, cell.metrics)
