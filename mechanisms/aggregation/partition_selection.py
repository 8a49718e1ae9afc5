"""Differentially private partition selection: which keys of an open-domain histogram may be released —
docs/math.md §9.13.

A person contributes to at most L0 keys (``max_partitions``) and at most L∞ (``max_contribution``) to each
key's count. A key that only one person holds must stay unreleased except with a small probability; a key
many people hold should be released. Three strategies, with the (ε, δ) they guarantee per person for one
release (add or remove one person):

* :class:`TruncatedGeometric` — the optimal key-only selection (Desfontaines, Voss, Gipson, Mandayam,
  PoPETs 2022): a key held by n persons is kept with probability π(n), the largest sequence with
  π(0) = 0, π(n) ≤ e^ε₁·π(n−1) + δ₁ and 1 − π(n−1) ≤ e^ε₁·(1 − π(n)) + δ₁ (closed form in §9.13),
  at ε₁ = ε/L0 and δ₁ = 1 − (1 − δ)^(1/L0). It releases the key set, no counts.
* :class:`NoisyThreshold` with Laplace noise — release c + Lap(b) when it is at least T; b = L0·L∞/ε,
  T such that a key held by one person (count ≤ L∞) is released with probability δ₁.
* :class:`NoisyThreshold` with Gaussian noise — the same with N(0, σ²): σ is the analytic Gaussian
  mechanism's (Balle & Wang, ICML 2018) for (ε, δ/2) at L2 sensitivity √L0·L∞, and T releases a
  one-person key with probability δ₁ = 1 − (1 − δ/2)^(1/L0).

:func:`partition_selection` builds each from (ε, δ, L0, L∞) with the same split of δ as Google's
differential-privacy library (the ``pipeline-dp`` package's partition selection); the test suite
checks the keep probabilities and noise scales against it where it is installed.

>>> s = partition_selection("laplace", epsilon=1.0, delta=1e-5, max_partitions=2)
>>> round(s.scale, 6), round(s.threshold, 4)
(2.0, 24.0258)
>>> float(partition_selection("truncated_geometric", 1.0, 1e-5, 2).keep_probability(1))
5.000012500062501e-06
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.runtime.errors import InputError

#: partition-selection strategies of :func:`partition_selection`
KINDS = ("truncated_geometric", "laplace", "gaussian")
#: noise families of :class:`NoisyThreshold`
NOISES = ("laplace", "gaussian")


def per_key_delta(delta: float, keys: int) -> float:
    """δ₁ = 1 − (1 − δ)^(1/keys): each of ``keys`` independent events at δ₁, none happens w.p. 1 − δ
    (docs/math.md §9.13)."""
    return -math.expm1(math.log1p(-delta) / keys)


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism N(0, σ²) at L2 ``sensitivity`` Δ (Balle & Wang 2018, Thm 8):
    Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ) (docs/math.md §9.13)."""
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return float(stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b))


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest σ with :func:`gaussian_delta` (σ, ε, Δ) ≤ δ (the analytic Gaussian mechanism)."""
    high = sensitivity
    while gaussian_delta(high, epsilon, sensitivity) > delta:
        high *= 2
    sigma = float(optimize.brentq(lambda s: gaussian_delta(s, epsilon, sensitivity) - delta, high / 2 ** 60, high,
                                  xtol=1e-14 * high, rtol=1e-14, maxiter=500))
    while gaussian_delta(sigma, epsilon, sensitivity) > delta:     # the root's rounding: stay on the private side
        sigma *= 1 + 1e-12
    return sigma


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float) -> float:
    """The smallest ε ≥ 0 with :func:`gaussian_delta` (σ, ε, Δ) ≤ δ."""
    if gaussian_delta(sigma, 0.0, sensitivity) <= delta:
        return 0.0
    high = 1.0
    while gaussian_delta(sigma, high, sensitivity) > delta:
        high *= 2
    eps = float(optimize.brentq(lambda e: gaussian_delta(sigma, e, sensitivity) - delta, 0.0, high,
                                xtol=1e-13, rtol=1e-13, maxiter=500))
    while gaussian_delta(sigma, eps, sensitivity) > delta:       # the root's rounding: stay on the private side
        eps += 1e-12 * max(eps, 1.0)
    return eps


@dataclass(frozen=True)
class TruncatedGeometric:
    """Keep a key held by n persons with probability π(n) (module docstring; docs/math.md §9.13).

    Parameters
    ----------
    epsilon, delta : float
        The per-key (ε₁, δ₁): one person added or removed changes the key's n by one.
    """

    epsilon: float
    delta: float

    def __post_init__(self):
        check_real("TruncatedGeometric", "epsilon", self.epsilon, 0.0, 50.0)
        check_real("TruncatedGeometric", "delta", self.delta, 0.0, 1.0)

    def keep_probability(self, persons) -> np.ndarray:
        """π(n) for every entry of ``persons`` (closed form of docs/math.md §9.13: geometric growth
        δ₁(e^{nε₁} − 1)/(e^ε₁ − 1) up to the crossing n*, then 1 − π decays by e^−ε₁ to 1)."""
        n = np.asarray(persons, dtype=float)
        e, d = self.epsilon, self.delta
        growth = math.expm1(e)
        cross = (1 - d) / (math.exp(e) + 1)                  # the first branch is the smaller while π ≤ this
        n_star = math.floor(math.log1p(cross * growth / d) / e) + 1
        with np.errstate(over="ignore"):
            rising = d * np.expm1(np.minimum(n, n_star) * e) / growth
        fixed = -d / growth                                  # the fixed point of 1 − π(n) = e^−ε(1 − π(n−1) − δ)
        top = d * math.expm1(n_star * e) / growth
        falling = 1 - (fixed + np.exp(-(n - n_star) * e) * (1 - top - fixed))
        return np.clip(np.where(n <= n_star, rising, falling), 0.0, 1.0)

    def select(self, persons, rng=None) -> np.ndarray:
        """Which keys are kept (bool array), each independently with probability π(n)."""
        p = self.keep_probability(persons)
        return as_generator(rng).random(p.shape) < p


@dataclass(frozen=True)
class NoisyThreshold:
    """Release x + Z, Z ~ Laplace(0, ``scale``) or N(0, ``scale``²), when x + Z ≥ ``threshold`` and x > 0
    (a key nobody holds has no row to release) — docs/math.md §9.13.

    Parameters
    ----------
    noise : {"laplace", "gaussian"}
    scale : float > 0
        Laplace b, or Gaussian σ (counts).
    threshold : float
        T (counts).
    """

    noise: str
    scale: float
    threshold: float

    def __post_init__(self):
        if self.noise not in NOISES:
            raise InputError(f"The 'noise' parameter of NoisyThreshold must be one of {', '.join(NOISES)}. "
                             f"Got {self.noise!r} instead.")
        check_real("NoisyThreshold", "scale", self.scale, 0.0, math.inf)
        check_real("NoisyThreshold", "threshold", self.threshold, -math.inf, math.inf)

    def noise_variance(self) -> float:
        """Var Z: 2b² (Laplace) or σ² (Gaussian)."""
        return 2 * self.scale ** 2 if self.noise == "laplace" else self.scale ** 2

    def _sf(self, x) -> np.ndarray:
        """P(Z ≥ x)."""
        x = np.asarray(x, dtype=float)
        if self.noise == "gaussian":
            return stats.norm.sf(x / self.scale)
        return np.where(x >= 0, 0.5 * np.exp(-np.abs(x) / self.scale), 1 - 0.5 * np.exp(-np.abs(x) / self.scale))

    def keep_probability(self, counts) -> np.ndarray:
        """P(c + Z ≥ T) for every count c > 0 (0 where c = 0)."""
        c = np.asarray(counts, dtype=float)
        return np.where(c > 0, self._sf(self.threshold - c), 0.0)

    def sample_noise(self, size, rng=None) -> np.ndarray:
        """Draws of Z."""
        rng = as_generator(rng)
        if self.noise == "gaussian":
            return rng.normal(0.0, self.scale, size)
        return rng.laplace(0.0, self.scale, size)

    def release(self, counts, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """(kept, values): which keys are released and their noisy counts (NaN where not released)."""
        c = np.asarray(counts, dtype=float)
        noisy = c + self.sample_noise(c.shape, rng)
        kept = (c > 0) & (noisy >= self.threshold)
        return kept, np.where(kept, noisy, np.nan)


def threshold_for(noise: str, scale: float, delta_key: float, max_contribution: float = 1.0) -> float:
    """T with P(L∞ + Z ≥ T) = δ₁: a key held by one person (count ≤ L∞) is released w.p. at most δ₁."""
    if noise == "gaussian":
        return max_contribution + scale * float(stats.norm.isf(delta_key))
    if not 0 < delta_key < 0.5:
        raise InputError(f"threshold_for: the per-key δ must be in (0, 0.5) for Laplace noise. Got {delta_key:g}.")
    return max_contribution + scale * math.log(1 / (2 * delta_key))


def partition_selection(kind: str, epsilon: float, delta: float, max_partitions: int = 1,
                        max_contribution: int = 1):
    """One release's partition selection at (ε, δ) per person (module docstring; docs/math.md §9.13).

    Parameters
    ----------
    kind : {"truncated_geometric", "laplace", "gaussian"}
    epsilon : float in (0, 50]
    delta : float in (0, 1)
    max_partitions : int ≥ 1
        L0: keys one person contributes to.
    max_contribution : int ≥ 1
        L∞: the most one person adds to one key's count (``truncated_geometric`` counts persons: 1).

    Returns
    -------
    TruncatedGeometric or NoisyThreshold
    """
    if kind not in KINDS:
        raise InputError(f"The 'kind' parameter of partition_selection must be one of {', '.join(KINDS)}. "
                         f"Got {kind!r} instead.")
    epsilon = check_real("partition_selection", "epsilon", epsilon, 0.0, 50.0)
    delta = check_real("partition_selection", "delta", delta, 0.0, 1.0)
    l0 = check_int("partition_selection", "max_partitions", max_partitions, low=1)
    linf = check_int("partition_selection", "max_contribution", max_contribution, low=1)
    if kind == "truncated_geometric":
        if linf != 1:
            raise InputError(f"The 'max_contribution' parameter of a truncated_geometric selection must be 1 "
                             f"(it counts persons). Got {linf} instead.")
        return TruncatedGeometric(epsilon / l0, per_key_delta(delta, l0))
    if kind == "laplace":
        scale = l0 * linf / epsilon
        return NoisyThreshold("laplace", scale, threshold_for("laplace", scale, per_key_delta(delta, l0), linf))
    scale = gaussian_sigma(epsilon, delta / 2, math.sqrt(l0) * linf)
    return NoisyThreshold("gaussian", scale, threshold_for("gaussian", scale, per_key_delta(delta / 2, l0), linf))
