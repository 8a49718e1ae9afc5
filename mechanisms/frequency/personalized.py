"""Personalized SDLDP: users choose their own high/low partition; groups combined by inverse variance.

docs/math.md §2.4 (paper section 4.5, eq. (19)).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import (as_generator, check_counts, check_domain_size, check_epsilon,
    check_item_ids)
from ldpsim.mechanisms.base import Aggregate, FrequencyOracle, decode_uints, encode_uints, uint_bytes
from ldpsim.mechanisms.frequency.sdgrr import SDGRR


def combine_inverse_variance(estimates, variances):
    """Combine per-group estimates by inverse-variance weighting — docs/math.md §2.4, paper eq. (19).

    ``ṽ = Σ_g (ṽ_g / Var_g) / Σ_g (1 / Var_g)`` and ``Var[ṽ] = 1 / Σ_g (1 / Var_g)``, entry by entry.

    Parameters
    ----------
    estimates, variances : array_like, shape (G, ...)
        Axis 0 indexes the groups; the remaining axes (items, coordinates, ...) are combined entry
        by entry. Variances must lie in (0, inf]. A group with zero users carries no information:
        give it variance ``inf`` (its estimate may then be anything, NaN included) and it is skipped.

    Returns
    -------
    est, var : ndarray, shape (...)
        The combined estimate and its variance. The variance is exact when the variances are the
        true ones and the weights do not depend on the data; with plug-in variances it is the usual
        first-order approximation. Entries where every group is skipped are NaN with variance inf.

    >>> est, var = combine_inverse_variance([[1.0], [3.0]], [[1.0], [3.0]])
    >>> est.tolist(), var.tolist()
    ([1.5], [0.75])
    """
    est = np.asarray(estimates, dtype=np.float64)
    var = np.asarray(variances, dtype=np.float64)
    if est.ndim < 1 or est.shape != var.shape:
        raise ValueError("combine_inverse_variance: 'estimates' and 'variances' must have the same shape "
                         f"(G, ...) with G ≥ 1 groups on axis 0; got {est.shape} and {var.shape}.")
    if est.shape[0] == 0:
        raise ValueError("combine_inverse_variance: need at least one group on axis 0; got 0.")
    bad = np.isnan(var) | (var <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError("combine_inverse_variance: 'variances' must lie in (0, inf] (inf marks a group "
                         f"with no users); got {float(var.flat[i])!r} at flat index {i}.")
    used = np.isfinite(var)
    if np.any(used & ~np.isfinite(est)):
        raise ValueError("combine_inverse_variance: a group with finite variance has a non-finite estimate.")
    weight = np.where(used, 1.0 / np.where(used, var, 1.0), 0.0)
    total = weight.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        combined = (weight * np.where(used, est, 0.0)).sum(axis=0) / total  # paper eq. (19)
        combined_var = 1.0 / total
    return combined, combined_var


class PersonalizedReports(NamedTuple):
    """One report per user: the SDGRR output and the index of the partition the user chose."""

    y: np.ndarray
    group: np.ndarray


@dataclass(frozen=True)
class PersonalizedSDGRR(FrequencyOracle):
    """SDGRR where each user picks one of several high/low partitions — docs/math.md §2.4, paper section 4.5.

    Privacy: each user gets ε-SDLDP (see :class:`SDGRR`) with respect to the partition they chose;
    the partition index is sent in the clear (it is chosen by the user, independent of the value).

    Client: user i with value x_i and chosen group g_i reports ``(SDGRR_g.perturb(x_i), g_i)``, where
    ``SDGRR_g`` has high set ``partitions[g]``. Server: the aggregate is the G × D matrix of per-group
    output counts (merges by addition). ``estimate`` computes each group's SDGRR frequency estimate, weights
    it by the inverse of the group's variance evaluated at that group's plug-in estimate (clipped at 0 and
    rescaled to the group size), combines by :func:`combine_inverse_variance` and scales the frequency to
    the whole population's counts. Groups with no users are skipped.

    Theory: :meth:`variance` is the variance of the combination with weights from the true group counts,
    n² / Σ_g (n_g² / Var_g) (count scale). The plug-in weights depend on the data, which adds a bias and a
    variance of relative order 1/n_g (first-order theory; ``bias`` reports 0).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf) (the same for every group).
    domain_size : int
        Number of values D ≥ 2; users hold ids 0 … D−1.
    partitions : sequence of sequences of int
        The G ≥ 1 high sets users may choose from (each a valid ``high`` of :class:`SDGRR`, leaving a
        non-empty low set; pairwise distinct). Group g is ``partitions[g]``.

    Attributes
    ----------
    groups : tuple of SDGRR
        One SDGRR per partition.
    n_groups : int
        G.

    Examples
    --------
    >>> m = PersonalizedSDGRR(1.0, 4, partitions=[[0], [0, 1, 2]])
    >>> r = m.perturb([0, 3, 2], groups=[0, 1, 1], rng=1)
    >>> m.aggregate(r).data.sum(axis=1).tolist()
    [1, 2]
    """

    epsilon: float
    privacy_kind = "sdldp"
    domain_size: int
    partitions: tuple
    groups: tuple = field(init=False, repr=False, compare=False)  #: one SDGRR per partition

    def __post_init__(self):
        name = self.name
        eps = check_epsilon(name, self.epsilon)
        d = check_domain_size(name, self.domain_size)
        if isinstance(self.partitions, (str, bytes)) or not hasattr(self.partitions, "__iter__"):
            raise TypeError(f"The 'partitions' parameter of {name} must be a non-empty sequence of high-id "
                            f"sets. Got {self.partitions!r} instead.")
        groups = []
        for g, high in enumerate(self.partitions):
            try:
                groups.append(SDGRR(eps, d, high))
            except (TypeError, ValueError) as err:
                raise type(err)(f"The 'partitions' parameter of {name}: entry {g} is not a valid high "
                                f"set: {err}") from None
        if not groups:
            raise ValueError(f"The 'partitions' parameter of {name} must be a non-empty sequence of high-id "
                             f"sets. Got {self.partitions!r} instead.")
        highs = [m.high for m in groups]
        for g, high in enumerate(highs):
            if high in highs[:g]:
                raise ValueError(f"The 'partitions' parameter of {name} must hold distinct high sets. "
                                 f"Got entries {highs.index(high)} and {g} equal to {high}.")
        for k, v in dict(epsilon=eps, domain_size=d, partitions=tuple(highs), groups=tuple(groups)).items():
            object.__setattr__(self, k, v)

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, groups, rng=None) -> PersonalizedReports:
        """Client side: privatize ``values[i]`` with the SDGRR of partition ``groups[i]``.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Item ids in [0, D).
        groups : array_like of int, shape (n,)
            The partition each user chose, in [0, G).
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        PersonalizedReports
            ``(y, group)``: the SDGRR outputs and the (public) group indices.
        """
        x = check_item_ids(self.name, values, self.domain_size)
        g = check_item_ids(self.name, groups, self.n_groups, "groups")
        if g.shape != x.shape:
            raise ValueError(f"{self.name}: 'values' and 'groups' must have the same length; "
                             f"got {x.size} and {g.size}.")
        rng = as_generator(rng)
        y = np.empty_like(x)
        for k, mech in enumerate(self.groups):
            members = np.flatnonzero(g == k)
            y[members] = mech.perturb(x[members], rng)
        return PersonalizedReports(y, g)

    # server ------------------------------------------------------------------------------------
    def aggregate(self, reports) -> Aggregate:
        """Per-group output counts.

        Parameters
        ----------
        reports : PersonalizedReports
            ``(y, group)`` of equal length.

        Returns
        -------
        Aggregate
            ``data`` of shape (G, D): output counts of each group.
        """
        y, g = reports
        y = check_item_ids(f"{self.name}.aggregate", y, self.domain_size, "reports.y")
        g = check_item_ids(f"{self.name}.aggregate", g, self.n_groups, "reports.group")
        if g.shape != y.shape:
            raise ValueError(f"{self.name}.aggregate: reports.y and reports.group differ in length "
                             f"({y.size} and {g.size}).")
        d = self.domain_size
        counts = np.bincount(g * d + y, minlength=self.n_groups * d).reshape(self.n_groups, d)
        return Aggregate(y.size, counts, self.kind)

    def group_estimates(self, agg: Aggregate) -> tuple[np.ndarray, np.ndarray]:
        """Per-group FREQUENCY estimates (G × D) and their variances at the plug-in estimate.

        A group with no users has estimate NaN and variance inf (skipped by the combination).
        """
        self._check_aggregate(agg)
        est = np.full(agg.data.shape, np.nan)
        var = np.full(agg.data.shape, np.inf)
        for k, (mech, counts) in enumerate(zip(self.groups, agg.data)):
            n_k = int(counts.sum())
            if n_k == 0:
                continue
            est[k] = mech.estimate(Aggregate(n_k, counts, mech.kind)) / n_k
            plug_in = np.clip(est[k], 0.0, None)
            plug_in = plug_in / plug_in.sum() if plug_in.sum() > 0 else np.full(self.domain_size,
                                                                                1.0 / self.domain_size)
            var[k] = mech._count_variance(plug_in * n_k) / n_k ** 2  # O(D) closed form
        return est, var

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Count estimates: per-group SDGRR frequencies combined by inverse variance, times n.

        Parameters
        ----------
        agg : Aggregate
            Per-group counts of this configuration.
        items : array_like of int, optional
            Ids to estimate (default: all D ids).

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
            Zeros when the aggregate holds no report.
        """
        if agg.n == 0:  # no group has users: every count estimate is 0, as for the other oracles
            self._check_aggregate(agg)
            return np.zeros(self._items(items).shape)
        est, var = self.group_estimates(agg)
        combined, _ = combine_inverse_variance(est, var)  # docs/math.md §2.4, eq. (19)
        return (combined * agg.n)[self._items(items)]

    # theory ------------------------------------------------------------------------------------
    def _check_group_counts(self, true_counts) -> np.ndarray:
        f = np.asarray(true_counts)
        if f.shape != (self.n_groups, self.domain_size):
            raise ValueError(f"{self.name}: 'true_counts' must be a {self.n_groups} × {self.domain_size} "
                             f"array (groups × items); got shape {f.shape}.")
        return np.stack([check_counts(self.name, row, self.domain_size) for row in f])

    def variance(self, true_counts, items=None) -> np.ndarray:
        """Count-scale variance of the combination with weights at the true group counts.

        Parameters
        ----------
        true_counts : array_like, shape (G, D)
            Users of group g holding each id.
        items : array_like of int, optional
            Ids whose variance is returned (default: all).

        Returns
        -------
        numpy.ndarray of float
            n² / Σ_g (n_g² / Var_g) per item (first-order: see the class docstring).
        """
        f = self._check_group_counts(true_counts)
        n_g = f.sum(axis=1)
        var = np.full(f.shape, np.inf)
        for k, mech in enumerate(self.groups):
            if n_g[k]:
                var[k] = mech.variance(f[k]) / n_g[k] ** 2
        _, combined_var = combine_inverse_variance(np.zeros(f.shape), var)
        return (combined_var * n_g.sum() ** 2)[self._items(items)]

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact direct sampler: each group's SDGRR aggregate drawn by its own direct sampler.

        Parameters
        ----------
        true_counts : array_like of non-negative ints, shape (G, D)
            Users of group g holding each id.
        rng : numpy.random.Generator, int or None
            Source of randomness.
        items : ignored

        Returns
        -------
        Aggregate
        """
        f = self._check_group_counts(true_counts)
        rng = as_generator(rng)
        data = np.stack([mech.sample_aggregate(row, rng).data for mech, row in zip(self.groups, f)])
        return Aggregate(int(f.sum()), data, self.kind)

    def _items(self, items) -> np.ndarray:
        return np.arange(self.domain_size) if items is None else check_item_ids(self.name, items, self.domain_size,
                                                                                "items")

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """The output id (⌈log2 D / 8⌉ bytes) then the group index (⌈log2 G / 8⌉ bytes), little-endian."""
        return uint_bytes(self.domain_size) + uint_bytes(self.n_groups)

    def encode(self, reports) -> bytes:
        """Wire form: per report the output id then the group index, little-endian."""
        y, g = reports
        y = check_item_ids(f"{self.name}.encode", y, self.domain_size, "reports.y")
        g = check_item_ids(f"{self.name}.encode", g, self.n_groups, "reports.group")
        wy, wg = uint_bytes(self.domain_size), uint_bytes(self.n_groups)
        parts = [np.frombuffer(encode_uints(v, w), dtype=np.uint8).reshape(-1, w)
                 for v, w in ((y, wy), (g, wg))]
        return np.hstack(parts).tobytes()

    def decode(self, payload: bytes) -> PersonalizedReports:
        """Reports from their wire form (output id, then group index, little-endian).

        Parameters
        ----------
        payload : bytes
            Output of :meth:`encode`.

        Returns
        -------
        PersonalizedReports
            ``ValueError`` on a partial report or an out-of-range field.
        """
        self._check_payload(payload)
        wy = uint_bytes(self.domain_size)
        raw = np.frombuffer(bytes(payload), dtype=np.uint8).reshape(-1, self.report_bytes)
        y = decode_uints(raw[:, :wy].tobytes(), wy)
        g = decode_uints(raw[:, wy:].tobytes(), self.report_bytes - wy)
        return PersonalizedReports(check_item_ids(f"{self.name}.decode", y, self.domain_size, "payload"),
                                   check_item_ids(f"{self.name}.decode", g, self.n_groups, "payload"))
