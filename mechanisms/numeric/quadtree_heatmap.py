"""2-D heat maps under LDP: a quadtree of frequency oracles over a 2^h × 2^h grid — docs/math.md §2.7.

A cell's Morton (Z-order) index interleaves the bits of its column and row, so the four children of a
quadtree node are four consecutive index blocks: the 1-D tree of :class:`TreeHistogram` with branching 4
over Morton indices *is* the quadtree. Levels, user partitioning, consistency and every exact variance
are therefore the tree's (docs/math.md §2.6); this module maps points to cells and leaves to grids.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import check_finite_in, check_int, check_real
from ldpsim.mechanisms.base import Aggregate, Guarantee
from ldpsim.mechanisms.numeric.tree_histogram import TreeHistogram
from ldpsim.runtime.errors import InputError


def morton(col: np.ndarray, row: np.ndarray, bits: int) -> np.ndarray:
    """Z-order index of cells (col, row) < 2^bits: bit i of col at position 2i, bit i of row at 2i + 1."""
    out = np.zeros(np.shape(col), np.int64)
    for i in range(bits):
        out |= ((col >> i) & 1) << (2 * i) | ((row >> i) & 1) << (2 * i + 1)
    return out


@dataclass(frozen=True)
class QuadtreeHeatmap:
    """An ε-LDP heat map of points in [−1, 1]² on a side × side grid (side = 2^h).

    Math: docs/math.md §2.7 (the tree of §2.6 with branching 4 on Morton indices; Cormode, Kulkarni,
    Srivastava, PVLDB 2019, for the hierarchy; Hay et al. 2010 for consistency).

    Privacy: ε-LDP per device (one report at one uniformly chosen level).

    Parameters
    ----------
    epsilon : float
        ε of the one report a device sends, in [1e-6, 50].
    side : int, default 16
        Cells per axis, a power of two in [2, 128].
    oracle : {"auto", "grr", "oue"}
        The frequency oracle of each level (see :class:`TreeHistogram`).

    Examples
    --------
    >>> hm = QuadtreeHeatmap(epsilon=1.0, side=4)
    >>> hm.cell_grid(np.array([[-0.9, -0.9], [0.9, 0.9], [0.9, -0.9]])).tolist()
    [[1, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]
    >>> hm.estimate(hm.perturb_aggregate(np.zeros((500, 2)), rng=0)).shape
    (4, 4)
    """

    epsilon: float
    side: int = 16
    oracle: str = "auto"
    tree: TreeHistogram = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        side = check_int("QuadtreeHeatmap", "side", self.side, low=2, high=128)
        if side & (side - 1):
            raise InputError(f"The 'side' parameter of QuadtreeHeatmap must be a power of two in [2, 128]. "
                             f"Got {side!r} instead.")
        object.__setattr__(self, "side", side)
        object.__setattr__(self, "tree", TreeHistogram(self.epsilon, 4, int(math.log2(side)), self.oracle))
        object.__setattr__(self, "epsilon", self.tree.epsilon)

    @property
    def guarantee(self) -> Guarantee:
        """ε-LDP of the one report a device sends."""
        return self.tree.guarantee

    @property
    def bits(self) -> int:
        return int(math.log2(self.side))

    @property
    def _order(self) -> np.ndarray:
        """Morton index of every grid cell, row-major (rows from y = −1 upwards)."""
        r, c = np.divmod(np.arange(self.side * self.side), self.side)
        return morton(c, r, self.bits)

    def cells(self, points) -> np.ndarray:
        """Morton index of each point's cell (points (n, 2) in [−1, 1]²; x = column, y = row)."""
        pts = np.asarray(points, np.float64)
        if pts.ndim != 2 or pts.shape[1] != 2:
            raise InputError(f"QuadtreeHeatmap: 'points' must have shape (n, 2); got {pts.shape}.")
        x = check_finite_in("QuadtreeHeatmap", pts[:, 0], -1.0, 1.0, "points")
        y = check_finite_in("QuadtreeHeatmap", pts[:, 1], -1.0, 1.0, "points")
        col = np.minimum(((x + 1) / 2 * self.side).astype(np.int64), self.side - 1)
        row = np.minimum(((y + 1) / 2 * self.side).astype(np.int64), self.side - 1)
        return morton(col, row, self.bits)

    def to_grid(self, leaves: np.ndarray) -> np.ndarray:
        """Leaves in Morton order → a side × side grid (row 0 at y = −1)."""
        return np.asarray(leaves)[self._order].reshape(self.side, self.side)

    def to_leaves(self, grid) -> np.ndarray:
        """A side × side grid → leaves in Morton order."""
        out = np.empty(self.side * self.side, np.asarray(grid).dtype)
        out[self._order] = np.asarray(grid).reshape(-1)
        return out

    def cell_grid(self, points) -> np.ndarray:
        """True counts per cell of ``points`` (a side × side grid)."""
        return self.to_grid(np.bincount(self.cells(points), minlength=self.side ** 2))

    def _values(self, points) -> np.ndarray:
        """Each point's leaf as the tree's reading: the centre of its Morton leaf on [−1, 1]."""
        return (self.cells(points) + 0.5) / self.side ** 2 * 2 - 1

    # client and server: the tree's ---------------------------------------------------------------------
    def perturb(self, points, rng=None):
        """Client side: the tree's reports of the points' Morton cells (:meth:`TreeHistogram.perturb`)."""
        return self.tree.perturb(self._values(points), rng)

    def aggregate(self, reports) -> Aggregate:
        return self.tree.aggregate(reports)

    def perturb_aggregate(self, points, rng=None) -> Aggregate:
        return self.tree.perturb_aggregate(self._values(points), rng)

    def sample_aggregate(self, grid_counts, rng=None) -> Aggregate:
        """Direct sampler from true cell counts (a side × side grid): the tree's exact sampler."""
        return self.tree.sample_aggregate(self.to_leaves(np.asarray(grid_counts, np.int64)), rng)

    def estimate(self, agg: Aggregate) -> np.ndarray:
        """Consistent cell counts, a side × side grid (unbiased; sums to n; may be negative)."""
        return self.to_grid(self.tree.estimate(agg))

    # theory -------------------------------------------------------------------------------------------
    def cell_variance(self, grid_counts) -> np.ndarray:
        """Exact variance of every estimated cell count (a side × side grid; docs/math.md §2.6)."""
        leaves = self.to_leaves(np.asarray(grid_counts, np.int64))
        weights = self.tree.consistency_matrix.T  # column t: the node weights of leaf t
        return self.to_grid(self.tree.linear_variance(leaves, weights))

    def devices_needed(self, shares, target_l2: float) -> int:
        """Devices n for E‖p̂ − p‖₂² ≤ target_l2² on a map with these cell shares (docs/math.md §2.7).

        E‖p̂ − p‖₂² = Σ_cells Var(count)/n² = Σ_cells v_cell/n, v the variance of one device's share
        (the closed form is linear in the counts); so n = ⌈Σ v / target²⌉.

        Parameters
        ----------
        shares : array_like, shape (side, side)
            The map's cell shares (non-negative, summing to one).
        target_l2 : float
            The root of the expected summed squared error of the cell shares, > 0.

        Returns
        -------
        int
        """
        p = np.asarray(shares, np.float64)
        if p.shape != (self.side, self.side) or np.any(p < 0) or not math.isclose(p.sum(), 1.0, rel_tol=1e-9):
            raise InputError(f"QuadtreeHeatmap.devices_needed: 'shares' must be a {self.side} × {self.side} grid "
                             f"of non-negative shares summing to one.")
        target = check_real("QuadtreeHeatmap.devices_needed", "target_l2", target_l2, 0.0, math.inf)
        per_device = self.to_leaves(p) @ self.tree.device_variance(self.tree.consistency_matrix.T)
        return int(math.ceil(per_device.sum() / target ** 2))
