"""Confidential aggregation: devices upload in the clear to an attested aggregator in a trusted execution
environment (TEE), which bounds each person's contribution, adds noise and releases only the keys that pass
DP partition selection (a thresholded open-domain histogram) — docs/math.md §9.13.

* :func:`bound_contributions` — the aggregator's bounding step: at most L0 distinct keys per person (chosen
  uniformly among the person's distinct keys) and at most L∞ per key.
* :class:`TeeDesign` — one release's noise (Laplace b or Gaussian σ), threshold T and bounds (L0, L∞); its
  release from raw contributions or from bounded counts, the exact bias and MSE of a released count, and
  the person-level (ε, δ) of R releases (one a night) at any δ: the noise's privacy-loss distribution
  composed over R·L0 unit changes of size L∞ (Gaussian: closed form at L2 sensitivity √(R·L0)·L∞), plus
  δ_T = 1 − (1 − p₁)^(R·L0), p₁ the chance that a key held by one person passes the threshold.
* :func:`calibrate_tee` — the design whose run meets a target (ε, δ) per person: δ/2 to the threshold,
  δ/2 to the noise (as the one-release split of
  :func:`~ldpsim.mechanisms.aggregation.partition_selection.partition_selection`).

If attestation fails (the code in the enclave is not the code that was audited) or the enclave is breached,
the aggregator sees every upload in the clear: no guarantee is left on the device (:data:`IF_BREACHED`).

>>> tee = calibrate_tee("gaussian", epsilon=1.0, delta=1e-9, releases=30)
>>> round(tee.epsilon(30, 1e-9), 3) <= 1.0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.mechanisms.aggregation.partition_selection import (NOISES, NoisyThreshold, gaussian_epsilon, gaussian_sigma,
                                                               per_key_delta, threshold_for)
from ldpsim.runtime.errors import InputError

#: what is left for a device when the enclave's attestation fails or it is breached: clear uploads
IF_BREACHED = (math.inf, 0.0, "attestation fails or the enclave is breached: the uploads are in the clear")
#: ε reported as unbounded above this (the accountants' range ends at 50)
EPS_CAP = 50.0


def bound_contributions(persons, keys, max_keys: int, max_per_key: int, rng=None):
    """The aggregator's contribution bounding: each person keeps at most ``max_keys`` (L0) of their distinct
    keys, chosen uniformly at random, and adds at most ``max_per_key`` (L∞) to each (docs/math.md §9.13).

    Parameters
    ----------
    persons, keys : array_like of int, same length
        One row per contribution (a typed occurrence): who and which key.
    max_keys, max_per_key : int ≥ 1
    rng : numpy.random.Generator, int or None

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        person, key, and bounded count of each kept (person, key) pair.
    """
    l0 = check_int("bound_contributions", "max_keys", max_keys, low=1)
    linf = check_int("bound_contributions", "max_per_key", max_per_key, low=1)
    p, k = np.asarray(persons, dtype=np.int64), np.asarray(keys, dtype=np.int64)
    if p.shape != k.shape or p.ndim != 1:
        raise InputError(f"The 'persons' and 'keys' parameters of bound_contributions must be 1-d arrays of one "
                         f"length. Got shapes {p.shape} and {k.shape} instead.")
    pairs, count = _distinct_pairs(p, k)
    priority = as_generator(rng).random(len(pairs))
    order = np.lexsort((priority, pairs[:, 0]))               # each person's pairs in a random order
    pairs, count = pairs[order], count[order]
    first = np.r_[0, np.flatnonzero(np.diff(pairs[:, 0])) + 1]
    rank = np.arange(len(pairs)) - np.repeat(first, np.diff(np.r_[first, len(pairs)]))
    keep = rank < l0
    return pairs[keep, 0], pairs[keep, 1], np.minimum(count[keep], linf)


def _distinct_pairs(p: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (person, key) rows in lexicographic order and their counts (np.unique over rows), through
    one int64 code per row when the id ranges allow it (an order of magnitude faster than unique over rows)."""
    if p.size == 0:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    p0, k0 = int(p.min()), int(k.min())
    base = int(k.max()) - k0 + 1
    if (int(p.max()) - p0 + 1) * base >= 2 ** 62:
        return np.unique(np.stack([p, k], axis=1), axis=0, return_counts=True)
    codes, count = np.unique((p - p0) * base + (k - k0), return_counts=True)
    return np.stack([codes // base + p0, codes % base + k0], axis=1), count


@dataclass(frozen=True)
class TeeDesign:
    """One night's release in the enclave: bounded counts + noise, released where they reach ``threshold``.

    Parameters
    ----------
    noise : {"laplace", "gaussian"}
    scale : float > 0
        Laplace b or Gaussian σ (counts).
    threshold : float
        T (counts): a key is released when its noisy count is at least T.
    max_keys : int ≥ 1
        L0: distinct keys per person per release.
    max_per_key : int ≥ 1
        L∞: the most one person adds to a key's count.
    """

    noise: str
    scale: float
    threshold: float
    max_keys: int = 1
    max_per_key: int = 1

    def __post_init__(self):
        check_int("TeeDesign", "max_keys", self.max_keys, low=1)
        check_int("TeeDesign", "max_per_key", self.max_per_key, low=1)
        self.selection                                          # validates noise, scale and threshold

    @property
    def selection(self) -> NoisyThreshold:
        """The thresholded noisy count of one key."""
        return NoisyThreshold(self.noise, self.scale, self.threshold)

    def release_counts(self, counts, rng=None) -> np.ndarray:
        """The released vector of bounded per-key counts: c + Z where it reaches T, else 0."""
        kept, values = self.selection.release(counts, rng)
        return np.where(kept, values, 0.0)

    def release_contributions(self, persons, keys, n_keys: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """Bound (:func:`bound_contributions`), count per key over ``n_keys`` keys, release.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            The released vector (0 where not released) and the bounded counts it estimates.
        """
        rng = as_generator(rng)
        _, key, count = bound_contributions(persons, keys, self.max_keys, self.max_per_key, rng)
        counts = np.bincount(key, weights=count, minlength=n_keys).astype(np.int64)
        return self.release_counts(counts, rng), counts

    def moments(self, counts) -> tuple[np.ndarray, np.ndarray]:
        """Exact (bias, MSE) of the released value of each count c (0 when not released) against c:
        with X = c + Z, E[X·1{X ≥ T}] and E[X²·1{X ≥ T}] from Z's tail moments (docs/math.md §9.13)."""
        c = np.asarray(counts, dtype=float)
        x = self.threshold - c
        m0, m1, m2 = self._tail_moments(x)
        first, second = c * m0 + m1, c ** 2 * m0 + 2 * c * m1 + m2
        absent = c <= 0                                             # no row: never released
        bias = np.where(absent, 0.0, first - c)
        mse = np.where(absent, 0.0, second - 2 * c * first + c ** 2)
        return bias, mse

    def _tail_moments(self, x: np.ndarray):
        """E[Z^k·1{Z ≥ x}] for k = 0, 1, 2."""
        s = self.scale
        if self.noise == "gaussian":
            a = x / s
            q, phi = stats.norm.sf(a), stats.norm.pdf(a)
            return q, s * phi, s ** 2 * (q + a * phi)
        y = np.abs(x)
        e = 0.5 * np.exp(-y / s)
        up = (e, e * (y + s), e * (y ** 2 + 2 * s * y + 2 * s ** 2))          # E[Z^k 1{Z ≥ y}], y ≥ 0
        below = (1 - up[0], 0 - (-up[1]), 2 * s ** 2 - up[2])                   # E[Z^k] − E[Z^k 1{Z < −y}]
        return tuple(np.where(x >= 0, u, b) for u, b in zip(up, below))

    def key_delta(self) -> float:
        """p₁ = P(L∞ + Z ≥ T): a key held by one person alone is released."""
        return float(self.selection.keep_probability(self.max_per_key))

    def threshold_delta(self, releases: int = 1, keys: int | None = None) -> float:
        """δ_T = 1 − (1 − p₁)^(releases·L0): one of a person's keys that nobody else holds is released."""
        keys = self.max_keys if keys is None else keys
        return -math.expm1(releases * keys * math.log1p(-self.key_delta()))

    def epsilon(self, releases: int, delta: float, keys: int | None = None, replace: bool = False) -> float:
        """ε per person over ``releases`` releases at ``delta`` (docs/math.md §9.13): the noise's at
        δ − δ_T; inf when δ ≤ δ_T or beyond :data:`EPS_CAP`.

        Parameters
        ----------
        releases : int ≥ 1
        delta : float in (0, 1)
        keys : int, optional
            Keys the person contributes to per release (default L0; 1 for one report).
        replace : bool
            Neighbours differ by one person replaced instead of added or removed: twice the noise's unit
            changes, and the keys of either person may be the ones only they hold.
        """
        releases = check_int("TeeDesign.epsilon", "releases", releases, low=1)
        delta = check_real("TeeDesign.epsilon", "delta", delta, 0.0, 1.0)
        keys = (self.max_keys if keys is None else keys) * (2 if replace else 1)
        budget = delta - self.threshold_delta(releases, keys)
        if budget <= 0:
            return math.inf
        eps = noise_epsilon(self.noise, self.scale, releases * keys, self.max_per_key, budget)
        return math.inf if eps > EPS_CAP else eps

    def noise_variance(self) -> float:
        """Var Z."""
        return self.selection.noise_variance()


def noise_epsilon(noise: str, scale: float, changes: int, size: float, delta: float) -> float:
    """ε at ``delta`` of ``changes`` coordinates each moved by ``size`` under Laplace(``scale``) or
    N(0, ``scale``²) noise: Gaussian exactly (L2 sensitivity √changes·size), Laplace by dp-accounting's
    pessimistic privacy-loss distribution composed ``changes`` times."""
    if noise == "gaussian":
        return gaussian_epsilon(scale, delta, math.sqrt(changes) * size)
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    pld = pld_lib.from_laplace_mechanism(scale, sensitivity=size, value_discretization_interval=1e-4)
    with np.errstate(over="ignore"):            # dp-accounting's tail bound overflows harmlessly for large losses
        composed = pld.self_compose(changes) if changes > 1 else pld
        return float(composed.get_epsilon_for_delta(delta))


def calibrate_tee(noise: str, epsilon: float, delta: float, releases: int, max_keys: int = 1,
                  max_per_key: int = 1, replace: bool = False) -> TeeDesign:
    """The design whose ``releases`` releases give at most (ε, δ) per person (docs/math.md §9.13): the
    threshold spends δ/2 (per key and release δ₁ = 1 − (1 − δ/2)^(1/(releases·L0)), twice the keys under
    ``replace``), the noise the
    other δ/2 — Gaussian σ in closed form, Laplace b by bisection on its composed privacy-loss
    distribution (to 0.1 %, rounded towards more noise).

    Parameters
    ----------
    noise : {"laplace", "gaussian"}
    epsilon : float in (0, 50]
        ε per person over the releases.
    delta : float in (0, 1)
    releases : int ≥ 1
        Releases the person takes part in (nights of the run).
    max_keys, max_per_key : int ≥ 1
        L0 and L∞ per release.
    replace : bool
        Calibrate for one person replaced instead of added or removed (:meth:`TeeDesign.epsilon`).
    """
    if noise not in NOISES:
        raise InputError(f"The 'noise' parameter of calibrate_tee must be one of {', '.join(NOISES)}. "
                         f"Got {noise!r} instead.")
    epsilon = check_real("calibrate_tee", "epsilon", epsilon, 0.0, EPS_CAP)
    delta = check_real("calibrate_tee", "delta", delta, 0.0, 1.0)
    r = check_int("calibrate_tee", "releases", releases, low=1)
    l0 = check_int("calibrate_tee", "max_keys", max_keys, low=1)
    linf = check_int("calibrate_tee", "max_per_key", max_per_key, low=1)
    changes = r * l0 * (2 if replace else 1)
    if noise == "gaussian":
        scale = gaussian_sigma(epsilon, delta / 2, math.sqrt(changes) * linf)
    else:
        low, high = changes * linf / epsilon / 64, changes * linf / epsilon     # pure composition at `high`
        while high / low > 1.001:
            mid = math.sqrt(low * high)
            low, high = (low, mid) if noise_epsilon("laplace", mid, changes, linf, delta / 2) <= epsilon else (mid, high)
        scale = high
    threshold = threshold_for(noise, scale, per_key_delta(delta / 2, changes), linf)
    return TeeDesign(noise, scale, threshold, l0, linf)
