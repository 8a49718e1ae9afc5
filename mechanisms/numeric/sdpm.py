"""Sensitivity-discriminant piecewise mechanism (SDPM; seed 000, section 4.3) — docs/math.md §2.2."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import _fail, as_generator, check_epsilon
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.numeric.interface import NumericMechanism, interval_overlap
from ldpsim.mechanisms.numeric.pm import PM


def check_low_range(owner: str, low, name: str = "low") -> tuple[float, float]:
    """Validate a low-sensitivity range (a, b) with −1 ≤ a < b ≤ 1, both finite reals; return floats.

    Raises ``TypeError`` (not a pair of reals) or ``ValueError`` (out of order or out of [−1, 1]),
    naming ``owner`` and ``name``.
    """
    allowed = "a pair (a, b) of finite floats with -1 <= a < b <= 1"
    if not isinstance(low, (tuple, list)) or len(low) != 2:
        _fail(owner, name, allowed, low, TypeError)
    if any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in low):
        _fail(owner, name, allowed, low, TypeError)
    a, b = float(low[0]), float(low[1])
    if not (math.isfinite(a) and math.isfinite(b) and -1.0 <= a < b <= 1.0):
        _fail(owner, name, allowed, low)
    return a, b


@dataclass(frozen=True)
class SDPM(NumericMechanism):
    """SDPM: PM for high-sensitivity inputs, an exact report (or a far-away one) for low ones.

    Math: docs/math.md §2.2 (SDLDP paper, section 4.3; PM of Wang et al., ICDE 2019).

    X_L = [a, b] = ``low``, X_H = [−1, 1] \\ X_L; Y_L = [a, b], Y_H = [−C, C] \\ [a, b].

    Privacy: (X_H, X_L, ε)-SDLDP (docs/math.md §1.4 conditions (8)–(10) for densities): two high inputs are
    ε-indistinguishable (density ratio ≤ e^ε, with equality); on Y_H every pair of inputs is
    (a low input has density q = p/e^ε there, a high one p or q); a low input x is reported as
    itself w.p. p' and is then identified exactly — the relaxation that buys the accuracy.

    Client (docs/math.md §2.2): x ∈ X_H: PM; x ∈ X_L: x w.p. p' = 1 − (2C − (b−a))·q, else uniform on Y_H.
    Theory (derived here for [a, b]; the paper's theorem 4 is the case [−c, c], x = 0):
    low x: E[x*] = p'x + q(a² − b²)/2, E[x*²] = p'x² + q(2C³ + a³ − b³)/3; high x: PM's.
    The report average is biased (E[x*] ≠ x on X_L), so :meth:`estimate_mean` refuses: estimate the
    mean with ``EM(SDPM(...)).mean(agg)`` (docs/math.md §2.3, :mod:`ldpsim.mechanisms.numeric.em`).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    low : pair of float, default (−0.5, 0.5)
        The low-sensitivity range X_L = [a, b], −1 ≤ a < b ≤ 1.

    Attributes
    ----------
    pm : PM
        The piecewise mechanism used on X_H (same ε).
    C : float
        Output bound, PM's C: reports lie in [−C, C].
    p_atom : float
        p' = 1 − (2C − (b − a))·q, the probability that a low input is reported exactly.

    Examples
    --------
    >>> m = SDPM(epsilon=1.0, low=(-0.5, 0.5))
    >>> round(m.p_atom, 4)
    0.4677
    >>> y = m.perturb([0.0, 0.9], rng=0)
    >>> bool(np.all(np.abs(y) <= m.C))
    True
    """

    epsilon: float
    privacy_kind = "sdldp"
    low: tuple = (-0.5, 0.5)
    pm: PM = field(init=False, repr=False)
    C: float = field(init=False, repr=False)
    p_atom: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "low", check_low_range(self.name, self.low))
        pm = PM(eps)
        a, b = self.low
        object.__setattr__(self, "pm", pm)
        object.__setattr__(self, "C", pm.C)
        object.__setattr__(self, "p_atom", 1.0 - (2 * pm.C - (b - a)) * pm.q)  # p', docs/math.md §2.2

    def is_low(self, x) -> np.ndarray:
        """x ∈ X_L = [a, b]."""
        a, b = self.low
        return (x >= a) & (x <= b)

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> np.ndarray:
        """Client side: PM on X_H; on X_L the input itself w.p. p', else a uniform point of Y_H.

        Two uniforms per user: the branch and the place (shared by the high and low rules).

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
        u_branch, u_pos = rng.random(x.size), rng.random(x.size)
        a, b = self.low
        s = u_pos * (2 * self.C - (b - a))  # position along Y_H = [−C, a) ∪ (b, C]
        far = s - self.C + np.where(s >= a + self.C, b - a, 0.0)
        low_y = np.where(u_branch < self.p_atom, x, far)
        y = np.where(self.is_low(x), low_y, self.pm.place(x, u_branch, u_pos))
        return np.clip(y, -self.C, self.C, out=y)  # clip: guards float rounding at ±C only

    # server ------------------------------------------------------------------------------------
    def estimate_mean(self, agg: Aggregate) -> float:
        """Not available from the report sum: its mean is biased on X_L (docs/math.md §2.2). Use EM.

        Parameters
        ----------
        agg : Aggregate
            A report sum of this configuration (ignored).

        Raises
        ------
        NotImplementedError
            Always; the message shows the EM call that estimates the mean.
        """
        raise NotImplementedError(
            f"{self.name}: the report average is biased (docs/math.md §2.2); estimate the mean with "
            f"mechanisms.EM({self!r}).mean(EM(...).aggregate(reports)).")

    # theory ------------------------------------------------------------------------------------
    def report_mean(self, x) -> np.ndarray:
        """x on X_H; p'x + q(a² − b²)/2 on X_L."""
        x = np.asarray(x, dtype=np.float64)
        a, b = self.low
        return np.where(self.is_low(x), self.p_atom * x + self.pm.q * (a * a - b * b) / 2, x)

    def report_variance(self, x) -> np.ndarray:
        """PM's on X_H; p'x² + q(2C³ + a³ − b³)/3 − E[x*]² on X_L (exact)."""
        x = np.asarray(x, dtype=np.float64)
        a, b = self.low
        second = self.p_atom * x * x + self.pm.q * (2 * self.C ** 3 + a ** 3 - b ** 3) / 3
        low_var = second - self.report_mean(x) ** 2
        return np.where(self.is_low(x), low_var, self.pm.report_variance(x))

    def output_pieces(self, x):
        edges, dens, atom = self.pm.output_pieces(x)
        low = self.is_low(x)
        a, b = self.low
        edges[low] = [-self.C, a, b, self.C]
        dens[low] = [self.pm.q, 0.0, self.pm.q]
        atom[low] = self.p_atom
        return edges, dens, atom

    def piecewise_parts(self):
        return self.pm, self.low, self.p_atom

    def bin_transition(self, in_edges, out_edges) -> np.ndarray:
        """Exact: each in-bin splits into its high parts (PM, :meth:`PM.interval_mass`) and its
        low part (density q on Y_H plus the atom at x, which lands in the out-bin holding x)."""
        u = np.asarray(in_edges, dtype=np.float64)[:, None]
        v = np.asarray(out_edges, dtype=np.float64)[None, :]
        u0, u1, v0, v1 = u[:-1], u[1:], v[:, :-1], v[:, 1:]
        a, b = self.low
        ca, cb = np.clip(a, u0, u1), np.clip(b, u0, u1)  # in-bin pieces: [u0,ca] high, [ca,cb] low, [cb,u1] high
        mass = self.pm.interval_mass(u0, ca, v0, v1) + self.pm.interval_mass(cb, u1, v0, v1)
        far = (v1 - v0) - interval_overlap(v0, v1, a, b)  # |out-bin ∩ Y_H|
        mass += self.pm.q * far * (cb - ca) + self.p_atom * interval_overlap(ca, cb, v0, v1)
        return mass / (u1 - u0)

    def em_output_edges(self, in_edges) -> np.ndarray:
        """d equal bins on [−C, C] outside (a, b); inside, the input edges, so that the atom of a
        low input lands in the out-bin aligned with its in-bin (docs/math.md §2.3)."""
        a, b = self.low
        u = np.asarray(in_edges, dtype=np.float64)
        grid = np.linspace(-self.C, self.C, u.size)
        keep = np.concatenate([grid[(grid < a) | (grid > b)], u[(u > a) & (u < b)], [a, b]])
        return np.unique(keep)
