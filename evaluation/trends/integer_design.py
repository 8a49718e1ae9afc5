"""Fresh daily counts under secure aggregation with Skellam noise, at ε per person over the run — docs/math.md §12.5.

Secure aggregation sums integers, so its noise is integer: each device adds Skellam(μ/n) to its
0/1 count of the day, and the secure sum reveals x_t + Skellam(μ) (the Skellam law is closed under
sums, :mod:`ldpsim.mechanisms.aggregation.integer_noise`). A person who may use the item on every day
moves each of the T days' sums by at most 1, so the run is the T-fold composition of the Skellam
mechanism with sensitivity 1: its central (ε, δ) is
:func:`~ldpsim.evaluation.privacy.trust_accounting.noise_epsilon` with T compositions (dp-accounting's
PLD of the exact pmf, the truncated tail added to δ), and μ is the smallest on a bisection whose run
is within ε. The window of w days carries Skellam(w·μ) exactly, variance 2wμ.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from ldpsim.evaluation.privacy.trust_accounting import noise_epsilon
from ldpsim.evaluation.trends.designs import DesignGuarantee, bisect_monotone, trailing_sum
from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.deltas import DELTA_RELEASE


@lru_cache(maxsize=16)
def skellam_scale(epsilon: float, days: int, delta: float) -> float:
    """μ of Skellam(μ) whose ``days``-fold composition at sensitivity 1 is (ε, δ)-DP (to 10⁻⁵ relative, safe side)."""
    return bisect_monotone(lambda mu: noise_epsilon(IntegerNoise("skellam", mu), delta, days), epsilon, 1e-2, 1e6,
                   decreasing=True, steps=25)


def skellam_threshold(lam, level: float) -> np.ndarray:
    """τ + ½ with τ the least integer such that P[Skellam(λ) > τ] ≤ ``level``, for each λ (exact; §12.6).

    The statistic is an integer: half a count above τ, no rounding of it can move an alarm. τ is found by
    integer bisection on the survival function (scipy's Skellam quantile does not converge for large λ).
    """
    lam = np.asarray(lam, dtype=float)
    sd = np.sqrt(2 * lam)
    sf = lambda t: np.where(lam > 0, stats.skellam.sf(t, np.maximum(lam, 1e-300), np.maximum(lam, 1e-300)), t < 0)  # noqa: E731
    low = -np.ceil(40 * sd) - 1                     # P[X > low] > level for any level < 1 − 10⁻³⁰⁰
    high = np.ceil(sd * stats.norm.isf(level)) + 1
    while (short := sf(high) > level).any():        # double until P[X > high] ≤ level
        low, high = np.where(short, high, low), np.where(short, 2 * high + 1, high)
    while (high - low > 1).any():                   # keep P[X > low] > level ≥ P[X > high]
        mid = np.floor((low + high) / 2)
        ok = sf(mid) <= level
        low, high = np.where(ok, low, mid), np.where(ok, mid, high)
    return high + 0.5


@dataclass(frozen=True, eq=False)
class SkellamDailyDesign:
    """Fresh daily counts with Skellam(μ) in the secure sum (module docstring).

    Parameters
    ----------
    mu : float
        μ of the total noise Skellam(μ) of one day's sum.
    days : int
    guarantee : DesignGuarantee
    """

    mu: float
    days: int
    guarantee: DesignGuarantee

    name = "fresh daily, distributed Skellam"
    placement = "distributed"

    def window_moments(self, shares, n: int, window: int) -> tuple[np.ndarray, np.ndarray]:
        """Mean n·Σπ and variance 2·w_t·μ + n·Σπ(1 − π) of every day's trailing-window estimate (§12.5)."""
        pi = np.asarray(shares, dtype=float)
        w = np.minimum(np.arange(pi.size) + 1, window)
        return n * trailing_sum(pi, window), 2 * self.mu * w + n * trailing_sum(pi * (1 - pi), window)

    def null_thresholds(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """τ: the least integer with tested·P[Skellam(w·μ) > τ] ≤ rate, exact (§12.6)."""
        return skellam_threshold(np.asarray(lengths, dtype=float) * self.mu, rate / tested)

    def null_alarm_probability(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """P[Skellam(w·μ) > τ] on each day, exact (≤ rate/tested)."""
        w = np.asarray(lengths, dtype=float)
        return stats.skellam.sf(np.floor(self.null_thresholds(n, lengths, tested, rate)), w * self.mu, w * self.mu)

    def sample(self, shares, n: int, replicates: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """(true counts, released daily sums), each (replicates, T): Bin(n, π_t) + Skellam(μ), exact."""
        gen = as_generator(rng)
        pi = np.broadcast_to(np.asarray(shares, dtype=float), (replicates, self.days))
        counts = gen.binomial(n, pi)
        noise = IntegerNoise("skellam", self.mu).sample(counts.shape, gen)
        return counts.astype(float), (counts + noise).astype(float)


def skellam_design(epsilon: float, days: int, delta: float = DELTA_RELEASE) -> SkellamDailyDesign:
    """Fresh daily counts with Skellam noise at central ε per person over ``days`` (module docstring)."""
    epsilon = check_real("skellam_design", "epsilon", epsilon, 0.0)
    days = check_int("skellam_design", "days", days, low=1)
    mu = skellam_scale(epsilon, days, delta)
    spent = noise_epsilon(IntegerNoise("skellam", mu), delta, days)
    meaning = (f"central (ε, δ)-DP after the secure sum of integer Skellam shares, per person over the "
               f"{days}-day run, any daily use of the item")
    return SkellamDailyDesign(float(mu), days, DesignGuarantee(spent, delta, meaning, spent))
