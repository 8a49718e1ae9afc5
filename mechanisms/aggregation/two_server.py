"""Two aggregators (Prio3 / DAP) with server-added noise — docs/math.md §9.3.

Each device splits its one-hot report over Field64/Field128 into a leader share and a helper share
(:mod:`~ldpsim.mechanisms.aggregation.field_shares`). The aggregators check validity jointly (invalid
reports are rejected), sum their shares, and add integer noise to their aggregate share before it is
released: ``noise_by="leader"`` (one server adds the target noise) or ``"both"`` (each adds the full
target noise, so the guarantee holds whichever one is honest — at twice the variance).

Estimator: the released Σ valid reports + noise, unbiased for the valid counts, variance
(1 or 2)·Var(target). With client randomization (``client``) the sum is of noisy bit vectors and the
release is debiased like the oracle's estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts
from ldpsim.mechanisms.aggregation.field_shares import FIELD64, PrimeField, reconstruct, split, valid_reports
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.frequency.unary import UnaryEncoding
from ldpsim.runtime.errors import InputError

NOISE_BY = ("leader", "both")


@dataclass(frozen=True)
class TwoServer:
    """Prio3-style two-aggregator histogram with server noise (docs/math.md §9.3).

    Parameters
    ----------
    target : IntegerNoise
        The noise one aggregator adds to its share of the sum (discrete Laplace = polya with copies 1,
        or discrete_gaussian).
    noise_by : {"leader", "both"}
        Which aggregators add ``target``.
    field : PrimeField
        FIELD64 (vectorized here) or FIELD128 (Prio3Histogram's field; Python integers).
    client : UnaryEncoding, optional
        Client randomization before sharing (symmetric RAPPOR = SUE in the DP-for-DAP draft): the
        aggregators sum noisy bit vectors (validity: at most m ones) and the release is debiased,
        (bits + noise − n·q)/(p − q).

    Examples
    --------
    >>> ts = TwoServer(IntegerNoise("discrete_gaussian", 26.0), noise_by="both")
    >>> round(ts.noise_variance())
    1352
    """

    target: IntegerNoise
    noise_by: str = "both"
    field: PrimeField = FIELD64
    client: UnaryEncoding | None = None

    def __post_init__(self):
        if not isinstance(self.target, IntegerNoise):
            raise TypeError(f"The 'target' parameter of TwoServer must be an IntegerNoise. Got {self.target!r} instead.")
        if self.noise_by not in NOISE_BY:
            raise InputError(f"The 'noise_by' parameter of TwoServer must be one of {', '.join(NOISE_BY)}. "
                             f"Got {self.noise_by!r} instead.")

    @property
    def n_noisy(self) -> int:
        """How many aggregators add the target noise (1 or 2)."""
        return 2 if self.noise_by == "both" else 1

    def noise_variance(self) -> float:
        """Variance of the released noise per item: n_noisy · Var(target)."""
        return self.n_noisy * self.target.variance()

    def release(self, valid_counts, rng=None) -> np.ndarray:
        """Count level: valid counts plus each noisy aggregator's draw (the exact law of the output).

        Parameters
        ----------
        valid_counts : array_like of non-negative ints
            Per-item counts of the reports that pass the validity check.
        rng : numpy.random.Generator, int or None

        Returns
        -------
        numpy.ndarray of float
        """
        rng = as_generator(rng)
        c = check_counts("TwoServer", valid_counts, name="valid_counts")
        summed = c if self.client is None else self.client.sample_aggregate(c, rng=rng).data
        noisy = summed + sum(self.target.sample(c.size, rng) for _ in range(self.n_noisy))
        if self.client is None:
            return noisy.astype(float)
        return (noisy - c.sum() * self.client.q) / (self.client.p - self.client.q)

    def variance(self, valid_counts) -> np.ndarray:
        """Exact variance of each released count: the noise's, plus (with a client randomizer) the
        oracle's variance and the noise scaled by 1/(p − q)² (docs/math.md §9.3).

        Parameters
        ----------
        valid_counts : array_like of non-negative ints

        Returns
        -------
        numpy.ndarray of float
        """
        c = check_counts("TwoServer", valid_counts, name="valid_counts")
        if self.client is None:
            return np.full(c.size, self.noise_variance())
        return self.client.variance(c) + self.noise_variance() / (self.client.p - self.client.q) ** 2

    def release_per_device(self, reports, rng=None, rule: str = "one_hot", max_ones: int = 1):
        """Per-device path: shares, validity check, the two share sums, noise, reconstruction.

        Parameters
        ----------
        reports : array_like of ints, shape (n, D)
            Submitted vectors (malformed ones are rejected by the check).
        rng : numpy.random.Generator, int or None
        rule, max_ones : validity rule (see :func:`~ldpsim.mechanisms.aggregation.field_shares.valid_reports`)

        Returns
        -------
        estimate : numpy.ndarray of float
        accepted : numpy.ndarray of bool, shape (n,)
        """
        rng = as_generator(rng)
        x = np.asarray(reports)
        accepted = valid_reports(x, rule, max_ones=max_ones)
        leader, helper = split(np.where(accepted[:, None], x, 0), self.field, rng)
        sums = [self.field.sum(leader[accepted]), self.field.sum(helper[accepted])]
        for who in range(self.n_noisy):            # noise enters each aggregator's share as a field element
            z = self.target.sample(x.shape[1], rng)
            sums[who] = self.field.add(sums[who], _to_field(z, self.field))
        return reconstruct(sums[0], sums[1], self.field).astype(float), accepted


def _to_field(z: np.ndarray, field: PrimeField):
    """Signed integers as field elements (−k ↦ p − k)."""
    if field.native:
        return np.where(z >= 0, z, 0).astype(np.uint64) + np.where(
            z < 0, np.uint64(field.modulus) - np.abs(np.minimum(z, 0)).astype(np.uint64), np.uint64(0))
    return np.array([int(v) % field.modulus for v in z], dtype=object)
