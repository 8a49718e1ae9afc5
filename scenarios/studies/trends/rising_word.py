"""``ldpsim trends``: when does each continual-release design see a rising word? — docs/math.md §12.5–12.6.

One rising item (its daily share of devices from wordfreq, emergence and growth drawn from the seed;
:mod:`ldpsim.evaluation.workloads.trends`) is released over the run by every design of
:func:`~ldpsim.evaluation.trends.designs.standard_designs` at the same ε per person over the run, and
watched by one trailing-window detector (:class:`~ldpsim.evaluation.trends.detection.Detector`). Each
design's row gives the measured detection delay, detection rate, false alarms per month and tracking
error beside their theory, its exact variances, the smallest linear growth it detects, and its
guarantee. Releases are drawn from their exact aggregate laws, so 10⁷ devices cost what 10 do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.report.trend_plots import plot_trajectories
from ldpsim.evaluation.trends.lineup import standard_designs
from ldpsim.evaluation.trends.detection import Detector
from ldpsim.evaluation.trends.design_rows import measure_design
from ldpsim.evaluation.workloads.trends import WORDS_PER_DAY, rising_items
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime import durable
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.runfolder import Layout, RunFolder

#: ``ldpsim trends``: the rising-word table and its figure
LAYOUT = Layout("trends", ("trends.csv", "trajectory.png"))

#: days after emergence at which :func:`smallest_growth` is read, and the emergence day it assumes
GROWTH_AFTER, GROWTH_FROM = 14, 30


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

    @property
    def title(self) -> str:
        """The figure's title: the item, the fleet and what ε means."""
        return (f"Rising word {self.item!r} (emerges on day {self.emergence:.1f}), {self.devices:,} devices, "
                f"ε = {self.epsilon:g} per person over the run (δ = {self.delta:g} where a design has one)")

    def to_folder(self, out, force: bool = False) -> list:
        """Write ``trends.csv`` and ``trajectory.png`` into the run folder ``out`` (kind ``"trends"``)."""
        identity = {"fingerprint": f"trends-{self.item}-{self.devices}-{self.epsilon!r}", "seed": self.seed}
        with RunFolder.open(out, LAYOUT, identity, replace=force) as folder:
            durable.write_file(folder.path("trends.csv"), lambda tmp: self.table.to_csv(tmp, index=False))
            durable.write_file(folder.path("trajectory.png"),
                               lambda tmp: plot_trajectories(self.trajectories, tmp, self.title))
            paths = [folder.record("trends.csv"), folder.record("trajectory.png")]
            folder.finalize()
        return paths


def rising_word(item: str = "sus", devices: int = 10_000_000, days: int = 90, epsilon: float = 2.0,
                window: int = 7, false_alarms: float = 0.05, replicates: int = 200, seed: int = 0,
                delta: float = DELTA_RELEASE, words_per_day: float = WORDS_PER_DAY) -> TrendResult:
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
    replicates : int
        Runs of the rising item (and, five times as many, of an item nobody uses) per design.
    seed : int
        Root entropy: the workload, then one child stream per design.
    words_per_day : float
        Words a device types a day (the item's peak share).

    Returns
    -------
    TrendResult
    """
    devices = check_int("rising_word", "devices", devices, low=10_000)
    days = check_int("rising_word", "days", days, low=GROWTH_FROM + GROWTH_AFTER + 1)
    epsilon = check_real("rising_word", "epsilon", epsilon, 0.0)
    replicates = check_int("rising_word", "replicates", replicates, low=1)
    false_alarms = check_real("rising_word", "false_alarms", false_alarms, 0.0)
    delta = check_real("rising_word", "delta", delta, 0.0, 1.0)
    seed = check_int("rising_word", "seed", seed, low=0)
    detector = Detector(window, 1, false_alarms)
    wl_seed, designs_seed = np.random.SeedSequence(seed).spawn(2)
    shape = rising_items([item], days, np.random.default_rng(wl_seed), words_per_day)[0]
    designs = standard_designs(epsilon, days, delta)
    streams = designs_seed.spawn(len(designs))
    pi = shape.shares(days)
    rows, traj = [], []
    for design, stream in zip(designs, streams):
        row, trajectory = measure_design(design, detector, pi, shape.emergence, devices, replicates,
                                         np.random.default_rng(stream), GROWTH_FROM, GROWTH_AFTER)
        rows.append(row)
        traj.append(trajectory)
    trajectories = pd.concat(traj, ignore_index=True)
    shown = trajectories[trajectories["design"].str.contains("distributed")]
    return TrendResult(pd.DataFrame(rows), shown, shape.item, shape.emergence, devices, epsilon, delta, seed)
