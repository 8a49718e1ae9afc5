"""Continual counters with Skellam noise in the secure sum, at ε per person over the run — docs/math.md §12.10.

A secure sum adds integers, so a counter A = L·R run under it needs an integer encoder and integer
noise. The binary tree's R is 0/1 already; the square root's is not, so :func:`integer_counter` rounds
s·R to integers (s the ``resolution``) and takes L = A·R⁻¹: still an exact factorisation L·R = A (R is
lower triangular with s on its diagonal), a slightly different counter. Each device adds R·u plus
Skellam(μ/n) on every coordinate; the sum reveals R·x + z, z_i i.i.d. Skellam(μ) exactly. Every window
estimate is then exactly unbiased with variance 2μ·‖L_b − L_{a−1}‖² (§12.2 with v = 2μ) plus the
devices' n·Σπ(1 − π), and the guarantee is central (ε, δ)-DP per person over the run from
:func:`~ldpsim.evaluation.privacy.skellam_continual.skellam_counter_epsilon`; μ is the smallest on a
bisection whose run is within ε.

Under the null (an unused item) a window's estimate is w·z: for the tree w ∈ {−1, 0, 1}^m, so it is
exactly Skellam(μ·‖w‖₁) (the law is symmetric and closed under sums) and its threshold is an exact
tail quantile; for other counters it is a weighted sum of Skellams whose threshold comes from the
Chernoff bound P[w·z > τ] ≤ exp(Σ_i μ(2 cosh(θw_i) − 2) − θτ), a stated upper bound on the
false-alarm probability.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import optimize, stats
from scipy.linalg import solve_triangular

from ldpsim.evaluation.privacy.skellam_continual import skellam_counter_epsilon
from ldpsim.evaluation.trends.designs import CounterDesign, DesignGuarantee, bisect_monotone, noise_multiplier
from ldpsim.evaluation.trends.integer_design import skellam_threshold
from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.continual import COUNTERS, Factorization
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime.errors import InputError

#: s of the square root's integer encoder round(s·R)
SQRT_RESOLUTION = 2
#: printed under a trends table: what the integer square root's false-alarm theory is
BOUND_NOTE = ("square root (integer): its false-alarm theory is the Chernoff upper bound its threshold is set from "
              "(docs/math.md §12.10), so the measured rate sits below it")


def integer_counter(counter: str, days: int, resolution: int = 1) -> Factorization:
    """The counter ``counter`` with integer encoder round(s·R) and decoder A·round(s·R)⁻¹ (module docstring).

    A counter whose s·R is already integer keeps its own L. Raises InputError when round(s·R) is not
    invertible lower-triangular (its diagonal rounds to 0).

    >>> f = integer_counter("square_root", 4, 8)
    >>> f.R[:, 0].tolist(), f.name
    ([8.0, 4.0, 3.0, 2.0], 'square root (integer, ×8)')
    """
    if counter not in COUNTERS:
        raise InputError(f"The 'counter' parameter must be one of {', '.join(COUNTERS)}. Got {counter!r} instead.")
    resolution = check_int("integer_counter", "resolution", resolution, low=1)
    f = COUNTERS[counter](check_int("integer_counter", "days", days, low=1))
    r = np.round(resolution * f.R)
    if np.array_equal(r, resolution * f.R) and resolution == 1:
        return f
    if r.shape[0] != r.shape[1] or np.any(np.triu(r, 1)) or np.any(np.diag(r) == 0):
        raise InputError(f"integer_counter: round({resolution}·R) of {counter!r} is not invertible lower-triangular; "
                         "raise the 'resolution'.")
    decoder = solve_triangular(r, np.triu(np.ones_like(r)), lower=True, trans="T").T   # (R⁻ᵀ·Aᵀ)ᵀ = A·R⁻¹
    return Factorization(f"{f.name} (integer, ×{resolution})", decoder, r)


@lru_cache(maxsize=32)
def skellam_counter_scale(counter: str, days: int, resolution: int, epsilon: float, delta: float) -> float:
    """μ per coordinate whose run is (ε, δ)-DP per person (to 2·10⁻⁴ relative, safe side; docs/math.md §12.10).

    The bracket starts at [1, 1.1] times the Gaussian mechanism's σ²/2 at Δ₂ = ‖R·1‖ (Skellam(μ) has
    variance 2μ) and widens by factors of 1.1 until it holds; 9 geometric bisection steps follow.
    """
    f = integer_counter(counter, days, resolution)
    start = (noise_multiplier(epsilon, delta) * f.l2_sensitivity(1.0, days).value) ** 2 / 2
    eps = lambda mu: skellam_counter_epsilon(f.R, mu, delta)      # noqa: E731 - one-line objective
    lo, hi = start, 1.1 * start
    while eps(lo) <= epsilon:
        lo /= 1.1
    while eps(hi) > epsilon:
        hi *= 1.1
    return bisect_monotone(eps, epsilon, lo, hi, decreasing=True, steps=9)


@dataclass(frozen=True, eq=False)
class SkellamCounterDesign(CounterDesign):
    """A continual counter with Skellam(μ) on every coordinate of the secure sum (module docstring).

    ``sigma`` = √(2μ), so the inherited ``window_moments`` are the exact ones (§12.2 with v = 2μ).

    Parameters
    ----------
    counter : Factorization
        With a non-negative integer R.
    placement : str
        ``"distributed"``.
    sigma : float
        √(2μ).
    guarantee : DesignGuarantee
    mu : float
        μ of each coordinate's total noise Skellam(μ).
    """

    mu: float = math.nan

    @property
    def name(self) -> str:
        """``"<counter>, distributed Skellam"``."""
        return f"{self.counter.name}, distributed Skellam"

    def _null_weights(self, lengths) -> np.ndarray:
        end = np.arange(len(lengths))
        return self.counter.window_weights(end - np.asarray(lengths) + 1, end)

    def null_thresholds(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """τ_t: exact Skellam(μ·‖w‖₁) tail when w ∈ {−1, 0, 1}^m, else the Chernoff bound (module docstring; §12.10)."""
        a = rate / tested
        w = self._null_weights(lengths)
        if np.allclose(np.abs(w) * (1 - np.abs(w)), 0.0, atol=1e-9):
            return skellam_threshold(self.mu * np.abs(w).sum(axis=1), a)
        return np.array([_chernoff_threshold(self.mu, row, a) for row in w])

    def null_alarm_probability(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """Exact P[Skellam(μ·‖w‖₁) > τ] (tree), else the Chernoff bound at τ; ≤ rate/tested either way."""
        w = self._null_weights(lengths)
        tau = self.null_thresholds(n, lengths, tested, rate)
        if np.allclose(np.abs(w) * (1 - np.abs(w)), 0.0, atol=1e-9):
            lam = self.mu * np.abs(w).sum(axis=1)
            return stats.skellam.sf(np.floor(tau), lam, lam)
        return np.array([_chernoff_bound(self.mu, row, t) for row, t in zip(w, tau)])

    def sample(self, shares, n: int, replicates: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """(true counts, released daily estimates), each (replicates, T): L·(R·x + z) differenced, exact law."""
        gen = as_generator(rng)
        pi = np.broadcast_to(np.asarray(shares, dtype=float), (replicates, self.counter.days))
        counts = gen.binomial(n, pi).astype(float)
        z = IntegerNoise("skellam", self.mu).sample((replicates, self.counter.R.shape[0]), gen)
        prefix = (counts @ self.counter.R.T + z) @ self.counter.L.T
        return counts, np.diff(prefix, axis=-1, prepend=0.0)


def _log_mgf(mu: float, w: np.ndarray, theta: float) -> float:
    """ln E e^{θ·w·z}, z_i i.i.d. Skellam(μ): Σ_i μ(2 cosh(θw_i) − 2)."""
    return float(mu * np.sum(2.0 * np.expm1(np.logaddexp(theta * w, -theta * w) - math.log(2.0))))


def _chernoff_bound(mu: float, w: np.ndarray, tau: float) -> float:
    """min over θ > 0 of exp(ln E e^{θ·w·z} − θτ) (an upper bound on P[w·z > τ])."""
    scale = math.sqrt(2 * mu * float(w @ w))
    res = optimize.minimize_scalar(lambda th: _log_mgf(mu, w, th) - th * tau, bounds=(0.0, 50.0 / scale),
                                   method="bounded", options={"xatol": 1e-10 / scale})
    return float(min(1.0, math.exp(res.fun)))


def _chernoff_threshold(mu: float, w: np.ndarray, level: float) -> float:
    """The least τ (to 10⁻⁶ sd) whose Chernoff bound is ≤ ``level``: min over θ of (ln E e^{θ·w·z} + ln(1/level))/θ."""
    scale = math.sqrt(2 * mu * float(w @ w))
    res = optimize.minimize_scalar(lambda th: (_log_mgf(mu, w, th) - math.log(level)) / th,
                                   bounds=(1e-6 / scale, 50.0 / scale), method="bounded",
                                   options={"xatol": 1e-12 / scale})
    return float(res.fun) + 1e-6 * scale


def skellam_counter_design(counter: str, epsilon: float, days: int, delta: float = DELTA_RELEASE,
                           resolution: int | None = None) -> SkellamCounterDesign:
    """``counter`` (``"binary_tree"`` or ``"square_root"``) with Skellam noise in the secure sum, at central ε
    per person over ``days`` (module docstring; docs/math.md §12.10). ``resolution`` defaults to 1 for the
    tree and :data:`SQRT_RESOLUTION` otherwise."""
    if counter not in ("binary_tree", "square_root"):
        raise InputError(f"The 'counter' parameter of skellam_counter_design must be 'binary_tree' or 'square_root'. "
                         f"Got {counter!r} instead.")
    epsilon = check_real("skellam_counter_design", "epsilon", epsilon, 0.0)
    days = check_int("skellam_counter_design", "days", days, low=1)
    s = (1 if counter == "binary_tree" else SQRT_RESOLUTION) if resolution is None else resolution
    f = integer_counter(counter, days, s)
    mu = skellam_counter_scale(counter, days, s, epsilon, delta)
    spent = skellam_counter_epsilon(f.R, mu, delta)
    meaning = (f"central (ε, δ)-DP after the secure sum of integer Skellam shares, per person over the "
               f"{days}-day run, any daily use of the item")
    return SkellamCounterDesign(f, "distributed", math.sqrt(2 * mu), DesignGuarantee(spent, delta, meaning, spent),
                                float(mu))
