"""Find the cheapest sketch setting that meets an accuracy target (``ldpsim tune``).

Candidates (k, m[, ε]) are tried in order of cost — report bandwidth ``mech.report_bytes``, then
server memory k·m, then ε (less privacy loss first) — and the first one whose target metric meets
the target *with confidence* wins, so it is the cheapest of the candidates that do. "With confidence":
for ``metric<=t`` the one-sided upper confidence bound mean + z·se must be ≤ t (lower bound for
``>=``); with ``over="max"`` every top-N item must meet it, with ``over="mean"`` their average.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ldpsim.evaluation.sweep.cell_metrics import CELL_METRICS
from ldpsim.evaluation.scenario.grid import scenario_from_dict
from ldpsim.evaluation.sweep.runner import run_cell

DEFAULT_K = (256, 1024, 4096, 16384, 65535)
DEFAULT_M = (32, 64, 128, 256, 512, 1024)
DEFAULT_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)


@dataclass(frozen=True)
class Target:
    """``metric <= threshold`` (or ``>=``), parsed from text such as ``"rank_deviation<=1"``."""

    metric: str
    op: str
    threshold: float

    @classmethod
    def parse(cls, text: str) -> "Target":
        match = re.fullmatch(r"\s*([a-z_@0-9]+)\s*(<=|>=)\s*([-+0-9.eE]+)\s*", text or "")
        if not match:
            raise ValueError(f"The 'target' parameter must look like 'rank_deviation<=1' (metric, <= or >=, "
                             f"number). Got {text!r} instead.")
        metric, op, value = match.groups()
        if metric not in CELL_METRICS:
            raise ValueError(f"The 'target' metric must be one of {', '.join(CELL_METRICS)}. Got {metric!r} instead.")
        return cls(metric, op, float(value))

    def bound(self, mean, se, z: float):
        """The confidence bound that must meet the threshold (upper for <=, lower for >=)."""
        return mean + z * se if self.op == "<=" else mean - z * se

    def met(self, bound) -> bool:
        return bool(bound <= self.threshold) if self.op == "<=" else bool(bound >= self.threshold)


def tune(workload: dict, target: str, *, mechanism: str = "cms", epsilon: float = 4.0, ks=DEFAULT_K,
         ms=DEFAULT_M, epsilons=None, top: int = 20, repeats: int = 20, path: str = "direct", seed: int = 0,
         confidence: float = 0.95, over: str = "max", report=print) -> tuple[pd.DataFrame, dict | None]:
    """Try candidates cheapest first until one meets ``target``; return (table of tries, winner or None).

    ``workload`` is the ``[workload]`` table of a scenario (``name``, ``n`` and params).
    """
    goal = Target.parse(target)
    if over not in ("max", "mean"):
        raise ValueError(f"The 'over' parameter must be 'max' or 'mean'. Got {over!r} instead.")
    z = float(stats.norm.isf(1 - confidence))
    raw = {"scenario": {"name": "tune", "seed": seed, "repeats": repeats, "path": path, "top": top, "store_top": 1},
           "workload": dict(workload),
           "mechanism": [{"name": mechanism, "grid": {"k": [int(k) for k in ks], "m": [int(m) for m in ms],
                                                       "epsilon": [float(e) for e in (epsilons or [epsilon])]}}],
           "metrics": {"names": [goal.metric]}}
    cells = scenario_from_dict(raw, "<tune>").cells()
    costed = sorted(cells, key=lambda c: (c.make_mechanism().report_bytes, c.params["k"] * c.params["m"],
                                          c.params["epsilon"]))
    tried, winner = [], None
    for cell in costed:
        _, summary = run_cell(cell, seed)
        rows = summary[summary["metric"] == goal.metric]
        per_item = rows[rows["rank"].notna()]
        chosen = per_item if over == "max" and len(per_item) else rows[rows["rank"].isna()]
        bounds = goal.bound(chosen["mean"].to_numpy(), chosen["se"].to_numpy(), z)
        worst = int(np.argmax(bounds) if goal.op == "<=" else np.argmin(bounds))
        k, m = cell.params["k"], cell.params["m"]
        row = {"k": k, "m": m, "epsilon": cell.params["epsilon"], "report_bytes": cell.make_mechanism().report_bytes,
               "memory_km": k * m, "mean": float(chosen["mean"].iloc[worst]), "se": float(chosen["se"].iloc[worst]),
               "bound": float(bounds[worst]), "meets": goal.met(bounds[worst]),
               "seconds": float(summary["elapsed_s"].iloc[0])}
        tried.append(row)
        report(f"k={row['k']:>6} m={row['m']:>5} ε={row['epsilon']:<5g} bytes={row['report_bytes']:>4} "
               f"{goal.metric}={row['mean']:.4g}±{row['se']:.2g} bound={row['bound']:.4g} "
               f"{'meets' if row['meets'] else 'fails'} ({row['seconds']:.1f} s)")
        if row["meets"]:
            winner = row
            break
    return pd.DataFrame(tried), winner
