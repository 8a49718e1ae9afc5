"""Secure aggregation with distributed noise: the server learns only each cohort's noisy sum — docs/math.md §9.2.

The n devices of a day are split into cohorts of sizes as equal as possible, none below ``min_cohort``.
Device i of a cohort of size s adds to its one-hot report x_i a share of integer noise, then the
cohort's masked vectors are summed by secure aggregation (Bonawitz et al., CCS 2017): the server sees
Σ_{arrived} (x_i + z_i) and nothing else. Devices drop out mid-round: their report *and* their noise
share are missing. The protocol goes on only when at least ⌈``min_arrival``·s⌉ devices of the cohort
arrive (SecAgg's threshold t); each device's share is provisioned for that worst case
(``target.share(t)``), so every published cohort sum carries at least the target noise:

* skellam / polya (exact): with m ≥ t arrivals the cohort's noise is target.share(t).times(m) —
  Skellam(μ·m/t) or Pólya with r = m/t, never less than the target law;
* discrete_gaussian: the sum of m copies of N_Z(σ²/t) (its exact pmf, see integer_noise).

Estimator of the arrived devices' counts: the sum over published cohorts (unbiased), with variance
Σ_j Var(noise of cohort j) — the number of cohorts multiplies the noise, which is why cohorts are
made no smaller than needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_int, check_item_ids, check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.base import FrequencyOracle
from ldpsim.runtime.errors import InputError


def cohort_sizes(n: int, min_cohort: int) -> np.ndarray:
    """Sizes of the ⌊n / min_cohort⌋ cohorts of n devices, as equal as possible (none when n < min_cohort)."""
    n = check_int("cohort_sizes", "n", n, low=0)
    k = n // check_int("cohort_sizes", "min_cohort", min_cohort, low=1)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    sizes = np.full(k, n // k, dtype=np.int64)
    sizes[: n % k] += 1
    return sizes


def quorum(size: int, min_arrival: float) -> int:
    """t = ⌈min_arrival · size⌉: arrivals a cohort of ``size`` needs to be published."""
    return max(1, math.ceil(min_arrival * size - 1e-9))


@dataclass(frozen=True)
class SecureSum:
    """Cohort secure aggregation of one-hot reports with distributed integer noise (docs/math.md §9.2).

    Parameters
    ----------
    target : IntegerNoise or None
        The noise every published cohort sum must carry at least (the privacy is computed from it);
        None with ``client``: no added noise, the reports are already randomized.
    min_cohort : int ≥ 2
        Smallest cohort; the day's n devices form ⌊n / min_cohort⌋ cohorts of near-equal size.
    min_arrival : float in (0, 1]
        Fraction of a cohort that must arrive for its sum to be published (SecAgg threshold).
    client : FrequencyOracle, optional
        Local randomizer run by each device before secure aggregation (``secagg_local``): the cohorts sum
        its reports and the release is the oracle's estimate from the published aggregate.

    Examples
    --------
    >>> s = SecureSum(IntegerNoise("skellam", 200.0), min_cohort=1000, min_arrival=0.8)
    >>> s.cohort_sizes(2500).tolist()
    [1250, 1250]
    >>> s.cohort_noise(1250, 1250).scale      # all arrived: 1.25 × the target μ
    250.0
    """

    target: IntegerNoise | None
    min_cohort: int = 1000
    min_arrival: float = 0.8
    client: FrequencyOracle | None = None

    def __post_init__(self):
        if (self.target is None) == (self.client is None):
            raise InputError("SecureSum needs exactly one of 'target' (distributed noise) and 'client' (local "
                             f"randomizer). Got target={self.target!r}, client={self.client!r}.")
        if self.target is not None and not isinstance(self.target, IntegerNoise):
            raise TypeError(f"The 'target' parameter of SecureSum must be an IntegerNoise. Got {self.target!r} instead.")
        object.__setattr__(self, "min_cohort", check_int("SecureSum", "min_cohort", self.min_cohort, low=2))
        object.__setattr__(self, "min_arrival", check_real("SecureSum", "min_arrival", self.min_arrival,
                                                           0.0, 1.0, high_open=False))

    def cohort_sizes(self, n: int) -> np.ndarray:
        """Sizes of the ⌊n / min_cohort⌋ cohorts (:func:`cohort_sizes`)."""
        return cohort_sizes(n, self.min_cohort)

    def quorum(self, size: int) -> int:
        """t = ⌈min_arrival · size⌉ arrivals needed to publish a cohort of this size (:func:`quorum`)."""
        return quorum(size, self.min_arrival)

    def device_share(self, size: int) -> IntegerNoise:
        """The noise law one device of a cohort of ``size`` adds (provisioned for t arrivals)."""
        if self.target is None:
            raise InputError("SecureSum.device_share: this protocol adds no noise (it has a 'client' instead).")
        return self.target.share(self.quorum(size))

    def cohort_noise(self, size: int, arrived: int) -> IntegerNoise:
        """The law of a published cohort's total noise when ``arrived`` ≥ t of its devices arrive."""
        return self.device_share(size).times(arrived)

    def finish(self, published: np.ndarray, noise: np.ndarray, rng=None) -> np.ndarray:
        """The release from the published devices' counts and the cohorts' summed noise: their sum, or with
        a ``client`` the oracle's estimate from the aggregate of those devices' reports (exact law).

        Parameters
        ----------
        published, noise : numpy.ndarray of int64, length D
        rng : numpy.random.Generator, int or None

        Returns
        -------
        numpy.ndarray of float
        """
        if self.client is None:
            return (published + noise).astype(float)
        return self.client.estimate(self.client.sample_aggregate(published, rng=as_generator(rng)))

    def noise_variance(self, n: int, arrival_rate: float = 1.0) -> float:
        """Variance of the summed noise over all cohorts when each device arrives w.p. ``arrival_rate``,
        approximating each cohort's arrivals by their mean (the law is linear in m for skellam and polya,
        and for discrete_gaussian, so the expectation of the variance is exact whenever no cohort is
        suppressed)."""
        if self.target is None:
            return 0.0
        sizes = self.cohort_sizes(n)
        return float(sum(self.device_share(int(s)).variance() * s * arrival_rate for s in sizes))

    def release(self, true_counts, rng=None, arrival_rate: float = 1.0):
        """Count level: the published sum over cohorts, from the day's per-item counts (exact law).

        Devices are assigned to cohorts uniformly at random and arrive independently w.p. ``arrival_rate``.

        Parameters
        ----------
        true_counts : array_like of non-negative ints, length D
            Per-item counts of the day's devices (one item each).
        rng : numpy.random.Generator, int or None
        arrival_rate : float in (0, 1]

        Returns
        -------
        estimate : numpy.ndarray of float, length D
            Σ over published cohorts of (arrived counts + noise).
        arrived_counts : numpy.ndarray of int64, length D
            The true counts of the devices whose reports were published (the estimator's target).
        """
        rng = as_generator(rng)
        c = check_counts("SecureSum", true_counts)
        sizes = self.cohort_sizes(int(c.sum()))
        # arrivals do not depend on the item held: each cohort's arrivals m_j ~ Bin(s_j, r) decide which
        # cohorts publish, and the published devices are then a uniform subset of size Σ m_j of the day's
        # devices, whose counts are one multivariate hypergeometric draw (exact law, docs/math.md §9.2)
        m = rng.binomial(sizes, arrival_rate)
        ok = m >= np.array([self.quorum(int(t)) for t in sizes], dtype=np.int64)
        published = rng.multivariate_hypergeometric(c, int(m[ok].sum())) if ok.any() else np.zeros_like(c)
        laws = [] if self.target is None else [self.cohort_noise(int(t), int(mj)) for t, mj in zip(sizes[ok], m[ok])]
        return self.finish(published, _sum_of(laws, c.size, rng), rng), published

    def release_per_device(self, items, domain_size: int, rng=None, arrival_rate: float = 1.0):
        """Per-device path: every device draws its own noise shares; same law as :meth:`release`.

        Parameters
        ----------
        items : array_like of ints in [0, domain_size)
            One item per device (the day's devices, in cohort order after a random permutation).
        domain_size : int
        rng, arrival_rate : as in :meth:`release`

        Returns
        -------
        estimate, arrived_counts : as in :meth:`release`
        """
        rng = as_generator(rng)
        x = check_item_ids("SecureSum", items, domain_size, name="items")
        x = x[rng.permutation(x.size)]
        sizes = self.cohort_sizes(x.size)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        noise = np.zeros(domain_size, dtype=np.int64)
        published = np.zeros(domain_size, dtype=np.int64)
        reports = []
        for j, s in enumerate(sizes):
            members = x[starts[j]: starts[j + 1]]
            keep = rng.random(int(s)) < arrival_rate
            if keep.sum() < self.quorum(int(s)):
                continue
            published += np.bincount(members[keep], minlength=domain_size)
            if self.client is not None:         # each arrived device's own randomized report
                reports.append(self.client.aggregate(self.client.perturb(members[keep], rng)))
            else:                               # each arrived device's own noise share
                noise += self.device_share(int(s)).sample((int(keep.sum()), domain_size), rng).sum(axis=0)
        if self.client is not None:
            total = sum(reports[1:], reports[0]) if reports else \
                self.client.sample_aggregate(np.zeros(domain_size, dtype=np.int64), rng=rng)
            return self.client.estimate(total), published
        return (published + noise).astype(float), published


def _sum_of(laws: list[IntegerNoise], size: int, rng: np.random.Generator) -> np.ndarray:
    """One draw of Σ_j Z_j, Z_j ~ laws[j] independent, using the families' closure under sums: Skellams
    add their μ; Pólya or discrete-Gaussian laws of one scale add their copies (one draw per scale)."""
    if not laws:
        return np.zeros(size, dtype=np.int64)
    if laws[0].kind == "skellam":
        return IntegerNoise("skellam", sum(z.scale for z in laws)).sample(size, rng)
    copies: dict[float, float] = {}
    for z in laws:
        copies[z.scale] = copies.get(z.scale, 0.0) + z.copies
    return sum(IntegerNoise(laws[0].kind, b, r).sample(size, rng) for b, r in copies.items())
