"""Which continual-release design sees a stated rising word first, at equal ε per person — docs/math.md §12.9.

The query ``trend:GROWTH,START,DAYS[,WORD]`` states a word whose daily share of devices rises along the
logistic of :class:`~ldpsim.evaluation.workloads.trends.TrendShape` at rate GROWTH per day, reaching 1 % of
its peak on day START of a DAYS-day run, and never fading; the peak is wordfreq's share of WORD (default
``sus``; :func:`~ldpsim.evaluation.workloads.trends.peak_share`). Every design of
:func:`~ldpsim.evaluation.trends.lineup.standard_designs` releases it at the same ε per person over the run
and the same detector watches it; each design's row is
:func:`~ldpsim.evaluation.trends.design_rows.measure_design`'s (delay, false alarms per month, tracking error,
each beside its theory), and the designs are ranked by their median delay (undetected last), then by
their tracking error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.trends.detection import Detector
from ldpsim.evaluation.trends.lineup import standard_designs
from ldpsim.evaluation.trends.design_rows import measure_design
from ldpsim.evaluation.workloads.trends import TrendShape, peak_share
from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.errors import InputError

#: the query form :func:`parse_trend_query` accepts
TREND_FORM = "trend:GROWTH,START,DAYS[,WORD] (GROWTH > 0 a day, 0 ≤ START < DAYS − 1, DAYS ≥ 2, WORD a word wordfreq lists)"
#: the word of a query that names none
DEFAULT_WORD = "sus"
#: days after emergence at which the smallest growth is read (as ``ldpsim trends``), when the run has them
GROWTH_AFTER = 14


@dataclass(frozen=True)
class TrendQuery:
    """A parsed ``trend:`` query: the word's logistic rate a day, its emergence day, the run's days, the word."""

    growth: float
    start: int
    days: int
    word: str = DEFAULT_WORD


def parse_trend_query(text: str) -> TrendQuery:
    """``trend:0.2,30,90`` or ``trend:0.2,30,90,rizz`` → :class:`TrendQuery`; an ``InputError`` naming the
    part of the query that is wrong otherwise."""
    kind, _, arg = str(text).partition(":")
    parts = arg.split(",")
    if kind != "trend" or not 3 <= len(parts) <= 4:
        raise InputError(f"The 'query' parameter must be {TREND_FORM}. Got {text!r} instead.")

    def number(name, value, cast):
        try:
            return cast(value)
        except ValueError:
            raise InputError(f"The '{name}' of the query must be a number ({TREND_FORM}). Got {value!r} in {text!r} "
                             "instead.") from None
    growth = number("GROWTH", parts[0], float)
    start, days = number("START", parts[1], int), number("DAYS", parts[2], int)
    if not (math.isfinite(growth) and growth > 0):
        raise InputError(f"The 'GROWTH' of the query must be a finite rate > 0 a day. Got {parts[0]!r} in {text!r}.")
    if days < 2:
        raise InputError(f"The 'DAYS' of the query must be at least 2. Got {parts[2]!r} in {text!r}.")
    if not 0 <= start < days - 1:
        raise InputError(f"The 'START' of the query must be a day of the run with a day after it, 0 ≤ START < "
                         f"DAYS − 1 = {days - 1}. Got {parts[1]!r} in {text!r}.")
    word = parts[3].strip() if len(parts) == 4 else DEFAULT_WORD
    return TrendQuery(growth, start, days, word)


@dataclass(frozen=True, repr=False)
class TrendRanking(BriefRepr):
    """The designs ranked for one rising word: ``table`` one row per design, best first (``rank`` from 1).

    Attributes
    ----------
    query : TrendQuery
    shape : TrendShape
        The word's daily share of devices.
    epsilon, delta : float
        ε per person over the run of every design (δ where the design has one).
    devices, replicates : int
    detector : Detector
    growth_after : int
        Days after START at which ``smallest_growth`` is read.
    table : DataFrame
    """

    query: TrendQuery
    shape: TrendShape
    epsilon: float
    delta: float
    devices: int
    replicates: int
    detector: Detector
    growth_after: int
    table: pd.DataFrame

    @property
    def title(self) -> str:
        """One sentence: the word, the fleet, the detector and what ε means."""
        q = self.query
        return (f"{q.word!r} rising at {q.growth:g} a day from day {q.start} of {q.days} (peak share "
                f"{self.shape.peak:.3g}), {self.devices:,} devices, ε = {self.epsilon:g} per person over the run "
                f"(δ = {self.delta:g} where a design has one); detector: {self.detector.window}-day window, "
                f"{self.detector.rate:g} false alarms a month; {self.replicates} runs a design")


def rank_trend_designs(query: str, epsilon: float = 2.0, devices: int = 10_000_000, window: int = 7,
                       false_alarms: float = 0.05, replicates: int = 100, delta: float = DELTA_RELEASE,
                       rng=None) -> TrendRanking:
    """Rank the continual-release designs for the rising word of ``query`` (module docstring; §12.9).

    Parameters
    ----------
    query : str
        ``trend:GROWTH,START,DAYS[,WORD]`` (:func:`parse_trend_query`).
    epsilon : float, default 2
        ε per person over the run, for a person who may use the word every day.
    devices : int, default 10⁷
        n ≥ 10⁴ (the alarm probability's normal law).
    window : int, default 7
        Days summed by the detector.
    false_alarms : float, default 0.05
        Expected false alarms a month of the detector for a word nobody uses.
    replicates : int, default 100
        Runs of the rising word per design (and five times as many of an unused word).
    delta : float, default 1e-9
        δ of the designs that have one.
    rng : None, int, SeedSequence or Generator
        One child stream per design (common to every design's position in the lineup).

    Returns
    -------
    TrendRanking
    """
    q = parse_trend_query(query)
    epsilon = check_real("rank_trend_designs", "epsilon", epsilon, 0.0)
    devices = check_int("rank_trend_designs", "devices", devices, low=10_000)
    replicates = check_int("rank_trend_designs", "replicates", replicates, low=1)
    delta = check_real("rank_trend_designs", "delta", delta, 0.0, 1.0)
    detector = Detector(window, 1, false_alarms)
    shape = TrendShape(q.word, peak_share(q.word), float(q.start), q.growth)
    pi = shape.shares(q.days)
    after = min(GROWTH_AFTER, q.days - 1 - q.start)
    designs = standard_designs(epsilon, q.days, delta)
    streams = np.random.SeedSequence(as_generator(rng).integers(2 ** 63)).spawn(len(designs))
    rows = [measure_design(d, detector, pi, q.start, devices, replicates, np.random.default_rng(s), q.start, after)[0]
            for d, s in zip(designs, streams)]
    table = pd.DataFrame(rows)
    order = np.lexsort((table["tracking_rmse"].to_numpy(), table["delay_median"].fillna(np.inf).to_numpy()))
    table = table.iloc[order].reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    return TrendRanking(q, shape, epsilon, delta, devices, replicates, detector, after, table)
