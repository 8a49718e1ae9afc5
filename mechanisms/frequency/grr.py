"""Generalized randomized response (k-ary RR, direct encoding) — docs/math.md §1.2."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import check_domain_size, check_epsilon
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.frequency.mixture import KeepOrUniform


@dataclass(frozen=True)
class GRR(KeepOrUniform):
    """Generalized randomized response (k-ary RR, direct encoding) over item ids ``0 … D−1``.

    Each user reports its own id w.p. p and each other id w.p. q; the server debiases the output
    counts. Math: docs/math.md §1.2 (Wang, Blocki, Li, Jha, USENIX Security 2017; SDLDP paper eq. (2)).

    Privacy: ε-LDP; the largest likelihood ratio P[y|x]/P[y|x'] is exactly p/q = e^ε.

    Client: report x w.p. p = e^ε/(e^ε+D−1), each other value w.p. q = 1/(e^ε+D−1); sampled as the
    equivalent mixture "w.p. p−q report x, else a uniform draw from all D values".
    Server: output counts c; unbiased count estimate (c_x − n·q)/(p − q).
    Exact variance of the count estimate for a fixed population with true counts f_x:
    n·q(1−q)/(p−q)² + f_x(1−p−q)/(p−q)   (docs/math.md §1.2, count scale).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of values D ≥ 2; users hold ids 0 … D−1. GRR is the best choice for small domains
        (D ≲ 3e^ε + 2); beyond that OUE/OLH have lower variance.

    Attributes
    ----------
    p : float
        P[report x | x] = e^ε/(e^ε+D−1).
    q : float
        P[report y | x] for each y ≠ x, 1/(e^ε+D−1).

    Examples
    --------
    >>> m = GRR(epsilon=1.0, domain_size=4)
    >>> round(m.p, 4), round(m.q, 4)
    (0.4754, 0.1749)
    >>> agg = m.sample_aggregate([500, 300, 150, 50], rng=0)
    >>> agg.n, m.estimate(agg).shape
    (1000, (4,))
    """

    epsilon: float
    domain_size: int
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon("GRR", self.epsilon)
        d = check_domain_size("GRR", self.domain_size)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "domain_size", d)
        denom = math.exp(eps) + d - 1
        object.__setattr__(self, "p", math.exp(eps) / denom)
        object.__setattr__(self, "q", 1.0 / denom)
        self._set_mixture(np.full(d, self.p - self.q), [np.arange(d)], np.zeros(d, dtype=np.int64))

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Unbiased count estimates (c_x − n·q)/(p − q) (docs/math.md §1.2).

        Parameters
        ----------
        agg : Aggregate
            Output counts of this configuration.
        items : array_like of int, optional
            Ids to estimate (default: all D ids).

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
        """
        self._check_aggregate(agg)
        c = agg.data[self._items(items)]
        return (c - agg.n * self.q) / (self.p - self.q)  # docs/math.md §1.2, count scale

    def estimator_matrix(self) -> np.ndarray:
        """(I − q)/(p − q): ``estimate(agg) == estimator_matrix() @ agg.data`` (D × D, using n = Σ_y c_y)."""
        d = self.domain_size
        return (np.eye(d) - self.q) / (self.p - self.q)  # n = Σ_y c_y

    def _count_variance(self, f: np.ndarray) -> np.ndarray:
        p, q = self.p, self.q
        return f.sum() * q * (1 - q) / (p - q) ** 2 + f * (1 - p - q) / (p - q)  # docs/math.md §1.2 × n²
