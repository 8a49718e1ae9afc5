"""Utility-optimized randomized response (URR; Murakami & Kawamoto, USENIX Security 2019) — docs/math.md §1.3."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import check_domain_size, check_epsilon
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.frequency.mixture import KeepOrUniform, check_id_set


@dataclass(frozen=True)
class URR(KeepOrUniform):
    """Utility-optimized randomized response over item ids ``0 … D−1``, some of them sensitive.

    Math: docs/math.md §1.3 (Murakami & Kawamoto, USENIX Security 2019; SDLDP paper section 3).

    Privacy: (X_S, ε)-ULDP (utility-optimized LDP): for all inputs x, x' and every sensitive output
    y ∈ X_S, P[y|x] ≤ e^ε P[y|x'] (ratio c1/c2 = e^ε attained); each non-sensitive output y ∈ X_N has
    exactly one preimage (y itself), so it reveals a non-sensitive input. Not ε-LDP over all pairs.

    Client: x ∈ X_S reports x w.p. c1, any other s ∈ X_S w.p. c2; x ∈ X_N reports x w.p. c3, any
    s ∈ X_S w.p. c2. Sampled as the mixture: x ∈ X_S: w.p. c1 − c2 report x, else uniform over X_S;
    x ∈ X_N: w.p. c3 report x, else uniform over X_S.
    Server (count scale): s ∈ X_S: (c_s − n·c2)/(c1 − c2); x ∈ X_N: c_x / c3. Both unbiased; exact
    variances in docs/math.md §1.3.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of values D ≥ 2; users hold ids 0 … D−1.
    sensitive : sequence of int
        The sensitive ids X_S: non-empty, distinct, in [0, D), and not all of them (with every value
        sensitive URR is GRR). Stored sorted.

    Attributes
    ----------
    c1 : float
        P[x | x] for x ∈ X_S, e^ε/(|X_S|+e^ε−1).
    c2 : float
        P[s | x] for every sensitive s ≠ x, 1/(|X_S|+e^ε−1).
    c3 : float
        P[x | x] for x ∈ X_N, (e^ε−1)/(|X_S|+e^ε−1).

    Examples
    --------
    >>> m = URR(epsilon=1.0, domain_size=5, sensitive=[3, 0])
    >>> m.sensitive, round(m.c1 / m.c2, 6) == round(math.e, 6)
    ((0, 3), True)
    """

    epsilon: float
    privacy_kind = "uldp"
    domain_size: int
    sensitive: tuple
    c1: float = field(init=False, repr=False)
    c2: float = field(init=False, repr=False)
    c3: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        d = check_domain_size(self.name, self.domain_size)
        s = check_id_set(self.name, "sensitive", self.sensitive, d)
        if len(s) == d:
            raise ValueError(f"The 'sensitive' parameter of {self.name} must be a strict subset of "
                             f"[0, {d}). Got all {d} ids (with every value sensitive URR is GRR: use GRR).")
        denom = len(s) + math.exp(eps) - 1
        for k, v in dict(epsilon=eps, domain_size=d, sensitive=s, c1=math.exp(eps) / denom,
                         c2=1.0 / denom, c3=(math.exp(eps) - 1) / denom).items():
            object.__setattr__(self, k, v)
        is_sensitive = np.zeros(d, dtype=bool)
        is_sensitive[list(s)] = True
        object.__setattr__(self, "_is_sensitive", is_sensitive)
        keep = np.where(is_sensitive, self.c1 - self.c2, self.c3)
        self._set_mixture(keep, [s], np.zeros(d, dtype=np.int64))  # every fallback is uniform over X_S

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Unbiased count estimates: (c_s − n·c2)/(c1 − c2) on X_S, c_x/c3 on X_N (docs/math.md §1.3).

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
        sel = self._items(items)
        c = agg.data[sel]
        return np.where(self._is_sensitive[sel], (c - agg.n * self.c2) / (self.c1 - self.c2),  # docs/math.md §1.3
                        c / self.c3)

    def estimator_matrix(self) -> np.ndarray:
        """The count estimator as a D × D linear map of the output counts (using n = Σ_y c_y)."""
        sens = self._is_sensitive
        A = np.diag(np.where(sens, 1.0 / (self.c1 - self.c2), 1.0 / self.c3))
        A[sens] -= self.c2 / (self.c1 - self.c2)  # n = Σ_y c_y
        return A

    def _count_variance(self, f: np.ndarray) -> np.ndarray:
        """Each estimate uses one output count: Var(c_y)/slope², Var(c_y) = Σ_x f_x P[y|x](1 − P[y|x])."""
        c1, c2, c3 = self.c1, self.c2, self.c3
        sensitive = (f * c1 * (1 - c1) + (f.sum() - f) * c2 * (1 - c2)) / (c1 - c2) ** 2
        return np.where(self._is_sensitive, sensitive, f * (1 - c3) / c3)
