"""An adaptive quadtree heat map under secure aggregation with distributed noise — docs/math.md §9.11.

As in federated location heat maps (Bagdasaryan, Kairouz, Mellem, Gascón, Bonawitz, Estrin, Gruteser,
"Towards Sparse Federated Analytics: Location Heatmaps under Distributed Differential Privacy with
Secure Aggregation", PoPETs 2022): the server asks level after level of a quadtree on the side × side
grid. Each device answers one level, drawn uniformly; at level ℓ the devices send one-hot vectors over
the cells the server asks about (the four children of every cell split at level ℓ − 1; all four cells
at level 1), summed in cohorts by secure aggregation with distributed Skellam noise (:class:`SecureSum`,
docs/math.md §9.2). A cell is split when its estimated count h·(noisy sum) reaches the threshold. The
map spreads each leaf's deepest estimate evenly over its cells.

Privacy per person over the levels: a device's vector enters one level's release only, and changes one
coordinate by one (add/remove neighbours), so the whole adaptive run is (ε, δ)-DP with the (ε, δ) of one
release of the target noise — the later levels' questions are post-processing of earlier releases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_epsilon, check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise, hockey_stick
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum
from ldpsim.mechanisms.base import Guarantee
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.mechanisms.numeric.quadtree_heatmap import QuadtreeHeatmap


def skellam_for(epsilon: float, delta: float, rel_tol: float = 1e-4) -> IntegerNoise:
    """The smallest Skellam(μ) (to ``rel_tol``) whose release of a count changing by one is (ε, δ)-DP:
    hockey_stick(Sk(μ), ε) ≤ δ, found by bisection on log μ (docs/math.md §9.1)."""
    eps = check_epsilon("skellam_for", epsilon)
    delta = check_real("skellam_for", "delta", delta, 0.0, 1.0)
    low, high = 1e-2, 1.0
    while hockey_stick(IntegerNoise("skellam", high), eps) > delta:
        low, high = high, high * 4
    while high / low > 1 + rel_tol:
        mid = math.sqrt(low * high)
        low, high = (low, mid) if hockey_stick(IntegerNoise("skellam", mid), eps) <= delta else (mid, high)
    return IntegerNoise("skellam", high)


class QuadtreeRelease(NamedTuple):
    """One adaptive run: the map, and per level the cells asked (Morton node ids), their estimates
    h·(noisy sum), the devices at the level and the true counts the estimates target."""

    estimate: np.ndarray            # (side, side) counts
    asked: list                     # per level, node ids at that level
    node_estimates: list            # per level, h × the released sums of the asked nodes
    level_devices: np.ndarray       # (h,) devices that drew each level
    deepest: np.ndarray             # (side, side) the level of the estimate each cell was read from


@dataclass(frozen=True)
class SecAggQuadtree:
    """An adaptive quadtree heat map of taps under cohort secure aggregation with distributed Skellam noise.

    Math: docs/math.md §9.11 (and §9.2 for the cohorts).

    Privacy: (ε, δ)-DP per person over the whole run, for add/remove neighbours, trusting the
    secure-aggregation protocol (the server sees only cohort sums): each device answers one level.

    Parameters
    ----------
    epsilon : float
        ε per person over the run (of the one release a device enters).
    delta : float, default DELTA_RELEASE
        δ of that (ε, δ).
    side : int, default 16
        Cells per axis, a power of two in [2, 128]; h = log₂ side levels.
    split_sd : float, default 3
        A cell splits when its estimate reaches split_sd × the sd of an empty cell's estimate at its
        level (:meth:`threshold`); :meth:`false_split_probability` is the chance an empty cell splits.
    min_cohort : int, default 1000
        Smallest secure-aggregation cohort.
    min_arrival : float, default 1
        Fraction of a cohort that must arrive for its sum to be published.

    Examples
    --------
    >>> qt = SecAggQuadtree(epsilon=1.0, side=4, min_cohort=100)
    >>> grid = np.zeros((4, 4), np.int64); grid[0, 0] = 3000
    >>> out = qt.release(grid, rng=0)
    >>> out.estimate.shape, int(out.deepest[0, 0])
    ((4, 4), 2)
    """

    epsilon: float
    delta: float = DELTA_RELEASE
    side: int = 16
    split_sd: float = 3.0
    min_cohort: int = 1000
    min_arrival: float = 1.0
    noise: IntegerNoise = field(init=False, repr=False, compare=False)
    layout: QuadtreeHeatmap = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        eps = check_epsilon("SecAggQuadtree", self.epsilon)
        delta = check_real("SecAggQuadtree", "delta", self.delta, 0.0, 1.0)
        split = check_real("SecAggQuadtree", "split_sd", self.split_sd, 0.0, math.inf, low_open=False)
        layout = QuadtreeHeatmap(1.0, self.side)  # the Morton layout only (its oracles are unused)
        for name, value in (("epsilon", eps), ("delta", delta), ("split_sd", split), ("side", layout.side),
                            ("noise", skellam_for(eps, delta)), ("layout", layout)):
            object.__setattr__(self, name, value)
        SecureSum(self.noise, self.min_cohort, self.min_arrival)  # validates the protocol's parameters

    @property
    def protocol(self) -> SecureSum:
        """The secure sum each level runs (target noise: the calibrated Skellam)."""
        return SecureSum(self.noise, self.min_cohort, self.min_arrival)

    @property
    def height(self) -> int:
        return self.layout.bits

    @property
    def guarantee(self) -> Guarantee:
        """(ε, δ)-DP per person over the run (add/remove; trusts the secure-aggregation protocol)."""
        return Guarantee("central", self.epsilon, delta=self.delta)

    # theory -------------------------------------------------------------------------------------------
    def noise_variance(self, level_devices: int) -> float:
        """Variance of the summed noise of one level's release with these devices, all arriving."""
        return self.protocol.noise_variance(int(level_devices))

    def node_variance(self, count, level_devices: int) -> np.ndarray:
        """Exact variance of an asked node's estimate h·(sum over the level's devices in it + noise), given
        the devices at the level (all arriving): count·(h − 1) + h²·Var(noise) (docs/math.md §9.11).
        ``count`` is the node's true count over all devices; the level's share is Binomial(count, 1/h)."""
        h = self.height
        return np.asarray(count, np.float64) * (h - 1) + h * h * self.noise_variance(level_devices)

    def threshold(self, level_devices: int) -> float:
        """Split bar of a level: split_sd × h·sd(noise) — the sd of an empty cell's estimate."""
        return self.split_sd * self.height * math.sqrt(self.noise_variance(level_devices))

    def false_split_probability(self, level_devices: int) -> float:
        """P(an empty cell's estimate reaches the bar) from the exact law of the level's summed noise
        (all cohorts arriving: the sum of their Skellams). Expected false splits at a level: this times
        the empty cells asked."""
        sizes = self.protocol.cohort_sizes(int(level_devices))
        if sizes.size == 0:
            return 0.0
        total = IntegerNoise("skellam", sum(self.protocol.cohort_noise(int(s), int(s)).scale for s in sizes))
        k, p, _ = total.pmf_table()
        return float(p[k * self.height >= self.threshold(level_devices)].sum())

    # the run -------------------------------------------------------------------------------------------
    def release(self, grid_counts, rng=None, arrival_rate: float = 1.0) -> QuadtreeRelease:
        """Count level: the adaptive run from the true cell counts (exact law: per level, :meth:`SecureSum.release`).

        Parameters
        ----------
        grid_counts : array_like of non-negative ints, shape (side, side)
            Devices per cell (row 0 at y = −1), one tap each.
        rng : numpy.random.Generator, int or None
        arrival_rate : float in (0, 1]
            Each device arrives independently with this probability.

        Returns
        -------
        QuadtreeRelease
        """
        counts = check_counts("SecAggQuadtree", np.asarray(grid_counts).reshape(-1), self.side ** 2, "grid_counts")
        leaves = self.layout.to_leaves(counts.reshape(self.side, self.side))
        rng = as_generator(rng)
        h = self.height
        split = rng.multinomial(leaves, np.full(h, 1.0 / h))  # (D, h): each device's level
        return self._walk([self._nodes(split[:, lv - 1], lv) for lv in range(1, h + 1)], rng, arrival_rate)

    def release_points(self, points, rng=None, arrival_rate: float = 1.0) -> QuadtreeRelease:
        """Per-device path: each device draws its level and, at its level, adds its own noise shares to its
        one-hot vector (:meth:`SecureSum.release_per_device`); same law as :meth:`release`."""
        rng = as_generator(rng)
        cells = self.layout.cells(points)
        levels = rng.integers(1, self.height + 1, size=cells.size)
        per_level = [cells[levels == lv] // 4 ** (self.height - lv) for lv in range(1, self.height + 1)]
        return self._walk(per_level, rng, arrival_rate, per_device=True)

    def _nodes(self, leaf_counts: np.ndarray, level: int) -> np.ndarray:
        return leaf_counts.reshape(4 ** level, -1).sum(axis=1)

    def _walk(self, per_level, rng, arrival_rate, per_device=False) -> QuadtreeRelease:
        h, protocol = self.height, self.protocol
        asked, estimates, n_level = [np.arange(4)], [], []
        deepest_node = np.zeros(self.side ** 2, np.int64)  # leaf → its deepest asked node (at deepest_level)
        deepest_level = np.ones(self.side ** 2, np.int64)
        leaf = np.arange(self.side ** 2)
        for lv in range(1, h + 1):
            nodes = asked[-1]
            slot = np.full(4 ** lv, nodes.size)  # devices outside the asked cells send the zero vector
            slot[nodes] = np.arange(nodes.size)
            if per_device:
                items = slot[per_level[lv - 1]]
                n_level.append(items.size)
                released, _ = protocol.release_per_device(items, nodes.size + 1, rng, arrival_rate)
            else:
                level_counts = np.bincount(slot, weights=per_level[lv - 1], minlength=nodes.size + 1).astype(np.int64)
                n_level.append(int(level_counts.sum()))
                released, _ = protocol.release(level_counts, rng, arrival_rate)
            est = h * released[:nodes.size]
            estimates.append(est)
            here = np.isin(leaf // 4 ** (h - lv), nodes)
            deepest_node[here], deepest_level[here] = leaf[here] // 4 ** (h - lv), lv
            if lv < h:
                grow = nodes[est >= self.threshold(n_level[-1])]
                asked.append((grow[:, None] * 4 + np.arange(4)).ravel())
        values = np.zeros(self.side ** 2)
        for lv, (nodes, est) in enumerate(zip(asked, estimates), start=1):  # asked ids are sorted
            mine = deepest_level == lv
            values[mine] = est[np.searchsorted(nodes, deepest_node[mine])]
        spread = values / 4.0 ** (h - deepest_level)
        return QuadtreeRelease(self.layout.to_grid(spread), asked, estimates, np.array(n_level),
                               self.layout.to_grid(deepest_level))
