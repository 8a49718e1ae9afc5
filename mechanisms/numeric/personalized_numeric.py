"""Personalized SDPM: users choose their own low range; group means combined by inverse variance.

docs/math.md §2.4 (paper section 4.5, eq. (19)).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_finite_in, check_item_ids
from ldpsim.mechanisms.base import Aggregate, FrequencyOracle, Guarantee, decode_uints, encode_uints, uint_bytes
from ldpsim.mechanisms.numeric.em import EM
from ldpsim.mechanisms.frequency.personalized import PersonalizedReports, combine_inverse_variance
from ldpsim.mechanisms.numeric.sdpm import SDPM, check_low_range


@dataclass(frozen=True)
class PersonalizedSDPM:
    """SDPM where each user picks one of several low ranges — docs/math.md §2.4, paper section 4.5.

    Privacy: each user gets (X_H, X_L, ε)-SDLDP (see :class:`SDPM`) for the low range X_L they chose;
    the range index is sent in the clear (chosen by the user, independent of the value).

    Client: user i with value x_i and chosen group g_i reports ``(SDPM_g.perturb(x_i), g_i)``.
    Server: the aggregate concatenates each group's EM histogram (merges by addition). Each group's
    mean is EM's (``bins``, ``smoothing``, ``tol``, ``max_iter`` as in :class:`EM`); the group means
    are combined by :func:`combine_inverse_variance` (paper eq. (19)). Groups with no users are skipped.

    Per-group variance (the paper's choice: "the SDPM perturbation variance"): the variance of the
    report average for a population distributed as the group's EM estimate,
    Var_g = Σ_i f̂_i·Var[x* | mid_i] / n_g. It is a plug-in proxy for the EM mean's variance (which
    has no closed form): for an interior input distribution the MLE mean's Fisher variance is of the
    same size, but the proxy is not exact — treat the combined variance as approximate.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf) (the same for every group).
    ranges : sequence of pairs of float
        The G ≥ 1 distinct low ranges (a, b), −1 ≤ a < b ≤ 1, users may choose from.
    bins, smoothing, tol, max_iter
        EM settings of every group, as in :class:`EM` (defaults 1024, False, e^ε·10⁻³, 10 000).

    Attributes
    ----------
    ems : tuple of EM
        One EM (with its SDPM as ``ems[g].mechanism``) per range.
    offsets : numpy.ndarray
        Where each group's histogram starts in the aggregate's ``data``.
    n_groups : int
        G.

    Examples
    --------
    >>> m = PersonalizedSDPM(1.0, ranges=[(-0.5, 0.5), (-0.25, 0.25)], bins=8)
    >>> r = m.perturb([0.1, 0.9, -0.3], groups=[0, 1, 1], rng=1)
    >>> r.group.tolist()
    [0, 1, 1]
    """

    epsilon: float
    ranges: tuple
    bins: int = 1024
    smoothing: bool = False
    tol: float | None = None
    max_iter: int = 10_000
    ems: tuple = field(init=False, repr=False, compare=False)  #: one EM (and SDPM) per range
    offsets: np.ndarray = field(init=False, repr=False, compare=False)

    @property
    def guarantee(self) -> Guarantee:
        """ε-SDLDP for the low range each user chose (:class:`SDPM`); docs/math.md §8.1."""
        return Guarantee("sdldp", self.epsilon)

    def __post_init__(self):
        name = type(self).__name__
        eps = check_epsilon(name, self.epsilon)
        allowed = "a non-empty sequence of distinct low ranges (a, b) with -1 <= a < b <= 1"
        if isinstance(self.ranges, (str, bytes)) or not hasattr(self.ranges, "__iter__"):
            raise TypeError(f"The 'ranges' parameter of {name} must be {allowed}. Got {self.ranges!r} instead.")
        ranges = [check_low_range(name, low, f"ranges[{g}]") for g, low in enumerate(self.ranges)]
        if not ranges or len(set(ranges)) < len(ranges):
            raise ValueError(f"The 'ranges' parameter of {name} must be {allowed}. Got {self.ranges!r} instead.")
        ems = tuple(EM(SDPM(eps, low), self.bins, self.smoothing, self.tol, self.max_iter) for low in ranges)
        sizes = [em.out_edges.size - 1 for em in ems]
        for k, v in dict(epsilon=eps, ranges=tuple(ranges), bins=ems[0].bins, tol=ems[0].tol, ems=ems,
                         offsets=np.cumsum([0, *sizes])).items():
            object.__setattr__(self, k, v)

    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def kind(self) -> str:
        """Aggregates depend on ε, the ranges and the bins only."""
        return f"{self.name}(epsilon={self.epsilon!r}, ranges={self.ranges!r}, bins={self.bins})"

    @property
    def n_groups(self) -> int:
        return len(self.ranges)

    # client ------------------------------------------------------------------------------------
    def _check_groups(self, where: str, y, groups):
        g = check_item_ids(where, groups, self.n_groups, "groups")
        if g.shape != np.shape(y):
            raise ValueError(f"{where}: values and groups must have the same length; got {np.size(y)} "
                             f"and {g.size}.")
        return g

    def perturb(self, values, groups, rng=None) -> PersonalizedReports:
        """Client side: privatize ``values[i]`` with the SDPM of range ``groups[i]``.

        Parameters
        ----------
        values : array_like of float, shape (n,)
            Values in [−1, 1].
        groups : array_like of int, shape (n,)
            The range each user chose, in [0, G).
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        PersonalizedReports
            ``(y, group)``: float64 reports and the (public) group indices.
        """
        x = check_finite_in(self.name, values, -1.0, 1.0)
        g = self._check_groups(self.name, x, groups)
        rng = as_generator(rng)
        y = np.empty_like(x)
        for k, em in enumerate(self.ems):
            members = np.flatnonzero(g == k)
            y[members] = em.mechanism.perturb(x[members], rng)
        return PersonalizedReports(y, g)

    # server ------------------------------------------------------------------------------------
    def aggregate(self, reports) -> Aggregate:
        """Concatenated per-group EM histograms (group g at ``offsets[g]:offsets[g+1]``).

        Parameters
        ----------
        reports : PersonalizedReports
            ``(y, group)`` of equal length.

        Returns
        -------
        Aggregate
            Mergeable by addition.
        """
        y, g = reports
        g = self._check_groups(f"{self.name}.aggregate", y, g)
        data = np.concatenate([em.aggregate(np.asarray(y)[g == k]).data for k, em in enumerate(self.ems)])
        return Aggregate(g.size, data, self.kind)

    def _check_aggregate(self, agg: Aggregate) -> None:
        FrequencyOracle._check_aggregate(self, agg)

    def group_estimates(self, agg: Aggregate) -> tuple[np.ndarray, np.ndarray]:
        """Per-group EM means and plug-in variances (NaN and inf for a group with no users)."""
        self._check_aggregate(agg)
        means, variances = np.full(self.n_groups, np.nan), np.full(self.n_groups, np.inf)
        for k, em in enumerate(self.ems):
            counts = agg.data[self.offsets[k]:self.offsets[k + 1]]
            n_k = int(counts.sum())
            if n_k == 0:
                continue
            f = em.estimate(Aggregate(n_k, counts, em.kind))
            means[k] = em.midpoints @ f
            variances[k] = f @ em.mechanism.report_variance(em.midpoints) / n_k
        return means, variances

    def estimate_mean_and_variance(self, agg: Aggregate) -> tuple[float, float]:
        """Combined mean (paper eq. (19)) and its approximate variance 1/Σ_g(1/Var_g)."""
        mean, var = combine_inverse_variance(*self.group_estimates(agg))
        return float(mean), float(var)

    def estimate_mean(self, agg: Aggregate) -> float:
        """The combined mean of the groups' EM means (paper eq. (19), docs/math.md §2.4).

        Parameters
        ----------
        agg : Aggregate
            Concatenated per-group histograms of this configuration.

        Returns
        -------
        float
            :meth:`estimate_mean_and_variance`'s mean.
        """
        return self.estimate_mean_and_variance(agg)[0]

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """The report as a little-endian float64, then the group index (⌈log2 G / 8⌉ bytes)."""
        return 8 + uint_bytes(self.n_groups)

    def encode(self, reports) -> bytes:
        """Wire form: per report the float64 value then the group index, little-endian."""
        y, g = reports
        g = self._check_groups(f"{self.name}.encode", y, g)
        y = self.ems[0].mechanism._check_reports(y, "encode")  # every group shares C (same ε)
        wg = uint_bytes(self.n_groups)
        parts = [np.asarray(y, "<f8").view(np.uint8).reshape(-1, 8),
                 np.frombuffer(encode_uints(g, wg), dtype=np.uint8).reshape(-1, wg)]
        return np.hstack(parts).tobytes()

    def decode(self, payload: bytes) -> PersonalizedReports:
        """Reports from their wire form.

        Parameters
        ----------
        payload : bytes
            Output of :meth:`encode`.

        Returns
        -------
        PersonalizedReports
            ``ValueError`` on a partial report or an out-of-range field.
        """
        FrequencyOracle._check_payload(self, payload)
        raw = np.frombuffer(bytes(payload), dtype=np.uint8).reshape(-1, self.report_bytes)
        y = np.ascontiguousarray(raw[:, :8]).view("<f8").ravel().astype(np.float64)
        g = decode_uints(raw[:, 8:].tobytes(), self.report_bytes - 8)
        y = self.ems[0].mechanism._check_reports(y, "decode")
        return PersonalizedReports(y, self._check_groups(f"{self.name}.decode", y, g))

