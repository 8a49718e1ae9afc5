"""TrieHH++: prefix-tree discovery with sample-and-threshold counts — Cormode & Bharadwaj, "Sample
and Threshold Differential Privacy: Histograms and Applications", AISTATS 2022; docs/math.md §10.3.

The rounds of :class:`~.triehh.TrieHH`, but each round publishes the *counts* V ≥ θ of the
surviving prefixes, not only which survived, and a discovered word's holders are estimated from
the votes of the round that completed it: N̂ = V/γ. Unconditionally E[V/γ] = N (V ~ Bin(N, γ));
given that the word was released (V ≥ θ), with S_m(a) = P[Bin(m, γ) ≥ a],

    E[V/γ | V ≥ θ] = N·S_{N−1}(θ − 1)/S_N(θ),
    E[V(V − 1) | V ≥ θ] = N(N − 1)γ²·S_{N−2}(θ − 2)/S_N(θ),

so the estimate is biased upwards given release (:meth:`TrieHHPP.conditional_bias`), by a factor
that tends to 1 once γN ≫ θ. Privacy: :func:`~.threshold_privacy.round_delta` with ``counts=True``
(the released counts' likelihood ratio (1 − γ)(N + 1)/(N + 1 − v) grows with v).

>>> t = TrieHHPP(gamma=0.5, theta=20, length=4, alphabet="abc")
>>> r = t.run(items=["ab", "cab"], true_counts=[400, 300], rng=1)
>>> r.words.tolist(), bool(abs(r.counts[0] - 400) < 80)
(['ab', 'cab'], True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import stats

from ldpsim.mechanisms.discovery.triehh import TrieHH


def _sf(a, m, gamma):
    """S_m(a) = P[Bin(m, γ) ≥ a] (1 for a ≤ 0, 0 for m < a)."""
    m = np.asarray(m)
    return np.where(m < 0, 0.0, stats.binom.sf(np.asarray(a) - 1, np.maximum(m, 0), gamma))


def released_moments(holders, gamma: float, theta: int) -> tuple[np.ndarray, np.ndarray]:
    """E[V·1{V ≥ θ}] and E[V²·1{V ≥ θ}] for V ~ Bin(N, γ), N = ``holders``: the sampled count's moments
    over the outcomes that are released, from E[V·1{V≥θ}] = Nγ·P(Bin(N−1, γ) ≥ θ−1) and
    E[V(V−1)·1{V≥θ}] = N(N−1)γ²·P(Bin(N−2, γ) ≥ θ−2)."""
    n = np.asarray(holders, dtype=float)
    m1 = n * gamma * _sf(theta - 1, n - 1, gamma)
    return m1, n * (n - 1) * gamma * gamma * _sf(theta - 2, n - 2, gamma) + m1


@dataclass(frozen=True)
class TrieHHPP(TrieHH):
    """TrieHH whose rounds release the sampled counts above θ (module docstring); parameters of
    :class:`~.triehh.TrieHH`."""

    counts_released: ClassVar[bool] = True

    def estimates(self, votes: np.ndarray) -> np.ndarray:
        """N̂ = V/γ from the votes of the completing round (Horvitz–Thompson)."""
        return np.asarray(votes, dtype=float) / self.gamma

    def conditional_moments(self, holders) -> tuple[np.ndarray, np.ndarray]:
        """(mean, variance) of N̂ = V/γ given release V ≥ θ, for N = ``holders`` eligible devices."""
        n = np.asarray(holders, dtype=float)
        g, t = self.gamma, self.theta
        p = _sf(t, n, g)
        s1, s2 = released_moments(n, g, t)
        with np.errstate(divide="ignore", invalid="ignore"):
            m1, m2 = s1 / p, s2 / p
        return m1 / g, (m2 - m1 * m1) / (g * g)

    def conditional_bias(self, holders) -> np.ndarray:
        """E[N̂ | V ≥ θ] − N (≥ 0; NaN where release is impossible, N < θ)."""
        return self.conditional_moments(holders)[0] - np.asarray(holders, dtype=float)
