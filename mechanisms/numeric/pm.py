"""Piecewise mechanism (PM; Wang et al., ICDE 2019) for values in [−1, 1] — docs/math.md §2.1."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_epsilon
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.numeric.interface import NumericMechanism, pm_constants, sliding_overlap_integral


@dataclass(frozen=True)
class PM(NumericMechanism):
    """Piecewise mechanism: an unbiased numeric report x* ∈ [−C, C] of x ∈ [−1, 1].

    Math: docs/math.md §2.1 (Wang, Xiao, Yang, Zhao, Hui, Shin, Shin, Yu, ICDE 2019; SDLDP paper).

    Privacy: ε-LDP; the density of x* is p on [l(x), r(x)] and q = p/e^ε elsewhere, so the largest
    density ratio between two inputs is exactly p/q = e^ε.

    Client: C = (e^{ε/2}+1)/(e^{ε/2}−1), l(x) = (C+1)/2·x − (C−1)/2, r(x) = l(x)+C−1;
    w.p. e^{ε/2}/(e^{ε/2}+1) (= p·(C−1)) uniform on [l(x), r(x)], else uniform on the rest of
    [−C, C], two intervals of total length 2C − (C−1) = C+1.
    Server: the report average is unbiased; Var[x*|x] = x²/(e^{ε/2}−1) + (e^{ε/2}+3)/(3(e^{ε/2}−1)²).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).

    Attributes
    ----------
    C : float
        Output bound: reports lie in [−C, C], C = (e^{ε/2}+1)/(e^{ε/2}−1).
    p : float
        Output density on the window [l(x), r(x)], (e^ε − e^{ε/2})/(2e^{ε/2}+2).
    q : float
        Output density elsewhere, p/e^ε.

    Examples
    --------
    >>> m = PM(epsilon=1.0)
    >>> round(m.C, 4), round(m.p, 4)
    (4.083, 0.2019)
    >>> agg = m.aggregate(m.perturb(np.full(1000, 0.5), rng=0))
    >>> abs(m.estimate_mean(agg) - 0.5) < 5 * m.mean_variance(np.full(1000, 0.5)) ** 0.5
    True
    """

    epsilon: float
    C: float = field(init=False, repr=False)
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        object.__setattr__(self, "epsilon", eps)
        C, p, q = pm_constants(eps)
        object.__setattr__(self, "C", C)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    @property
    def p_window(self) -> float:
        """P(x* ∈ [l(x), r(x)]) = e^{ε/2}/(e^{ε/2}+1)."""
        t = math.exp(self.epsilon / 2)
        return t / (t + 1)

    def left(self, x):
        """l(x) = (C+1)/2·x − (C−1)/2 (docs/math.md §2.1)."""
        return (self.C + 1) / 2 * x - (self.C - 1) / 2

    # client ------------------------------------------------------------------------------------
    def place(self, x: np.ndarray, u_branch: np.ndarray, u_pos: np.ndarray) -> np.ndarray:
        """PM reports from validated inputs and two uniforms per user (pure math, no checks).

        Window iff ``u_branch`` < e^{ε/2}/(e^{ε/2}+1): l(x) + (C−1)·u_pos; else the point at
        distance u_pos·(C+1) along [−C, l(x)) ∪ (r(x), C], skipping the window."""
        C = self.C
        lx = self.left(x)
        s = u_pos * (C + 1)
        rest = s - C + np.where(s >= lx + C, C - 1, 0.0)
        y = np.where(u_branch < self.p_window, lx + (C - 1) * u_pos, rest)
        return np.clip(y, -C, C, out=y)  # clip: guards float rounding at ±C only

    def perturb(self, values, rng=None) -> np.ndarray:
        """Client side: one PM report per user.

        Parameters
        ----------
        values : array_like of float, shape (n,)
            Values in [−1, 1].
        rng : numpy.random.Generator, int or None
            Source of randomness (two uniforms per user).

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
            Reports in [−C, C].
        """
        x = self._check_values(values)
        rng = as_generator(rng)
        return self.place(x, rng.random(x.size), rng.random(x.size))

    # server ------------------------------------------------------------------------------------
    def estimate_mean(self, agg: Aggregate) -> float:
        """Unbiased mean estimate: the report average (docs/math.md §2.1).

        Parameters
        ----------
        agg : Aggregate
            The report sum of this configuration.

        Returns
        -------
        float
            Σ x*/n (NaN for n = 0); its variance is :meth:`mean_variance` of the true values.
        """
        self._check_aggregate(agg)
        return float(agg.data[0] / agg.n) if agg.n else math.nan

    # theory ------------------------------------------------------------------------------------
    def report_mean(self, x) -> np.ndarray:
        """E[x*|x] = x (unbiased)."""
        return np.asarray(x, dtype=np.float64).copy()

    def report_variance(self, x) -> np.ndarray:
        """x²/(e^{ε/2}−1) + (e^{ε/2}+3)/(3(e^{ε/2}−1)²) (docs/math.md §2.1)."""
        t = math.exp(self.epsilon / 2)
        return np.asarray(x, dtype=np.float64) ** 2 / (t - 1) + (t + 3) / (3 * (t - 1) ** 2)

    def output_pieces(self, x):
        lx = self.left(x)
        n = x.size
        edges = np.stack([np.full(n, -self.C), lx, lx + self.C - 1, np.full(n, self.C)], axis=1)
        dens = np.tile([self.q, self.p, self.q], (n, 1))
        return edges, dens, np.zeros(n)

    def interval_mass(self, x0, x1, v0, v1):
        """∫_{x0}^{x1} P(x* ∈ [v0, v1] | x) dx, exactly (broadcasting).

        = q·(v1−v0)·(x1−x0) + (p−q)·∫ |[l(x), r(x)] ∩ [v0, v1]| dx, and with s = l(x)
        (dx = ds·2/(C+1)) the last integral is :func:`sliding_overlap_integral`."""
        slope = (self.C + 1) / 2
        sliding = sliding_overlap_integral(self.left(x0), self.left(x1), self.C - 1, v0, v1) / slope
        return self.q * (v1 - v0) * (x1 - x0) + (self.p - self.q) * sliding

    def piecewise_parts(self):
        return self, None, 0.0

    def bin_transition(self, in_edges, out_edges) -> np.ndarray:
        u = np.asarray(in_edges, dtype=np.float64)[:, None]
        v = np.asarray(out_edges, dtype=np.float64)[None, :]
        mass = self.interval_mass(u[:-1], u[1:], v[:, :-1], v[:, 1:])
        return mass / (u[1:] - u[:-1])

