"""EM post-processing of numeric reports (seed 000, algorithm 1) and its smoothed variant EMS — SPEC §2.3.

References: the SDLDP paper's algorithm 1; Li, Wang, Lopuhaä-Zwakenberg, Li, Škorić, "Estimating
Numerical Distributions under Local Differential Privacy", SIGMOD 2020 (EMS); Silverman, Jones,
Wilson, Nychka, "A smoothed EM approach to indirect estimation problems", JRSS B 1990 (the
[1, 2, 1]/4 smoothing with mass-preserving ends).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ._validation import _fail, check_int, check_real
from .base import Aggregate
from .numeric import NumericMechanism


class EMResult(NamedTuple):
    """Outcome of one EM run: the estimated input distribution over the d bins and diagnostics."""

    f: np.ndarray
    n_iter: int
    log_likelihood: float
    converged: bool


def smooth(f: np.ndarray) -> np.ndarray:
    """Binomial [1, 2, 1]/4 smoothing; an end bin gives its missing neighbour's weight to itself
    ((3f₀ + f₁)/4), so the total mass is preserved (Silverman et al. 1990, §3.2.2)."""
    g = 2 * f
    g[1:] += f[:-1]
    g[:-1] += f[1:]
    g[0] += f[0]
    g[-1] += f[-1]
    return g / 4


@dataclass(frozen=True)
class EM:
    """Estimate the input distribution of a numeric mechanism by EM over d equal bins of [−1, 1].

    The server histogram of reports over the mechanism's output bins (``mechanism.em_output_edges``)
    is the aggregate; it merges by addition. The transition matrix
    M[i, j] = P(x* ∈ out-bin j | x uniform in in-bin i) is exact (``mechanism.bin_transition``) and
    built once. Each iteration (SPEC §2.3, vectorized): π = Mᵀf, f ← normalize(f ⊙ M(c/π)) and, with
    ``smoothing`` (EMS), f ← smooth(f). It stops when the log-likelihood LL(f) = Σ_j c_j ln π_j (the
    paper's eq. (16) summed over the n reports, c the histogram counts) changes by less than ``tol``
    (default: the paper's e^ε·10⁻³) or after ``max_iter`` iterations. ``mean`` is Σ_i mid_i·f̂_i.

    Post-processing only: privacy is the mechanism's. The estimate is biased (a constrained MLE,
    theorem 5 of the paper; EMS adds smoothing bias) but consistent as n → ∞ for EM.

    >>> from mechanisms.pm import PM
    >>> em = EM(PM(epsilon=2.0), bins=8)
    >>> em.matrix.shape
    (8, 8)
    """

    mechanism: NumericMechanism
    bins: int = 1024
    smoothing: bool = False
    tol: float | None = None
    max_iter: int = 10_000
    in_edges: np.ndarray = field(init=False, repr=False, compare=False)
    out_edges: np.ndarray = field(init=False, repr=False, compare=False)
    matrix: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.mechanism, NumericMechanism):
            _fail("EM", "mechanism", "a NumericMechanism (PM, SDPM)", self.mechanism, TypeError)
        object.__setattr__(self, "bins", check_int("EM", "bins", self.bins, low=2))
        if not isinstance(self.smoothing, bool):
            _fail("EM", "smoothing", "a bool", self.smoothing, TypeError)
        tol = math.exp(self.mechanism.epsilon) * 1e-3 if self.tol is None else self.tol
        object.__setattr__(self, "tol", check_real("EM", "tol", tol, 0.0, math.inf, low_open=False))
        object.__setattr__(self, "max_iter", check_int("EM", "max_iter", self.max_iter, low=1))
        in_edges = np.linspace(-1.0, 1.0, self.bins + 1)
        out_edges = self.mechanism.em_output_edges(in_edges)
        object.__setattr__(self, "in_edges", in_edges)
        object.__setattr__(self, "out_edges", out_edges)
        object.__setattr__(self, "matrix", self.mechanism.bin_transition(in_edges, out_edges))

    @property
    def kind(self) -> str:
        """Aggregates depend only on the mechanism and the bins (not on tol, max_iter, smoothing)."""
        return f"EM({self.mechanism!r}, bins={self.bins})"

    @property
    def midpoints(self) -> np.ndarray:
        return (self.in_edges[:-1] + self.in_edges[1:]) / 2

    # server ------------------------------------------------------------------------------------
    def aggregate(self, reports) -> Aggregate:
        """Histogram of the reports over the output bins [e_j, e_{j+1}) (last bin closed)."""
        y = self.mechanism._check_reports(reports, "aggregate")
        j = np.searchsorted(self.out_edges, y, side="right") - 1
        np.clip(j, 0, self.out_edges.size - 2, out=j)
        return Aggregate(y.size, np.bincount(j, minlength=self.out_edges.size - 1), self.kind)

    def _check_aggregate(self, agg: Aggregate) -> None:
        if not isinstance(agg, Aggregate) or agg.kind != self.kind:
            got = agg.kind if isinstance(agg, Aggregate) else type(agg).__name__
            raise ValueError(f"EM: aggregate was made by {got}, not by {self.kind}.")

    def run(self, agg: Aggregate) -> EMResult:
        """Run EM (or EMS) on an aggregate from the uniform start; see the class docstring."""
        self._check_aggregate(agg)
        d = self.bins
        if agg.n == 0:
            return EMResult(np.full(d, 1.0 / d), 0, 0.0, True)
        seen = np.flatnonzero(agg.data)  # empty output bins do not enter the likelihood
        c = agg.data[seen].astype(np.float64)
        m = np.ascontiguousarray(self.matrix[:, seen])
        f = np.full(d, 1.0 / d)
        pi = f @ m
        ll = float(c @ np.log(pi))
        for it in range(1, self.max_iter + 1):
            f = f * (m @ (c / pi))
            f /= f.sum()
            if self.smoothing:
                f = smooth(f)
            pi = f @ m
            new_ll = float(c @ np.log(pi))
            if abs(new_ll - ll) < self.tol:
                return EMResult(f, it, new_ll, True)
            ll = new_ll
        return EMResult(f, self.max_iter, ll, False)

    def estimate(self, agg: Aggregate) -> np.ndarray:
        """Estimated input distribution over the d bins (sums to one)."""
        return self.run(agg).f

    def mean(self, agg: Aggregate) -> float:
        """Mean estimate Σ_i mid(bin_i)·f̂_i (SPEC §2.3)."""
        return float(self.midpoints @ self.estimate(agg))
