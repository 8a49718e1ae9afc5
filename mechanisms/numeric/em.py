"""EM post-processing of numeric reports (seed 000, algorithm 1) and its smoothed variant EMS — docs/math.md §2.3.

References: the SDLDP paper's algorithm 1; Li, Wang, Lopuhaä-Zwakenberg, Li, Škorić, "Estimating
Numerical Distributions under Local Differential Privacy", SIGMOD 2020 (EMS); Silverman, Jones,
Wilson, Nychka, "A smoothed EM approach to indirect estimation problems", JRSS B 1990 (the
[1, 2, 1]/4 smoothing with mass-preserving ends).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import _fail, check_int, check_real
from ldpsim.mechanisms.base import Aggregate, check_aggregate
from ldpsim.mechanisms.numeric.interface import NumericMechanism


#: above this many matrix entries (d·m) EM multiplies by the O(d + m) piecewise operator (PM, SDPM);
#: below, a dense matrix-vector product is cheaper than the operator's fixed per-call overhead
DENSE_LIMIT = 1 << 17
#: most EM bins (the bins × output-cells matrix must stay small)
MAX_BINS = 1 << 16
#: rows of :meth:`EM.means` run together: their products with the matrix stay below the size at which
#: OpenBLAS starts threads (threads of a small product cost more CPU than they save on a busy machine)
BATCH_ROWS = 32


class EMResult(NamedTuple):
    """Outcome of one EM run: the estimated input distribution over the d bins and diagnostics."""

    f: np.ndarray
    n_iter: int
    log_likelihood: float
    converged: bool


def smooth(f: np.ndarray) -> np.ndarray:
    """Binomial [1, 2, 1]/4 smoothing along the last axis; an end bin gives its missing neighbour's weight
    to itself ((3f₀ + f₁)/4), so the total mass is preserved (Silverman et al. 1990, §3.2.2)."""
    g = 2 * f
    g[..., 1:] += f[..., :-1]
    g[..., :-1] += f[..., 1:]
    g[..., 0] += f[..., 0]
    g[..., -1] += f[..., -1]
    return g / 4


class _DoubleIntegral:
    """P(y) = ∫_{−∞}^{y} ∫_{−∞}^{t} φ(s) ds dt at fixed points y, for φ piecewise constant on the
    cells of ascending ``knots`` (zero outside): O(K + points) per evaluation, exact up to rounding."""

    def __init__(self, knots: np.ndarray, points: np.ndarray):
        self.dz = np.diff(knots)
        k = np.searchsorted(knots, points, side="right") - 1
        self.below = k < 0
        self.k = np.clip(k, 0, knots.size - 1)
        self.t = np.where(self.below, 0.0, points - knots[self.k])
        self.cell = np.minimum(self.k, self.dz.size - 1)
        self.inside = self.k < self.dz.size

    def __call__(self, phi: np.ndarray) -> np.ndarray:
        g = np.concatenate([[0.0], np.cumsum(phi * self.dz)])  # ∫φ at the knots
        p = np.concatenate([[0.0], np.cumsum((g[:-1] + g[1:]) / 2 * self.dz)])  # ∫∫φ (g is linear)
        slope = np.where(self.inside, phi[self.cell], 0.0)
        return np.where(self.below, 0.0, p[self.k] + self.t * (g[self.k] + slope * self.t / 2))


class _PiecewiseOperator:
    """Products with the exact EM matrix of PM / SDPM in O(d + m) instead of O(d·m).

    The input axis is cut at the bin edges and at a, b into cells, each high (PM) or low. For a high
    cell the matrix is q·|out_j|·len + (p−q)/α·∫_{l(cell)} |[s, s+C−1] ∩ out_j| ds, whose products
    with vectors are differences of double integrals (:class:`_DoubleIntegral`); for a low cell it is
    q·|out_j ∩ Y_H|·len plus the atom p'·|cell ∩ out_j| (a sparse overlap list). Dividing by the
    in-bin width and summing cells per bin gives M (docs/math.md §2.3); tests compare with the dense matrix.
    """

    def __init__(self, pm, low, p_atom: float, in_edges: np.ndarray, out_edges: np.ndarray):
        u, v = in_edges, out_edges
        a, b = low if low is not None else (np.inf, np.inf)
        xk = np.unique(np.concatenate([u, [a, b]]))
        xk = xk[(xk >= u[0]) & (xk <= u[-1])]
        mid = (xk[:-1] + xk[1:]) / 2
        self.parent = np.searchsorted(u, mid, side="right") - 1
        self.d, self.m = u.size - 1, v.size - 1
        share = np.diff(xk) / np.diff(u)[self.parent]  # cell length / in-bin width
        self.high = ~((mid >= a) & (mid <= b))
        self.q, self.p_atom, self.slope = pm.q, p_atom, (pm.C + 1) / 2
        self.width_out = np.diff(v)
        self.far_out = self.width_out - np.maximum(np.minimum(v[1:], b) - np.maximum(v[:-1], a), 0.0)
        self.hi_share, self.lo_share = np.where(self.high, share, 0.0), np.where(self.high, 0.0, share)
        self.dens_scale = (pm.p - pm.q) / (np.diff(u)[self.parent] * self.slope)  # on s = l(x)
        sk, w = pm.left(xk), pm.C - 1
        self.cell_pts = _DoubleIntegral(sk, np.concatenate([v, v - w]))  # for π = Mᵀf
        self.out_pts = _DoubleIntegral(v, np.concatenate([sk, sk + w]))  # for M r
        # atom: segments of [a, b] cut at input cells and output edges
        seg = np.unique(np.concatenate([xk, v]))
        seg = seg[(seg >= a) & (seg <= b)] if low is not None else np.empty(0)
        smid = (seg[:-1] + seg[1:]) / 2
        self.seg_in = np.searchsorted(u, smid, side="right") - 1
        self.seg_out = np.clip(np.searchsorted(v, smid, side="right") - 1, 0, self.m - 1)
        self.seg_w = p_atom * np.diff(seg) / np.diff(u)[self.seg_in] if seg.size else np.empty(0)

    def pi(self, f: np.ndarray) -> np.ndarray:
        """Mᵀf: the output-bin probabilities under input distribution f."""
        fc = f[self.parent]
        out = self.q * (self.width_out * (fc @ self.hi_share) + self.far_out * (fc @ self.lo_share))
        pv = self.cell_pts(np.where(self.high, fc * self.dens_scale, 0.0))
        out += np.diff(pv[:self.m + 1]) - np.diff(pv[self.m + 1:])
        if self.seg_w.size:
            out += np.bincount(self.seg_out, self.seg_w * f[self.seg_in], minlength=self.m)
        return out

    def back(self, r: np.ndarray) -> np.ndarray:
        """M r (r over output bins)."""
        n = self.parent.size + 1
        qs = self.out_pts(r)
        sliding = np.diff(qs[n:]) - np.diff(qs[:n])
        cell = np.where(self.high, sliding * self.dens_scale, 0.0)
        cell += self.q * (self.hi_share * (self.width_out @ r) + self.lo_share * (self.far_out @ r))
        out = np.bincount(self.parent, cell, minlength=self.d)
        if self.seg_w.size:
            out += np.bincount(self.seg_in, self.seg_w * r[self.seg_out], minlength=self.d)
        return out

    def pi_rows(self, f: np.ndarray) -> np.ndarray:
        """:meth:`pi` of each row of ``f``."""
        return np.stack([self.pi(row) for row in f])

    def back_rows(self, r: np.ndarray) -> np.ndarray:
        """:meth:`back` of each row of ``r``."""
        return np.stack([self.back(row) for row in r])


class _DenseOperator:
    """Products with an explicit matrix (numeric mechanisms without a piecewise structure)."""

    def __init__(self, matrix: np.ndarray):
        self.matrix = matrix

    def pi(self, f):
        return f @ self.matrix

    def back(self, r):
        return self.matrix @ r

    def pi_rows(self, f):
        return f @ self.matrix

    def back_rows(self, r):
        return r @ self.matrix.T


@dataclass(frozen=True)
class EM:
    """Estimate the input distribution of a numeric mechanism by EM over d equal bins of [−1, 1].

    The server histogram of reports over the mechanism's output bins (``mechanism.em_output_edges``)
    is the aggregate; it merges by addition. The transition matrix
    M[i, j] = P(x* ∈ out-bin j | x uniform in in-bin i) is exact (``mechanism.bin_transition``) and
    built once; for large d (d·m > ``DENSE_LIMIT``) EM multiplies by it in O(d + m) per iteration
    for PM and SDPM (``operator``: exact piecewise integrals, no d × m matrix), else densely.
    Each iteration (docs/math.md §2.3, vectorized): π = Mᵀf, f ← normalize(f ⊙ M(c/π)) and, with
    ``smoothing`` (EMS), f ← smooth(f). It stops when the log-likelihood LL(f) = Σ_j c_j ln π_j (the
    paper's eq. (16) summed over the n reports, c the histogram counts) changes by less than ``tol``
    (default: the paper's e^ε·10⁻³) or after ``max_iter`` iterations. ``mean`` is Σ_i mid_i·f̂_i.

    Post-processing only: privacy is the mechanism's. The estimate is biased (a constrained MLE,
    theorem 5 of the paper; EMS adds smoothing bias) but consistent as n → ∞ for EM.

    Math: docs/math.md §2.3 (SDLDP paper, algorithm 1; EMS: Li et al., SIGMOD 2020).

    Parameters
    ----------
    mechanism : NumericMechanism
        The mechanism that produced the reports (PM, SDPM or SW; docs/math.md §2.5 for SW).
    bins : int, default 1024
        Number d ≥ 2 of equal input bins of [−1, 1]; the output bins follow
        (``mechanism.em_output_edges``).
    smoothing : bool, default False
        EMS: smooth f with [1, 2, 1]/4 after every iteration.
    tol : float, optional
        Stop when the log-likelihood changes by less than this (≥ 0); default e^ε·10⁻³ (the paper's).
    max_iter : int, default 10 000
        Iteration cap (≥ 1).

    Attributes
    ----------
    in_edges, out_edges : numpy.ndarray
        Input bin edges (d + 1 on [−1, 1]) and output bin edges (on [−C, C]).
    matrix : numpy.ndarray
        The dense exact transition matrix (built on first use).
    midpoints : numpy.ndarray
        Centres of the input bins.

    Examples
    --------
    >>> from ldpsim.mechanisms.numeric.pm import PM
    >>> em = EM(PM(epsilon=2.0), bins=8)
    >>> em.matrix.shape
    (8, 8)
    >>> agg = em.aggregate(em.mechanism.perturb(np.full(2000, 0.25), rng=0))
    >>> f = em.estimate(agg)
    >>> f.shape, round(float(f.sum()), 6)
    ((8,), 1.0)
    """

    mechanism: NumericMechanism
    bins: int = 1024
    smoothing: bool = False
    tol: float | None = None
    max_iter: int = 10_000
    in_edges: np.ndarray = field(init=False, repr=False, compare=False)
    out_edges: np.ndarray = field(init=False, repr=False, compare=False)
    operator: object = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.mechanism, NumericMechanism):
            _fail("EM", "mechanism", "a NumericMechanism (PM, SDPM)", self.mechanism, TypeError)
        object.__setattr__(self, "bins", check_int("EM", "bins", self.bins, low=2, high=MAX_BINS))
        if not isinstance(self.smoothing, bool):
            _fail("EM", "smoothing", "a bool", self.smoothing, TypeError)
        tol = math.exp(self.mechanism.epsilon) * 1e-3 if self.tol is None else self.tol
        object.__setattr__(self, "tol", check_real("EM", "tol", tol, 0.0, math.inf, low_open=False))
        object.__setattr__(self, "max_iter", check_int("EM", "max_iter", self.max_iter, low=1))
        in_edges = np.linspace(-1.0, 1.0, self.bins + 1)
        out_edges = self.mechanism.em_output_edges(in_edges)
        object.__setattr__(self, "in_edges", in_edges)
        object.__setattr__(self, "out_edges", out_edges)
        parts = self.mechanism.piecewise_parts()
        fast = parts is not None and self.bins * (out_edges.size - 1) > DENSE_LIMIT
        op = _PiecewiseOperator(*parts, in_edges, out_edges) if fast else _DenseOperator(self.matrix)
        object.__setattr__(self, "operator", op)

    @cached_property
    def matrix(self) -> np.ndarray:
        """The dense exact transition matrix M (d × m), built on first use (EM itself uses
        ``operator``, which multiplies by M without forming it)."""
        return self.mechanism.bin_transition(self.in_edges, self.out_edges)

    @property
    def kind(self) -> str:
        """Aggregates depend only on the mechanism and the bins (not on tol, max_iter, smoothing)."""
        return f"EM({self.mechanism!r}, bins={self.bins})"

    @property
    def midpoints(self) -> np.ndarray:
        return (self.in_edges[:-1] + self.in_edges[1:]) / 2

    # server ------------------------------------------------------------------------------------
    def aggregate(self, reports) -> Aggregate:
        """Histogram of the reports over the output bins [e_j, e_{j+1}) (last bin closed).

        Parameters
        ----------
        reports : array_like of float
            Reports of ``mechanism``, in [−C, C].

        Returns
        -------
        Aggregate
            Output-bin counts; mergeable by addition.
        """
        y = self.mechanism._check_reports(reports, "aggregate")
        j = np.searchsorted(self.out_edges, y, side="right") - 1
        np.clip(j, 0, self.out_edges.size - 2, out=j)
        return Aggregate(y.size, np.bincount(j, minlength=self.out_edges.size - 1), self.kind)

    def run(self, agg: Aggregate) -> EMResult:
        """Run EM (or EMS) on an aggregate from the uniform start; see the class docstring.

        Parameters
        ----------
        agg : Aggregate
            Output-bin histogram made by :meth:`aggregate` of this EM (same mechanism and bins).

        Returns
        -------
        EMResult
            ``(f, n_iter, log_likelihood, converged)``; the uniform f for n = 0.
        """
        check_aggregate("EM", self.kind, agg)
        d = self.bins
        if agg.n == 0:
            return EMResult(np.full(d, 1.0 / d), 0, 0.0, True)
        c = agg.data.astype(np.float64)
        seen = c > 0  # empty output bins do not enter the likelihood
        op, f = self.operator, np.full(d, 1.0 / d)
        pi = op.pi(f)
        ll = float(c[seen] @ np.log(pi[seen]))
        ratio = np.zeros_like(c)
        for it in range(1, self.max_iter + 1):
            np.divide(c, pi, out=ratio, where=seen)
            f = f * op.back(ratio)
            f /= f.sum()
            if self.smoothing:
                f = smooth(f)
            pi = op.pi(f)
            new_ll = float(c[seen] @ np.log(pi[seen]))
            if abs(new_ll - ll) < self.tol:
                return EMResult(f, it, new_ll, True)
            ll = new_ll
        return EMResult(f, self.max_iter, ll, False)

    def estimate(self, agg: Aggregate) -> np.ndarray:
        """Estimated input distribution over the d bins (sums to one): ``run(agg).f``."""
        return self.run(agg).f

    def mean(self, agg: Aggregate) -> float:
        """Mean estimate Σ_i mid(bin_i)·f̂_i (docs/math.md §2.3); ``agg`` as for :meth:`run`."""
        return float(self.midpoints @ self.estimate(agg))

    def means(self, counts) -> np.ndarray:
        """:meth:`mean` of many histograms at once (a parametric bootstrap's replicates), EM run on all rows
        together: each row's iterations stop where :meth:`run` would stop on that row alone.

        Parameters
        ----------
        counts : array_like of int, shape (r, m)
            Output-bin histograms of this EM's output bins, each of at least one report.

        Returns
        -------
        numpy.ndarray, shape (r,)
            Each row's mean estimate Σ_i mid(bin_i)·f̂_i.
        """
        c = np.asarray(counts, dtype=np.float64)
        if c.ndim != 2 or c.shape[1] != self.out_edges.size - 1 or (c < 0).any() or (c.sum(axis=1) <= 0).any():
            _fail("EM.means", "counts", f"histograms of shape (r, {self.out_edges.size - 1}) with at least one "
                  "report each", c.shape, ValueError)
        return np.concatenate([self._means(c[i:i + BATCH_ROWS]) for i in range(0, len(c), BATCH_ROWS)])

    def _means(self, c: np.ndarray) -> np.ndarray:
        op, seen = self.operator, c > 0
        f = np.full((c.shape[0], self.bins), 1.0 / self.bins)
        ll = (c * np.log(np.where(seen, op.pi_rows(f), 1.0))).sum(axis=1)
        active = np.arange(c.shape[0])
        for _ in range(self.max_iter):
            ca, fa = c[active], f[active]
            ratio = np.divide(ca, op.pi_rows(fa), out=np.zeros_like(ca), where=seen[active])
            fa = fa * op.back_rows(ratio)
            fa /= fa.sum(axis=1, keepdims=True)
            if self.smoothing:
                fa = smooth(fa)
            new_ll = (ca * np.log(np.where(seen[active], op.pi_rows(fa), 1.0))).sum(axis=1)
            f[active] = fa
            going = np.abs(new_ll - ll[active]) >= self.tol
            ll[active] = new_ll
            active = active[going]
            if active.size == 0:
                break
        return f @ self.midpoints
