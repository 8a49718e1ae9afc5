"""Histogram encodings: summation (SHE) and thresholding (THE) — docs/math.md §7.1.

Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017, §4.2 ("Histogram Encoding"). The client adds Laplace(2/ε) noise to every entry
of the one-hot vector of its item (L1 sensitivity 2, so the noisy vector is ε-LDP).

* SHE sends the D noisy reals; the server sums them per item.
* THE sends only the bits [B_i + Lap(2/ε) > θ]: a unary encoding with
  p = P[1 + L > θ] = 1 − ½e^{−ε(1−θ)/2} and q = P[L > θ] = ½e^{−εθ/2}, θ ∈ (½, 1) chosen, as the
  paper does, to minimise the variance factor q(1−q)/(p−q)².
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from ldpsim.mechanisms._validation import (as_generator, check_counts, check_domain_size, check_epsilon,
                                          check_item_ids, check_real)
from ldpsim.mechanisms.base import Aggregate, DiscreteOracle, FrequencyOracle
from ldpsim.mechanisms.frequency.unary import UnaryEncoding

_BATCH_USERS = 1 << 16  # users per batch of SHE's fused per-user path
_BLOCK_CELLS = 1 << 17  # user×item exponential draws per block of a batch (1 MiB: stays in cache)
_SIGNED_CELLS = 1 << 16  # user×item draws per batch of SHE's reports (signed in cache)


_SIGN_BIT = np.uint64(63)


def flip_signs(values: np.ndarray, rng: np.random.Generator) -> None:
    """Negate each entry of a C-contiguous float64 array independently with probability ½, in place
    (one random bit per entry XOR-ed into the IEEE sign bit: exact negation)."""
    bits = np.unpackbits(np.frombuffer(rng.bytes(-(-values.size // 8)), dtype=np.uint8), count=values.size)
    words = values.reshape(-1).view(np.uint64)
    words ^= bits.astype(np.uint64) << _SIGN_BIT


def laplace_column_sums(n_users: int, n_columns: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """Σ over ``n_users`` users of independent Laplace(``scale``) draws, for each of ``n_columns`` columns.

    Every user's draw is made: L = ±E with E ~ Exponential(scale) and a fair sign (docs/math.md §7.1).
    As the E are i.i.d. and independent of the signs, which users of a column are positive does not
    matter, only how many: K_c ~ Binomial(m, ½) per column of a batch of m users, and the column's sum
    is Σ_{i<K_c} E_ic − Σ_{i≥K_c} E_ic. Users come in batches of ``_BATCH_USERS`` and each batch in
    blocks of columns of about ``_BLOCK_CELLS`` draws (they stay in cache), each block summed with one
    ``np.add.reduceat`` into float64 (no n × D array).
    """
    sums = np.zeros(n_columns)
    users = max(1, min(n_users, _BATCH_USERS))
    cols = max(1, min(n_columns, _BLOCK_CELLS // users))
    buf = np.empty(users * cols + 1)  # + 1: reduceat's last bound may equal m·c
    bounds = np.empty(2 * cols, dtype=np.intp)
    for start in range(0, n_users, users):
        m = min(users, n_users - start)
        for c0 in range(0, n_columns, cols):
            c = min(cols, n_columns - c0)
            cells = m * c
            rng.standard_exponential(out=buf[:cells])  # column c0 + j: buf[j·m:(j+1)·m]
            buf[cells] = 0.0
            k = rng.binomial(m, 0.5, c)
            bounds[0:2 * c:2] = np.arange(c) * m
            bounds[1:2 * c:2] = bounds[0:2 * c:2] + k
            seg = np.add.reduceat(buf[:cells + 1], bounds[:2 * c])  # an empty segment [i, i) yields buf[i]: zeroed
            sums[c0:c0 + c] += np.where(k == 0, 0.0, seg[0::2]) - np.where(k == m, 0.0, seg[1::2])
    return scale * sums


def the_bit_probabilities(epsilon: float, theta: float) -> tuple[float, float]:
    """(p, q) of THE: p = 1 − ½e^{−ε(1−θ)/2}, q = ½e^{−εθ/2} for θ ∈ (½, 1] (Laplace tails)."""
    return 1.0 - 0.5 * math.exp(-epsilon * (1.0 - theta) / 2), 0.5 * math.exp(-epsilon * theta / 2)


def optimal_theta(epsilon: float) -> float:
    """argmin over θ ∈ (½, 1) of q(1−q)/(p−q)² (the paper's choice; bounded Brent search)."""
    def factor(theta):
        p, q = the_bit_probabilities(epsilon, theta)
        return q * (1 - q) / (p - q) ** 2
    res = optimize.minimize_scalar(factor, bounds=(0.5, 1.0), method="bounded", options={"xatol": 1e-10})
    return float(res.x)


@dataclass(frozen=True)
class THE(UnaryEncoding):
    """Thresholding histogram encoding over item ids ``0 .. domain_size-1`` (docs/math.md §7.1).

    ``theta`` None: the variance-minimising θ (:func:`optimal_theta`). Privacy: ε-LDP (post-processing
    of the Laplace histogram); the exact loss of a report is ln(p(1−q)/(q(1−p))) =
    :attr:`epsilon_report`, at most ε (smaller for θ inside (½, 1)). Everything else is
    :class:`~ldpsim.mechanisms.frequency.unary.UnaryEncoding` with the (p, q) above; the bits are sampled as
    independent Bernoulli(p)/(q) bits, which is exactly the law of the thresholded Laplace vector.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of items D ≥ 2.
    theta : float, optional
        Threshold θ in [½, 1); None: the variance-minimising θ.

    Examples
    --------
    >>> m = THE(epsilon=1.0, domain_size=4)
    >>> round(m.theta, 4), round(m.epsilon_report, 4)
    (0.6186, 0.896)
    """

    epsilon: float
    domain_size: int
    theta: float | None = None
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon("THE", self.epsilon)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "domain_size", check_domain_size("THE", self.domain_size))
        theta = optimal_theta(eps) if self.theta is None else \
            check_real("THE", "theta", self.theta, 0.5, 1.0, low_open=False, high_open=True)
        object.__setattr__(self, "theta", theta)
        p, q = the_bit_probabilities(eps, theta)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)


@dataclass(frozen=True)
class SHE(FrequencyOracle):
    """Summation histogram encoding over item ids ``0 .. domain_size-1`` (docs/math.md §7.1).

    Client: the one-hot vector of x plus D independent Laplace(b) entries, b = 2/ε (float64 reports,
    shape (n, D)). Privacy: ε-LDP with equality: the log-density ratio of two inputs x, x' is
    (|y_x' − 1| − |y_x' | + |y_x| − |y_x − 1|)/b ≤ 2/b = ε, reached when y_x ≥ 1 and y_x' ≤ 0.
    Server: the column sums (length D, mergeable); estimate = the column sum itself (unbiased);
    Var = n·2b² = 8n/ε² (docs/math.md §7.1), independent of f.
    Direct sampler (exact): a Laplace(b) variable is the difference of two independent
    Exponential(b) ones, so a sum of n of them is Gamma(n, b) − Gamma(n, b) (independent gammas) and
    column x's sum is f_x + Gamma(n, b) − Gamma(n, b).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of items D ≥ 2.

    Examples
    --------
    >>> m = SHE(epsilon=1.0, domain_size=3)
    >>> m.scale, m.variance([10, 20, 30]).tolist()
    (2.0, [480.0, 480.0, 480.0])
    """

    epsilon: float
    domain_size: int

    _items = DiscreteOracle._items

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon("SHE", self.epsilon))
        object.__setattr__(self, "domain_size", check_domain_size("SHE", self.domain_size))

    @property
    def scale(self) -> float:
        """Laplace scale b = 2/ε."""
        return 2.0 / self.epsilon

    def perturb(self, values, rng=None) -> np.ndarray:
        """Client side: the one-hot vector of each user's item plus Laplace(b) noise per entry, each
        Laplace drawn as a fair sign times an Exponential(b) — the same law (docs/math.md §7.1), at a
        quarter of the cost of ``rng.laplace``'s logarithm.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Item ids in [0, D).
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        numpy.ndarray of float64, shape (n, D)
        """
        x = check_item_ids(self.name, values, self.domain_size)
        rng = as_generator(rng)
        out = np.empty((x.size, self.domain_size))
        step = max(1, _SIGNED_CELLS // self.domain_size)
        for start in range(0, x.size, step):  # in cache-sized batches of users
            block = out[start:start + step]
            rng.standard_exponential(out=block)
            block *= self.scale
            flip_signs(block, rng)
        out[np.arange(x.size), x] += 1.0
        return out

    def perturb_aggregate(self, values, rng=None) -> Aggregate:
        """Same law as ``aggregate(perturb(...))`` without the n × D reports: every user's Laplace
        draws are made and summed per column in batches (:func:`laplace_column_sums`)."""
        x = check_item_ids(self.name, values, self.domain_size)
        rng = as_generator(rng)
        sums = np.bincount(x, minlength=self.domain_size).astype(float)
        sums += laplace_column_sums(x.size, self.domain_size, self.scale, rng)
        return Aggregate(x.size, sums, self.kind)

    def _check_reports(self, reports, what: str) -> np.ndarray:
        y = np.asarray(reports)
        if y.ndim != 2 or y.shape[1] != self.domain_size or y.dtype.kind != "f":
            raise ValueError(f"{self.name}.{what}: reports must be a float array of shape (n, "
                             f"{self.domain_size}); got {y.dtype} {y.shape}.")
        if y.size and not np.all(np.isfinite(y)):
            raise ValueError(f"{self.name}.{what}: reports must be finite.")
        return y.astype(np.float64, copy=False)

    def aggregate(self, reports) -> Aggregate:
        y = self._check_reports(reports, "aggregate")
        return Aggregate(y.shape[0], y.sum(axis=0), self.kind)

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        self._check_aggregate(agg)
        return agg.data[self._items(items)].astype(float)

    def variance(self, true_counts, items=None) -> np.ndarray:
        counts = check_counts(self.name, true_counts, self.domain_size)
        return np.full(self._items(items).shape, 2.0 * self.scale ** 2 * counts.sum())

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact: f_x + Gamma(n, b) − Gamma(n, b) per item (see the class docstring).

        Parameters
        ----------
        true_counts : array_like of non-negative ints
            Users holding each item (aligned with ``items``).
        rng : numpy.random.Generator, int or None
            Source of randomness.
        items : array_like, optional
            Ignored (the aggregate covers every id).

        Returns
        -------
        Aggregate
        """
        f = check_counts(self.name, true_counts, self.domain_size)
        rng = as_generator(rng)
        n = int(f.sum())
        if n == 0:
            return Aggregate(0, np.zeros(self.domain_size), self.kind)
        noise = rng.gamma(n, self.scale, self.domain_size) - rng.gamma(n, self.scale, self.domain_size)
        return Aggregate(n, f + noise, self.kind)

    def log_likelihood(self, reports, values) -> np.ndarray:
        """log density of each report given the user's item (product of D Laplace densities)."""
        y = self._check_reports(reports, "log_likelihood")
        x = check_item_ids(self.name, values, self.domain_size)
        if x.size != y.shape[0]:
            raise ValueError(f"{self.name}.log_likelihood: {y.shape[0]} reports but {x.size} values.")
        centred = y.copy()
        centred[np.arange(x.size), x] -= 1.0
        b = self.scale
        return -np.abs(centred).sum(axis=1) / b - self.domain_size * math.log(2 * b)

    @property
    def report_bytes(self) -> int:
        """8·D: one little-endian float64 per item."""
        return 8 * self.domain_size

    def encode(self, reports) -> bytes:
        return self._check_reports(reports, "encode").astype("<f8").tobytes()

    def decode(self, payload: bytes) -> np.ndarray:
        n = self._check_payload(payload)
        y = np.frombuffer(payload, dtype="<f8").reshape(n, self.domain_size).astype(np.float64)
        return self._check_reports(y, "decode")
