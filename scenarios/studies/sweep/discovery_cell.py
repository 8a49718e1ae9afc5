"""The discovery kind of sweep cell: a protocol that finds strings without a dictionary (SFP, PEM,
TreeHist; docs/math.md §7.4) instead of a frequency oracle estimating known items.

Per repeat the population engine draws the protocol's aggregate (``path``: direct sampler or per-user
reports, :mod:`ldpsim.simulator.population`), ``discover(agg, top_k=cell.top)`` finds the top list —
or, for an interactive protocol (TrieHH, TrieHH++, LDPTrie, …), one pass of its rounds over the users
(``path = "reports"``: every user's own answer; else each round's tally drawn exactly) publishes its
words, most votes first, and the first ``cell.top`` are the list —
and :func:`ldpsim.evaluation.discovery.scores.run_scores` scores it against the workload's true top-k
(and the planted slang word, the first of ``workload.params["slang"]`` when the workload has one).
Output rows have the shapes of a frequency cell's: estimates (one row per discovered string and
repeat; ``true_rank``/``true_count`` NaN/0 for strings that are not items) and summary rows
``metric, rank (NaN), mean, se, n_runs``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.mechanisms.discovery.run_budget import RunRounds
from ldpsim.simulator.population import simulate_aggregate

from ldpsim.evaluation.discovery.scores import run_scores, summarize_runs


def discovery_rows(cell, mech, workload, seeds) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(estimates, summary) of ``cell.repeats`` discovery runs; ``seeds(r)`` is repeat r's stream."""
    planted = (workload.params.get("slang") or (None,))[0]
    rank = {str(w): r for r, w in enumerate(workload.items.tolist(), start=1)}
    runs, frames = [], []
    for r in range(cell.repeats):
        words, counts = _top_list(cell, mech, workload, seeds(r))
        runs.append(run_scores(workload.items, workload.counts, words, counts, cell.top, planted))
        true_rank = np.array([rank.get(str(w), np.nan) for w in words], dtype=float)
        true_count = np.array([workload.counts[int(t) - 1] if t == t else 0 for t in true_rank], dtype=float)
        frames.append(pd.DataFrame({"repeat": r, "item": np.asarray(words, dtype=object),
                                    "true_rank": true_rank, "true_count": true_count,
                                    "estimate": counts, "est_rank": np.arange(1, len(words) + 1)}))
    estimates = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return estimates, summarize_runs(runs, cell.metrics)


def _top_list(cell, mech, workload, seed) -> tuple[np.ndarray, np.ndarray]:
    """(words, estimated counts) of one run's published top list (module docstring)."""
    if not isinstance(mech, RunRounds):
        res = mech.discover(simulate_aggregate(mech, workload.items, workload.counts, seed, path=cell.path),
                            top_k=cell.top)
        return res.words, res.counts
    rng = np.random.default_rng(seed)
    if cell.path == "reports":
        res = mech.protocol.run(np.repeat(np.asarray(workload.items, dtype=object), workload.counts), rng)
    else:
        res = mech.protocol.run(rng=rng, items=workload.items, true_counts=workload.counts)
    order = np.argsort(-np.asarray(res.votes, dtype=float), kind="stable")[:cell.top]
    return res.words[order], res.counts[order]
