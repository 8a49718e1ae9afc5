"""The common interface of numeric mechanisms (values in [−1, 1], reports in [−C, C]) — docs/math.md §2.

Parallel to :mod:`ldpsim.mechanisms.base` for frequency oracles:

* ``perturb(values, rng)`` runs the client side for an array of users and returns float64 reports.
* ``aggregate(reports)`` returns an :class:`~ldpsim.mechanisms.base.Aggregate` whose ``data`` is
  ``[sum of reports]``; aggregates add. ``estimate_mean(agg)`` turns it into a mean estimate
  where the report average is unbiased (PM); SDPM's is not (docs/math.md §2.2), see :mod:`ldpsim.mechanisms.numeric.em`.
* Theory per input x: ``report_mean(x)``, ``report_variance(x)`` (closed forms) and
  ``moment(x, k)`` (exact, from the density); ``mean_variance(values)`` is the variance of the
  report average over a fixed population.
* The output law of every mechanism here is a piecewise-constant density on three pieces of
  [−C, C] plus an optional point mass at y = x (SDPM's low branch). ``output_pieces(x)`` returns that law;
  ``output_density``, ``point_mass``, ``bin_probabilities`` and ``moment`` are built from it.
* ``bin_transition(in_edges, out_edges)`` is the exact EM matrix
  ``M[i, j] = P(x* ∈ out-bin j | x uniform in in-bin i)`` (docs/math.md §2.3).
* Wire form: one little-endian float64 per report (8 bytes), so decoding is exact.
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from ldpsim.mechanisms._validation import check_finite_in
from ldpsim.mechanisms.base import Aggregate, Mechanism


def pm_constants(epsilon: float) -> tuple[float, float, float]:
    """(C, p, q) of the piecewise mechanism, docs/math.md §2.1: C = (e^{ε/2}+1)/(e^{ε/2}−1),
    p = (e^ε − e^{ε/2})/(2e^{ε/2}+2) (the density near x) and q = p/e^ε (the density elsewhere)."""
    t = math.exp(epsilon / 2)
    p = (t * t - t) / (2 * t + 2)
    return (t + 1) / (t - 1), p, p / math.exp(epsilon)


def _relu_sq_diff(lo, hi):
    """(max(hi,0)² − max(lo,0)²)/2 = ∫_lo^hi max(t, 0) dt, written to avoid cancellation."""
    a, b = np.maximum(lo, 0.0), np.maximum(hi, 0.0)
    return (b - a) * (b + a) / 2


def sliding_overlap_integral(s0, s1, width, v0, v1):
    """∫_{s0}^{s1} |[s, s+width] ∩ [v0, v1]| ds, exactly (broadcasting; s0 ≤ s1, v0 ≤ v1).

    The overlap is h(s+w−v0) − h(s−v0) − h(s+w−v1) + h(s−v1) with h = max(·, 0), whose
    antiderivative is h²/2: the integral of the piecewise-linear overlap is a sum of four terms.
    """
    out = _relu_sq_diff(s0 + width - v0, s1 + width - v0)
    out -= _relu_sq_diff(s0 - v0, s1 - v0)
    out -= _relu_sq_diff(s0 + width - v1, s1 + width - v1)
    out += _relu_sq_diff(s0 - v1, s1 - v1)
    return out


def interval_overlap(a0, a1, b0, b1):
    """|[a0, a1] ∩ [b0, b1]| (broadcasting)."""
    return np.maximum(np.minimum(a1, b1) - np.maximum(a0, b0), 0.0)


class NumericMechanism(Mechanism):
    """Abstract numeric mechanism on [−1, 1] with reports in [−C, C] (see the module docstring).

    Subclasses (PM, SDPM) are frozen dataclasses with ``epsilon`` in (0, inf) among their parameters;
    math in docs/math.md §2.
    """

    C: float

    #: size of one encoded report: a little-endian float64
    report_bytes = 8
    #: a in E[x* | x] = a·x where the report average is unbiased up to that factor (1 for PM; SW's
    #: :attr:`~ldpsim.mechanisms.numeric.square_wave.SW.mean_scale` < 1): ``estimate_mean`` divides by it,
    #: so the estimate's variance is the report average's divided by a²
    mean_scale = 1.0

    # ---- client side -------------------------------------------------------------------------
    def _check_values(self, values) -> np.ndarray:
        return check_finite_in(self.name, values, -1.0, 1.0)

    @abstractmethod
    def perturb(self, values, rng=None) -> np.ndarray:
        """Client side: privatize one value per user.

        Parameters
        ----------
        values : array_like of float, shape (n,)
            One finite value in [−1, 1] per user (normalize readings first).
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
            Reports in [−C, C].
        """

    # ---- server side -------------------------------------------------------------------------
    def _check_reports(self, reports, where: str) -> np.ndarray:
        return check_finite_in(f"{self.name}.{where}", reports, -self.C, self.C, "reports")

    def aggregate(self, reports) -> Aggregate:
        """Server side: the sum of the reports.

        Parameters
        ----------
        reports : array_like of float, shape (n,)
            Finite reports in [−C, C].

        Returns
        -------
        Aggregate
            ``Aggregate(n, [Σ reports])``, mergeable by addition.
        """
        y = self._check_reports(reports, "aggregate")
        return Aggregate(y.size, np.array([y.sum()]), self.kind)

    @abstractmethod
    def estimate_mean(self, agg: Aggregate) -> float:
        """Mean estimate from an aggregate (``agg`` made by this configuration); returns a float."""

    # ---- theory ------------------------------------------------------------------------------
    @abstractmethod
    def report_mean(self, x) -> np.ndarray:
        """E[x* | x] (vectorized, closed form)."""

    @abstractmethod
    def report_variance(self, x) -> np.ndarray:
        """Var[x* | x] (vectorized, closed form)."""

    def mean_variance(self, values) -> float:
        """Variance of the report average (Σ x*_i)/n over a fixed population.

        Parameters
        ----------
        values : array_like of float
            The users' true values in [−1, 1].

        Returns
        -------
        float
            Σ_i Var[x*|x_i] / n² (reports are independent).
        """
        x = self._check_values(values)
        return float(self.report_variance(x).sum() / max(x.size, 1) ** 2)

    @abstractmethod
    def output_pieces(self, x: np.ndarray):
        """The output law of each input as three pieces of constant density (docs/math.md §2.1, §2.2, §2.5).

        :meth:`output_density` and :meth:`point_mass` read it; a measurement that evaluates the law of
        many inputs against many reports (the adversary's grid) computes the pieces of each input once.

        Parameters
        ----------
        x : ndarray
            Inputs in [−1, 1], 1-D.

        Returns
        -------
        edges : ndarray
            (n, 4), ascending from −C to C: the pieces lie between consecutive edges.
        density : ndarray
            (n, 3), the density on each piece.
        atom : ndarray
            (n,), the point mass at y = x (SDPM's low branch; 0 elsewhere).
        """

    def _law(self, x):
        x = np.asarray(x, dtype=np.float64)
        edges, dens, atom = self.output_pieces(x.ravel())
        return x.shape, edges, dens, atom

    def output_density(self, x, y) -> np.ndarray:
        """Density of the continuous part of x* at y given x (broadcast over ``x`` and ``y``);
        zero outside [−C, C]. Pieces are closed on the middle piece (its density wins at its ends)."""
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        _, e, dens, _ = self._law(x)
        yy = y.ravel()
        piece = (yy >= e[:, 1]).astype(np.intp) + (yy > e[:, 2])
        out = np.take_along_axis(dens, piece[:, None], axis=1)[:, 0]
        out = np.where((yy < -self.C) | (yy > self.C), 0.0, out)
        return out.reshape(x.shape)

    def point_mass(self, x) -> np.ndarray:
        """P(x* = x | x): the weight of the atom at the input itself (0 for PM)."""
        shape, _, _, atom = self._law(x)
        return atom.reshape(shape)

    def bin_probabilities(self, x, out_edges) -> np.ndarray:
        """P(x* ∈ [e_j, e_{j+1}) | x), shape ``x.shape + (len(out_edges)−1,)``, exact.

        The atom at x counts in the bin containing x (the last bin is closed on the right)."""
        shape, e, dens, atom = self._law(x)
        v = np.asarray(out_edges, dtype=np.float64)
        v0, v1 = v[:-1], v[1:]
        mass = sum(dens[:, k, None] * interval_overlap(e[:, k, None], e[:, k + 1, None], v0, v1)
                   for k in range(3))
        xs = np.asarray(x, float).ravel()
        j = np.clip(np.searchsorted(v, xs, side="right") - 1, 0, v0.size - 1)
        inside = (xs >= v[0]) & (xs <= v[-1])
        mass[np.flatnonzero(inside), j[inside]] += atom[inside]
        return mass.reshape(shape + (v0.size,))

    def moment(self, x, k: int) -> np.ndarray:
        """Exact raw moment E[(x*)^k | x] from the piecewise density and the atom."""
        shape, e, dens, atom = self._law(x)
        hi, lo = e[:, 1:] ** (k + 1), e[:, :-1] ** (k + 1)
        out = (dens * (hi - lo)).sum(axis=1) / (k + 1) + atom * np.asarray(x, float).ravel() ** k
        return out.reshape(shape)

    @abstractmethod
    def bin_transition(self, in_edges, out_edges) -> np.ndarray:
        """The exact EM transition matrix (docs/math.md §2.3).

        Parameters
        ----------
        in_edges : array_like of float
            Ascending input bin edges covering [−1, 1].
        out_edges : array_like of float
            Ascending output bin edges covering [−C, C].

        Returns
        -------
        numpy.ndarray, shape (len(in_edges) − 1, len(out_edges) − 1)
            ``M[i, j] = P(x* ∈ out-bin j | x uniform in in-bin i)``; rows sum to one.
        """

    def piecewise_parts(self):
        """``(pm, low, p_atom)`` when the mechanism is PM on X_H and "atom at x or uniform on Y_H"
        on X_L = ``low`` (PM: ``low`` None) — EM then uses a fast exact operator; else None."""
        return None

    def em_output_edges(self, in_edges) -> np.ndarray:
        """Output bin edges for EM with these input edges: d equal bins on [−C, C] (docs/math.md §2.3)."""
        return np.linspace(-self.C, self.C, len(in_edges))

    # ---- wire form ---------------------------------------------------------------------------
    def encode(self, reports) -> bytes:
        """Wire form: one little-endian float64 per report (8 bytes, exact)."""
        return self._check_reports(reports, "encode").astype("<f8").tobytes()

    def decode(self, payload: bytes) -> np.ndarray:
        """Inverse of :meth:`encode`.

        Parameters
        ----------
        payload : bytes
            A whole number of 8-byte reports.

        Returns
        -------
        numpy.ndarray of float64
            ``ValueError`` on a malformed payload or a value outside [−C, C].
        """
        self._check_payload(payload)
        y = np.frombuffer(payload, dtype="<f8").astype(np.float64)
        return self._check_reports(y, "decode")
