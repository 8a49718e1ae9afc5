"""Privacy-budget allocation across the levels of a noisy quadtree — docs/math.md §6, seed 004.

Levels are numbered 0 (leaves, a 2^h × 2^h grid) to h (the root). A point contributes to one node
per level, so the per-level budgets compose sequentially along a root-to-leaf path: Σ_i ε_i = ε.
Each node count gets Laplace noise of scale 1/ε_i (counting queries have sensitivity 1), i.e.
variance 2/ε_i².
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_int, check_real


def uniform_allocation(epsilon: float, h: int) -> np.ndarray:
    """ε_i = ε/(h+1) for every level (docs/math.md §6).

    Parameters
    ----------
    epsilon : float
        Total budget ε, in (0, inf).
    h : int
        Height of the tree (levels 0 … h), ≥ 0.

    Returns
    -------
    numpy.ndarray, shape (h + 1,)
        ε_i by level, 0 = leaves; sums to ε.

    Examples
    --------
    >>> uniform_allocation(1.0, 3).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    epsilon, h = check_epsilon("uniform_allocation", epsilon), check_int("uniform_allocation", "h", h, 0)
    return np.full(h + 1, epsilon / (h + 1))


def arithmetic_allocation(epsilon: float, h: int, d: float) -> np.ndarray:
    """ε_i = ε/(h+1) + (h/2 − i)·d, with 0 ≤ d < 2ε/(h(h+1)) so the root keeps a positive share
    (docs/math.md §6). ``epsilon`` in (0, inf), ``h`` ≥ 1; returns ε_i by level (0 = leaves), summing to ε."""
    epsilon = check_epsilon("arithmetic_allocation", epsilon)
    h = check_int("arithmetic_allocation", "h", h, 1)
    d = check_real("arithmetic_allocation", "d", d, 0.0, 2 * epsilon / (h * (h + 1)), low_open=False)
    return epsilon / (h + 1) + (h / 2 - np.arange(h + 1)) * d


def geometric_allocation(epsilon: float, h: int, q: float) -> np.ndarray:
    """ε_i = ε·q^{h−i}(1−q)/(1−q^{h+1}) for q ≠ 1 (q = 1: uniform); leaves get the most when q > 1
    (docs/math.md §6).

    Cormode et al.'s geometric allocation for quadtrees is the special case q = 2^{1/3}.
    ``epsilon`` in (0, inf), ``h`` ≥ 0, ``q`` > 0; returns ε_i by level (0 = leaves), summing to ε.
    """
    epsilon = check_epsilon("geometric_allocation", epsilon)
    h = check_int("geometric_allocation", "h", h, 0)
    q = check_real("geometric_allocation", "q", q, 0.0)
    if q == 1.0:
        return uniform_allocation(epsilon, h)
    return epsilon * q ** (h - np.arange(h + 1.0)) * (1 - q) / (1 - q ** (h + 1))


def cormode_allocation(epsilon: float, h: int) -> np.ndarray:
    """Cormode et al. (ICDE 2012) geometric budget for quadtrees: ratio 2^{1/3} between levels."""
    return geometric_allocation(epsilon, h, 2 ** (1 / 3))


def worst_case_nodes_per_level(h: int, capped: bool = False) -> np.ndarray:
    """Cormode et al.'s bound: at most 8·2^{h−i} nodes of level i answer a range query.

    Seed 004's findings (d ≈ 0.024 at h = 7; q ≈ 1.415 equalizes the levels) follow from this bound
    as is. Near the root it exceeds the 4^{h−i} nodes a level has; ``capped=True`` uses
    min(8·2^{h−i}, 4^{h−i}) instead, which moves the optimal d for h = 7, ε = 1 to ≈ 0.030.
    """
    h = check_int("worst_case_nodes_per_level", "h", h, 0)
    levels = h - np.arange(h + 1)
    bound = 8.0 * 2.0 ** levels
    return np.minimum(bound, 4.0 ** levels) if capped else bound


def level_errors(budgets, nodes_per_level=None) -> np.ndarray:
    """Err(level_i) = n_i · 2/ε_i² (docs/math.md §6); n_i defaults to the worst case 8·2^{h−i}.

    Parameters
    ----------
    budgets : array_like of float, shape (h + 1,)
        ε_i by level (0 = leaves).
    nodes_per_level : array_like, optional
        Nodes n_i of level i answering the query.

    Returns
    -------
    numpy.ndarray, shape (h + 1,)
    """
    eps = np.asarray(budgets, dtype=float)
    n = worst_case_nodes_per_level(eps.size - 1) if nodes_per_level is None else np.asarray(nodes_per_level)
    return n * 2.0 / eps ** 2


@dataclass(frozen=True)
class NoisyQuadtree:
    """A quadtree of noisy counts over points in [−1, 1]², answering rectangle queries (docs/math.md §6).

    Build with :meth:`build`; ``counts[i]`` and ``noisy[i]`` are the exact and noisy
    (2^{h−i} × 2^{h−i}) count grids of level i. A query over a leaf-aligned rectangle is answered
    from the canonical decomposition: the maximal tree nodes that lie inside the rectangle.

    Privacy: ε-DP (central) with ε = Σ_i budgets[i], by sequential composition along a root-to-leaf
    path; each node count gets Lap(1/ε_i) noise (seed 004; Cormode et al., ICDE 2012).

    Parameters
    ----------
    budgets : tuple of float
        ε_i per level, 0 = leaves … h = root.
    counts : tuple of numpy.ndarray
        Exact count grids per level.
    noisy : tuple of numpy.ndarray
        Noisy count grids per level.

    Examples
    --------
    >>> pts = np.array([[-0.9, -0.9], [0.5, 0.5], [0.6, 0.4]])
    >>> tree = NoisyQuadtree.build(pts, uniform_allocation(1.0, 2), rng=0)
    >>> tree.h, tree.counts[0].shape, int(tree.counts[2].sum())
    (2, (4, 4), 3)
    >>> noisy, exact, used = tree.answer(0, 4, 0, 4)
    >>> exact, used.tolist()
    (3.0, [0, 0, 1])
    """

    budgets: tuple
    counts: tuple
    noisy: tuple

    @property
    def h(self) -> int:
        return len(self.budgets) - 1

    @classmethod
    def build(cls, points, budgets, rng=None) -> "NoisyQuadtree":
        """Count the points per leaf cell, sum up the levels and add Lap(1/ε_i) noise to level i.

        Parameters
        ----------
        points : array_like, shape (n, 2)
            Finite points in [−1, 1]².
        budgets : array_like of float, shape (h + 1,)
            Positive per-level budgets (e.g. from :func:`geometric_allocation`); h is their number − 1.
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        NoisyQuadtree
        """
        pts = np.asarray(points, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)) or np.abs(pts).max(initial=0) > 1:
            raise ValueError("NoisyQuadtree: 'points' must be an (n, 2) array of finite values in [-1, 1].")
        eps = np.asarray(budgets, dtype=float)
        if eps.ndim != 1 or eps.size < 1 or np.any(~np.isfinite(eps)) or np.any(eps <= 0):
            raise ValueError(f"NoisyQuadtree: 'budgets' must be positive finite per-level budgets; got {budgets!r}.")
        h = eps.size - 1
        side = 2 ** h
        cell = np.minimum(((pts + 1) / 2 * side).astype(np.int64), side - 1)
        leaf = np.bincount(cell[:, 0] * side + cell[:, 1], minlength=side * side).reshape(side, side)
        rng = as_generator(rng)
        counts, noisy = [leaf], []
        for i in range(1, h + 1):
            c = counts[-1]
            counts.append(c.reshape(c.shape[0] // 2, 2, c.shape[1] // 2, 2).sum(axis=(1, 3)))
        for i, c in enumerate(counts):
            noisy.append(c + rng.laplace(0.0, 1.0 / eps[i], size=c.shape))
        return cls(tuple(eps), tuple(counts), tuple(noisy))

    def decomposition(self, x0: int, x1: int, y0: int, y1: int) -> list[np.ndarray]:
        """Per level, a boolean mask of the nodes answering leaf-cell rectangle [x0, x1) × [y0, y1).

        Parameters
        ----------
        x0, x1, y0, y1 : int
            Leaf-cell bounds, 0 ≤ x0 < x1 ≤ 2^h and 0 ≤ y0 < y1 ≤ 2^h.

        Returns
        -------
        list of numpy.ndarray of bool
            Index i = level i (0 = leaves), each of the level's grid shape.
        """
        side = 2 ** self.h
        if not (0 <= x0 < x1 <= side and 0 <= y0 < y1 <= side):
            raise ValueError(f"query must satisfy 0 <= x0 < x1 <= {side} and 0 <= y0 < y1 <= {side}; "
                             f"got {(x0, x1, y0, y1)}.")
        masks, parent_inside = [], None
        for i in range(self.h, -1, -1):
            w = 2 ** i  # node width in leaf cells
            lo = np.arange(side // w) * w
            inside_x = (lo >= x0) & (lo + w <= x1)
            inside_y = (lo >= y0) & (lo + w <= y1)
            inside = inside_x[:, None] & inside_y[None, :]
            used = inside if parent_inside is None else inside & ~np.repeat(np.repeat(parent_inside, 2, 0), 2, 1)
            masks.append(used)
            parent_inside = inside
        return masks[::-1]  # index by level: 0 = leaves

    def answer(self, x0, x1, y0, y1) -> tuple[float, float, np.ndarray]:
        """Answer a leaf-aligned rectangle query (bounds as in :meth:`decomposition`).

        Returns
        -------
        (float, float, numpy.ndarray)
            The noisy answer, the exact answer and the number of nodes used per level; the noisy
            answer's variance is Σ_i used[i]·2/ε_i².
        """
        masks = self.decomposition(x0, x1, y0, y1)
        noisy = sum(float(self.noisy[i][m].sum()) for i, m in enumerate(masks))
        exact = float(self.counts[0][x0:x1, y0:y1].sum())
        return noisy, exact, np.array([m.sum() for m in masks])
