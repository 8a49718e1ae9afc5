"""One design's detection of one rising item, measured beside its theory — docs/math.md §12.6.

:func:`measure_design` is the row that ``ldpsim trends`` (:mod:`ldpsim.scenarios.studies.trends.rising_word`)
and ``ldpsim compare --query trend:…`` (:mod:`ldpsim.evaluation.trends.ranking`) print for each design:
the released daily counts are drawn from the design's exact aggregate law (``design.sample``), so the
fleet's size costs nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldpsim.evaluation.trends.detection import (DAYS_PER_MONTH, Detector, first_alarm, smallest_growth, theory_delay,
                                                theory_tracking_error, tracking_error)
from ldpsim.evaluation.trends.thresh_delay import thresh_law
from ldpsim.evaluation.trends.thresh_design import ThreshDesign

#: runs of an item nobody uses per run of the rising item (the measured false alarms)
NULL_RUNS = 5


def median_delay(late) -> float:
    """Median delay over all runs, an undetected run counting as ∞; NaN when half or more are undetected."""
    m = float(np.median(np.where(np.isnan(late), np.inf, late)))
    return m if math.isfinite(m) else math.nan


def design_theory(design, detector: Detector, shares, devices: int, emergence: float) -> dict:
    """The theory of a design's row: median delay, false alarms a month, tracking error and each day's
    Var(x̂_t − x_t) (``delay``, ``false_alarms``, ``tracking``, ``error_var``).

    §12.6 from the design's window moments and null alarm probabilities; THRESH's from the law of its
    refresh paths (:func:`~ldpsim.evaluation.trends.thresh_delay.thresh_law`, §12.13), exact for its false
    alarms; where its window spans more than two collections, its delay is NaN and its false alarms the
    union bound of §12.7.
    """
    pi = np.asarray(shares, dtype=float)
    start, days = math.ceil(emergence), pi.size
    bound = float(detector.null_alarm_probability(design, devices, days).mean() * DAYS_PER_MONTH)
    if isinstance(design, ThreshDesign):
        lengths = detector.lengths(days)
        law = thresh_law(design, pi, devices, lengths, detector.tested, detector.rate, start)
        null = thresh_law(design, np.zeros(days), devices, lengths, detector.tested, detector.rate, days)
        return {"delay": law.median_delay(emergence),
                "false_alarms": bound if null.limit else float(null.alarm.mean() * DAYS_PER_MONTH),
                "tracking": law.tracking_error(pi, devices), "error_var": law.day_var + devices * pi * (1 - pi)}
    return {"delay": theory_delay(detector.alarm_probability(design, pi, devices)[start:], emergence - start),
            "false_alarms": bound, "tracking": theory_tracking_error(design, pi, devices),
            "error_var": design.window_moments(pi, devices, 1)[1] - devices * pi * (1 - pi)}


def measure_design(design, detector: Detector, shares, emergence: float, devices: int, replicates: int, rng,
                   growth_from: int, growth_after: int, fleet=None) -> tuple[dict, pd.DataFrame]:
    """The design's row and first run's trajectory for an item of daily shares π emerging on day e.

    Parameters
    ----------
    design
        A design of :mod:`ldpsim.evaluation.trends.designs` (or THRESH, Skellam).
    detector : Detector
    shares : ndarray, shape (T,)
        π_t of the rising item.
    emergence : float
        e: delays are counted from the first alarm on or after ⌈e⌉, minus e.
    devices, replicates : int
        n devices; runs of the rising item (and :data:`NULL_RUNS` times as many of an unused item).
    rng : numpy.random.Generator
    growth_from, growth_after : int
        The smallest growth is for a count rising linearly from day ``growth_from``, alarmed with
        probability ½ ``growth_after`` days later (:func:`~ldpsim.evaluation.trends.detection.smallest_growth`).
    fleet : (counts, daily, null_daily) of ndarray, optional
        The runs already simulated device by device (true counts and releases of the rising item, releases
        of an unused item); by default both are drawn from the design's exact aggregate law with ``rng``.

    Returns
    -------
    (dict, DataFrame)
        The row (delay, detection rate, false alarms per month, tracking error, each with its theory;
        the sds, the smallest growth and the guarantee) and the trajectory of the first run (the columns of
        :func:`~ldpsim.evaluation.report.trend_plots.trajectory_figure`).
    """
    pi = np.asarray(shares, dtype=float)
    days, window, start = pi.size, detector.window, math.ceil(emergence)
    if fleet is None:
        counts, daily = design.sample(pi, devices, replicates, rng)
        _, null_daily = design.sample(np.zeros(days), devices, NULL_RUNS * replicates, rng)
    else:
        counts, daily, null_daily = fleet
    thr = detector.thresholds(design, devices, days)
    late = first_alarm(detector.alarms(daily, thr)[:, start:]) + start - emergence
    null_alarms = detector.alarms(null_daily, thr).sum() / (null_daily.shape[0] * days / DAYS_PER_MONTH)
    _, noise = design.window_moments(np.zeros(days), devices, 1)
    _, win = design.window_moments(np.zeros(days), devices, window)
    g = design.guarantee
    theory = design_theory(design, detector, pi, devices, emergence)
    row = {
        "design": design.name, "placement": design.placement,
        "engine": "exact law" if fleet is None else "devices", "epsilon": g.epsilon, "delta": g.delta,
        "epsilon_item": g.epsilon, "epsilon_person": g.person_epsilon, "guarantee": g.meaning,
        "sd_day": math.sqrt(noise[days // 2]), f"sd_{window}_days": math.sqrt(win[-1]),
        "delay_median": median_delay(late),
        "delay_theory": theory["delay"],
        "detected": float(np.isfinite(late).mean()),
        "false_alarms_month": float(null_alarms),
        "false_alarms_theory": theory["false_alarms"],
        "tracking_rmse": tracking_error(daily, counts),
        "tracking_theory": theory["tracking"],
        "smallest_growth": smallest_growth(detector, design, devices, days, growth_from, growth_after),
    }
    trajectory = pd.DataFrame({"design": design.name, "day": np.arange(days), "expected": devices * pi,
                               "estimate": daily[0], "sd": np.sqrt(theory["error_var"]), "threshold": thr / detector.lengths(days),
                               "meaning": g.meaning})
    return row, trajectory
