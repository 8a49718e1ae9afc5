"""2-D heat maps under LDP by hybrid-dimensional grids (HDG) — docs/math.md §2.8.

Yang, Wang, Li, Cheng, Su, Lin, Nie, Wu, "Answering Multi-Dimensional Range Queries under Local
Differential Privacy", PVLDB 2020. For two coordinates the devices split uniformly over three groups:
a 1-D grid of g₁ cells over x, one of g₁ cells over y, and a 2-D grid of g₂ × g₂ cells; each device
reports its cell of its group's grid through an ε-LDP frequency oracle. The server scales each group's
estimates by 3 (unbiased for the whole population), makes the grids consistent (each sums to n; the
1-D grids agree with the 2-D grid's marginals) — linear and unbiased, with exact variances —, then
removes negatives (Norm-Sub) and fits a g₁ × g₁ response matrix to the three grids by iterative
proportional fitting (the paper's weighted update). g₁ and g₂ follow the paper's guideline from ε and n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import _fail, as_generator, check_counts, check_epsilon, check_finite_in, check_int
from ldpsim.mechanisms.base import Aggregate, Guarantee, check_aggregate
from ldpsim.mechanisms.numeric.tree_histogram import ORACLES, group_device_variance, level_oracle, stacked
from ldpsim.runtime.errors import InputError

#: the paper's constants of its granularity guideline (α₁ for 1-D grids, α₂ for 2-D grids)
ALPHA_1, ALPHA_2 = 0.7, 0.03
#: groups for two coordinates: the x grid, the y grid, the 2-D grid (d + d(d − 1)/2 with d = 2)
GROUPS = 3


def _nearest_power_of_two(g: float, high: int) -> int:
    """The power of two in [2, high] nearest to g (by distance, as the paper rounds)."""
    powers = 2 ** np.arange(1, int(math.log2(high)) + 1)
    return int(powers[np.argmin(np.abs(powers - g))])


def hdg_granularity(epsilon: float, n: int, side: int) -> tuple[int, int]:
    """The paper's guideline for (g₁, g₂), rounded to powers of two in [2, side], g₂ ≤ g₁ (docs/math.md §2.8).

    g₁ = (n(e^ε − 1)²α₁² / (2m·e^ε))^{1/3} and g₂ = (2α₂(e^ε − 1)·√(n/(m·e^ε)))^{1/2}, m = 3 groups.

    Examples
    --------
    >>> hdg_granularity(1.0, 100_000, 16)
    (16, 4)
    """
    eps = check_epsilon("hdg_granularity", epsilon)
    n = check_int("hdg_granularity", "n", n, low=1)
    e = math.exp(eps)
    g1 = (n * (e - 1) ** 2 * ALPHA_1 ** 2 / (2 * GROUPS * e)) ** (1 / 3)
    g2 = math.sqrt(2 * ALPHA_2 * (e - 1) * math.sqrt(n / (GROUPS * e)))
    r1 = _nearest_power_of_two(g1, side)
    return r1, min(_nearest_power_of_two(g2, side), r1)


class HDGReports(NamedTuple):
    """Per-user reports: each device's group (0: x grid, 1: y grid, 2: 2-D grid) and, per group, its
    oracle's reports of the devices in it (in their order)."""

    groups: np.ndarray
    reports: tuple


@dataclass(frozen=True)
class HDG:
    """An ε-LDP heat map of points in [−1, 1]² on a side × side grid by hybrid-dimensional grids.

    Math: docs/math.md §2.8 (Yang et al., PVLDB 2020).

    Privacy: ε-LDP per device: one report, through an ε-LDP oracle, of its cell in one group's grid
    (the group is drawn independently of the point).

    Parameters
    ----------
    epsilon : float
        ε of the one report a device sends, in [1e-6, 50].
    n : int
        Devices expected, for the granularity guideline (:func:`hdg_granularity`).
    side : int, default 16
        Cells per axis of the output map, a power of two in [2, 128].
    g1, g2 : int, default 0
        Cells per axis of the 1-D and 2-D grids (powers of two, 2 ≤ g₂ ≤ g₁ ≤ side); 0 takes the guideline.
    oracle : {"auto", "grr", "oue"}
        Each group's frequency oracle ("auto": GRR while k − 2 < 3e^ε on k cells, else OUE).
    iterations : int, default 100
        Rounds of the weighted update (iterative proportional fitting).

    Examples
    --------
    >>> hdg = HDG(epsilon=1.0, n=100_000, side=16)
    >>> hdg.g1, hdg.g2
    (16, 4)
    >>> est = hdg.estimate(hdg.perturb_aggregate(np.zeros((500, 2)), rng=0))
    >>> est.shape, round(float(est.sum()), 6)
    ((16, 16), 500.0)
    """

    epsilon: float
    n: int
    side: int = 16
    g1: int = 0
    g2: int = 0
    oracle: str = "auto"
    iterations: int = 100
    oracles: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        n = check_int(self.name, "n", self.n, low=1)
        side = check_int(self.name, "side", self.side, low=2, high=128)
        if side & (side - 1):
            _fail(self.name, "side", "a power of two in [2, 128]", side)
        if self.oracle not in ORACLES:
            _fail(self.name, "oracle", f"one of {ORACLES}", self.oracle)
        guide = hdg_granularity(eps, n, side)
        g1 = check_int(self.name, "g1", self.g1, low=0, high=side) or guide[0]
        g2 = check_int(self.name, "g2", self.g2, low=0, high=g1) or min(guide[1], g1)
        for name, g in (("g1", g1), ("g2", g2)):
            if g < 2 or g & (g - 1):
                _fail(self.name, name, f"a power of two in [2, {side}] (g2 ≤ g1), or 0 for the guideline", g)
        iterations = check_int(self.name, "iterations", self.iterations, low=1)
        oracles = (level_oracle(eps, g1, self.oracle), level_oracle(eps, g1, self.oracle),
                   level_oracle(eps, g2 * g2, self.oracle))
        for name, value in (("epsilon", eps), ("n", n), ("side", side), ("g1", g1), ("g2", g2),
                            ("iterations", iterations), ("oracles", oracles)):
            object.__setattr__(self, name, value)

    name = "HDG"

    @property
    def kind(self) -> str:
        return f"HDG(epsilon={self.epsilon!r}, side={self.side}, g1={self.g1}, g2={self.g2}, oracle={self.oracle!r})"

    @property
    def guarantee(self) -> Guarantee:
        """ε-LDP of the one report a device sends."""
        return Guarantee("ldp", self.epsilon)

    # layout --------------------------------------------------------------------------------------------
    @cached_property
    def node_of(self) -> list[np.ndarray]:
        """Each output cell's (row-major, row 0 at y = −1) cell in the x grid, the y grid and the 2-D grid."""
        r, c = np.divmod(np.arange(self.side * self.side), self.side)
        s1, s2 = self.side // self.g1, self.side // self.g2
        return [c // s1, r // s1, (r // s2) * self.g2 + c // s2]

    def cells(self, points) -> np.ndarray:
        """Row-major output cell of each point ((n, 2) in [−1, 1]²; x = column, y = row)."""
        pts = np.asarray(points, np.float64)
        if pts.ndim != 2 or pts.shape[1] != 2:
            raise InputError(f"HDG: 'points' must have shape (n, 2); got {pts.shape}.")
        x = check_finite_in(self.name, pts[:, 0], -1.0, 1.0, "points")
        y = check_finite_in(self.name, pts[:, 1], -1.0, 1.0, "points")
        col = np.minimum(((x + 1) / 2 * self.side).astype(np.int64), self.side - 1)
        row = np.minimum(((y + 1) / 2 * self.side).astype(np.int64), self.side - 1)
        return row * self.side + col

    def cell_grid(self, points) -> np.ndarray:
        """True counts per output cell of ``points`` (side × side)."""
        return np.bincount(self.cells(points), minlength=self.side ** 2).reshape(self.side, self.side)

    # client and server ----------------------------------------------------------------------------------
    def perturb(self, points, rng=None) -> HDGReports:
        """Client side: each device draws a group uniformly and reports its cell of that group's grid.

        Parameters
        ----------
        points : array_like, shape (n, 2)
            Points in [−1, 1]².
        rng : numpy.random.Generator, int or None
            Source of randomness (the group, then each group's oracle).

        Returns
        -------
        HDGReports
        """
        cell = self.cells(points)
        rng = as_generator(rng)
        groups = rng.integers(0, GROUPS, size=cell.size).astype(np.int8)
        reports = tuple(o.perturb(nodes[cell[groups == g]], rng)
                        for g, (o, nodes) in enumerate(zip(self.oracles, self.node_of)))
        return HDGReports(groups, reports)

    def aggregate(self, reports: HDGReports) -> Aggregate:
        """Server side: the devices per group, then each group oracle's aggregate (merges by ``+``)."""
        if not isinstance(reports, HDGReports) or len(reports.reports) != GROUPS:
            raise TypeError(f"{self.name}.aggregate: reports must be the HDGReports of perturb.")
        aggs = [o.aggregate(r) for o, r in zip(self.oracles, reports.reports)]
        return stacked(self.kind, np.bincount(np.asarray(reports.groups, np.int64), minlength=GROUPS), aggs)

    def perturb_aggregate(self, points, rng=None) -> Aggregate:
        """:meth:`perturb` then :meth:`aggregate`."""
        return self.aggregate(self.perturb(points, rng))

    def sample_aggregate(self, grid_counts, rng=None) -> Aggregate:
        """Direct sampler: each cell's devices split Multinomial(count, 1/3 each) over the groups, then
        each group oracle's exact sampler — the law of ``aggregate(perturb(points))`` for those counts."""
        counts = check_counts(self.name, np.asarray(grid_counts).reshape(-1), self.side ** 2, "grid_counts")
        rng = as_generator(rng)
        split = rng.multinomial(counts, np.full(GROUPS, 1.0 / GROUPS))  # (D, 3)
        aggs = [o.sample_aggregate(np.bincount(nodes, weights=split[:, g], minlength=o.domain_size).astype(np.int64), rng)
                for g, (o, nodes) in enumerate(zip(self.oracles, self.node_of))]
        return stacked(self.kind, split.sum(axis=0), aggs)

    def grid_estimates(self, agg: Aggregate) -> np.ndarray:
        """Unbiased counts of every grid cell, x grid then y grid then the 2-D grid (row-major): 3 × each
        group oracle's estimate (Horvitz–Thompson; docs/math.md §2.8)."""
        check_aggregate(self.name, self.kind, agg)
        pos, out = GROUPS, []
        for g, o in enumerate(self.oracles):
            out.append(GROUPS * o.estimate(Aggregate(int(agg.data[g]), agg.data[pos:pos + o.domain_size], o.kind)))
            pos += o.domain_size
        return np.concatenate(out)

    def consistent_grids(self, agg: Aggregate) -> np.ndarray:
        """The grids made consistent (:func:`make_grids_consistent`): unbiased, variances :meth:`node_variance`."""
        return make_grids_consistent(self.grid_estimates(agg), float(agg.n), self.g1, self.g2)

    def estimate(self, agg: Aggregate) -> np.ndarray:
        """The heat map: consistent grids, Norm-Sub, the weighted update on g₁ × g₁, spread to side × side.

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration.

        Returns
        -------
        numpy.ndarray of float, shape (side, side)
            Non-negative counts summing to n (row 0 at y = −1). Not unbiased (Norm-Sub and the fit are not
            linear); the consistent grids it starts from are, with exact variances.
        """
        g1, g2, n = self.g1, self.g2, float(agg.n)
        nodes = self.consistent_grids(agg)
        x, y, grid2 = (norm_sub(part, n) for part in np.split(nodes, [g1, 2 * g1]))
        fit = weighted_update(x, y, grid2.reshape(g2, g2), n, self.iterations)
        s = self.side // g1
        return np.kron(fit, np.ones((s, s))) / (s * s)

    # theory -------------------------------------------------------------------------------------------
    @cached_property
    def consistency_matrix(self) -> np.ndarray:
        """C (N × N): the consistent grids are C·ŷ + n·c₀ for the N = 2g₁ + g₂² grid estimates ŷ."""
        n_nodes = 2 * self.g1 + self.g2 ** 2
        return make_grids_consistent(np.eye(n_nodes), np.zeros(n_nodes), self.g1, self.g2)

    def linear_variance(self, grid_counts, node_weights) -> np.ndarray:
        """Exact variance of Σ_v a_v·ŷ_v (a: N or N × Q over the raw grid estimates) for a fixed population
        with these side × side counts (:func:`group_device_variance`; docs/math.md §2.8)."""
        counts = check_counts(self.name, np.asarray(grid_counts).reshape(-1), self.side ** 2, "grid_counts")
        out = counts.astype(np.float64) @ group_device_variance(self.oracles, self.node_of, node_weights)
        return out if np.ndim(node_weights) > 1 else out[0]

    def node_variance(self, grid_counts, consistent: bool = True) -> np.ndarray:
        """Exact variance of every (consistent, or raw) grid cell's count, x grid, y grid, 2-D grid."""
        weights = self.consistency_matrix.T if consistent else np.eye(2 * self.g1 + self.g2 ** 2)
        return self.linear_variance(grid_counts, weights)

    def true_grids(self, grid_counts) -> np.ndarray:
        """The true counts of every grid cell (what :meth:`grid_estimates` estimates), in the same order."""
        counts = np.asarray(grid_counts, np.float64).reshape(-1)
        return np.concatenate([np.bincount(nodes, weights=counts, minlength=o.domain_size)
                               for o, nodes in zip(self.oracles, self.node_of)])


def make_grids_consistent(nodes, n, g1: int, g2: int) -> np.ndarray:
    """The linear consistency step of HDG for two coordinates (docs/math.md §2.8). Trailing axes are carried.

    Each grid is first shifted to sum to n (its cells share the gap equally); then, for each coordinate,
    the 1-D grid summed into g₂ blocks of k = g₁/g₂ cells (A) and the 2-D grid's marginal (B, sums of g₂
    cells) are averaged with inverse-variance weights for equal cell variances, Ā = (g₂·A + k·B)/(k + g₂),
    and the gaps are spread evenly: each 1-D cell of a block gets (Ā − A)/k, each 2-D cell of the line
    (Ā − B)/g₂. Every step is affine with expectation-preserving coefficients, so the result is unbiased.

    Parameters
    ----------
    nodes : numpy.ndarray, shape (2g₁ + g₂², …)
        x grid, y grid, 2-D grid (row-major, row = y).
    n : float or numpy.ndarray
        The total the grids sum to.
    g1, g2 : int

    Returns
    -------
    numpy.ndarray, same shape as ``nodes``
    """
    nodes = np.asarray(nodes, np.float64)
    tail = nodes.shape[1:]
    x, y, grid = (p.copy() for p in np.split(nodes, [g1, 2 * g1]))
    x += (n - x.sum(axis=0)) / g1
    y += (n - y.sum(axis=0)) / g1
    grid += (n - grid.sum(axis=0)) / (g2 * g2)
    grid = grid.reshape((g2, g2) + tail)
    k = g1 // g2
    for one_d, axis in ((x, 0), (y, 1)):  # x is the 2-D grid's column (sum over rows, axis 0); y its row
        blocks = one_d.reshape((g2, k) + tail).sum(axis=1)
        marginal = grid.sum(axis=axis)
        both = (g2 * blocks + k * marginal) / (k + g2)
        one_d += np.repeat((both - blocks) / k, k, axis=0)
        gap = (both - marginal) / g2
        grid += gap[None] if axis == 0 else gap[:, None]
    return np.concatenate([x, y, grid.reshape((g2 * g2,) + tail)])


def norm_sub(counts: np.ndarray, n: float) -> np.ndarray:
    """Norm-Sub: the non-negative counts max(c − δ, 0) summing to n (δ found exactly by sorting)."""
    c = np.asarray(counts, np.float64)
    if n <= 0:
        return np.zeros_like(c)
    s = np.sort(c)[::-1]
    shift = (np.cumsum(s) - n) / np.arange(1, s.size + 1)
    keep = int(np.nonzero(s - shift > 0)[0][-1]) + 1  # the largest prefix whose shifted values stay positive
    return np.maximum(c - shift[keep - 1], 0.0)


def weighted_update(x: np.ndarray, y: np.ndarray, grid: np.ndarray, n: float, iterations: int) -> np.ndarray:
    """The response matrix on g₁ × g₁ (row = y) fitted to the 2-D grid's blocks and the 1-D grids' columns and
    rows by iterative proportional fitting, from the uniform matrix (HDG's weighted update, docs/math.md §2.8)."""
    g1, g2 = x.size, grid.shape[0]
    k = g1 // g2
    m = np.full((g1, g1), n / (g1 * g1))
    for _ in range(iterations):
        blocks = m.reshape(g2, k, g2, k).sum(axis=(1, 3))
        m = m * np.repeat(np.repeat(_ratio(grid, blocks), k, 0), k, 1)
        m = m * _ratio(x, m.sum(axis=0))[None, :]
        m = m * _ratio(y, m.sum(axis=1))[:, None]
    return m * (n / m.sum()) if m.sum() > 0 else m


def _ratio(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    return np.divide(target, current, out=np.zeros_like(target, dtype=np.float64), where=current > 0)
