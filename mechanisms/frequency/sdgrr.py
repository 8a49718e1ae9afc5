"""Sensitivity-discriminant generalized randomized response (SDGRR) — docs/math.md §1.4, seed 000 section 4.2."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import check_domain_size, check_epsilon, check_int, check_real
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.frequency.mixture import KeepOrUniform, check_id_set


@dataclass(frozen=True)
class SDGRR(KeepOrUniform):
    """Sensitivity-discriminant GRR: full protection for high-sensitivity values X_H, less for X_L.

    Math: docs/math.md §1.4 (SDLDP paper, section 4.2).

    Privacy: ε-SDLDP (paper, definition 3): (8) any two high inputs are ε-indistinguishable on every
    output; (9) each low output l has exactly one low preimage (l itself; high inputs reach it too);
    (10) any two inputs are ε-indistinguishable on every high output. Max ratio c1/c2 = e^ε, attained.
    Not ε-LDP over all pairs: a low output l has P[l|l]/P[l|h] = c3/c2 = |X_L| + e^ε − 1.

    Client: high x reports x w.p. c1, any other value w.p. c2; low x reports x w.p. c3, any h ∈ X_H
    w.p. c2. Sampled as the mixture: high x: w.p. c1 − c2 report x, else uniform over all D values;
    low x: w.p. c3 report x, else uniform over X_H.
    Server (count scale): ĥ = (c_h − n·c2)/(c1 − c2); l̂ = (c_l − c2·Σ_{h∈X_H} ĥ)/c3. Both unbiased.
    Variance: exact for a fixed population — :func:`.linear_theory.linear_estimator_variance` applied to
    :meth:`estimator_matrix`, evaluated in O(D) by the closed form of docs/math.md §1.4 (its
    π(1−π)/n form is the i.i.d.-input variance); the paper's approximation for low values, eq. (12),
    is :meth:`approx_variance_low`.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of values D ≥ 2; users hold ids 0 … D−1.
    high : sequence of int
        High-sensitivity ids X_H: non-empty, distinct, in [0, D). Stored sorted.
    low : sequence of int, optional
        Low-sensitivity ids X_L; default: the complement of ``high``. If given, ``high`` and ``low``
        must be disjoint and cover [0, D). Must be non-empty (with no low value SDGRR is GRR).

    Attributes
    ----------
    c1 : float
        P[x | x] for high x, e^ε/(D+e^ε−1).
    c2 : float
        P[y | x] for the other outputs a high input reaches (any y ≠ x) and for the high outputs a
        low input reaches, 1/(D+e^ε−1).
    c3 : float
        P[x | x] for low x, (|X_L|+e^ε−1)/(D+e^ε−1).

    Examples
    --------
    >>> m = SDGRR(epsilon=1.0, domain_size=4, high=[0, 1])
    >>> m.low, round(m.c3 / m.c2, 6) == round(2 + math.e - 1, 6)
    ((2, 3), True)
    """

    epsilon: float
    privacy_kind = "sdldp"
    domain_size: int
    high: tuple
    low: tuple | None = None
    c1: float = field(init=False, repr=False)
    c2: float = field(init=False, repr=False)
    c3: float = field(init=False, repr=False)

    def __post_init__(self):
        name = self.name
        eps = check_epsilon(name, self.epsilon)
        d = check_domain_size(name, self.domain_size)
        high = check_id_set(name, "high", self.high, d)
        complement = tuple(sorted(set(range(d)) - set(high)))
        if self.low is None:
            low = complement
        else:
            low = check_id_set(name, "low", self.low, d)
            both = sorted(set(high) & set(low))
            if both:
                raise ValueError(f"The 'high' and 'low' parameters of {name} must be disjoint. "
                                 f"Got ids {both[:10]} in both.")
            if low != complement:
                missing = sorted(set(complement) - set(low))
                raise ValueError(f"The 'high' and 'low' parameters of {name} must together cover "
                                 f"[0, {d}). Got ids {missing[:10]} in neither.")
        if not low:
            raise ValueError(f"The 'low' parameter of {name} must be non-empty. Got 'high' covering all "
                             f"{d} ids, so no low value is left (SDGRR with no low value is GRR: use GRR).")
        denom = d + math.exp(eps) - 1
        for k, v in dict(epsilon=eps, domain_size=d, high=high, low=low, c1=math.exp(eps) / denom,
                         c2=1.0 / denom, c3=(len(low) + math.exp(eps) - 1) / denom).items():
            object.__setattr__(self, k, v)
        is_high = np.zeros(d, dtype=bool)
        is_high[list(high)] = True
        object.__setattr__(self, "_is_high", is_high)
        # fallback set 0: all D values (high inputs); set 1: X_H (low inputs)
        self._set_mixture(np.where(is_high, self.c1 - self.c2, self.c3),
                          [np.arange(d), np.array(high)], np.where(is_high, 0, 1))

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Unbiased count estimates: ĥ on X_H, then l̂ on X_L using Σ ĥ (docs/math.md §1.4).

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
        c = agg.data
        high_est = (c - agg.n * self.c2) / (self.c1 - self.c2)  # docs/math.md §1.4, count scale
        high_total = high_est[self._is_high].sum()
        low_est = (c - self.c2 * high_total) / self.c3  # docs/math.md §1.4
        return np.where(self._is_high, high_est, low_est)[self._items(items)]

    def estimator_matrix(self) -> np.ndarray:
        """The count estimator as a D × D linear map of the output counts (using n = Σ_y c_y)."""
        d, c1, c2, c3 = self.domain_size, self.c1, self.c2, self.c3
        high_rows = (np.eye(d) - c2) / (c1 - c2)  # row h: (e_h − c2·1)/(c1 − c2), using n = Σ_y c_y
        high_total = high_rows[self._is_high].sum(axis=0)
        return np.where(self._is_high[:, None], high_rows, (np.eye(d) - c2 * high_total) / c3)

    def _count_variance(self, f: np.ndarray) -> np.ndarray:
        """Closed form of ``linear_estimator_variance(P, estimator_matrix(), f)`` in O(D).

        High h: Var(c_h)/(c1−c2)², Var(c_h) = f_h c1(1−c1) + (n−f_h) c2(1−c2).
        Low l: l̂ = (c_l − k·C_H)/c3 + const, k = c2/(c1−c2), C_H = Σ_{h∈X_H} c_h, so
        Var = (Var(c_l) + k² Var(C_H) − 2k Cov(c_l, C_H))/c3² with a_H = P[y∈X_H | high x] = c1+(|X_H|−1)c2,
        b_L = P[y∈X_H | low x] = |X_H|·c2: Var(c_l) = f_l c3(1−c3) + N_H c2(1−c2),
        Var(C_H) = N_H a_H(1−a_H) + N_L b_L(1−b_L), Cov(c_l, C_H) = −(N_H c2 a_H + f_l c3 b_L)
        (one report cannot be both l and high).
        """
        c1, c2, c3 = self.c1, self.c2, self.c3
        n_high = f[self._is_high].sum()
        n_low = f.sum() - n_high
        high = (f * c1 * (1 - c1) + (f.sum() - f) * c2 * (1 - c2)) / (c1 - c2) ** 2
        k, a_h, b_l = c2 / (c1 - c2), c1 + (len(self.high) - 1) * c2, len(self.high) * c2
        var_l = f * c3 * (1 - c3) + n_high * c2 * (1 - c2)
        var_total_high = n_high * a_h * (1 - a_h) + n_low * b_l * (1 - b_l)
        cov = -(n_high * c2 * a_h + f * c3 * b_l)
        low = (var_l + k ** 2 * var_total_high - 2 * k * cov) / c3 ** 2
        return np.where(self._is_high, high, low)

    def approx_variance_low(self, n, high_mass=None) -> float:
        """The paper's small-f approximation of a low value's FREQUENCY variance, eq. (12).

        ``(D + e^ε − 1 − F_H)·F_H / (n (|X_L| + e^ε − 1)²)`` (docs/math.md §1.4).

        Parameters
        ----------
        n : int
            Number of users, ≥ 1.
        high_mass : float, optional
            F_H, the share of users holding a high value, in [0, 1] (default |X_H|/D: the uniform
            distribution of the paper's Fig. 2).

        Returns
        -------
        float
        """
        n = check_int(self.name, "n", n, low=1)
        if high_mass is None:
            high_mass = len(self.high) / self.domain_size
        fh = check_real(self.name, "high_mass", high_mass, 0.0, 1.0, low_open=False, high_open=False)
        e = math.exp(self.epsilon)
        return (self.domain_size + e - 1 - fh) * fh / (n * (len(self.low) + e - 1) ** 2)  # eq. (12)
