"""Hierarchical (tree) histograms of one numeric reading under LDP, with consistency — docs/math.md §2.6.

The domain [−1, 1] is cut into D = β^h leaves; level ℓ = 1 … h of the tree has β^ℓ nodes (a node of
level ℓ covers β^{h−ℓ} leaves). Each device picks one level uniformly at random (independently of its
value) and reports the node holding its value through a frequency oracle on β^ℓ ids (GRR or OUE).
The server scales each level's count estimates by h (so they are unbiased for the whole population),
makes the tree consistent (Hay et al. 2010's two passes, with the root fixed at n) and answers
range counts, the CDF and quantiles — each with its exact variance (ranges, CDF) or its delta-method
variance (quantiles). References: Cormode, Kulkarni, Srivastava, "Answering Range Queries Under Local
Differential Privacy", PVLDB 2019; Hay, Rastogi, Miklau, Suciu, "Boosting the Accuracy of
Differentially Private Histograms Through Consistency", PVLDB 2010.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import (_fail, as_generator, check_counts, check_epsilon, check_finite_in,
                                           check_int, check_memory)
from ldpsim.mechanisms.base import Aggregate, Guarantee, Mechanism, check_aggregate
from ldpsim.mechanisms.frequency.grr import GRR
from ldpsim.mechanisms.frequency.oue import OUE
from ldpsim.runtime.errors import InputError

#: the oracles a level may use, and "auto": GRR while β^ℓ − 2 < 3e^ε (its variance is then lower), else OUE
ORACLES = ("auto", "grr", "oue")
#: most leaves (the consistency operator is a D × N matrix for the variances)
MAX_LEAVES = 1 << 14


class TreeReports(NamedTuple):
    """Per-user reports: the level each device chose (1 … h) and, per level, its oracle's reports
    of the devices that chose it (in their order)."""

    levels: np.ndarray
    reports: tuple


@dataclass(frozen=True)
class TreeHistogram(Mechanism):
    """A β-ary tree of frequency oracles over [−1, 1] with user partitioning and consistency.

    Math: docs/math.md §2.6.

    Privacy: ε-LDP per device: one report at one level through an ε-LDP oracle (the level is chosen
    independently of the value, so it reveals nothing).

    Parameters
    ----------
    epsilon : float
        ε of the one report a device sends, in [1e-6, 50].
    branching : int, default 4
        β ≥ 2, the fan-out of every node.
    height : int, default 5
        h ≥ 1 levels below the root; D = β^h ≤ 16 384 leaves.
    oracle : {"auto", "grr", "oue"}, default "auto"
        The frequency oracle of every level ("auto": GRR where β^ℓ − 2 < 3e^ε, else OUE).

    Examples
    --------
    >>> t = TreeHistogram(epsilon=1.0, branching=4, height=3)
    >>> t.leaves, [type(o).__name__ for o in t.level_oracles]
    (64, ['GRR', 'OUE', 'OUE'])
    >>> agg = t.perturb_aggregate(np.linspace(-1, 1, 1000), rng=0)
    >>> est = t.estimate(agg)
    >>> round(float(est.sum()), 6)
    1000.0
    """

    epsilon: float
    branching: int = 4
    height: int = 5
    oracle: str = "auto"
    level_oracles: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        b = check_int(self.name, "branching", self.branching, low=2)
        h = check_int(self.name, "height", self.height, low=1, high=int(math.log(MAX_LEAVES, b) + 1e-9))
        if self.oracle not in ORACLES:
            _fail(self.name, "oracle", f"one of {ORACLES}", self.oracle)
        oracles = [level_oracle(eps, b ** level, self.oracle) for level in range(1, h + 1)]
        for name, value in (("epsilon", eps), ("branching", b), ("height", h), ("level_oracles", tuple(oracles))):
            object.__setattr__(self, name, value)

    # layout --------------------------------------------------------------------------------------
    @property
    def leaves(self) -> int:
        """D = β^h."""
        return self.branching ** self.height

    @property
    def edges(self) -> np.ndarray:
        """The D + 1 leaf edges on [−1, 1]."""
        return np.linspace(-1.0, 1.0, self.leaves + 1)

    @property
    def report_bytes(self) -> int:
        """One byte for the level plus the largest level oracle's report."""
        return 1 + max(o.report_bytes for o in self.level_oracles)

    @property
    def guarantee(self) -> Guarantee:
        """ε-LDP of the one report a device sends."""
        return Guarantee("ldp", self.epsilon)

    def leaf_of(self, values) -> np.ndarray:
        """Leaf index ⌊(x + 1)/2 · D⌋ of each value in [−1, 1] (x = 1 in the last leaf)."""
        x = check_finite_in(self.name, values, -1.0, 1.0)
        return np.minimum(((x + 1.0) / 2.0 * self.leaves).astype(np.int64), self.leaves - 1)

    def _node_counts(self, leaf_counts: np.ndarray, level: int) -> np.ndarray:
        """True counts of the β^ℓ nodes of ``level`` from leaf counts (trailing axes kept)."""
        return leaf_counts.reshape((self.branching ** level, -1) + leaf_counts.shape[1:]).sum(axis=1)

    # client ----------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> TreeReports:
        """Client side: each device draws a level uniformly and reports its node there.

        Parameters
        ----------
        values : array_like of float, shape (n,)
            Readings in [−1, 1].
        rng : numpy.random.Generator, int or None
            Source of randomness (the level, then each level's oracle).

        Returns
        -------
        TreeReports
        """
        leaf = self.leaf_of(values)
        rng = as_generator(rng)
        levels = rng.integers(1, self.height + 1, size=leaf.size).astype(np.int8)
        reports = tuple(o.perturb(leaf[levels == lv] // self.branching ** (self.height - lv), rng)
                        for lv, o in enumerate(self.level_oracles, start=1))
        return TreeReports(levels, reports)

    # server ----------------------------------------------------------------------------------------
    def aggregate(self, reports: TreeReports) -> Aggregate:
        """Server side: the per-level device counts n_ℓ followed by each level oracle's aggregate.

        Parameters
        ----------
        reports : TreeReports
            As returned by :meth:`perturb`.

        Returns
        -------
        Aggregate
            Mergeable by addition with aggregates of the same configuration.
        """
        if not isinstance(reports, TreeReports) or len(reports.reports) != self.height:
            raise TypeError(f"{self.name}.aggregate: reports must be the TreeReports of perturb.")
        aggs = [o.aggregate(r) for o, r in zip(self.level_oracles, reports.reports)]
        n_level = np.bincount(np.asarray(reports.levels, np.int64), minlength=self.height + 1)[1:]
        if any(a.n != m for a, m in zip(aggs, n_level)):
            raise ValueError(f"{self.name}.aggregate: the levels do not match the reports per level.")
        return stacked(self.kind, n_level, aggs)

    def perturb_aggregate(self, values, rng=None) -> Aggregate:
        """:meth:`perturb` then :meth:`aggregate`."""
        return self.aggregate(self.perturb(values, rng))

    def sample_aggregate(self, leaf_counts, rng=None) -> Aggregate:
        """Direct sampler: the aggregate of ``sum(leaf_counts)`` devices from its exact law.

        The devices of each leaf split over the h levels as Multinomial(count, 1/h each); each level's
        oracle aggregate is then drawn by the oracle's own exact sampler from its node counts.

        Parameters
        ----------
        leaf_counts : array_like of non-negative ints, shape (D,)
            Devices per leaf.
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        Aggregate
            Same law as ``aggregate(perturb(values))`` for readings in those leaves.
        """
        counts = check_counts(self.name, leaf_counts, self.leaves, "leaf_counts")
        rng = as_generator(rng)
        split = rng.multinomial(counts, np.full(self.height, 1.0 / self.height))  # (D, h)
        aggs = [o.sample_aggregate(self._node_counts(split[:, lv - 1], lv), rng)
                for lv, o in enumerate(self.level_oracles, start=1)]
        return stacked(self.kind, split.sum(axis=0), aggs)

    def _levels(self, agg: Aggregate) -> list[np.ndarray]:
        check_aggregate(self.name, self.kind, agg)
        n_level, pos, out = agg.data[:self.height], self.height, []
        for lv, o in enumerate(self.level_oracles, start=1):
            size = o.domain_size
            level_agg = Aggregate(int(n_level[lv - 1]), agg.data[pos:pos + size], o.kind)
            out.append(self.height * o.estimate(level_agg))
            pos += size
        return out

    def node_estimates(self, agg: Aggregate) -> list[np.ndarray]:
        """Unbiased count estimates of every node, level 1 … h: h × the level oracle's estimate."""
        return self._levels(agg)

    def estimate(self, agg: Aggregate) -> np.ndarray:
        """Consistent leaf counts (:func:`make_consistent`).

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration (``ValueError`` otherwise).

        Returns
        -------
        numpy.ndarray of float, shape (D,)
            Unbiased counts summing to n (they may be negative); variances: :meth:`linear_variance`.
        """
        return make_consistent(self._levels(agg), float(agg.n), self.branching)

    # theory ------------------------------------------------------------------------------------------
    @cached_property
    def consistency_matrix(self) -> np.ndarray:
        """A (D × N): the consistent leaves are A·ŷ + (n/D)·1 for the N node estimates ŷ of levels
        1 … h in order (the affine part is the root's share; built once, D·N floats)."""
        n_nodes = sum(o.domain_size for o in self.level_oracles)
        check_memory(self.name, 8.0 * self.leaves * n_nodes, "the consistency matrix", "branching or height")
        eye, pos, levels = np.eye(n_nodes), 0, []
        for o in self.level_oracles:
            levels.append(eye[pos:pos + o.domain_size])
            pos += o.domain_size
        return make_consistent(levels, np.zeros(n_nodes), self.branching)

    def _weights(self, leaf_weights: np.ndarray) -> np.ndarray:
        """Node weights Aᵀr (N × Q) of the functionals Σ_t r_t·(consistent leaf t), r the columns of ``leaf_weights``."""
        return self.consistency_matrix.T @ leaf_weights

    def decomposition(self, lo: int, hi: int) -> np.ndarray:
        """Node weights (N,) of the raw range estimate of leaves [lo, hi): the fewest whole nodes
        covering it (a node is used when it lies inside the range and its parent does not)."""
        parts, parent_inside = [], np.zeros(1, bool)
        for lv in range(1, self.height + 1):
            size = self.branching ** (self.height - lv)
            v = np.arange(self.branching ** lv)
            inside = (v * size >= lo) & ((v + 1) * size <= hi)
            parts.append((inside & ~np.repeat(parent_inside, self.branching)).astype(np.float64))
            parent_inside = inside
        return np.concatenate(parts)

    def _range(self, lo, hi) -> tuple[int, int]:
        lo = check_int(self.name, "lo", lo, low=0, high=self.leaves - 1)
        return lo, check_int(self.name, "hi", hi, low=lo + 1, high=self.leaves)

    def range_count(self, agg: Aggregate, lo: int, hi: int, consistent: bool = True) -> float:
        """Estimated count of leaves [lo, hi): the consistent leaves' sum, or the raw decomposition's."""
        lo, hi = self._range(lo, hi)
        if consistent:
            return float(self.estimate(agg)[lo:hi].sum())
        return float(np.concatenate(self._levels(agg)) @ self.decomposition(lo, hi))

    def device_variance(self, node_weights) -> np.ndarray:
        """Variance that one device of each leaf adds to Σ_v a_v·ŷ_v, shape (D, Q) for node weights ``a``
        (N × Q): :func:`group_device_variance` with the levels as the groups (docs/math.md §2.6)."""
        t = np.arange(self.leaves)
        return group_device_variance(self.level_oracles,
                                     [t // self.branching ** (self.height - lv) for lv in range(1, self.height + 1)],
                                     node_weights)

    def linear_variance(self, leaf_counts, node_weights) -> np.ndarray:
        """Exact variance of Σ_v a_v·ŷ_v for node weights ``a`` (N, or N × Q) and a fixed population:
        Σ_t n_t·:meth:`device_variance` (devices are independent; docs/math.md §2.6)."""
        counts = check_counts(self.name, leaf_counts, self.leaves, "leaf_counts").astype(np.float64)
        out = counts @ self.device_variance(node_weights)
        return out if np.ndim(node_weights) > 1 else out[0]

    def range_variance(self, leaf_counts, lo: int, hi: int, consistent: bool = True) -> float:
        """Exact variance of :meth:`range_count` for a fixed population with these leaf counts."""
        lo, hi = self._range(lo, hi)
        if not consistent:
            return float(self.linear_variance(leaf_counts, self.decomposition(lo, hi)))
        r = np.zeros((self.leaves, 1))
        r[lo:hi] = 1.0
        return float(self.linear_variance(leaf_counts, self._weights(r))[0])

    def cdf(self, agg: Aggregate) -> np.ndarray:
        """F̂ at the D + 1 leaf edges: consistent prefix sums / n (unbiased; not clipped)."""
        return np.concatenate([[0.0], np.cumsum(self.estimate(agg))]) / max(agg.n, 1)

    def cdf_variance(self, leaf_counts) -> np.ndarray:
        """Exact variance of :meth:`cdf` at the D + 1 leaf edges for a fixed population."""
        counts = check_counts(self.name, leaf_counts, self.leaves, "leaf_counts")
        r = np.tril(np.ones((self.leaves + 1, self.leaves)), -1).T  # column k: leaves < k
        n = max(int(counts.sum()), 1)
        return self.linear_variance(counts, self._weights(r)) / n ** 2

    def quantile(self, agg: Aggregate, alpha) -> np.ndarray:
        """Quantiles: the first point where the monotone CDF (running maximum of :meth:`cdf`, clipped
        to [0, 1]) reaches α, linear inside a leaf (docs/math.md §2.6)."""
        alpha = self._alphas(alpha)
        F = np.clip(np.maximum.accumulate(self.cdf(agg)), 0.0, 1.0)
        F[-1] = 1.0
        return quantile_from_cdf(self.edges, F, alpha)

    def quantile_variance(self, leaf_counts, alpha) -> np.ndarray:
        """Delta-method variance Var F̂(t_α)/φ(t_α)² of :meth:`quantile` (φ the true density in t_α's
        leaf, t_α the true quantile of the leaf-uniform population; docs/math.md §2.6). Infinite where φ = 0."""
        alpha = self._alphas(alpha)
        counts = check_counts(self.name, leaf_counts, self.leaves, "leaf_counts").astype(np.float64)
        n, e = counts.sum(), self.edges
        F = np.concatenate([[0.0], np.cumsum(counts)]) / n
        t = quantile_from_cdf(e, F, alpha)
        k = np.clip(np.searchsorted(e, t, side="right") - 1, 0, self.leaves - 1)
        r = (np.arange(self.leaves)[:, None] < k).astype(np.float64)
        r[k, np.arange(k.size)] = (t - e[k]) / (e[1] - e[0])
        var_F = self.linear_variance(counts, self._weights(r)) / n ** 2
        dens = counts[k] / (n * (e[1] - e[0]))
        with np.errstate(divide="ignore"):
            return np.where(dens > 0, var_F / dens ** 2, np.inf)

    def _alphas(self, alpha) -> np.ndarray:
        a = check_finite_in(self.name, np.atleast_1d(alpha), 0.0, 1.0, "alpha")
        if np.any((a <= 0) | (a >= 1)):
            raise InputError(f"{self.name}: 'alpha' must lie in the open interval (0, 1); got {a.tolist()}.")
        return a


def stacked(kind: str, n_group, aggs) -> Aggregate:
    """One aggregate of devices split into groups: the group sizes, then each group's oracle aggregate
    (the tree histogram's levels, HDG's grids)."""
    data = np.concatenate([np.asarray(n_group, np.float64)] + [a.data.astype(np.float64) for a in aggs])
    return Aggregate(int(sum(n_group)), data, kind)


def level_oracle(epsilon: float, k: int, oracle: str = "auto"):
    """The ε-LDP oracle on k ids of one level or group: GRR, OUE, or "auto" (GRR while k − 2 < 3e^ε)."""
    use_grr = oracle == "grr" or (oracle == "auto" and k - 2 < 3 * math.exp(epsilon))
    return (GRR if use_grr else OUE)(epsilon, k)


def group_device_variance(oracles, node_of: list, node_weights) -> np.ndarray:
    """Variance one device of each leaf adds to Σ_v a_v·ŷ_v when every device reports in one of G groups
    drawn uniformly (independently of its value) and group g's estimates are G × its oracle's.

    G·Σ_g (Var(Z_g | t) + μ_g²) − (Σ_g μ_g)², μ_g = a at leaf t's node of group g and Var(Z_g | t) the
    oracle's variance of Σ_v a_v·z_v (docs/math.md §2.6; the groups are a tree's levels or a grid's parts).

    Parameters
    ----------
    oracles : sequence of GRR or OUE
        Group g's frequency oracle over its nodes.
    node_of : list of numpy.ndarray of int, each shape (D,)
        Leaf t's node in group g.
    node_weights : array_like, shape (N,) or (N, Q)
        a over the nodes of all groups, in group order.

    Returns
    -------
    numpy.ndarray, shape (D, Q)
    """
    a = np.asarray(node_weights, np.float64)
    a = a.reshape(a.shape[0], -1)
    groups = len(oracles)
    per_device, mu_sum, pos = 0.0, 0.0, 0
    for o, nodes in zip(oracles, node_of):
        w = a[pos:pos + o.domain_size]
        pos += o.domain_size
        mu = w[nodes]  # (D, Q)
        s1, s2, gap = w.sum(axis=0), (w ** 2).sum(axis=0), o.p - o.q
        if isinstance(o, GRR):
            var = o.q * s2 + gap * mu ** 2 - (o.q * s1 + gap * mu) ** 2
        else:
            var = o.q * (1 - o.q) * s2 + (o.p * (1 - o.p) - o.q * (1 - o.q)) * mu ** 2
        per_device = per_device + groups * (var / gap ** 2 + mu ** 2)
        mu_sum = mu_sum + mu
    return per_device - mu_sum ** 2


def quantile_from_cdf(edges: np.ndarray, cdf: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The first t with F(t) = α for a non-decreasing CDF given at ``edges`` and linear between them."""
    k = np.clip(np.searchsorted(cdf, alpha, side="left"), 1, edges.size - 1)
    lo, hi = cdf[k - 1], cdf[k]
    frac = np.where(hi > lo, (alpha - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0)
    return edges[k - 1] + frac * (edges[k] - edges[k - 1])


def make_consistent(levels: list, root, branching: int) -> np.ndarray:
    """Hay et al.'s two passes over node estimates of levels 1 … h with the root fixed (docs/math.md §2.6).

    Bottom-up, a node at height i (leaves: i = 1) takes z = [(β^i − β^{i−1})·ŷ + (β^{i−1} − 1)·Σ_children z]
    /(β^i − 1); top-down, x̄ = z + (x̄_parent − Σ_siblings z)/β from x̄_root = ``root``. Linear in the
    estimates, unbiased, and the children of every node sum to it. Trailing axes are carried along.

    Parameters
    ----------
    levels : list of numpy.ndarray
        Level ℓ's estimates, shape (β^ℓ, …), for ℓ = 1 … h.
    root : float or numpy.ndarray
        The root's value (n), shape of one node's trailing axes.
    branching : int
        β.

    Returns
    -------
    numpy.ndarray
        The consistent leaves, shape (β^h, …).
    """
    b, h = branching, len(levels)
    z = list(levels)
    for lv in range(h - 2, -1, -1):  # list index lv is tree level lv + 1, height i = h − lv
        i = h - lv
        child = z[lv + 1].reshape((b ** (lv + 1), b) + z[lv + 1].shape[1:]).sum(axis=1)
        z[lv] = ((b ** i - b ** (i - 1)) * levels[lv] + (b ** (i - 1) - 1) * child) / (b ** i - 1)
    x = np.asarray(root, np.float64)[None, ...]
    for lv in range(h):
        zc = z[lv].reshape((b ** lv, b) + z[lv].shape[1:])
        x = (zc + (x[:, None] - zc.sum(axis=1, keepdims=True)) / b).reshape(z[lv].shape)
    return x
