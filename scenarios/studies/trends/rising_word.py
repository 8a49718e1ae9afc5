"""``ldpsim trends``: when does each continual-release design see a rising word? — docs/math.md §12.5–12.6.

One rising item (its daily share of devices from wordfreq, emergence and growth drawn from the seed;
:mod:`ldpsim.evaluation.workloads.trends`) is released over the run by every design of
:func:`~ldpsim.evaluation.trends.designs.standard_designs` at the same ε per person over the run, and
watched by one trailing-window detector (:class:`~ldpsim.evaluation.trends.detection.Detector`). Each
design's row gives the measured detection delay, detection rate, false alarms per month and tracking
error beside their theory, its exact variances, the smallest linear growth it detects, and its
guarantee. With ``engine="exact"`` releases are drawn from their exact aggregate laws, so 10⁷ devices cost
what 10 do; with ``engine="devices"`` every device privatizes its own 90-day history and the server sums
(:mod:`ldpsim.scenarios.studies.trends.device_fleet`, on Dask with ``workers`` > 1 or a ``scheduler``;
THRESH in rounds, one an epoch); the table's ``engine`` column says which. The devices engine runs
``replicates`` fleets of the rising word and as many of an item nobody uses (the exact engine five times
as many), and states its cost before it starts (:func:`plan_rising_word`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.cost import RUN_BASE_BYTES, Plan, trend_devices_plan
from ldpsim.evaluation.report.trend_plots import plot_trajectories
from ldpsim.evaluation.trends.device_path import BATCH, DailyUse, cost_key, has_device_path
from ldpsim.evaluation.trends.lineup import standard_designs
from ldpsim.evaluation.trends.detection import Detector
from ldpsim.evaluation.trends.design_rows import measure_design
from ldpsim.evaluation.workloads.trends import WORDS_PER_DAY, rising_items
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime import durable
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.runfolder import Layout, RunFolder
from ldpsim.scenarios.studies.trends.device_fleet import BLOCK, simulate_fleet, simulate_thresh_fleet

#: ``ldpsim trends``: the rising-word table and its figure
LAYOUT = Layout("trends", ("trends.csv", "trajectory.png"))

#: days after emergence at which :func:`smallest_growth` is read, and the emergence day it assumes
GROWTH_AFTER, GROWTH_FROM = 14, 30

#: how the releases are drawn: from the exact aggregate laws, or device by device
ENGINES = ("exact", "devices")
#: runs of the rising word per design when none is given, by engine
REPLICATES = {"exact": 200, "devices": 1}


@dataclass(frozen=True, repr=False)
class TrendResult(BriefRepr):
    """What :func:`rising_word` returns: one row per design, the trajectories of the figure, the parameters."""

    table: pd.DataFrame
    trajectories: pd.DataFrame
    item: str
    emergence: float
    devices: int
    epsilon: float
    delta: float
    seed: int
    engine: str = "exact"

    @property
    def title(self) -> str:
        """The figure's title: the item, the fleet (and how it was run) and what ε means."""
        fleet = f"{self.devices:,} devices" + (" device by device" if self.engine == "devices" else "")
        return (f"Rising word {self.item!r} (emerges on day {self.emergence:.1f}), {fleet}, "
                f"ε = {self.epsilon:g} per person over the run (δ = {self.delta:g} where a design has one)")

    def to_folder(self, out, force: bool = False) -> list:
        """Write ``trends.csv`` and ``trajectory.png`` into the run folder ``out`` (kind ``"trends"``)."""
        engine = "" if self.engine == "exact" else f"-{self.engine}"
        identity = {"fingerprint": f"trends-{self.item}-{self.devices}-{self.epsilon!r}{engine}", "seed": self.seed}
        with RunFolder.open(out, LAYOUT, identity, replace=force) as folder:
            durable.write_file(folder.path("trends.csv"), lambda tmp: self.table.to_csv(tmp, index=False))
            durable.write_file(folder.path("trajectory.png"),
                               lambda tmp: plot_trajectories(self.trajectories, tmp, self.title))
            paths = [folder.record("trends.csv"), folder.record("trajectory.png")]
            folder.finalize()
        return paths


def rising_word(item: str = "sus", devices: int = 10_000_000, days: int = 90, epsilon: float = 2.0,
                window: int = 7, false_alarms: float = 0.05, replicates: int | None = None, seed: int = 0,
                delta: float = DELTA_RELEASE, words_per_day: float = WORDS_PER_DAY, engine: str = "exact",
                workers: int | None = None, scheduler: str | None = None, progress=None) -> TrendResult:
    """Every design's detection of one rising word at ε per person over the run (module docstring).

    Parameters
    ----------
    item : str
        A word or emoji wordfreq lists.
    devices, days : int
        n ≥ 10⁴ (the alarm probability's normal law) and T ≥ 45 (the smallest growth is read on day 44).
    epsilon : float
        ε per person over the run (> 0); δ = ``delta`` where the design has one.
    window : int
        Days summed by the detector.
    false_alarms : float
        Expected false alarms per month of the detector (> 0).
    replicates : int, optional
        Runs of the rising item per design (default: :data:`REPLICATES` of the engine), and of an item
        nobody uses (:data:`~ldpsim.evaluation.trends.design_rows.NULL_RUNS` times as many with the exact
        engine, as many with the devices engine).
    seed : int
        Root entropy: the workload, then one child stream per design, then the devices engine's fleets.
    words_per_day : float
        Words a device types a day (the item's peak share).
    engine : {"exact", "devices"}
        Releases from the exact aggregate laws, or device by device (module docstring).
    workers : int, optional
        The devices engine's local Dask workers (None or 1: in this process).
    scheduler : str, optional
        The devices engine's Dask scheduler address instead of a local cluster.
    progress : callable, optional
        ``progress(done, total)`` in device blocks (the devices engine).

    Returns
    -------
    TrendResult

    Raises
    ------
    CostError
        The devices engine's plan exceeds this machine (:func:`plan_rising_word`), before any work.
    """
    devices = check_int("rising_word", "devices", devices, low=10_000)
    days = check_int("rising_word", "days", days, low=GROWTH_FROM + GROWTH_AFTER + 1)
    epsilon = check_real("rising_word", "epsilon", epsilon, 0.0)
    replicates = _replicates(replicates, engine)
    false_alarms = check_real("rising_word", "false_alarms", false_alarms, 0.0)
    delta = check_real("rising_word", "delta", delta, 0.0, 1.0)
    seed = check_int("rising_word", "seed", seed, low=0)
    detector = Detector(window, 1, false_alarms)
    wl_seed, designs_seed, fleet_seed = np.random.SeedSequence(seed).spawn(3)
    shape = rising_items([item], days, np.random.default_rng(wl_seed), words_per_day)[0]
    designs = standard_designs(epsilon, days, delta)
    streams = designs_seed.spawn(len(designs))
    pi = shape.shares(days)
    fleets = _device_fleets(designs, pi, devices, replicates, engine, workers, scheduler, progress, fleet_seed)
    rows, traj = [], []
    for design, stream in zip(designs, streams):
        row, trajectory = measure_design(design, detector, pi, shape.emergence, devices, replicates,
                                         np.random.default_rng(stream), GROWTH_FROM, GROWTH_AFTER,
                                         fleet=fleets.get(design.name))
        rows.append(row)
        traj.append(trajectory)
    trajectories = pd.concat(traj, ignore_index=True)
    shown = trajectories[trajectories["design"].str.contains("distributed")]
    return TrendResult(pd.DataFrame(rows), shown, shape.item, shape.emergence, devices, epsilon, delta, seed, engine)


def _path_designs(designs, engine: str) -> list:
    """The designs run device by device: all of them (devices engine), none (exact)."""
    return list(designs) if engine == "devices" else []


def plan_rising_word(devices: int, days: int, replicates: int | None = None, engine: str = "exact",
                     workers: int | None = None, epsilon: float = 2.0, delta: float = DELTA_RELEASE) -> Plan:
    """The cost of :func:`rising_word` before it runs; raise CostError when the devices engine cannot fit.

    The exact engine's cost does not depend on n (:data:`~ldpsim.evaluation.cost.RUN_BASE_BYTES`, no CPU
    estimate); the devices engine's is :func:`~ldpsim.evaluation.cost.trend_devices_plan` of its two sets of
    ``replicates`` fleets (the rising word and an unused item).
    """
    devices = check_int("rising_word", "devices", devices, low=10_000)
    days = check_int("rising_word", "days", days, low=GROWTH_FROM + GROWTH_AFTER + 1)
    replicates = _replicates(replicates, engine)
    return _plan(_path_designs(standard_designs(epsilon, days, delta), engine), devices, days, replicates, workers)


def _replicates(replicates, engine: str) -> int:
    """``replicates``, or the engine's default (:data:`REPLICATES`), checked."""
    if engine not in ENGINES:
        raise InputError(f"The 'engine' parameter of rising_word must be one of {', '.join(ENGINES)}. "
                         f"Got {engine!r} instead.")
    return check_int("rising_word", "replicates", REPLICATES[engine] if replicates is None else replicates, low=1)


def _plan(path, devices, days, replicates, workers) -> Plan:
    if not path:
        return Plan([f"exact aggregate laws: {replicates:,} run(s) per design, whatever the {devices:,} devices"],
                    RUN_BASE_BYTES)
    return trend_devices_plan(devices, days, replicates, [cost_key(d) for d in path], workers or 1, BATCH, BLOCK,
                              fleets=2, where="rising_word (devices engine)")


def _device_fleets(designs, shares, devices, replicates, engine, workers, scheduler, progress, seed) -> dict:
    """Design name → (true counts, daily estimates, daily estimates of an unused item) of every design run
    device by device (none with the exact engine); the plan is checked first. The one-pass designs share
    their devices' histories; THRESH runs in rounds on its own fleet."""
    path = _path_designs(designs, engine)
    if not path:
        return {}
    _plan(path, devices, shares.size, replicates, workers)
    one_pass = [d for d in path if has_device_path(d)]
    rounds = [d for d in path if not has_device_path(d)]
    units = [replicates * math.ceil(devices / BLOCK)] + [replicates * d.days // d.epoch for d in rounds]
    total, out = 2 * sum(units), {}
    for k, (pi, seed_k) in enumerate(zip((shares, np.zeros(shares.size)), seed.spawn(2))):
        streams = seed_k.spawn(1 + len(rounds))
        for i, (design, stream) in enumerate(zip([one_pass, *rounds], streams)):
            before = k * sum(units) + sum(units[:i])
            shown = None if progress is None else (lambda done, _, b=before: progress(b + done, total))
            common = dict(workers=workers, scheduler=scheduler, progress=shown)
            run = simulate_fleet(design, DailyUse(pi), devices, replicates, stream, **common) if i == 0 else \
                simulate_thresh_fleet(design, DailyUse(pi), devices, replicates, stream, **common)
            for name, daily in run.daily.items():
                out[name] = (run.counts, daily) if k == 0 else (*out[name], daily)
    return out
