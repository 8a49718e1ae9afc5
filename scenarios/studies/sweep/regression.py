"""Regression check: a sweep's metric summaries against a stored baseline, within statistical tolerance.

Every (cell, metric) aggregate row of a sweep carries a mean and its standard error over R repeats
(:mod:`ldpsim.scenarios.studies.sweep.cell_metrics`). A run and its baseline are independent estimates of the same
quantity when the code still draws from the same distributions — even when the random stream differs
(another seed, a refactor drawing in another order). A row moved when

    |mean − mean_b| / √(se² + se_b²)  >  t_{ν, 1 − α/(2K)}

with K the number of compared rows (Bonferroni: the family-wise false-alarm rate is at most α) and ν
the Welch–Satterthwaite degrees of freedom ν = (se² + se_b²)² / (se⁴/(R−1) + se_b⁴/(R_b−1)). With
estimated standard errors the statistic is t- rather than normal-distributed: at R = 10 the normal
quantile would raise the false-alarm rate of each row about fifty-fold; for many repeats t → z.
Rows with zero se on both sides (a deterministic metric) must agree to 1e-9 relative.

Cells are matched by what they estimate (mechanism, workload, mechanism params — not ``path`` or
``repeats``), not by cell id:
the id hashes the root seed, and so does a hash-family ``seed`` derived from it, which is left out
of the match unless the scenario sets ``seed`` itself. A cell or metric present on one side only is
a structural change and fails the check.

Caveat: a cell's repeats share one hash family (its ``seed``), so for sketches the se does not cover
the choice of family. Another root seed draws another family and top-k metrics can move beyond the
tolerance (CMS k = 16, m = 64, ε = 4, D = 200: top-10 precision 0.85 ± 0.03 → 0.56 ± 0.02). Check
sketches at the baseline's root seed (the default), or give ``seed`` in the scenario.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from ldpsim.evaluation.report.html import versions
from ldpsim.runtime.brief_repr import BriefRepr

#: version of the baseline file layout
FORMAT = 1
VERDICTS = ("ok", "REGRESSION", "missing", "new")


def _seed_is_given(scenario) -> bool:
    return "seed" in scenario.grid or any("seed" in m["fixed"] or "seed" in m["grid"] for m in scenario.mechanisms)


def cell_params(cell, keep_seed: bool) -> dict:
    """What a cell estimates: mechanism, ``workload.*`` and mechanism params, JSON-ready (tuples → lists)."""
    flat = {"mechanism": cell.mechanism, **{f"workload.{k}": v for k, v in cell.workload.items()},
            **{k: v for k, v in cell.params.items() if keep_seed or k != "seed"}}
    return json.loads(json.dumps(flat))


def _none_if_nan(x) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def make_baseline(scenario, summary: pd.DataFrame) -> dict:
    """The baseline of a finished sweep: one entry per (cell, metric) aggregate row (``rank`` NaN).

    ``summary`` is the run's summary table (:meth:`ldpsim.scenarios.studies.sweep.store.RunStore.read`); ``scenario``
    the :class:`ldpsim.scenarios.studies.scenario.grid.Scenario` it ran. Raises ``ValueError`` when cells are missing
    from ``summary`` or two cells have the same parameters.
    """
    keep_seed = _seed_is_given(scenario)
    cells = {c.id: c for c in scenario.cells()}
    agg = summary[summary["rank"].isna()] if len(summary) else summary
    missing = set(cells) - set(agg.get("cell_id", ()))
    if missing:
        raise ValueError(f"the summary lacks {len(missing)} of {len(cells)} cells of scenario {scenario.name!r}")
    params = {cid: cell_params(c, keep_seed) for cid, c in cells.items()}
    seen: dict[str, str] = {}
    for cid, p in params.items():
        key = json.dumps(p, sort_keys=True)
        if key in seen:
            raise ValueError(f"cells {seen[key]} and {cid} have the same parameters {p}; give them a distinct 'seed'")
        seen[key] = cid
    entries = [{"cell_id": row.cell_id, "params": params[row.cell_id], "metric": row.metric,
                "mean": _none_if_nan(row.mean), "se": _none_if_nan(row.se), "repeats": int(row.n_runs)}
               for row in agg.itertuples(index=False) if row.cell_id in cells]
    return {"format": FORMAT, "scenario": scenario.name, "fingerprint": scenario.fingerprint(),
            "root_entropy": scenario.seed, "ldpsim_version": versions()["ldpsim"], "entries": entries}


def write_baseline(path, baseline: dict) -> Path:
    """Write ``baseline`` as indented JSON (stable key order, so diffs stay readable)."""
    path = Path(path)
    from ldpsim.runtime.durable import make_dirs, write_text
    make_dirs(path.parent)
    write_text(path, json.dumps(baseline, indent=1, sort_keys=True, allow_nan=False) + "\n")
    return path


def read_baseline(path) -> dict:
    """Read a baseline file; ``ValueError`` when it is not one (wrong format or fields)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a JSON baseline ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), list):
        raise ValueError(f"{path}: not an ldpsim baseline of format {FORMAT} (write one with --update-baseline)")
    for i, entry in enumerate(data["entries"]):
        problem = _entry_problem(entry)
        if problem:
            raise ValueError(f"{path}: entries[{i}] {problem}; rewrite the baseline with --update-baseline")
    return data


def _entry_problem(entry) -> str | None:
    """What is wrong with one baseline entry (None when it is well formed)."""
    if not isinstance(entry, dict):
        return f"must be an object; got {type(entry).__name__}"
    number = (int, float, type(None))
    fields = {"params": dict, "metric": str, "mean": number, "se": number, "repeats": int}
    for key, types in fields.items():
        if key not in entry:
            return f"lacks the key {key!r}"
        value = entry[key]
        if isinstance(value, bool) or not isinstance(value, types):
            return f"has {key!r} = {value!r} of the wrong type"
    if entry["repeats"] < 1:
        return f"has 'repeats' = {entry['repeats']!r}, not >= 1"
    return None


@dataclass(frozen=True, repr=False)
class CheckResult(BriefRepr):
    """The comparison: one row per (cell, metric) of either side, with its verdict."""

    table: pd.DataFrame  # label, metric, base_mean, base_se, base_n, mean, se, n, z, limit, verdict
    alpha: float
    n_compared: int  # K, the Bonferroni family size

    @property
    def passed(self) -> bool:
        return bool((self.table["verdict"] == "ok").all())

    def counts(self) -> dict:
        return {v: int((self.table["verdict"] == v).sum()) for v in VERDICTS}


def _frame(entries) -> pd.DataFrame:
    rows = [{"key": json.dumps(e["params"], sort_keys=True), "params": e["params"], "metric": e["metric"],
             "mean": np.nan if e["mean"] is None else e["mean"], "se": np.nan if e["se"] is None else e["se"],
             "n": e["repeats"]} for e in entries]
    return pd.DataFrame(rows, columns=["key", "params", "metric", "mean", "se", "n"])


def _labels(params: pd.Series) -> pd.Series:
    """Each cell's mechanism and varying parameters, e.g. ``grr workload.name=harmonic epsilon=1``."""
    flat = pd.DataFrame([{k: json.dumps(v) if isinstance(v, list) else v for k, v in p.items()} for p in params],
                        index=params.index)
    vary = [c for c in flat.columns if c != "mechanism" and flat[c].nunique(dropna=False) > 1]

    def one(i):
        p = params[i]
        parts = [f"{k}={_short(p[k])}" for k in vary if k in p]
        return " ".join([str(p.get("mechanism", "?")), *parts])

    return pd.Series([one(i) for i in params.index], index=params.index, dtype=object)


def _short(v) -> str:
    if isinstance(v, list):
        return f"[{len(v)} values]" if len(v) > 3 else json.dumps(v)
    return f"{v:g}" if isinstance(v, float) else str(v)


def compare(baseline: dict, current: dict, alpha: float = 0.001) -> CheckResult:
    """Compare two baselines (the stored one and :func:`make_baseline` of a new run); see the module doc."""
    if not 0 < alpha < 1:
        raise ValueError(f"The 'alpha' parameter of compare must be a float in the range (0, 1). "
                         f"Got {alpha!r} instead.")
    base, now = _frame(baseline["entries"]), _frame(current["entries"])
    t = base.merge(now, on=["key", "metric"], how="outer", suffixes=("_b", ""), indicator=True)
    t["params"] = t["params"].where(t["params"].notna(), t["params_b"])
    both = (t["_merge"] == "both").to_numpy()
    k = int(both.sum())
    var_b, var = t["se_b"].fillna(0.0) ** 2, t["se"].fillna(0.0) ** 2
    comb = np.sqrt(var_b + var)
    diff = (t["mean"] - t["mean_b"]).abs()
    with np.errstate(divide="ignore", invalid="ignore"):
        z = diff / comb
        nu = (var_b + var) ** 2 / (var_b ** 2 / (t["n_b"] - 1) + var ** 2 / (t["n"] - 1))
    tail = alpha / (2 * max(k, 1))
    limit = pd.Series(stats.t.isf(tail, nu.where(nu > 0)), index=t.index).fillna(stats.norm.isf(tail))
    exact = comb == 0
    same = np.isclose(t["mean"], t["mean_b"], rtol=1e-9, atol=0.0) | (t["mean"].isna() & t["mean_b"].isna())
    z = z.where(~exact, np.where(same, 0.0, np.inf))
    moved = np.where(exact, ~same, (z > limit) | (t["mean"].isna() != t["mean_b"].isna()))
    verdict = np.select([t["_merge"] == "left_only", t["_merge"] == "right_only", moved],
                        ["missing", "new", "REGRESSION"], "ok")
    table = pd.DataFrame({"label": _labels(t["params"]), "metric": t["metric"],
                          "base_mean": t["mean_b"], "base_se": t["se_b"], "base_n": t["n_b"],
                          "mean": t["mean"], "se": t["se"], "n": t["n"],
                          "z": z.where(both), "limit": limit.where(both & ~exact), "verdict": verdict})
    return CheckResult(table, alpha, k)


def format_check(result: CheckResult, closest: int = 5) -> str:
    """A readable table: every row that failed, then the ``closest`` passing rows (largest z)."""
    t = result.table
    bad = t[t["verdict"] != "ok"].sort_values("z", ascending=False, na_position="first")
    near = t[t["verdict"] == "ok"].sort_values("z", ascending=False).head(closest)
    lim = t["limit"].dropna()
    z_inf = stats.norm.isf(result.alpha / (2 * max(result.n_compared, 1)))
    lines = [f"{result.n_compared} (cell, metric) rows compared; a row moved when |now − baseline| / "
             f"√(se² + se_b²) > t_(ν, 1−α/(2K)):\n  α = {result.alpha:g} family-wise, Bonferroni over "
             f"K = {result.n_compared}, ν Welch–Satterthwaite (limits here {lim.min():.2f}–{lim.max():.2f}; "
             f"z = {z_inf:.2f} for many repeats)"
             if len(lim) else f"{result.n_compared} (cell, metric) rows compared (α = {result.alpha:g})"]
    shown = pd.concat([bad, near])
    if len(shown):
        width = max(24, int(shown["label"].str.len().max()))
        lines.append("")
        lines.append(f"{'cell':<{width}}  {'metric':<18} {'baseline mean ± se':>24} {'now mean ± se':>24} "
                     f"{'z':>7} {'limit':>6}  verdict")
        for r in shown.itertuples(index=False):
            lines.append(f"{r.label:<{width}}  {r.metric:<18} {_pm(r.base_mean, r.base_se):>24} "
                         f"{_pm(r.mean, r.se):>24} {_num(r.z, '.2f'):>7} {_num(r.limit, '.2f'):>6}  {r.verdict}")
        if len(near) and len(bad) < len(t):
            lines.append(f"(all failing rows, then the {len(near)} passing rows closest to their limit)")
    c = result.counts()
    lines.append("")
    lines.append(f"PASS: all {result.n_compared} rows within tolerance" if result.passed else
                 f"FAIL: {c['REGRESSION']} moved beyond tolerance, {c['missing']} missing, {c['new']} new "
                 f"(of {len(t)} rows)")
    return "\n".join(lines)


def _num(x, fmt: str) -> str:
    return "-" if x is None or pd.isna(x) else format(x, fmt)


def _pm(mean, se) -> str:
    return "-" if pd.isna(mean) else f"{mean:.4g} ± {_num(se, '.2g')}"
