"""Release above a threshold by a trusted (hardware-isolated) aggregator — docs/math.md §9.4.

Two releases of exact per-item counts c (one item per device):

* :class:`SampleThreshold` — no noise: each device is kept with probability p, the sampled count
  S ~ Bin(c, p) is released (as S/p) only when S ≥ τ (the sample-and-threshold idea of TrieHH, Zhu et
  al. 2020, and of Bharadwaj & Cormode 2022). Its (ε, δ) is computed here exactly from p and τ.
* :func:`noisy_threshold_moments` — central integer noise Z then suppression: release c + Z only when
  c + Z ≥ τ; privacy is the noise's (the threshold is post-processing), bias and MSE exact from the
  noise's pmf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_int, check_item_ids, check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.discovery.sample_threshold import released_moments
from ldpsim.mechanisms.discovery.threshold_privacy import round_delta


@dataclass(frozen=True)
class SampleThreshold:
    """Sample each device w.p. ``rate``, release sampled counts ≥ ``threshold`` scaled by 1/rate.

    Privacy (docs/math.md §9.4), for one device added or removed (its item's count moves by one, no
    other count changes): with m other holders of the item, the output law is P_m (sampled count
    S ~ Bin(m, p) shown iff S ≥ τ) against P_{m+1}. Both hockey-stick divergences are computed exactly
    for every m up to where they vanish, and δ(ε) is their maximum over m. ε < ln(1/(1−p)) costs
    δ ≥ p·P(Bin(m, p) ≥ τ)-like mass, so ε is usually chosen at or above ln(1/(1−p)).

    Parameters
    ----------
    rate : float in (0, 1]
        Probability p that a device's report is kept.
    threshold : int ≥ 1
        Smallest sampled count τ that is released.

    Examples
    --------
    >>> st = SampleThreshold(rate=0.1, threshold=20)
    >>> round(st.epsilon_floor(), 4)
    0.1054
    >>> st.delta(0.2) < 1e-6
    True
    """

    rate: float
    threshold: int

    def __post_init__(self):
        object.__setattr__(self, "rate", check_real("SampleThreshold", "rate", self.rate, 0.0, 1.0,
                                                    high_open=False))
        object.__setattr__(self, "threshold", check_int("SampleThreshold", "threshold", self.threshold, low=1))

    def epsilon_floor(self) -> float:
        """ln(1/(1−p)): the likelihood ratio of a released count when the device was sampled out."""
        return math.inf if self.rate == 1.0 else -math.log1p(-self.rate)

    def delta(self, epsilon: float) -> float:
        """δ(ε) = max over the other holders m of the two hockey-stick divergences (exact; docs/math.md
        §9.4): one round of TrieHH++'s count release (:func:`~ldpsim.mechanisms.discovery.threshold_privacy.round_delta`).

        Parameters
        ----------
        epsilon : float ≥ 0

        Returns
        -------
        float
        """
        epsilon = check_real("SampleThreshold.delta", "epsilon", epsilon, 0.0, math.inf, low_open=False)
        return round_delta(epsilon, self.rate, self.threshold, counts=True)

    def epsilon(self, delta: float, tol: float = 1e-4) -> float:
        """Smallest ε (to ``tol``, rounded up) with :meth:`delta` ≤ ``delta``."""
        delta = check_real("SampleThreshold.epsilon", "delta", delta, 0.0, 1.0)
        if self.rate == 1.0:          # nothing sampled out: a count just above τ reveals its last holder
            return math.inf
        low, high = 0.0, max(1.0, 2 * self.epsilon_floor())
        while self.delta(high) > delta:
            low, high = high, 2 * high
            if high > 50:
                return math.inf
        while high - low > tol:
            mid = (low + high) / 2
            low, high = (low, mid) if self.delta(mid) <= delta else (mid, high)
        return high

    def release(self, true_counts, rng=None) -> np.ndarray:
        """Estimated counts: S/p where S ~ Bin(c, p) ≥ τ, else 0 (count-level, exact law).

        Parameters
        ----------
        true_counts : array_like of non-negative ints
        rng : numpy.random.Generator, int or None

        Returns
        -------
        numpy.ndarray of float
        """
        c = check_counts("SampleThreshold", true_counts)
        s = as_generator(rng).binomial(c, self.rate)
        return np.where(s >= self.threshold, s / self.rate, 0.0)

    def release_per_device(self, items, domain_size: int, rng=None) -> np.ndarray:
        """Per-device path: each device kept w.p. p by its own coin, kept items counted, thresholded and
        scaled — the same law as :meth:`release`.

        Parameters
        ----------
        items : array_like of ints in [0, domain_size)
        domain_size : int
        rng : numpy.random.Generator, int or None

        Returns
        -------
        numpy.ndarray of float
        """
        rng = as_generator(rng)
        x = check_item_ids("SampleThreshold", items, check_int("SampleThreshold", "domain_size", domain_size),
                           name="items")
        s = np.bincount(x[rng.random(x.size) < self.rate], minlength=domain_size)
        return np.where(s >= self.threshold, s / self.rate, 0.0)

    def moments(self, true_counts) -> tuple[np.ndarray, np.ndarray]:
        """Exact bias and MSE of :meth:`release` per item (docs/math.md §9.4).

        With S ~ Bin(c, p), the released S/p has the moments of S over the outcomes S ≥ τ
        (:func:`~ldpsim.mechanisms.discovery.sample_threshold.released_moments`).

        Returns
        -------
        bias, mse : numpy.ndarray of float
        """
        c = check_counts("SampleThreshold", true_counts).astype(float)
        p = self.rate
        m1, m2 = released_moments(c, p, self.threshold)
        mean = m1 / p
        second = m2 / (p * p)
        return mean - c, second - 2 * c * mean + c * c


def noisy_threshold_moments(noise: IntegerNoise, true_counts, threshold: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact bias and MSE of the release (c + Z)·1{c + Z ≥ τ} per item, Z ~ ``noise`` (docs/math.md §9.4).

    Parameters
    ----------
    noise : IntegerNoise
    true_counts : array_like of non-negative ints
    threshold : int

    Returns
    -------
    bias, mse : numpy.ndarray of float
    """
    c = check_counts("noisy_threshold_moments", true_counts)
    k, p, _ = noise.pmf_table()
    out_bias, out_mse = np.empty(c.size), np.empty(c.size)
    for value in np.unique(c):                       # one pass per distinct count (counts repeat a lot)
        x = value + k
        shown = x >= threshold
        est = np.where(shown, x, 0)
        sel = c == value
        out_bias[sel] = float(np.dot(p, est)) - value
        out_mse[sel] = float(np.dot(p, (est - value) ** 2.0))
    return out_bias, out_mse
