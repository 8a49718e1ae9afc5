"""The numeric kind of sweep cell: a numeric design (a heat-map or reading design of the numeric design table,
or a registered numeric mechanism read by EM) on a numeric workload — docs/math.md §9.14.

Per repeat the cell draws one population of its workload (``key-taps``: one tap per device on one of 30 keys;
``typing-speed``, ``key-latency``: one reading per device) from the repeat's stream — the same for every design
of the workload setting (common random numbers) — estimates it with one report (or one release) per device
(:func:`~ldpsim.evaluation.numeric_use.estimate_maps`, :func:`~ldpsim.evaluation.numeric_use.estimate_reading`)
and scores it (:func:`~ldpsim.evaluation.numeric_designs.map_errors` per key,
:func:`~ldpsim.evaluation.numeric_designs.reading_errors`). Output rows have the shapes of a frequency cell's:
estimates (one row per repeat and bin, or key and map cell: ``item`` = ``"<bin>"`` or ``"<key>/<cell>"``) and
summary rows ``metric, rank, item, mean, se, n_runs``: per key (``rank`` its place among the workload's keys,
``item`` its name) and, with ``rank`` NaN, the mean over the keys of each repeat (a reading's one row).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.evaluation import metrics as M
from ldpsim.evaluation.numeric_designs import map_errors, reading_errors
from ldpsim.evaluation.numeric_use import DEFAULT_KEYS, draw_numeric, estimate_maps, estimate_reading, key_ids
from ldpsim.evaluation.workloads.key_taps import KEY_NAMES


def numeric_rows(cell, design, seeds) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(estimates, summary) of ``cell.repeats`` runs of ``design``; ``seeds(r)`` is repeat r's stream."""
    w = dict(cell.workload)
    name, n = w.pop("name"), w.pop("n")
    keys = key_ids(list(w.get("keys", DEFAULT_KEYS))) if design.family == "heatmap" else ()
    frames, scores = [], []  # scores: one dict per (repeat, key) of metric → value
    for r in range(cell.repeats):
        g_data, g_noise = np.random.default_rng(seeds(r)).spawn(2)
        data = draw_numeric(name, n, g_data, **w)
        if design.family == "heatmap":
            truth, est = estimate_maps(design, data, keys, g_noise)
            labels = [f"{KEY_NAMES[k]}/{c}" for k in keys for c in range(truth[0].size)]
            scores += [{"repeat": r, "key": KEY_NAMES[k], **map_errors(t, e)} for k, t, e in zip(keys, truth, est)
                       if t.sum() > 0]
        else:
            truth, est = estimate_reading(design, data.values, g_noise)
            labels = [str(b) for b in range(truth.size)]
            scores.append({"repeat": r, "key": None, **reading_errors(truth, est, data.params["range"])})
        frames.append(pd.DataFrame({"repeat": r, "item": labels, "true_rank": np.nan,
                                    "true_count": np.ravel(truth).astype(float), "estimate": np.ravel(est),
                                    "est_rank": np.nan}))
    return pd.concat(frames, ignore_index=True), _summary(pd.DataFrame(scores), cell.metrics)


def _summary(scores: pd.DataFrame, metrics) -> pd.DataFrame:
    """Mean ± se over repeats of each metric per key (``rank`` = the key's place among the workload's keys)
    and, with ``rank`` NaN, of each repeat's mean over its keys (a reading's one row)."""
    rows = []

    def add(metric, rank, item, values):
        mean, se = M.with_standard_error(np.asarray(values, float))
        rows.append({"metric": metric, "rank": rank, "item": item, "mean": float(mean), "se": float(se),
                     "n_runs": len(values)})
    for metric in metrics:
        if scores["key"].notna().any():
            for rank, (key, v) in enumerate(scores.groupby("key", sort=False)[metric], start=1):
                add(metric, float(rank), key, v.to_numpy())
        add(metric, np.nan, None, scores.groupby("repeat")[metric].mean().to_numpy())
    return pd.DataFrame(rows)
