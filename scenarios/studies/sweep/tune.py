"""Find the cheapest sketch setting that meets an accuracy target (``ldpsim tune``).

Candidates (k, m[, ε]) are tried in order of cost — report bandwidth ``mech.report_bytes``, then
server memory k·m, then ε (less privacy loss first) — and the first one whose target metric meets
the target *with confidence* wins, so it is the cheapest of the candidates that do. "With confidence":
for ``metric<=t`` the one-sided upper confidence bound mean + z·se must be ≤ t (lower bound for
``>=``); with ``over="max"`` every top-N item must meet it, with ``over="mean"`` their average.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ldpsim.evaluation.cost import CostError, memory_budget
from ldpsim.evaluation.privacy.level_columns import beside, note
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.scenarios.studies.sweep.cell_metrics import CELL_METRICS
from ldpsim.scenarios.studies.scenario.grid import scenario_from_dict
from ldpsim.scenarios.studies.sweep.runner import run_cell
from ldpsim.runtime.errors import InputError

DEFAULT_K = (256, 1024, 4096, 16384, 65535)
DEFAULT_M = (32, 64, 128, 256, 512, 1024)
DEFAULT_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
#: bytes per user of a sketch's exact aggregate sampler (one 8-byte key per user, hashed k-wise into
#: 8-byte rows, plus their sort: about four such arrays at once), and per item and repeat of the estimates
BYTES_PER_USER, BYTES_PER_ITEM_REPEAT = 32, 8


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
            raise InputError(f"The 'target' parameter must look like 'rank_deviation<=1' (metric, <= or >=, "
                             f"number). Got {text!r} instead.")
        metric, op, value = match.groups()
        if metric not in CELL_METRICS:
            raise InputError(f"The 'target' metric must be one of {', '.join(CELL_METRICS)}. Got {metric!r} instead.")
        return cls(metric, op, float(value))

    def bound(self, mean, se, z: float):
        """The confidence bound that must meet the threshold (upper for <=, lower for >=)."""
        return mean + z * se if self.op == "<=" else mean - z * se

    def met(self, bound) -> bool:
        return bool(bound <= self.threshold) if self.op == "<=" else bool(bound >= self.threshold)


@dataclass(frozen=True, repr=False)
class TuneResult(BriefRepr):
    """What :func:`tune` returns.

    Attributes
    ----------
    target : str
        The accuracy target, e.g. ``"rank_deviation<=1"``.
    tried : pandas.DataFrame
        One row per candidate tried, cheapest first: ``k``, ``m``, ``epsilon``, ``report_bytes``,
        ``memory_km``, the target metric's ``mean`` and ``se`` (worst top-N item), its confidence
        ``bound``, ``meets`` and ``seconds``.
    best : dict or None
        The cheapest row that meets the target, or ``None`` when no candidate does.
    """

    target: str
    tried: pd.DataFrame
    best: dict | None

    def describe(self) -> str:
        """The table and the conclusion, as ``ldpsim tune`` prints them."""
        table = f"{beside(self.tried).to_string(index=False)}\n({note()})"   # one report a device
        if self.best is None:
            return f"{table}\n\nno setting tried meets {self.target}"
        b = self.best
        return (f"{table}\n\ncheapest setting meeting {self.target}: k={b['k']} m={b['m']} ε={b['epsilon']:g} "
                f"({b['report_bytes']} bytes per report, k·m = {b['memory_km']})")


def _check_int(name: str, flag: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise InputError(f"tune: {name} ({flag}) must be an integer >= {low}; got {value!r}")
    return int(value)


def _check_inputs(devices, domain_size, top, repeats, confidence, over, epsilons) -> None:
    _check_int("devices", "--devices", devices, 1)
    if domain_size is not None:
        _check_int("domain_size", "--domain-size", domain_size, 2)
    _check_int("top", "--top", top, 1)
    _check_int("repeats", "--repeats", repeats, 2)
    if not (isinstance(confidence, (int, float)) and math.isfinite(confidence) and 0 < confidence < 1):
        raise InputError(f"tune: confidence (--confidence) must be a number strictly between 0 and 1 (a one-sided "
                         f"confidence such as 0.95); got {confidence!r}")
    if over not in ("max", "mean"):
        raise InputError(f"tune: over (--over) must be 'max' or 'mean'; got {over!r}")
    bad = [e for e in epsilons if not (isinstance(e, (int, float)) and math.isfinite(e) and e > 0)]
    if bad:
        raise InputError(f"tune: epsilon (--epsilon/--epsilons) must be finite and > 0; got {bad[0]!r}")


def _check_cost(devices: int, domain_size: int | None, repeats: int, ks, ms) -> None:
    """Refuse (:class:`CostError`) a tuning whose largest candidate cannot fit this machine's memory
    (before any workload is built; an unset domain size counts as 10⁴ items)."""
    items = domain_size or 10_000
    need = BYTES_PER_USER * devices + BYTES_PER_ITEM_REPEAT * items * (repeats + 4) + 24 * max(ks) * max(ms)
    if need > memory_budget():
        gib = 2.0 ** 30
        raise CostError(f"tune: --devices {devices:,} users and a domain of {items:,} items need about "
                        f"{need / gib:,.1f} GiB ({BYTES_PER_USER} B per user, {BYTES_PER_ITEM_REPEAT} B per item "
                        f"and repeat), more than this machine's budget {memory_budget() / gib:.1f} GiB; lower "
                        "--devices or --domain-size")


def tune(target: str, *, workload: str = "harmonic", devices: int = 1_000_000, domain_size: int | None = None,
         words: int | None = None, mechanism: str = "cms", epsilon: float = 4.0, ks=DEFAULT_K, ms=DEFAULT_M,
         epsilons=None, top: int = 20, repeats: int = 20, path: str = "direct", seed: int = 0,
         confidence: float = 0.95, over: str = "max", report=None) -> TuneResult:
    """Try sketch settings cheapest first until one meets ``target`` (``ldpsim tune``).

    Parameters
    ----------
    target : str
        ``"metric<=threshold"`` or ``"metric>=threshold"``, e.g. ``"rank_deviation<=1"``.
    workload : str
        A workload name (:func:`ldpsim.evaluation.workloads.make.make_workload`).
    devices : int
        Number of users (each reports once).
    domain_size, words : int, optional
        Items of a synthetic workload (≥ 2), tokens of the words/emoji workloads (default: the workload's).
    mechanism : str
        A sketch taking ``k`` and ``m`` (``cms``, ``hcms``).
    epsilon : float
        The ε of one report (fixed unless ``epsilons`` is given).
    ks, ms : sequence of int
        Hash-function counts and sketch widths to try.
    epsilons : sequence of float, optional
        Also try each of these ε (less privacy loss first at equal cost).
    top : int
        Metrics over the top-``top`` items.
    repeats : int
        Repeats per candidate (≥ 2: its mean and standard error).
    path : {"direct", "reports", "auto"}
        Draw each aggregate from its exact law, or build every user's report.
    seed : int
        Root seed.
    confidence : float
        One-sided confidence of the bound, strictly between 0 and 1.
    over : {"max", "mean"}
        Every top-N item must meet the target, or their average.
    report : callable, optional
        Called with one line per candidate tried.

    Returns
    -------
    TuneResult

    Raises
    ------
    InputError
        A parameter out of range (the message names it and its option).
    CostError
        The largest candidate cannot fit this machine's memory.
    """
    goal = Target.parse(target)
    epsilons = list(epsilons) if epsilons else [epsilon]
    _check_inputs(devices, domain_size, top, repeats, confidence, over, epsilons)
    _check_cost(int(devices), domain_size or words, repeats, ks, ms)
    z = float(stats.norm.isf(1 - confidence))
    spec = {"name": workload, "n": int(devices)}
    if domain_size is not None:
        spec["domain_size"] = int(domain_size)
    if words is not None:
        spec["top"] = _check_int("words", "--words", words, 2)
    raw = {"scenario": {"name": "tune", "seed": seed, "repeats": repeats, "path": path, "top": top, "store_top": 1},
           "workload": spec,
           "mechanism": [{"name": mechanism, "grid": {"k": [int(k) for k in ks], "m": [int(m) for m in ms],
                                                       "epsilon": [float(e) for e in epsilons]}}],
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
        if report is not None:
            report(f"k={row['k']:>6} m={row['m']:>5} ε={row['epsilon']:<5g} bytes={row['report_bytes']:>4} "
                   f"{goal.metric}={row['mean']:.4g}±{row['se']:.2g} bound={row['bound']:.4g} "
                   f"{'meets' if row['meets'] else 'fails'} ({row['seconds']:.1f} s)")
        if row["meets"]:
            winner = row
            break
    return TuneResult(target, pd.DataFrame(tried), winner)
