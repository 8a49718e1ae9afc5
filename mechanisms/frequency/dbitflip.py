"""dBitFlip: histograms of counters for repeated collection (Microsoft's Windows telemetry) — docs/math.md §7.3.

Ding, Kulkarni, Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017, §2.2 (dBitFlip) and
§3 (memoization). Each user samples d of the k buckets without replacement and sends, for each
sampled bucket j, one bit: 1 w.p. a = e^{ε/2}/(e^{ε/2}+1) if its value is in bucket j, else
w.p. b = 1/(e^{ε/2}+1).

Memoization (§3): the sampled buckets and the bits are fixed per device. The bits depend on the value
only through which sampled bucket holds it (one of d) or "none of them", so the device memoizes
d + 1 responses; :meth:`DBitFlip.perturb_memoized` computes them as a deterministic function of a
device key (:mod:`ldpsim.mechanisms.memo`). A device whose bucket does not change reports the same
thing every day: the whole history is one ε-LDP report.

Output perturbation (``gamma`` = γ ∈ [0, 0.5), default 0): every sent bit is the memoized bit flipped
with probability γ, fresh each report, so a changed report no longer proves a changed value. The sent
bit is 1 w.p. a_γ = γ + (1 − 2γ)a (own bucket) or b_γ = γ + (1 − 2γ)b, and the estimator debiases with
these (docs/math.md §7.3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_epsilon, check_int, check_item_ids
from ldpsim.mechanisms.base import Aggregate, DiscreteOracle, FrequencyOracle, decode_uints, encode_uints, uint_bytes
from ldpsim.mechanisms.memo import (check_gamma, check_keys, flip_bits, flipped_probability, keyed_uniforms,
    sample_subsets)

_TAG_BUCKETS, _TAG_BITS = 0xDB1, 0xDB2
MAX_ENUMERATED = 1 << 16


class DBitFlipReports(NamedTuple):
    """Per user: the d sampled buckets (sorted, int64 (n, d)) and their bits (uint8 (n, d))."""

    buckets: np.ndarray
    bits: np.ndarray


@dataclass(frozen=True)
class DBitFlip(FrequencyOracle):
    """dBitFlip over bucket ids ``0 .. domain_size-1`` (k = domain_size), d sampled buckets per user
    (docs/math.md §7.3).

    Privacy: two inputs change the law of at most two sent bits, each by a factor ≤ e^{ε/2}, so
    ε-LDP; the bound is reached (max ratio exactly e^ε) when d ≥ 2, while for d = 1 one bit differs
    at most and the exact loss is ε/2. With γ > 0 one report's exact loss is smaller,
    (1 or 2)·ln(a_γ/b_γ) (:attr:`epsilon_report`); the ledger still charges ε once per memo class
    (the flips are data-independent post-processing of the memoized bits).
    Server: per bucket, m_j = users who sampled j and c_j = their ones (data shape (2, k));
    estimate ĉ_j = (k/d)·(c_j − b_γ m_j)/(a_γ − b_γ) (unbiased; (k/d)(c_j(t+1) − m_j)/(t−1) with
    t = e^{ε/2} at γ = 0). Var = f_j(k/d − 1) + n(k/d)·b_γ(1 − b_γ)/(a_γ − b_γ)² (docs/math.md §7.3).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of buckets k, in [2, 2^32].
    d : int
        Buckets sampled per user, in [1, k] (default 1).
    gamma : float
        Output perturbation γ ∈ [0, 0.5): each sent bit is flipped w.p. γ (default 0: none).

    Examples
    --------
    >>> m = DBitFlip(epsilon=1.0, domain_size=8, d=2)
    >>> r = m.perturb([3, 5], rng=0)
    >>> r.buckets.shape, m.report_bytes
    ((2, 2), 3)
    """

    epsilon: float
    has_permanent_response = True  # ``epsilon`` is ε_∞; one report costs ``epsilon_report``
    domain_size: int
    d: int = 1
    gamma: float = 0.0
    a: float = field(init=False, repr=False)        # P[memoized bit = 1]: own bucket / other bucket
    b: float = field(init=False, repr=False)
    a_sent: float = field(init=False, repr=False)   # P[sent bit = 1] after the γ flip
    b_sent: float = field(init=False, repr=False)

    _items = DiscreteOracle._items

    def __post_init__(self):
        eps = check_epsilon("DBitFlip", self.epsilon)
        k = check_int("DBitFlip", "domain_size", self.domain_size, low=2, high=1 << 32)
        d = check_int("DBitFlip", "d", self.d, low=1, high=k)
        gamma = check_gamma("DBitFlip", self.gamma)
        for name, value in (("epsilon", eps), ("domain_size", k), ("d", d), ("gamma", gamma)):
            object.__setattr__(self, name, value)
        t = math.exp(eps / 2)
        object.__setattr__(self, "a", t / (t + 1))
        object.__setattr__(self, "b", 1 / (t + 1))
        object.__setattr__(self, "a_sent", flipped_probability(self.a, gamma))
        object.__setattr__(self, "b_sent", flipped_probability(self.b, gamma))

    @property
    def epsilon_report(self) -> float:
        """Exact privacy loss of one report: min(d, 2)·ln(a_γ/b_γ) (ε for d ≥ 2 and γ = 0, ε/2 for d = 1)."""
        per_bit = self.epsilon / 2 if self.gamma == 0 else math.log(self.a_sent / self.b_sent)
        return min(self.d, 2) * per_bit

    # client ------------------------------------------------------------------------------------
    def _bits(self, buckets, x, u, sent: bool) -> np.ndarray:
        """Bits 1 w.p. a or b (the memoized law) or a_γ or b_γ (``sent``: the law after the flip)."""
        hi, lo = (self.a_sent, self.b_sent) if sent else (self.a, self.b)
        return (u < np.where(buckets == x[:, None], hi, lo)).astype(np.uint8)

    def perturb(self, values, rng=None) -> DBitFlipReports:
        # one-time reports: bits drawn directly from the sent law (a_γ, b_γ)
        x = check_item_ids(self.name, values, self.domain_size)
        rng = as_generator(rng)
        buckets = sample_subsets(x.size, self.domain_size, self.d, lambda step: rng.random(x.size))
        return DBitFlipReports(buckets, self._bits(buckets, x, rng.random(buckets.shape), sent=True))

    def memo_class(self, values, keys) -> np.ndarray:
        """Which of its d + 1 memoized responses each device sends: the position of the value's bucket
        among the device's sampled buckets, or d if it sampled none. A privacy ledger charges ε once per
        distinct class a device reports from (equal class ⇒ identical report).

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Bucket ids.
        keys : array_like of uint64, shape (n,)
            Device keys.

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
        """
        return self._memo(values, keys, "memo_class")[2]

    def _memo(self, values, keys, what: str):
        """(validated values, the device's sampled buckets from its key alone, memo class)."""
        x = check_item_ids(self.name, values, self.domain_size)
        keys = check_keys(f"{self.name}.{what}", keys, x.size)
        buckets = sample_subsets(x.size, self.domain_size, self.d,
                                 lambda step: keyed_uniforms(keys, _TAG_BUCKETS, step))
        hit = buckets == x[:, None]
        return x, buckets, np.where(hit.any(axis=1), hit.argmax(axis=1), self.d)

    def perturb_memoized(self, values, keys, rng=None) -> DBitFlipReports:
        """The device's memoized report: buckets from its key alone; bits from (key, memo class,
        position), then each flipped w.p. γ with fresh randomness from ``rng`` (deterministic, rng
        unused, when γ = 0).

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Bucket ids.
        keys : array_like of uint64, shape (n,)
            Device keys (:func:`ldpsim.mechanisms.memo.device_keys`).
        rng : numpy.random.Generator, int or None
            Source of the daily flips (γ > 0 only).

        Returns
        -------
        DBitFlipReports
        """
        x, buckets, memo_class = self._memo(values, keys, "perturb_memoized")
        keys = np.asarray(keys, dtype=np.uint64)
        u = keyed_uniforms(keys[:, None], _TAG_BITS, memo_class[:, None], np.arange(self.d)[None, :])
        bits = self._bits(buckets, x, u, sent=False)
        return DBitFlipReports(buckets, flip_bits(bits, self.gamma, as_generator(rng) if self.gamma else None))

    # server ------------------------------------------------------------------------------------
    def check_reports(self, reports) -> DBitFlipReports:
        """Reports as the server reads them, checked (docs/math.md §7.3).

        Parameters
        ----------
        reports : DBitFlipReports
            (buckets, bits) as :meth:`perturb` returns them.

        Returns
        -------
        DBitFlipReports
            The buckets (n, d), distinct and sorted ids in [0, D) per report, and their bits (n, d) uint8.

        Raises
        ------
        TypeError, ValueError
            For anything but a (buckets, bits) pair of shape (n, d) with sorted distinct ids and bits in range.
        """
        return self._check_reports(reports, "check_reports")

    def _check_reports(self, reports, what: str) -> DBitFlipReports:
        if not (isinstance(reports, tuple) and len(reports) == 2):
            raise TypeError(f"{self.name}.{what}: reports must be a DBitFlipReports(buckets, bits) pair; "
                            f"got {type(reports).__name__}.")
        buckets, bits = (np.asarray(r) for r in reports)
        if buckets.ndim != 2 or buckets.shape[1] != self.d or bits.shape != buckets.shape:
            raise ValueError(f"{self.name}.{what}: buckets and bits must both have shape (n, {self.d}); "
                             f"got {buckets.shape} and {bits.shape}.")
        flat = check_item_ids(f"{self.name}.{what}", buckets.ravel(), self.domain_size, "buckets")
        bits = check_item_ids(f"{self.name}.{what}", bits.ravel(), 2, "bits")
        buckets = flat.reshape(-1, self.d)
        if self.d > 1 and np.any(np.diff(buckets, axis=1) <= 0):
            bad = int(np.flatnonzero((np.diff(buckets, axis=1) <= 0).any(axis=1))[0])
            raise ValueError(f"{self.name}.{what}: report {bad} has buckets that are not distinct and sorted.")
        return DBitFlipReports(buckets, bits.reshape(-1, self.d).astype(np.uint8))

    def aggregate(self, reports) -> Aggregate:
        buckets, bits = self._check_reports(reports, "aggregate")
        k = self.domain_size
        m = np.bincount(buckets.ravel(), minlength=k)
        c = np.bincount(buckets.ravel(), weights=bits.ravel(), minlength=k).astype(np.int64)
        return Aggregate(buckets.shape[0], np.stack([m, c]).astype(np.int64), self.kind)

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        self._check_aggregate(agg)
        j = self._items(items)
        m, c = agg.data[0, j], agg.data[1, j]
        return self.domain_size / self.d * (c - self.b_sent * m) / (self.a_sent - self.b_sent)

    # theory ------------------------------------------------------------------------------------
    def variance(self, true_counts, items=None) -> np.ndarray:
        counts = check_counts(self.name, true_counts, self.domain_size)
        f, n = counts[self._items(items)], counts.sum()
        r, b = self.domain_size / self.d, self.b_sent
        return f * (r - 1) + n * r * b * (1 - b) / (self.a_sent - b) ** 2

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact. Buckets are visited in order; a user still needing r of its d picks among the K
        buckets left takes the current one w.p. r/K (sequential form of a uniform d-subset). Users are
        tracked per (value, picks left) with binomial draws, so m_j and m_jj (users of value j who
        sampled j) have their exact joint law; then c_j = Bin(m_jj, a_γ) + Bin(m_j − m_jj, b_γ). Once its own
        bucket is passed, an item's users are pooled with the others. Cost: about k·D·d/2 binomial draws.

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
        k, d = self.domain_size, self.d
        live = np.flatnonzero(f)                              # ascending item ids
        left = np.zeros((live.size, d + 1), dtype=np.int64)   # left[i, r]: users of item live[i] needing r picks
        left[:, d] = f[live]
        pool = np.zeros(d + 1, dtype=np.int64)                # users of items whose bucket is passed
        m, own = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
        first = 0                                             # rows first.. are items ≥ the current bucket
        for j in range(k):
            prob = np.minimum(np.arange(1, d + 1) / (k - j), 1.0)
            picks = rng.binomial(left[first:, 1:], prob)
            pool_picks = rng.binomial(pool[1:], prob)
            left[first:, 1:] -= picks
            left[first:, :-1] += picks
            pool[1:] -= pool_picks
            pool[:-1] += pool_picks
            m[j] = picks.sum() + pool_picks.sum()
            if first < live.size and live[first] == j:        # bucket j is item j's own
                own[j] = picks[0].sum()
                pool += left[first]                           # from now on its users are like any other
                first += 1
        c = rng.binomial(own, self.a_sent) + rng.binomial(m - own, self.b_sent)
        return Aggregate(int(f.sum()), np.stack([m, c]), self.kind)

    def all_reports(self) -> DBitFlipReports:
        """Every report: C(k, d) sorted bucket sets × 2^d bit patterns (small k only)."""
        subsets = np.array(list(combinations(range(self.domain_size), self.d)), dtype=np.int64)
        if subsets.shape[0] << self.d > MAX_ENUMERATED:
            raise ValueError(f"{self.name}.all_reports: too many reports to enumerate.")
        patterns = ((np.arange(1 << self.d)[:, None] >> np.arange(self.d)) & 1).astype(np.uint8)
        buckets = np.repeat(subsets, patterns.shape[0], axis=0)
        return DBitFlipReports(buckets, np.tile(patterns, (subsets.shape[0], 1)))

    def report_distribution(self, items=None) -> np.ndarray:
        """``P[x, r]`` over :meth:`all_reports`: 1/C(k, d) × Π_i P[sent bit_i | bucket_i holds x or not]."""
        buckets, bits = self.all_reports()
        x = self._items(items)[:, None, None]
        prob1 = np.where(buckets[None] == x, self.a_sent, self.b_sent)
        per_bit = np.where(bits[None] == 1, prob1, 1 - prob1)
        return per_bit.prod(axis=2) / math.comb(self.domain_size, self.d)

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """d bucket ids (little-endian, ⌈log2 k / 8⌉ bytes each), then the d bits packed (⌈d/8⌉)."""
        return self.d * uint_bytes(self.domain_size) + -(-self.d // 8)

    def encode(self, reports) -> bytes:
        buckets, bits = self._check_reports(reports, "encode")
        w = uint_bytes(self.domain_size)
        n = buckets.shape[0]
        ids = np.frombuffer(encode_uints(buckets.ravel(), w), dtype=np.uint8).reshape(n, self.d * w)
        return np.concatenate([ids, np.packbits(bits, axis=1)], axis=1).tobytes()

    def decode(self, payload: bytes) -> DBitFlipReports:
        n = self._check_payload(payload)
        w = uint_bytes(self.domain_size)
        raw = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes)
        buckets = decode_uints(raw[:, :self.d * w].tobytes(), w).reshape(n, self.d)
        packed = raw[:, self.d * w:]
        if np.any(packed[:, -1] & np.uint8((1 << (8 * packed.shape[1] - self.d)) - 1)):
            raise ValueError(f"{self.name}.decode: padding bits set after the {self.d} report bits.")
        bits = np.unpackbits(packed, axis=1, count=self.d)
        return self._check_reports(DBitFlipReports(buckets, bits), "decode")
