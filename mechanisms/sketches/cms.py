"""Apple's count-mean sketch (CMS) — docs/math.md §1.5, seed 003.

Also the base class shared with the Hadamard variant (:mod:`ldpsim.mechanisms.sketches.hcms`): parameters, the hash
family, item handling and the collision theory (bias with γ), which is the same for both.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_epsilon, check_int, check_memory
from ldpsim.mechanisms.base import Aggregate, FrequencyOracle, decode_uints, encode_uints, uint_bytes
from ldpsim.mechanisms.binomial import binomial_rows
from ldpsim.mechanisms.bitsampling import WORD_BITS, bernoulli_words
from ldpsim.mechanisms.hashing import MAX_K, HashFamily, factorize
from ldpsim.mechanisms.memo import check_keys, keyed_bits, keyed_ints

_UNPACKED = 1 << 20  # bytes of unpacked bits per counting step (1 MiB: stays in cache)


@functools.lru_cache(maxsize=16)
def _collision_sums(family: HashFamily, items: tuple, counts: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(Σ_{d'≠d} f(d')γ(d'), Σ_{d'≠d} f(d')γ(d')²) per item; exact for this family (cached: O(D) each)."""
    sums = family.collision_sums(items, counts)
    for a in sums:
        a.setflags(write=False)  # shared by the cache
    return sums


#: cache the flat sketch positions of a query's items when they take at most this many bytes
_POSITIONS_CACHE_BYTES = 1 << 30


@functools.lru_cache(maxsize=2)
def _cached_positions(family: HashFamily, stride: int, items: tuple) -> tuple[np.ndarray, ...]:
    blocks = tuple(_position_blocks(family, stride, items))
    for b in blocks:
        b.setflags(write=False)  # shared by the cache
    return blocks


def _position_blocks(family: HashFamily, stride: int, items: tuple):
    """Row blocks of l·stride + h_l(d) for the distinct ``items`` (int32 when the table allows)."""
    dtype = np.int32 if family.k * stride < 2 ** 31 else np.int64
    keys = family.keys(items)
    for rows, H in family.row_blocks(keys):
        yield np.add(H, (rows * stride)[:, None], out=np.empty(H.shape, dtype), casting="unsafe")  # < 2^31 if int32


def _flat_positions(family: HashFamily, stride: int, items: tuple):
    """Positions for :meth:`Sketch._query_sums`: cached (a sweep queries the same items every repeat)
    unless they would take more than ``_POSITIONS_CACHE_BYTES``; then computed block by block."""
    if family.k * len(items) * 4 <= _POSITIONS_CACHE_BYTES:
        return _cached_positions(family, stride, items)
    return _position_blocks(family, stride, items)


@dataclass(frozen=True)
class Sketch(FrequencyOracle):
    """Common part of CMS and HCMS: ε, k rows, width m, the seeded hash family and the γ theory.

    For a fixed hash family let γ(d') = fraction of rows l with h_l(d') = h_l(d) (docs/math.md §1.5).
    Both sketches estimate f̂(d) = m/(m−1)·(Σ_u Y_u − n/m) with E[Y_u] = γ(d_u), hence
    bias f̂(d) = m/(m−1)·Σ_{d'≠d} f(d')·(γ(d') − 1/m); the variances differ (see each class).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    k : int
        Number of hash functions = rows of the sketch, in [1, 2^24]. Each user reports into one
        uniformly chosen row; more rows make the hash-collision bias average out (it shrinks like
        1/√k) at no extra report size (⌈log₂k/8⌉ bytes for the row index).
    m : int
        Width of the sketch = range of each hash function, in [2, 2^16] (HCMS: a power of 2).
        Collisions cost about n/m per estimate; CMS reports grow as ⌈m/8⌉ bytes.
    seed : int, default 0
        Picks the hash family, in [0, 2^32 − 1] (:class:`~ldpsim.mechanisms.hashing.HashFamily`);
        clients and server must share it.

    Attributes
    ----------
    family : HashFamily
        The k seeded hash functions tokens → [0, m).

    Notes
    -----
    ``items`` (the tokens to estimate) is required by estimate and theory: sketches take arbitrary
    str/bytes/int tokens and have no default domain.

    Cost of the exact theory (bias, variance, mse): the pairwise collision counts of the D items,
    O(k·(D + D²/m)) time and D² memory while computing (the sums are cached): about 0.5 s for k = 256,
    m = 1024, D = 2000 but about a minute for k = 65535; ``family_averaged_variance`` is O(D).
    """

    epsilon: float
    k: int
    m: int
    seed: int = 0
    family: HashFamily = field(init=False, repr=False, compare=False)
    takes_tokens = True

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.name, self.epsilon))
        object.__setattr__(self, "k", check_int(self.name, "k", self.k, low=1, high=MAX_K))
        object.__setattr__(self, "m", check_int(self.name, "m", self.m, low=2, high=1 << 16))
        object.__setattr__(self, "seed", check_int(self.name, "seed", self.seed, low=0, high=2**32 - 1))
        check_memory(self.name, 8.0 * self.k * self.m, f"its k × m = {self.k} × {self.m} sketch of float64",
                     "k or m")
        object.__setattr__(self, "family", HashFamily(self.k, self.m, self.seed))

    # items and theory ------------------------------------------------------------------------
    def _items(self, items, what: str = "items") -> np.ndarray:
        if items is None:
            raise ValueError(f"{self.name}: {what!r} is required (sketches take arbitrary tokens, "
                             f"there is no default domain).")
        arr = np.empty(len(items), dtype=object)
        arr[:] = list(items.tolist() if isinstance(items, np.ndarray) else items)
        return arr

    def _counts(self, true_counts, items) -> tuple[np.ndarray, np.ndarray]:
        arr = self._items(items)
        return arr, check_counts(self.name, true_counts, arr.size)

    def _collision_sums(self, items: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _collision_sums(self.family, tuple(items.tolist()), tuple(f.tolist()))

    def bias(self, true_counts, items=None) -> np.ndarray:
        """m/(m−1)·Σ_{d'≠d} f(d')·(γ(d') − 1/m) — docs/math.md §1.5, exact for this hash family.

        Parameters
        ----------
        true_counts : array_like of non-negative numbers
            True count of each of ``items`` (the whole population: other tokens are assumed absent).
        items : sequence of tokens
            The items (required), aligned with ``true_counts``.

        Returns
        -------
        numpy.ndarray of float
            Count-scale bias of each item's estimate.
        """
        arr, f = self._counts(true_counts, items)
        s1, _ = self._collision_sums(arr, f)
        return self.m / (self.m - 1) * (s1 - (f.sum() - f) / self.m)

    def _family_terms(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Σ_{d'≠d} f(d'), Σ_{d'≠d} f(d')(f(d')−1)) per item."""
        return f.sum() - f, (f * (f - 1)).sum() - f * (f - 1)

    # keys of the users' tokens ----------------------------------------------------------------
    def _user_positions(self, keys: np.ndarray, rng):
        """Rows j_u uniform in [k] and positions h_{j_u}(d_u) for users with mmh3 ``keys``."""
        rows = rng.integers(0, self.k, size=keys.size)
        return rows, self.family.evaluate(rows, keys)

    def _keyed_positions(self, values, keys):
        """(checked report keys, rows, positions) of a memoized client: row j_i is integer 0 of report
        key i's stream (uniform in [k]), its position h_{j_i}(value i)."""
        vkeys = self.value_keys(values)
        keys = check_keys(f"{self.name}.perturb_keyed", keys, vkeys.size)
        rows = keyed_ints(keys, self.k, 0)
        return keys, rows, self.family.evaluate(rows, vkeys)

    def value_keys(self, values) -> np.ndarray:
        """The hash family's key of each value: the input of the sketch's hashes (docs/math.md §1.5).

        Parameters
        ----------
        values : array_like
            Tokens (str, bytes or int), one per user.

        Returns
        -------
        ndarray of uint64
            One mmh3 key per value (one digest per distinct token, then indexed).
        """
        uniq, inv = factorize(values)
        return self.family.keys(uniq)[inv]

    def _population_keys(self, true_counts, items) -> np.ndarray:
        """Per-user keys of the population with ``true_counts`` of ``items`` (in item order)."""
        arr, f = self._counts(true_counts, items)
        return np.repeat(self.value_keys(arr), f)

    def _query_sums(self, table: np.ndarray, items) -> np.ndarray:
        """Σ_l table[l, h_l(d)] for each item d (table: k rows of ≥ m columns, C-contiguous)."""
        uniq, inv = factorize(self._items(items))
        flat = table.reshape(-1)
        total = np.zeros(uniq.size, dtype=table.dtype)
        for block in _flat_positions(self.family, table.shape[1], tuple(uniq.tolist())):
            total += flat.take(block).sum(axis=0)
        return total[inv]


class CMSReports(NamedTuple):
    """CMS reports of n users: bit-packed ṽ (bit 1 ⇔ +1, np.packbits order) and the row index j."""

    bits: np.ndarray  #: uint8, shape (n, ⌈m/8⌉)
    row: np.ndarray  #: int64, shape (n,), values in [0, k)


def grouped_column_counts(bits: np.ndarray, groups: np.ndarray, n_groups: int, n_bits: int) -> np.ndarray:
    """ones[g, c] = number of packed rows in group g whose bit c is set (int64, n_groups × n_bits).

    Rows are sorted by group and each group padded to blocks of b ≤ 255 rows, so a block's column
    sums fit uint8 lanes; one pass over the unpacked bits, in steps of ~1 MiB (they stay in cache).
    """
    size = np.bincount(groups, minlength=n_groups)
    b = int(np.clip(groups.size // max(2 * n_groups, 1), 1, 255))
    n_blocks = -(-size // b)
    first_slot = (np.cumsum(n_blocks) - n_blocks) * b
    small = np.uint16 if n_groups <= 1 << 16 else groups.dtype  # 16-bit keys: numpy's stable sort is a radix sort
    order = np.argsort(groups.astype(small, copy=False), kind="stable")
    within = np.arange(groups.size) - np.repeat(np.cumsum(size) - size, size)
    source = np.full(int(n_blocks.sum()) * b, -1, dtype=np.intp)  # padded slot → report (−1: empty)
    source[np.repeat(first_slot, size) + within] = order
    block_group = np.repeat(np.arange(n_groups), n_blocks)
    out = np.zeros((n_groups, n_bits), dtype=np.int64)
    step = max(1, _UNPACKED // (b * n_bits))
    for b0 in range(0, block_group.size, step):
        src = source[b0 * b:(b0 + step) * b]
        padded = bits.take(np.maximum(src, 0), axis=0)
        padded[src < 0] = 0
        unpacked = np.unpackbits(padded.reshape(-1, b, bits.shape[1]), axis=2, count=n_bits)
        sums = np.add.reduce(unpacked, axis=1, dtype=np.uint8)
        g = block_group[b0:b0 + step]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        out[g[starts]] += np.add.reduceat(sums, starts, axis=0, dtype=np.int64)
    return out


def _occupied_cells(rows: np.ndarray, pos: np.ndarray, k: int, m: int):
    """(j, c, T) of the cells of a k × m sketch that users at (rows, pos) occupy, T > 0 users each:
    a bincount when the sketch has at most twice as many cells as users, else a sort of the users."""
    cell = rows * m + pos
    if k * m <= 2 * cell.size:
        hits = np.bincount(cell, minlength=k * m)
        cell = np.flatnonzero(hits)
        hits = hits[cell]
    else:
        cell, hits = np.unique(cell.astype(np.int32) if k * m < 2 ** 31 else cell, return_counts=True)
    j, c = np.divmod(cell.astype(np.intp, copy=False), m)
    return j, c, hits


@dataclass(frozen=True)
class CMS(Sketch):
    """Apple's count-mean sketch over arbitrary tokens (str, bytes, int) — docs/math.md §1.5, seed 003.

    Apple Differential Privacy Team, "Learning with Privacy at Scale" (2017).

    Privacy: ε-LDP. Each of the m report bits is flipped independently w.p. f = 1/(1+e^{ε/2}); two
    inputs change at most two coordinates of v, so the likelihood ratio of any report is at most
    ((1−f)/f)² = e^ε, attained (report equal to one input's one-hot vector, same row).

    Client: j uniform in [k]; v = −1 except +1 at h_j(d); flip each coordinate w.p. f; send (ṽ, j).
    Server aggregate (exact, integer, mergeable by addition): ``data`` is k × (m+1) int64 with
    data[j, c] = number of row-j reports whose bit c is +1 and data[j, m] = N_j, reports in row j.
    The matrix M of docs/math.md §1.5 follows exactly: M[j, c] = k·(c_ε·ones[j, c] − (c_ε−1)/2·N_j)
    (:meth:`sketch_matrix`).
    Estimate: f̂(d) = m/(m−1)·((1/k)Σ_l M[l, h_l(d)] − n/m) = m/(m−1)·(c_ε·Σ_l ones[l, h_l(d)]
    − (c_ε−1)/2·n − n/m), c_ε = (e^{ε/2}+1)/(e^{ε/2}−1).

    Theory for this fixed hash family (users' randomness only; exact): with X_u the bit at h_{j_u}(d)
    of user u, P(X_u = 1) = f + γ(d_u)(1−2f) and c_ε(1−2f) = 1, so
    Var f̂(d) = (m/(m−1))²·[n(c_ε²−1)/4 + Σ_{d'≠d} f(d')γ(d')(1−γ(d'))]  (docs/math.md §1.5).

    Parameters
    ----------
    epsilon, k, m, seed
        As for the base class ``Sketch``: ε in (0, inf); k rows in [1, 2^24]; width m in [2, 2^16];
        hash seed in [0, 2^32 − 1] (default 0).

    Attributes
    ----------
    flip : float
        Per-bit flip probability f = 1/(1+e^{ε/2}).
    c_eps : float
        Debiasing constant c_ε = (e^{ε/2}+1)/(e^{ε/2}−1).
    family : HashFamily
        The k hash functions.

    Examples
    --------
    >>> cms = CMS(epsilon=4.0, k=4, m=8)
    >>> reports = cms.perturb(["a", "b", "a"], rng=0)
    >>> reports.bits.shape, cms.report_bytes
    ((3, 1), 2)
    >>> agg = cms.sample_aggregate([600, 400], rng=0, items=["a", "b"])
    >>> agg.n, cms.estimate(agg, ["a", "b"]).shape
    (1000, (2,))
    """

    flip: float = field(init=False, repr=False, compare=False)
    c_eps: float = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        super().__post_init__()
        half = math.exp(self.epsilon / 2)
        object.__setattr__(self, "flip", 1.0 / (1.0 + half))
        object.__setattr__(self, "c_eps", (half + 1) / (half - 1))

    @property
    def _n_bytes(self) -> int:
        return -(-self.m // 8)

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> CMSReports:
        """Client side: one row and one flipped ±1 vector per user.

        Parameters
        ----------
        values : array_like of tokens, shape (n,)
            One str/bytes/int token per user (42 and "42" are the same token).
        rng : numpy.random.Generator, int or None
            Source of randomness (rows and flips).

        Returns
        -------
        CMSReports
            ``bits`` (uint8, (n, ⌈m/8⌉), bit 1 ⇔ +1) and ``row`` (int64, (n,)).
        """
        rng = as_generator(rng)
        keys = self.value_keys(values)
        n = keys.size
        rows, pos = self._user_positions(keys, rng)
        width, n_words = self._n_bytes, -(-self.m // WORD_BITS)
        flips = bernoulli_words(self.flip, n * n_words, rng).view(np.uint8).reshape(n, 2 * n_words)
        bits = flips if width == 2 * n_words else np.ascontiguousarray(flips[:, :width])
        if self.m % 8:
            bits[:, -1] &= np.uint8((0xFF << (8 * width - self.m)) & 0xFF)  # padding bits are 0
        return self._reports(bits, rows, pos)

    def perturb_keyed(self, values, keys) -> CMSReports:
        """Memoized client: report i a deterministic function of ``keys[i]`` with the law of :meth:`perturb`.

        The row is integer 0 of the key's stream and flip c is uniform 1 + c below f (the keyed hash of
        docs/math.md §7.5, "Memoization in the ledger"); the one-hot vector is :meth:`perturb`'s.

        Parameters
        ----------
        values : array_like of tokens, shape (n,)
            One str/bytes/int token per report.
        keys : array_like of uint64, shape (n,)
            One key per report (a memo: one per device and value).

        Returns
        -------
        CMSReports
            As :meth:`perturb` returns them.
        """
        keys, rows, pos = self._keyed_positions(values, keys)
        return self._reports(keyed_bits(keys, self.m, self.flip, offset=1), rows, pos)

    @staticmethod
    def _reports(flips: np.ndarray, rows: np.ndarray, pos: np.ndarray) -> CMSReports:
        """(ṽ, j): the one-hot vector at ``pos`` XOR the packed ``flips`` (modified in place), and the rows."""
        flips[np.arange(rows.size), pos >> 3] ^= (0x80 >> (pos & 7)).astype(np.uint8)
        return CMSReports(flips, rows)

    # server ------------------------------------------------------------------------------------
    def _check_reports(self, reports, what: str) -> CMSReports:
        try:
            bits, row = (np.asarray(r) for r in reports)
        except (TypeError, ValueError):
            raise ValueError(f"{self.name}.{what}: reports must be CMSReports(bits, row).") from None
        if bits.dtype != np.uint8 or bits.ndim != 2 or bits.shape[1] != self._n_bytes:
            raise ValueError(f"{self.name}.{what}: bits must be uint8 of shape (n, {self._n_bytes}); "
                             f"got {bits.dtype} {bits.shape}.")
        if row.shape != (bits.shape[0],) or (row.size and not np.issubdtype(row.dtype, np.integer)):
            raise ValueError(f"{self.name}.{what}: row must be {bits.shape[0]} integers; got {row.dtype} "
                             f"{row.shape}.")
        if row.size and (row.min() < 0 or row.max() >= self.k):
            raise ValueError(f"{self.name}.{what}: row indices must be in [0, {self.k}).")
        pad = np.uint8(~(0xFF << (8 * self._n_bytes - self.m)) & 0xFF)
        if bits.size and np.any(bits[:, -1] & pad):
            raise ValueError(f"{self.name}.{what}: padding bits beyond bit {self.m - 1} are set.")
        return CMSReports(bits, row.astype(np.int64))

    def aggregate(self, reports) -> Aggregate:
        """Integer sketch: per row the counts of +1 bits per column and the number of reports.

        Parameters
        ----------
        reports : CMSReports
            ``(bits, row)`` as returned by :meth:`perturb` or :meth:`decode`.

        Returns
        -------
        Aggregate
            ``data`` of shape (k, m+1), int64: columns < m the +1 counts, column m the row sizes N_j.
        """
        bits, row = self._check_reports(reports, "aggregate")
        data = np.empty((self.k, self.m + 1), dtype=np.int64)
        data[:, :self.m] = grouped_column_counts(bits, row, self.k, self.m)
        data[:, self.m] = np.bincount(row, minlength=self.k)
        return Aggregate(row.size, data, self.kind)

    def sketch_matrix(self, agg: Aggregate) -> np.ndarray:
        """The k × m matrix M of docs/math.md §1.5, rebuilt exactly from the integer counts (float).

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration.

        Returns
        -------
        numpy.ndarray of float, shape (k, m)
        """
        self._check_aggregate(agg)
        ones, n_row = agg.data[:, :self.m], agg.data[:, self.m:]
        return self.k * (self.c_eps * ones - (self.c_eps - 1) / 2 * n_row)

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Count estimates f̂(d) = m/(m−1)·((1/k)Σ_l M[l, h_l(d)] − n/m) (docs/math.md §1.5).

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration.
        items : sequence of tokens
            Items to estimate (required; any tokens, seen or not).

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
            Biased by hash collisions for a fixed family (:meth:`bias`).
        """
        self._check_aggregate(agg)
        return self.estimates_from_sums(agg.n, self._query_sums(agg.data, items))  # columns < m: ones counts

    def estimates_from_sums(self, n: int, sums) -> np.ndarray:
        """f̂ = m/(m−1)·(c_ε·S − (c_ε−1)/2·n − n/m) from S = Σ_l ones[l, h_l(d)] over n users: the map
        :meth:`estimate` applies (docs/math.md §1.5 via M, class docstring); increasing in S."""
        c, m = self.c_eps, self.m
        return m / (m - 1) * (c * np.asarray(sums) - (c - 1) / 2 * n - n / m)

    # theory ------------------------------------------------------------------------------------
    def variance(self, true_counts, items=None) -> np.ndarray:
        """(m/(m−1))²·[n(c_ε²−1)/4 + Σ_{d'≠d} f(d')γ(d')(1−γ(d'))] — docs/math.md §1.5, exact.

        Parameters
        ----------
        true_counts : array_like of non-negative numbers
            True count of each of ``items`` (n = their sum).
        items : sequence of tokens
            The items (required), aligned with ``true_counts``.

        Returns
        -------
        numpy.ndarray of float
            Count-scale variance of each estimate over the users' randomness, for this hash family.
        """
        arr, f = self._counts(true_counts, items)
        s1, s2 = self._collision_sums(arr, f)
        m = self.m
        return (m / (m - 1)) ** 2 * (f.sum() * (self.c_eps ** 2 - 1) / 4 + s1 - s2)

    def family_averaged_variance(self, true_counts, items=None) -> np.ndarray:
        """MSE averaged over random families with independent rows (bias turned into variance):
        (m/(m−1))²·[n(c_ε²−1)/4 + (m−1)/m²·Σ_{d'≠d} f(d') + (m−1)/m²·Σ_{d'≠d} f(d')(f(d')−1)/k]
        — docs/math.md §1.5. Parameters and return as :meth:`variance`."""
        _, f = self._counts(true_counts, items)
        others, pairs = self._family_terms(f)
        m = self.m
        return (m / (m - 1)) ** 2 * (f.sum() * (self.c_eps ** 2 - 1) / 4
                                     + (m - 1) / m ** 2 * (others + pairs / self.k))

    def bit_probabilities(self) -> tuple[float, float]:
        """(P[bit at h_j(d) is +1], P[any other bit is +1]) = (1 − f, f)."""
        return 1.0 - self.flip, self.flip

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact direct sampler of the aggregate, without reports (docs/math.md §1.5).

        Each user gets a uniform row; T[j, c] = users of row j whose +1 lands on c, N_j = users of row j.
        Cell counts are independent: ones[j, c] = Bin(N_j − T, f) + Bin(T, 1−f). Write each of the T
        users' bits as 1 − Z with Z ~ Bern(f): then ones = B + T − 2Y, where B ~ Bin(N_j, f) counts the
        Z's of all N_j users and Y those of the T users, so Y | B ~ Hypergeometric(T, N_j − T, B).
        Every cell's B is drawn by :func:`binomial_rows` (for T = 0 cells that is the answer), then the
        occupied cells draw Y: Bern(B/N_j) when T = 1 (most of them), ``rng.hypergeometric`` otherwise.

        Parameters
        ----------
        true_counts : array_like of non-negative ints
            Users holding each of ``items``.
        rng : numpy.random.Generator, int or None
            Source of randomness.
        items : sequence of tokens
            The items (required), aligned with ``true_counts``.

        Returns
        -------
        Aggregate
            Distributed exactly as ``aggregate(perturb(values))``.
        """
        keys = self._population_keys(true_counts, items)
        rng = as_generator(rng)
        rows, pos = self._user_positions(keys, rng)
        n_row = np.bincount(rows, minlength=self.k)
        data = np.empty((self.k, self.m + 1), dtype=np.int64)
        data[:, self.m] = n_row
        binomial_rows(data[:, :self.m], n_row, self.flip, rng)
        j, c, hits = _occupied_cells(rows, pos, self.k, self.m)
        flat, cell, n = data.reshape(-1), j * (self.m + 1) + c, n_row[j]
        b = flat[cell]
        one = hits == 1
        y = np.empty_like(b)
        y[one] = rng.integers(0, n[one]) < b[one]
        y[~one] = rng.hypergeometric(hits[~one], n[~one] - hits[~one], b[~one])
        flat[cell] = b + hits - 2 * y
        return Aggregate(keys.size, data, self.kind)

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """⌈m/8⌉ bytes of packed ±1 bits, then the row j as a little-endian uint of uint_bytes(k) bytes."""
        return self._n_bytes + uint_bytes(self.k)

    def encode(self, reports) -> bytes:
        """Wire form: per report the packed bits then the row index (``report_bytes`` each)."""
        bits, row = self._check_reports(reports, "encode")
        out = np.empty((row.size, self.report_bytes), dtype=np.uint8)
        out[:, :self._n_bytes] = bits
        width = uint_bytes(self.k)
        out[:, self._n_bytes:] = np.frombuffer(encode_uints(row, width), np.uint8).reshape(row.size, width)
        return out.tobytes()

    def decode(self, payload: bytes) -> CMSReports:
        """Reports from their wire form.

        Parameters
        ----------
        payload : bytes
            Output of :meth:`encode`.

        Returns
        -------
        CMSReports
            ``ValueError`` on a partial report, a row ≥ k or set padding bits.
        """
        n = self._check_payload(payload)
        raw = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes)
        bits = raw[:, :self._n_bytes].copy()
        row = decode_uints(raw[:, self._n_bytes:].tobytes(), uint_bytes(self.k))
        return self._check_reports(CMSReports(bits, row), "decode")
