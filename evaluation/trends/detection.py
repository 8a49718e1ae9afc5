"""Detecting a rising item: thresholds at a stated false-alarm rate, delays, tracking — docs/math.md §12.6.

The detector raises an alarm for an item on day t when its trailing-window estimate
S_t = x̂_{t−w+1} + … + x̂_t (fewer days at the start) exceeds a threshold τ_t. The null is an item
nobody uses (π = 0). With ``tested`` = items × 30 item-days a month and ``rate`` the expected false
alarms per month over the family, every item-day is tested at level a = rate/tested, so the expected
false alarms per month are at most ``rate``, and so is the chance of any false alarm in a month
(Bonferroni, as :mod:`ldpsim.mechanisms.discovery.false_discoveries`):

* Gaussian designs: S_t is exactly N(0, V_t) under the null, τ_t = √V_t·Φ⁻¹(1 − a);
* randomized response: the window's count of ones is exactly Bin(n·w_t, q) (fresh) or w_t·Bin(n, q)
  (memoized: under the null every device re-sends one memo) — τ from
  :func:`~ldpsim.mechanisms.discovery.false_discoveries.count_threshold`, exact;
* Skellam noise: S_t is exactly Skellam(w_t·μ) — τ its exact tail quantile.

Each design states its thresholds and its exact false-alarm probabilities (``null_thresholds``,
``null_alarm_probability``).

The probability of an alarm on day t for a rising item uses the exact mean and variance of S_t
(each design's ``window_moments``) in a normal law (n ≥ 10⁴ devices; CLT). The **theoretical delay**
is the first day whose alarm probability reaches ½ minus the emergence day; the **smallest detectable
growth** is the slope g (devices per day per day) of a count rising linearly from day e that gives
alarm probability ``power`` on day e + D: g = (τ + z_power·√V) / Σ_{s in window}(s − e)₊ with the
null variance V (exact for Gaussian designs; for randomized response to first order in g/n).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ldpsim.mechanisms._validation import check_int, check_real

#: item-days per month: the unit of "false alarms per month"
DAYS_PER_MONTH = 30


@dataclass(frozen=True)
class Detector:
    """A trailing-window threshold detector (module docstring).

    Parameters
    ----------
    window : int
        w ≥ 1 days summed.
    items : int
        Items monitored together (the family).
    rate : float
        Expected false alarms per month over the family (> 0).
    """

    window: int = 7
    items: int = 1
    rate: float = 0.05

    def __post_init__(self):
        check_int("Detector", "window", self.window, low=1)
        check_int("Detector", "items", self.items, low=1)
        check_real("Detector", "rate", self.rate, 0.0)

    @property
    def tested(self) -> int:
        """Item-days tested a month."""
        return self.items * DAYS_PER_MONTH

    @property
    def level(self) -> float:
        """a = rate / tested, the level of one item-day's test."""
        return self.rate / self.tested

    def lengths(self, days: int) -> np.ndarray:
        """w_t = min(w, t + 1): the days in each day's window."""
        return np.minimum(np.arange(days) + 1, self.window)

    def thresholds(self, design, n: int, days: int) -> np.ndarray:
        """τ_t on the estimated window sum, shape (T,): the design's ``null_thresholds`` (module docstring)."""
        return design.null_thresholds(n, self.lengths(days), self.tested, self.rate)

    def null_alarm_probability(self, design, n: int, days: int) -> np.ndarray:
        """The exact probability of a false alarm on each day for an item nobody uses (≤ level)."""
        return design.null_alarm_probability(n, self.lengths(days), self.tested, self.rate)

    def alarm_probability(self, design, shares, n: int) -> np.ndarray:
        """P[S_t > τ_t] for an item of daily shares π (normal law with the exact moments)."""
        pi = np.asarray(shares, dtype=float)
        mean, var = design.window_moments(pi, n, self.window)
        return stats.norm.sf((self.thresholds(design, n, pi.size) - mean) / np.sqrt(var))

    def alarms(self, daily, thresholds) -> np.ndarray:
        """Boolean alarms (…, T) of released daily estimates."""
        x = np.asarray(daily, dtype=float)
        c = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(x, axis=-1)], axis=-1)
        end = np.arange(1, x.shape[-1] + 1)
        return (c[..., end] - c[..., np.maximum(end - self.window, 0)]) > thresholds


def first_alarm(alarms) -> np.ndarray:
    """The first day with an alarm in each row, NaN where there is none."""
    a = np.asarray(alarms, dtype=bool)
    return np.where(a.any(axis=-1), a.argmax(axis=-1), np.nan)


def theory_delay(probability, emergence: float) -> float:
    """First day whose alarm probability reaches ½, minus the emergence day (NaN if none)."""
    hit = np.flatnonzero(np.asarray(probability) >= 0.5)
    return float(hit[0] - emergence) if hit.size else math.nan


def tracking_error(daily, counts) -> float:
    """Root mean squared error of the daily estimates over all rows and days."""
    return float(np.sqrt(np.mean((np.asarray(daily) - np.asarray(counts)) ** 2)))


def theory_tracking_error(design, shares, n: int) -> float:
    """√(mean over days of E(x̂_t − x_t)²) = √(mean of Var(x̂_t − x_t) + bias_t²), the exact tracking error (§12.6).

    The bias is the design's mean of x̂_t minus n·π_t (zero for the unbiased designs).
    """
    pi = np.asarray(shares, dtype=float)
    mean, var = design.window_moments(pi, n, 1)
    return float(np.sqrt(np.mean(var - n * pi * (1 - pi) + (mean - n * pi) ** 2)))


def smallest_growth(detector: Detector, design, n: int, days: int, emergence: int, after: int,
                    power: float = 0.5) -> float:
    """Smallest linear growth g (devices/day²) alarmed with probability ``power`` ``after`` days past emergence.

    Closed form of the module docstring; the window ending on day e + D must lie in the run.
    """
    emergence = check_int("smallest_growth", "emergence", emergence, low=0, high=days - 1)
    after = check_int("smallest_growth", "after", after, low=1, high=days - 1 - emergence)
    power = check_real("smallest_growth", "power", power, 0.0, 1.0)
    end = emergence + after
    _, var = design.window_moments(np.zeros(days), n, detector.window)
    tau = detector.thresholds(design, n, days)[end]
    s = np.arange(max(end - detector.window + 1, 0), end + 1)
    ramp = np.maximum(s - emergence, 0).sum()
    return float((tau + stats.norm.isf(1 - power) * np.sqrt(var[end])) / ramp)
