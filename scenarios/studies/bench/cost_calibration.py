"""Measure the limits of :mod:`ldpsim.evaluation.cost` and :mod:`ldpsim.scenarios.studies.scenario.deployment_file`.

``ldpsim bench --calibrate`` (:func:`calibrate`) prints one JSON object:

* memory: the peak resident memory (``ru_maxrss`` of a fresh process) of ``ldpsim run`` on a small
  deployment (:data:`BASE`) while one dimension grows (:data:`SERIES`: devices, days, items, words), and the
  least-squares slope of each, with the base; the constants of :mod:`ldpsim.evaluation.cost` are these
  slopes times a stated margin. Each run takes seconds, all of them a few minutes.
* epsilon: the smallest day ε (ε × daily_limit) at which the privacy arithmetic of a run breaks: the
  central ε of a shuffled batch (:func:`ldpsim.evaluation.privacy.amplification.numerical_epsilon`, called
  by every run's summary) raises or is not finite; found by bisection.
* sigma: the smallest log-normal sigma at which the fleet's session lengths
  (median · exp(σ z), :func:`ldpsim.simulator.fleet.draw_day`) stop being finite over 10⁷ draws.
* workload: the bytes per item of reading a categorical workload (tracemalloc), before any run is planned.
* wpm: whether typing speeds up to 1e300 wpm break the speed readings' arithmetic (they are clipped into the
  reading's range).

The numbers depend on the machine (allocator, library versions); the constants quote the run they came from.
"""

from __future__ import annotations

import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ldpsim.mechanisms.deltas import DELTA_SPEND

#: the deployment measured: one worker, no fsync, two small use cases (grown one dimension at a time)
BASE = """[deployment]
name = "calibration"
seed = 1
devices = {devices}
days = {days}
drain_days = 1
adversary_devices = 0

[workload]
name = "harmonic"
domain_size = {items}

[use_case.emoji]
mechanism = "grr"
epsilon = 4.0
{words}
[server]
fsync = false
"""
WORDS = """
[use_case.words]
mechanism = "pem"
epsilon = 4.0
top_k = 10

[words]
top = {top}
"""
#: (every run draws its figures, as a run from the size ``figures = "auto"`` draws them does: the slopes hold for both)
_CHILD = ("import resource, sys, ldpsim; n, d = int(sys.argv[3]) or None, int(sys.argv[4]) or None; "
          "ldpsim.run(sys.argv[1], out=sys.argv[2], devices=n, days=d, log=lambda m: None, figures='all'); "
          "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)")
#: the runs of :func:`measure_memory`: series → (the dimension grown, its values, the other settings)
SERIES = {"devices": ("devices", (10_000, 30_000, 60_000), {}), "days": ("days", (2, 8, 16), {}),
          "keyboard_devices": ("devices", (4000, 16_000), {"days": 12, "scenario": "keyboard"}),
          "items_2_days": ("items", (1000, 50_000, 100_000), {}),
          "items_8_days": ("items", (1000, 50_000, 100_000), {"days": 8}),
          "words": ("words", (2000, 10_000, 20_000), {})}
DEFAULTS = {"devices": 500, "days": 2, "items": 1000, "words": 0}
#: the margin each measured slope is multiplied by in :mod:`ldpsim.evaluation.cost`
MARGIN = 1.5


def peak_rss(devices: int, days: int, items: int = 1000, words: int = 0, scenario: str | None = None) -> int:
    """Peak RSS in bytes of one ``ldpsim run`` in a fresh Python process: of :data:`BASE` at these sizes, or of
    the shipped ``scenario`` at ``devices`` × ``days``."""
    text = BASE.format(devices=devices, days=days, items=items,
                       words=WORDS.format(top=words) if words else "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "calibration.toml"
        path.write_text(text, encoding="utf-8")
        argv = [scenario, str(Path(tmp) / "out"), str(devices), str(days)] if scenario else \
            [str(path), str(Path(tmp) / "out"), "0", "0"]
        done = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"ldpsim run at {devices=}, {days=}, {items=}, {words=} failed: {done.stderr[-800:]}")
    return int(done.stdout.split()[-1])


def _slope(x, y) -> float:
    return float(np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)[0])


def measure_memory(series: dict | None = None) -> dict:
    """Peak RSS per run, and per series the least-squares slope in bytes per unit of what grows: per device-day
    (devices, days: a day is one of ``days + drain_days``) and per item or word (at fixed days); the slopes per
    item at 2 and 8 days give the bytes per item-day (their difference over the 6 more days) and per item."""
    series = series or SERIES
    out: dict = {"runs": [], "slopes": {}}
    for label, (dim, values, fixed) in series.items():
        xs, ys = [], []
        for v in values:
            point = {**DEFAULTS, **fixed, dim: v}
            rss = peak_rss(**point)
            out["runs"].append({**point, "peak_rss": rss})
            days = point["days"] + (2 if "scenario" in point else 1)  # keyboard: 2 drain days
            xs.append(point["devices"] * days if dim in ("devices", "days") else v)
            ys.append(rss)
        out["slopes"][label] = _slope(xs, ys)
    s = out["slopes"]
    if {"items_2_days", "items_8_days"} <= set(s):
        out["bytes_per_item_day"] = (s["items_8_days"] - s["items_2_days"]) / 6
        out["bytes_per_item"] = s["items_2_days"] - 3 * out["bytes_per_item_day"]
    out["base_bytes"] = min(r["peak_rss"] for r in out["runs"])
    return out


def workload_bytes_per_item(sizes=(100_000, 500_000, 1_000_000)) -> float:
    """Slope of the peak traced allocation (tracemalloc) of reading a deployment's categorical workload
    (items and weights as the scenario loader builds them) over its number of items, in bytes per item."""
    import tracemalloc

    from ldpsim.scenarios.studies.scenario.deployment_file import _workload
    peaks = []
    for d in sizes:
        tracemalloc.start()
        _workload({"name": "harmonic", "params": {"domain_size": d}}, "calibration")
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return _slope(sizes, peaks)


def epsilon_break(ns=(2, 1000, 10**6, 10**9), delta: float = DELTA_SPEND) -> float:
    """The smallest day ε (to 0.01) at which the central ε of a shuffled batch of n devices raises or is not
    finite, over ``ns``."""
    from ldpsim.evaluation.privacy.amplification import numerical_epsilon

    def breaks(eps: float) -> bool:
        try:
            return not all(math.isfinite(numerical_epsilon(eps, n, delta, tol=1e-2)) for n in ns)
        except (OverflowError, ValueError, ZeroDivisionError, FloatingPointError):
            return True

    low, high = 1.0, 1e4
    if breaks(low) or not breaks(high):
        raise RuntimeError(f"epsilon_break: the central ε must be finite at ε = {low:g} and break by ε = {high:g} "
                           f"(n in {list(ns)}, delta = {delta:g}); it does not, so there is no break to bisect")
    while high - low > 0.01:
        mid = (low + high) / 2
        low, high = (low, mid) if breaks(mid) else (mid, high)
    return high


def sigma_break(draws: int = 10**7, median_s: float = 86400.0, seed: int = 0) -> float:
    """The smallest σ at which median · exp(σ z) over ``draws`` standard normals z is no longer finite (the
    session lengths of :func:`ldpsim.simulator.fleet.draw_day` at the largest median allowed)."""
    z_max = float(np.abs(np.random.default_rng(seed).standard_normal(draws)).max())
    return (math.log(sys.float_info.max) - math.log(median_s)) / z_max


def wpm_breaks(speeds=(1e3, 1e6, 1e100, 1e300)) -> dict:
    """For each typing speed (mean and sd alike): whether the speed readings' encoded values stay finite."""
    from ldpsim.mechanisms import SDPM
    mech = SDPM(2.0)
    out = {}
    rng = np.random.default_rng(0)
    for s in speeds:
        with np.errstate(all="ignore"):
            speed = s + rng.normal(0.0, s, size=10_000)
            unit = 2 * (np.clip(speed, 0.0, 120.0) / 120.0) - 1
            reports = mech.perturb(unit, rng)
        out[f"{s:g}"] = bool(np.isfinite(speed).all() and np.isfinite(np.asarray(reports, float)).all())
    return out


def calibrate(memory: bool = True) -> dict:
    """Every measurement above, as one dict (``memory=False`` skips the runs, the only slow part)."""
    out = {"epsilon_break": epsilon_break(), "sigma_break": sigma_break(), "wpm_finite": wpm_breaks(),
           "workload_bytes_per_item": workload_bytes_per_item()}
    if memory:
        out["memory"] = measure_memory()
    return out

