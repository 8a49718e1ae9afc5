"""Unary encodings: one bit per item, the user's bit 1 w.p. p, every other bit 1 w.p. q — docs/math.md §7.1.

:class:`UnaryEncoding` holds everything that depends only on (p, q, D): the bit-packed client, the
column-count aggregate, the estimator (c_x − n·q)/(p − q), its exact fixed-population variance
[f_x·p(1−p) + (n − f_x)·q(1−q)]/(p − q)² (= n·q(1−q)/(p−q)² + f_x(1−p−q)/(p−q)), the exact direct
sampler c_x = Bin(f_x, p) + Bin(n − f_x, q), the likelihood of a whole report, and the wire form.
Subclasses (OUE, SUE, THE) only choose p and q (Wang, Blocki, Li, Jha, USENIX Security 2017).

Privacy of a report: for inputs x ≠ x' the likelihood ratio is at most p(1−q)/(q(1−p)) (the two
bits that differ), with equality when B_x = 1 and B_x' = 0; :meth:`epsilon_report` is its log.
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_item_ids
from ldpsim.mechanisms.base import Aggregate, DiscreteOracle, FrequencyOracle
from ldpsim.mechanisms.bitsampling import WORD_BITS, bernoulli_words, packed_column_counts
from ldpsim.mechanisms.linear_theory import sample_support_counts, support_count_variance

_BATCH_WORDS = 1 << 17  # 16-bit words perturbed per batch (bounds memory of the batched paths)
MAX_ENUMERATED_ITEMS = 16  # report_distribution enumerates 2^D reports


class UnaryEncoding(FrequencyOracle):
    """Bit-packed unary encoding with P[own bit = 1] = p, P[other bit = 1] = q (module docstring).

    Reports are an (n, ⌈D/8⌉) uint8 array in ``np.packbits`` (big-endian) order: the bit of item j
    is bit 7 − j % 8 of byte j // 8, padding bits zero. Bits are drawn sixteen at a time from their
    exact product distribution (:mod:`ldpsim.mechanisms.bitsampling`).
    """

    domain_size: int
    p: float
    q: float

    _items = DiscreteOracle._items  # items default to all ids 0..D-1

    def bit_probabilities(self) -> tuple[float, float]:
        """(p, q): P[bit = 1] for the true item's bit and for every other bit."""
        return self.p, self.q

    @property
    def epsilon_report(self) -> float:
        """ln(p(1−q)/(q(1−p))): the exact privacy loss of one report (≤ ε; = ε for OUE and SUE)."""
        p, q = self.p, self.q
        return math.log(p * (1 - q) / (q * (1 - p)))

    # client ------------------------------------------------------------------------------------
    def _batches(self, x: np.ndarray, rng: np.random.Generator):
        """Yield (slice of users, packed rows) batch by batch; fixes the order of random draws."""
        n_words = -(-self.domain_size // WORD_BITS)
        step = max(1, _BATCH_WORDS // n_words)
        for start in range(0, x.size, step):
            xb = x[start:start + step]
            yield slice(start, start + xb.size), self._perturb_batch(xb, n_words, rng)

    def _perturb_batch(self, x: np.ndarray, n_words: int, rng) -> np.ndarray:
        """All bits Bernoulli(q) sixteen at a time, padding cleared, then each true bit redrawn."""
        m, width = x.size, self.report_bytes
        rows = bernoulli_words(self.q, m * n_words, rng).view(np.uint8).reshape(m, 2 * n_words)[:, :width]
        rows = np.ascontiguousarray(rows)
        rows[:, -1] &= self._last_byte_mask
        byte, mask = x >> 3, (0x80 >> (x & 7)).astype(np.uint8)
        ones = rng.random(m) < self.p  # the true item's bit, drawn separately: Bernoulli(p)
        user = np.arange(m)
        rows[user, byte] = (rows[user, byte] & ~mask) | np.where(ones, mask, np.uint8(0))
        return rows

    def perturb(self, values, rng=None) -> np.ndarray:
        """Client side: bit-packed unary-encoding reports.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            One item id in [0, D) per user.
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        numpy.ndarray of uint8, shape (n, ⌈D/8⌉)
            One packed row per user (``np.packbits`` order, padding bits zero).
        """
        x = check_item_ids(self.name, values, self.domain_size)
        out = np.empty((x.size, self.report_bytes), dtype=np.uint8)
        for users, rows in self._batches(x, as_generator(rng)):
            out[users] = rows
        return out

    def perturb_aggregate(self, values, rng=None) -> Aggregate:
        """``aggregate(perturb(values, rng))`` (identical result) in bounded memory, batch by batch."""
        x = check_item_ids(self.name, values, self.domain_size)
        counts = np.zeros(self.domain_size, dtype=np.int64)
        for _, rows in self._batches(x, as_generator(rng)):
            counts += packed_column_counts(rows, self.domain_size)
        return Aggregate(x.size, counts, self.kind)

    # server ------------------------------------------------------------------------------------
    @property
    def _last_byte_mask(self) -> int:
        return (0xFF << (8 * self.report_bytes - self.domain_size)) & 0xFF

    def _check_rows(self, reports, what: str) -> np.ndarray:
        rows = np.asarray(reports)
        if rows.ndim != 2 or rows.shape[1] != self.report_bytes or rows.dtype != np.uint8:
            raise ValueError(f"{self.name}.{what}: reports must be a uint8 array of shape "
                             f"(n, {self.report_bytes}) (bit-packed rows); got {rows.dtype} {rows.shape}.")
        if rows.shape[0] and np.any(rows[:, -1] & ~np.uint8(self._last_byte_mask)):
            bad = int(np.flatnonzero(rows[:, -1] & ~np.uint8(self._last_byte_mask))[0])
            raise ValueError(f"{self.name}.{what}: report {bad} has padding bits set beyond item "
                             f"{self.domain_size - 1}.")
        return rows

    def aggregate(self, reports) -> Aggregate:
        """Per-item counts of ones.

        Parameters
        ----------
        reports : numpy.ndarray of uint8, shape (n, ⌈D/8⌉)
            Bit-packed rows (padding bits must be zero).

        Returns
        -------
        Aggregate
            ``data`` = the D counts of ones (int64).
        """
        rows = self._check_rows(reports, "aggregate")
        return Aggregate(rows.shape[0], packed_column_counts(rows, self.domain_size), self.kind)

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Unbiased count estimates (c_x − n·q)/(p − q) (docs/math.md §7.1).

        Parameters
        ----------
        agg : Aggregate
            Counts of ones of this configuration.
        items : array_like of int, optional
            Ids to estimate (default: all D ids).

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
        """
        self._check_aggregate(agg)
        c = agg.data[self._items(items)]
        return (c - agg.n * self.q) / (self.p - self.q)  # pure-protocol estimator, counts

    # theory ------------------------------------------------------------------------------------
    def variance(self, true_counts, items=None) -> np.ndarray:
        """Exact count-scale variance [f_x·p(1−p) + (n − f_x)·q(1−q)]/(p − q)² (docs/math.md §7.1).

        Parameters
        ----------
        true_counts : array_like of non-negative numbers, shape (D,)
            Users holding each id.
        items : array_like of int, optional
            Ids whose variance is returned (default: all).

        Returns
        -------
        numpy.ndarray of float
        """
        counts = check_counts(self.name, true_counts, self.domain_size)
        return support_count_variance(counts[self._items(items)], counts.sum(), self.p, self.q)

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact direct sampler: c_x = Bin(f_x, p) + Bin(n − f_x, q), independent across items.

        Parameters
        ----------
        true_counts : array_like of non-negative ints, shape (D,)
            Users holding each id.
        rng : numpy.random.Generator, int or None
            Source of randomness.
        items : ignored

        Returns
        -------
        Aggregate
        """
        f = check_counts(self.name, true_counts, self.domain_size)
        return Aggregate(int(f.sum()), sample_support_counts(f, self.p, self.q, as_generator(rng)), self.kind)

    def log_likelihood(self, reports, values) -> np.ndarray:
        """log P[report_u | input values_u] for each user (exact: a product over the D bits).

        Parameters
        ----------
        reports : numpy.ndarray of uint8, shape (n, ⌈D/8⌉)
            Bit-packed rows.
        values : array_like of int, shape (n,)
            The candidate input of each user.

        Returns
        -------
        numpy.ndarray of float, shape (n,)
        """
        rows = self._check_rows(reports, "log_likelihood")
        x = check_item_ids(self.name, values, self.domain_size)
        if x.size != rows.shape[0]:
            raise ValueError(f"{self.name}.log_likelihood: {rows.shape[0]} reports but {x.size} values.")
        ones = np.unpackbits(rows, axis=1, count=self.domain_size).sum(axis=1, dtype=np.int64)
        bit = (rows[np.arange(x.size), x >> 3] >> (7 - (x & 7))) & 1
        p, q = self.p, self.q
        base = ones * math.log(q) + (self.domain_size - ones) * math.log1p(-q)
        return base + np.where(bit == 1, math.log(p / q), math.log((1 - p) / (1 - q)))

    def all_reports(self) -> np.ndarray:
        """Every possible report (2^D packed rows; report r has bit j = bit j of the integer r)."""
        d = self.domain_size
        if d > MAX_ENUMERATED_ITEMS:
            raise ValueError(f"{self.name}.all_reports: 2^{d} reports are too many to enumerate "
                             f"(domain_size ≤ {MAX_ENUMERATED_ITEMS}).")
        bits = (np.arange(1 << d)[:, None] >> np.arange(d)[None, :]) & 1
        return np.packbits(bits.astype(np.uint8), axis=1)

    def report_distribution(self, items=None) -> np.ndarray:
        """``P[x, r] = P[report r | x]`` over :meth:`all_reports` for x in ``items`` (exact, from the likelihood)."""
        reports = self.all_reports()
        return np.array([np.exp(self.log_likelihood(reports, np.full(len(reports), x)))
                         for x in self._items(items)])

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """⌈D/8⌉: one bit per item, ``np.packbits`` order, zero padding."""
        return -(-self.domain_size // 8)

    def encode(self, reports) -> bytes:
        """The packed rows as bytes, ⌈D/8⌉ per report."""
        return self._check_rows(reports, "encode").tobytes()

    def decode(self, payload: bytes) -> np.ndarray:
        """Bit-packed rows from their wire form (⌈D/8⌉ bytes per report).

        Parameters
        ----------
        payload : bytes
            Output of :meth:`encode`.

        Returns
        -------
        numpy.ndarray of uint8, shape (n, ⌈D/8⌉)
            ``ValueError`` on a partial report or set padding bits.
        """
        n = self._check_payload(payload)
        rows = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes).copy()
        return self._check_rows(rows, "decode")
