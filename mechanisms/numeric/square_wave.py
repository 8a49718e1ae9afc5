"""Square-wave reporting (SW; Li et al., SIGMOD 2020) for values in [−1, 1] — docs/math.md §2.5.

A report is uniform on a window of half-width w around the value with high probability, else uniform
on the rest of [−C, C]: the output law is close to the input law shifted by noise of bounded support,
so the report histogram reconstructs the *distribution* well (EM/EMS, :mod:`ldpsim.mechanisms.numeric.em`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_real
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.numeric.interface import NumericMechanism, sliding_overlap_integral


def optimal_half_width(epsilon: float) -> float:
    """Li et al.'s b(ε) = (εe^ε − e^ε + 1)/(2e^ε(e^ε − 1 − ε)) on the unit interval (docs/math.md §2.5).

    Numerator and bracket are the series Σ_{k≥2} (k−1)ε^k/k! and Σ_{k≥2} ε^k/k!; below ε = 0.5 they are
    summed term by term (the closed forms cancel catastrophically as ε → 0, where b → 1/2).

    >>> round(optimal_half_width(1.0), 6)
    0.256083
    """
    e = math.exp(epsilon)
    if epsilon >= 0.5:
        return (epsilon * e - e + 1) / (2 * e * (e - 1 - epsilon))
    num = den = 0.0
    term = 1.0
    for k in range(1, 30):
        term *= epsilon / k  # ε^k / k!
        if k >= 2:
            num += (k - 1) * term
            den += term
    return num / (2 * e * den)


@dataclass(frozen=True)
class SW(NumericMechanism):
    """Square wave: a report x* ∈ [−C, C] of x ∈ [−1, 1] for distribution estimation.

    Math: docs/math.md §2.5 (Li, Wang, Lopuhaä-Zwakenberg, Li, Škorić, SIGMOD 2020, on [0, 1];
    here mapped to [−1, 1] by x ↦ 2x − 1, so the window half-width is w = 2b and C = 1 + w).

    Privacy: ε-LDP; the density of x* is p on [x − w, x + w] and q = p/e^ε elsewhere in [−C, C],
    p = e^ε/(2(2b·e^ε + 1)), so the largest density ratio between two inputs is exactly e^ε.

    The report average is a biased mean estimate (E[x*|x] = a·x, a = 2w(p − q) < 1); :meth:`estimate_mean`
    divides by a. The distribution is estimated by ``EM(SW(ε), bins=B, smoothing=True)`` (EMS).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε of one report, in [1e-6, 50].
    b : float, optional
        Half-width of the window on the unit interval, in (0, 1e6]; default Li et al.'s optimum
        :func:`optimal_half_width`.

    Attributes
    ----------
    C : float
        Output bound 1 + 2b.
    w : float
        Window half-width on [−1, 1], 2b.
    p, q : float
        Output densities on and off the window.

    Examples
    --------
    >>> m = SW(epsilon=1.0)
    >>> round(m.b, 4), round(m.C, 4), round(m.p / m.q, 4) == round(math.e, 4)
    (0.2561, 1.5122, True)
    >>> y = m.perturb(np.full(4, 0.5), rng=0)
    >>> bool(np.all(np.abs(y) <= m.C))
    True
    """

    epsilon: float
    b: float | None = None
    C: float = field(init=False, repr=False)
    w: float = field(init=False, repr=False)
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        b = optimal_half_width(eps) if self.b is None else check_real(self.name, "b", self.b, 0.0, 1e6,
                                                                         high_open=False)
        e = math.exp(eps)
        p = e / (2 * (2 * b * e + 1))
        for name, value in (("epsilon", eps), ("b", b), ("C", 1 + 2 * b), ("w", 2 * b), ("p", p), ("q", p / e)):
            object.__setattr__(self, name, value)

    @property
    def p_window(self) -> float:
        """P(x* ∈ [x − w, x + w]) = 2w·p = 2b·e^ε/(2b·e^ε + 1)."""
        return 2 * self.w * self.p

    @property
    def mean_scale(self) -> float:
        """a in E[x* | x] = a·x: a = 2w(p − q) (docs/math.md §2.5); :meth:`estimate_mean` divides by it."""
        return 2 * self.w * (self.p - self.q)

    # client ------------------------------------------------------------------------------------
    def place(self, x: np.ndarray, u_branch: np.ndarray, u_pos: np.ndarray) -> np.ndarray:
        """SW reports from validated inputs and two uniforms per user (pure math, no checks).

        Window iff ``u_branch`` < 2w·p: x − w + 2w·u_pos; else the point at distance 2·u_pos along
        [−C, x − w) ∪ (x + w, C] (total length 2), skipping the window."""
        lo = x - self.w
        s = 2.0 * u_pos - self.C
        rest = s + np.where(s >= lo, 2 * self.w, 0.0)
        y = np.where(u_branch < self.p_window, lo + 2 * self.w * u_pos, rest)
        return np.clip(y, -self.C, self.C, out=y)  # clip: guards float rounding at ±C only

    def perturb(self, values, rng=None) -> np.ndarray:
        """Client side: one SW report per user (values in [−1, 1]; two uniforms per user).

        Parameters
        ----------
        values : array_like of float, shape (n,)
            Values in [−1, 1].
        rng : numpy.random.Generator, int or None
            Source of randomness.

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
        """Unbiased mean estimate Σx*/(n·a) (docs/math.md §2.5); variance ``mean_variance(values)/a²``.

        Parameters
        ----------
        agg : Aggregate
            The report sum of this configuration.

        Returns
        -------
        float
            NaN for n = 0.
        """
        self._check_aggregate(agg)
        return float(agg.data[0] / (agg.n * self.mean_scale)) if agg.n else math.nan

    # theory ------------------------------------------------------------------------------------
    def report_mean(self, x) -> np.ndarray:
        """E[x*|x] = a·x, a = 2w(p − q) (docs/math.md §2.5)."""
        return self.mean_scale * np.asarray(x, dtype=np.float64)

    def report_variance(self, x) -> np.ndarray:
        """E[x*²|x] − (a·x)² with E[x*²|x] = 2qC³/3 + (p − q)(2w·x² + 2w³/3) (docs/math.md §2.5)."""
        x = np.asarray(x, dtype=np.float64)
        second = 2 * self.q * self.C ** 3 / 3 + (self.p - self.q) * (2 * self.w * x ** 2 + 2 * self.w ** 3 / 3)
        return second - (self.mean_scale * x) ** 2

    def output_pieces(self, x):
        n = x.size
        edges = np.stack([np.full(n, -self.C), x - self.w, x + self.w, np.full(n, self.C)], axis=1)
        return edges, np.tile([self.q, self.p, self.q], (n, 1)), np.zeros(n)

    def interval_mass(self, x0, x1, v0, v1):
        """∫_{x0}^{x1} P(x* ∈ [v0, v1] | x) dx = q(v1 − v0)(x1 − x0) + (p − q)·∫ |[x − w, x + w] ∩ [v0, v1]| dx,
        the last term by :func:`sliding_overlap_integral` (the window slides with slope 1)."""
        sliding = sliding_overlap_integral(x0 - self.w, x1 - self.w, 2 * self.w, v0, v1)
        return self.q * (v1 - v0) * (x1 - x0) + (self.p - self.q) * sliding

    def bin_transition(self, in_edges, out_edges) -> np.ndarray:
        u = np.asarray(in_edges, dtype=np.float64)[:, None]
        v = np.asarray(out_edges, dtype=np.float64)[None, :]
        return self.interval_mass(u[:-1], u[1:], v[:, :-1], v[:, 1:]) / (u[1:] - u[:-1])
