"""Designs for one item's daily counts over a run, at one ε per person over the run — docs/math.md §12.5.

Every design releases an estimate x̂_t of each day's count x_t (devices that used the item on day t;
a device adds 0 or 1 a day) and states its guarantee per person over the whole run, for a person whose
use of the item may differ on **every** day (the neighbouring relation of §12.4 with c = 1, k = T):

* ``fresh RR``: each device sends every day binary randomized response of its bit at ε_day; the T
  reports compose by the accountant's privacy-loss-distribution composition
  (:func:`~ldpsim.evaluation.privacy.composition.compose`) to the run's ε at δ: local (ε, δ)-DP.
* ``memoized RR``: each device draws one permanent response per value of its bit and re-sends it
  (§8.2): ε per value, same repetition pattern, 2·ε_report (the accountant's costliest spread over
  2 memo classes); between arbitrary histories the person-level ε is ∞ (§8.6).
* a **counter** (:mod:`ldpsim.mechanisms.continual`) with Gaussian noise, ``local`` (each device
  adds N(0, σ²) to its own R·u, so the sum carries N(0, n·σ²) per coordinate — exact) or
  ``distributed`` (secure aggregation: each device adds a share N(0, σ²/n), the sum carries N(0, σ²));
  σ = μ·Δ₂ with Δ₂ = ‖R·1‖ and μ the noise multiplier whose Gaussian mechanism is (ε, δ)-DP
  (:func:`~ldpsim.evaluation.privacy.continual.continual_guarantee`): local (ε, δ)-DP per device,
  or central (ε, δ)-DP after the secure sum.

Each design draws its released estimates from their exact aggregate law (:meth:`sample`), so n is
free (10⁷ devices cost what 10 do), and states the exact mean and covariance of any window sum of its
estimates given the daily shares (:meth:`window_moments`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from ldpsim.evaluation.privacy.accountant import losses
from ldpsim.evaluation.privacy.composition import compose
from ldpsim.evaluation.privacy.continual import ContinualGuarantee, continual_guarantee, gaussian_epsilon
from ldpsim.evaluation.privacy.person_level import person_level
from ldpsim.mechanisms import make
from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.mechanisms.continual import COUNTERS, Factorization
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.mechanisms.discovery.false_discoveries import count_threshold, expected_false
from ldpsim.runtime.errors import InputError

PLACEMENTS = ("local", "distributed")


@dataclass(frozen=True)
class DesignGuarantee:
    """What a design promises one person over the run (docs/math.md §12.5).

    Parameters
    ----------
    epsilon, delta : float
        The (ε, δ) of the statement.
    meaning : str
        Its scope in words (local or central, per person or per value, over how many days).
    person_epsilon : float
        ε between arbitrary histories of the person (∞ for pure memoization).
    """

    epsilon: float
    delta: float
    meaning: str
    person_epsilon: float


def bisect_monotone(f, target: float, lo: float, hi: float, decreasing: bool, steps: int = 30) -> float:
    """The parameter on the safe side of f = target (geometric bisection; f monotone)."""
    for _ in range(steps):
        mid = math.sqrt(lo * hi)
        above = f(mid) > target
        if above == decreasing:
            lo = mid
        else:
            hi = mid
    return hi if decreasing else lo


@lru_cache(maxsize=64)
def noise_multiplier(epsilon: float, delta: float) -> float:
    """μ = σ/Δ₂ whose Gaussian mechanism is (ε, δ)-DP, to 10⁻⁵ relative on the safe side (§12.5).

    The search reads ε on a coarse pessimistic grid (step 10⁻³: ε overstated, μ never too small); the
    design's guarantee is then read at the accountant's finer grid.
    """
    return bisect_monotone(lambda mu: gaussian_epsilon(1.0, mu, delta, discretization=1e-3), epsilon, 1e-2, 1e3,
                   decreasing=True)


#: privacy-loss grid step of the fresh reports' composition (ε of one report is rounded up to it)
RR_GRID = 1e-4


@lru_cache(maxsize=64)
def fresh_report_epsilon(epsilon: float, days: int, delta: float) -> float:
    """ε_day: the largest ε of one report whose ``days``-fold PLD composition is ≤ ε at δ (§12.5)."""
    return bisect_monotone(lambda e: compose([(e, 0.0)] * days, delta, RR_GRID).epsilon, epsilon, 1e-6, epsilon,
                   decreasing=False)


@dataclass(frozen=True, eq=False)
class CounterDesign:
    """A continual counter with Gaussian noise, local or distributed (module docstring).

    Parameters
    ----------
    counter : Factorization
    placement : {"local", "distributed"}
    sigma : float
        Per-device sd (local) or the secure sum's sd (distributed).
    guarantee : DesignGuarantee
    """

    counter: Factorization
    placement: str
    sigma: float
    guarantee: DesignGuarantee

    @property
    def name(self) -> str:
        """``"<counter>, <placement> Gaussian"``."""
        return f"{self.counter.name}, {self.placement} Gaussian"

    def noise_variance(self, n: int) -> float:
        """v of one coordinate of the aggregate's noise: n·σ² (local) or σ² (distributed)."""
        return n * self.sigma ** 2 if self.placement == "local" else self.sigma ** 2

    def window_moments(self, shares, n: int, window: int) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of every day's trailing-window estimate (docs/math.md §12.5).

        Mean n·Σπ_s; variance v·‖L_t − L_{a−1}‖² (the noise, §12.2) + n·Σπ_s(1 − π_s) (the devices).
        """
        pi = np.asarray(shares, dtype=float)
        end = np.arange(pi.size)
        start = np.maximum(end - window + 1, 0)
        mean = n * trailing_sum(pi, window)
        var = self.counter.window_variance(self.noise_variance(n), start, end) + n * trailing_sum(pi * (1 - pi), window)
        return mean, var

    def null_thresholds(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """τ_t = √V_t·Φ⁻¹(1 − rate/tested): S_t is exactly N(0, V_t) for an unused item (§12.6)."""
        end = np.arange(len(lengths))
        var = self.counter.window_variance(self.noise_variance(n), end - np.asarray(lengths) + 1, end)
        return gaussian_thresholds(0.0, var, rate / tested)

    def null_alarm_probability(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """Exactly rate/tested on every day."""
        return np.full(len(lengths), rate / tested)

    def sample(self, shares, n: int, replicates: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """(true counts, released daily estimates), each (replicates, T), from their exact law."""
        gen = as_generator(rng)
        pi = np.broadcast_to(np.asarray(shares, dtype=float), (replicates, self.counter.days))
        counts = gen.binomial(n, pi).astype(float)
        _, daily = self.counter.release(counts, "gaussian", math.sqrt(self.noise_variance(n)), gen)
        return counts, daily


@dataclass(frozen=True, eq=False)
class RRDesign:
    """Binary randomized response of "used the item today", fresh each day or memoized (module docstring).

    Parameters
    ----------
    epsilon_report : float
        ε of one report.
    memoized : bool
    days : int
    guarantee : DesignGuarantee
    """

    epsilon_report: float
    memoized: bool
    days: int
    guarantee: DesignGuarantee

    @property
    def name(self) -> str:
        """``"memoized RR"`` or ``"fresh RR"``."""
        return "memoized RR" if self.memoized else "fresh RR"

    @property
    def placement(self) -> str:
        """Always ``"local"``."""
        return "local"

    @property
    def p(self) -> float:
        """P[report 1 │ bit 1] = e^ε/(1 + e^ε)."""
        return rr_pair(self.epsilon_report)[0]

    @property
    def q(self) -> float:
        """P[report 1 │ bit 0] = 1 − p."""
        return 1.0 - self.p

    def estimate(self, ones, n: int):
        """Unbiased count (ones − n·q)/(p − q) (docs/math.md §12.5)."""
        return (np.asarray(ones, dtype=float) - n * self.q) / (self.p - self.q)

    def window_moments(self, shares, n: int, window: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact mean and variance of every day's trailing-window estimate (docs/math.md §12.5).

        A device reports 1 on day s with probability μ_s = π_s·p + (1 − π_s)·q. Fresh: days independent.
        Memoized: two days s ≠ s′ of one device are both 1 with probability
        qp + q(1 − p)(1 − π_s)(1 − π_s′) + (1 − q)p·π_s·π_s′ (the memo pair (a, b) of values 0 and 1).
        """
        pi = np.asarray(shares, dtype=float)
        p, q = self.p, self.q
        mu = pi * p + (1 - pi) * q
        mean = n * trailing_sum(pi, window)
        if not self.memoized:
            var_ones = n * trailing_sum(mu * (1 - mu), window)
        else:
            both = q * p + q * (1 - p) * np.outer(1 - pi, 1 - pi) + (1 - q) * p * np.outer(pi, pi)
            cov = both - np.outer(mu, mu)
            np.fill_diagonal(cov, mu * (1 - mu))
            t = np.arange(pi.size)
            inside = (t[None, :] <= t[:, None]) & (t[None, :] > t[:, None] - window)  # [end, day]
            var_ones = n * np.einsum("ea,ab,eb->e", inside, cov, inside)
        return mean, var_ones / (p - q) ** 2

    def _count_thresholds(self, n: int, lengths, tested: int, rate: float) -> tuple[np.ndarray, np.ndarray]:
        """The least count of ones t alarmed (tested·P[ones ≥ t] ≤ rate, exact) and the ones' trials per day."""
        w = np.asarray(lengths)
        trials = np.full(w.size, n) if self.memoized else n * w
        cut = {m: count_threshold(m, self.q, tested, rate) for m in np.unique(trials).tolist()}
        return np.array([cut[m] for m in trials.tolist()]), trials

    def null_thresholds(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """τ on the window sum: ones ≥ t (fresh: ones of the window ~ Bin(n·w, q); memoized: the same
        Bin(n, q) every day, so S = w·x̂) — half a count below t, so rounding cannot move an alarm (§12.6)."""
        t, trials = self._count_thresholds(n, lengths, tested, rate)
        w = np.asarray(lengths)
        ones = t - 0.5
        return w * self.estimate(ones, n) if self.memoized else (ones - trials * self.q) / (self.p - self.q)

    def null_alarm_probability(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """P[Bin(trials, q) ≥ t] on each day, exact (≤ rate/tested)."""
        t, trials = self._count_thresholds(n, lengths, tested, rate)
        return np.array([expected_false(m, self.q, 1, c) for m, c in zip(trials.tolist(), t.tolist())])

    def sample(self, shares, n: int, replicates: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """(true counts, released daily estimates), each (replicates, T), from their exact law.

        Fresh: ones_t = Bin(x_t, p) + Bin(n − x_t, q). Memoized: the devices' memo pairs (a, b) are
        multinomial once; each day U_ab ~ Bin(N_ab, π_t) of a pair's devices hold 1 and send b, the
        others send a.
        """
        gen = as_generator(rng)
        pi = np.broadcast_to(np.asarray(shares, dtype=float), (replicates, self.days))
        p, q = self.p, self.q
        if not self.memoized:
            counts = gen.binomial(n, pi)
            ones = gen.binomial(counts, p) + gen.binomial(n - counts, q)
            return counts.astype(float), self.estimate(ones, n)
        law = [(1 - q) * (1 - p), (1 - q) * p, q * (1 - p), q * p]      # (a, b) = 00, 01, 10, 11
        pairs = gen.multinomial(n, law, size=replicates)                # (replicates, 4)
        holders = gen.binomial(pairs[:, :, None], pi[:, None, :])       # U_ab per day
        a = np.array([0, 0, 1, 1])[None, :, None]
        b = np.array([0, 1, 0, 1])[None, :, None]
        ones = (a * (pairs[:, :, None] - holders) + b * holders).sum(axis=1)
        return holders.sum(axis=1).astype(float), self.estimate(ones, n)


def gaussian_thresholds(mean, var, level: float) -> np.ndarray:
    """τ = mean + √var·Φ⁻¹(1 − level): exceeded with probability ``level`` by an N(mean, var) window sum (§12.6)."""
    return np.asarray(mean, dtype=float) + np.sqrt(var) * stats.norm.isf(level)


def rr_pair(epsilon: float) -> tuple[float, float]:
    """(p, q) of binary randomized response at ε: P[1 │ 1] = e^ε/(1 + e^ε), P[1 │ 0] = 1 − p."""
    p = 1.0 / (1.0 + math.exp(-epsilon))
    return p, 1.0 - p


def trailing_sum(values: np.ndarray, window: int) -> np.ndarray:
    """Σ of the last ``window`` values ending at each day (fewer at the start)."""
    c = np.concatenate([[0.0], np.cumsum(values)])
    end = np.arange(1, values.size + 1)
    return c[end] - c[np.maximum(end - window, 0)]


@lru_cache(maxsize=64)
def _calibrated(counter: str, epsilon: float, days: int, delta: float) -> tuple[Factorization, float, ContinualGuarantee]:
    f = COUNTERS[counter](days)
    sigma = noise_multiplier(epsilon, delta) * f.l2_sensitivity(1.0, days).value
    return f, float(sigma), continual_guarantee(f, "gaussian", sigma, 1.0, days, delta)


def counter_design(counter: str, placement: str, epsilon: float, days: int,
                   delta: float = DELTA_RELEASE) -> CounterDesign:
    """The ``counter`` (a name of :data:`~ldpsim.mechanisms.continual.COUNTERS`) at ε per person over ``days``.

    σ = μ·Δ₂ with Δ₂ = ‖R·1‖ (a person who may use the item every day; §12.4) and μ =
    :func:`noise_multiplier`; the guarantee is read back from
    :func:`~ldpsim.evaluation.privacy.continual.continual_guarantee`.
    """
    if counter not in COUNTERS:
        raise InputError(f"The 'counter' parameter must be one of {', '.join(COUNTERS)}. Got {counter!r} instead.")
    if placement not in PLACEMENTS:
        raise InputError(f"The 'placement' parameter must be one of {', '.join(PLACEMENTS)}. Got {placement!r} instead.")
    epsilon = check_real("counter_design", "epsilon", epsilon, 0.0)
    days = check_int("counter_design", "days", days, low=1)
    f, sigma, g = _calibrated(counter, epsilon, days, delta)
    scope = ("local (ε, δ)-DP of each device's release" if placement == "local"
             else "central (ε, δ)-DP after the secure sum")
    meaning = f"{scope}, per person over the {days}-day run, any daily use of the item"
    return CounterDesign(f, placement, float(sigma), DesignGuarantee(g.epsilon, g.delta, meaning, g.epsilon))


def rr_design(memoized: bool, epsilon: float, days: int, delta: float = DELTA_RELEASE) -> RRDesign:
    """Binary RR at ε per person over ``days`` (fresh: PLD composition at δ; memoized: ε per value).

    Fresh: ε_day = :func:`fresh_report_epsilon`. Memoized: ε_report = ε/2, so the accountant's
    costliest spread of ``days`` reports over 2 memo classes is ε (same repetition pattern, δ = 0); the
    person-level ε of :func:`~ldpsim.evaluation.privacy.person_level.person_level` is ∞.
    """
    epsilon = check_real("rr_design", "epsilon", epsilon, 0.0)
    days = check_int("rr_design", "days", days, low=1)
    if not memoized:
        e = fresh_report_epsilon(epsilon, days, delta)
        spent = compose([(e, 0.0)] * days, delta, RR_GRID)
        meaning = f"local (ε, δ)-DP per person over the {days}-day run (PLD composition of {days} reports)"
        return RRDesign(e, False, days, DesignGuarantee(spent.epsilon, delta, meaning, spent.epsilon))
    mech = make("grr", epsilon=epsilon / 2, domain_size=2)
    per_value = float(sum(eps * k for eps, k in losses(mech, days, classes=2).items()))
    meaning = (f"ε-LDP per value, same repetition pattern, over the {days}-day run; "
               "between arbitrary histories ∞ (a change of report proves a change of use)")
    return RRDesign(epsilon / 2, True, days,
                    DesignGuarantee(per_value, 0.0, meaning, person_level(mech, days).epsilon))
