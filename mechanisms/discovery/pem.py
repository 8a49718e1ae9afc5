"""PEM, the Prefix Extending Method — Wang, Li, Jha et al., "Locally Differentially Private Heavy
Hitter Identification", IEEE TDSC 2019; docs/math.md §7.4, §7.4.1 (local hashing: §7.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_int
from ldpsim.mechanisms.base import Aggregate, decode_uints, encode_uints, uint_bytes
from ldpsim.mechanisms.discovery.false_discoveries import (DEFAULT_FALSE_DISCOVERIES, above, check_rate, over_cap,
                                                           peel_collisions, selection_cut)
from ldpsim.mechanisms.discovery.theory import UserModel
from ldpsim.mechanisms.hashing import HashFamily
from ldpsim.mechanisms.discovery.words import (DEFAULT_ALPHABET, DiscoveryProtocol, DiscoveryResult, WordCodec, grouped_counts,
                                     sketch_sums, split_counts, top, word_rows)


#: aggregate: count by bincount over the whole table once the reports' cells reach 1/_DENSE_SHARE of it
_DENSE_SHARE = 8

#: the default ``start`` asks at most this many candidates in the first round (docs/math.md §7.4.1)
START_CANDIDATES = 1 << 16


def default_start(base: int, length: int) -> int:
    """The largest s in [1, min(3, length)] whose first round asks at most :data:`START_CANDIDATES`
    candidates: the (b − 1)·b^(s−1) valid prefixes of s symbols (b = |Σ| + 1; docs/math.md §7.4.1).

    >>> default_start(43, 8), default_start(27, 8), default_start(1336, 6)
    (2, 3, 1)
    """
    start = 1
    while start < min(3, length) and (base - 1) * base ** start <= START_CANDIDATES:
        start += 1
    return start


class PEMReports(NamedTuple):
    """One report per user: the group, the index of the hash function in the pool, the GRR'd bucket."""

    group: np.ndarray  #: int64 in [0, G)
    seed: np.ndarray   #: int64 in [0, pool)
    y: np.ndarray      #: int64 in [0, g)


@dataclass(frozen=True)
class PEM(DiscoveryProtocol):
    """PEM over words of at most ``length`` symbols (padding rules: :mod:`.words`).

    Users fall into G = L − start + 1 groups (each user's group uniform, independent of the word);
    group i reports the prefix of length start + i of the padded word with local hashing.
    Local hashing here is FLH (Cormode, Maddock, Maple, VLDB 2021; docs/math.md §7.1): OLH whose hash
    function is drawn from a fixed pool of ``pool`` seeded functions H_s: codes → [g] (the strongly
    universal :class:`~ldpsim.mechanisms.hashing.HashFamily`), g = round(e^ε) + 1 by default.
    Client: s uniform in [pool], h = H_s(prefix), y = h w.p. p = e^ε/(e^ε+g−1), else each other bucket
    w.p. q = 1/(e^ε+g−1); send (group, s, y).
    Privacy: ε-LDP. Group and s do not depend on the input; P[y | x]/P[y | x'] ≤ p/q = e^ε, with
    equality when H_s(x) ≠ H_s(x') (:meth:`privacy_parts`).
    Aggregate: T[i, s, y] = reports of group i with hash s and bucket y, and T[i, s, g] = reports of
    group i with hash s (int64, shape (G, pool, g+1)). A fixed pool is what makes the aggregate a
    small, mergeable table that does not depend on candidates (OLH with a fresh seed per user needs
    every report kept); its cost is a hash-collision bias like CMS's, zero on average over pools.
    Server (:meth:`discover`): round 0 estimates every valid prefix of ``start`` symbols from group 0;
    each round keeps the ``survivors`` largest and extends them by one symbol for the next group.
    Support S_x = Σ_s T[i, s, H_s(x)], count estimate (S_x − n_i/g)/(p − 1/g) scaled by n/n_i.
    Direct path (exact for this pool, not only for an ideal hash): users split over groups by a
    multinomial; within group i each user's s is uniform and h = H_s(prefix) is computed, so the
    cell counts C[s, h] have the per-user law; given C the GRR outputs of a cell are a mixture draw:
    Binomial(C, p − q) keep their bucket, the rest of row s fall uniformly on all g buckets
    (a multinomial per row; p − q + (1 − p + q)/g = p). Each round's candidates are a function of
    earlier groups' tables only; since no client report depends on them, drawing all G tables up front
    is the same as drawing each round's table given the surviving candidates.

    Parameters
    ----------
    epsilon : float in (0, inf)
        ε of one report.
    length : int in [2, L_max]
        Longest word, in symbols (``L_max``: b^L < 2^63).
    alphabet : str, or sequence of str (graphemes; see WordCodec)
        Distinct single code points (:data:`~ldpsim.mechanisms.discovery.words.DEFAULT_ALPHABET`).
    start : int in [1, min(3, length)] or None
        Prefix length of the first group (every valid prefix of it is a candidate). Default
        (:func:`default_start`): the longest whose first round asks at most 2^16 candidates — 2 for
        the default alphabet (1 806 candidates), 3 for a–z, 1 for alphabets of 256 symbols or more.
        Each symbol more saves a group (the final estimate's variance grows with the number of
        groups); the first round's cost is its candidates times ``pool`` hash evaluations.
    pool : int in [1, 2^16]
        Hash functions in the fixed pool.
    g : int in [2, 2^16] or None
        Buckets; default round(e^ε) + 1.
    seed : int in [0, 2^32)
        Picks the hash pool.

    >>> pem = PEM(epsilon=4.0, length=4, alphabet="abc", start=1, pool=64)
    >>> agg = pem.sample_aggregate([5000, 3000], rng=1, items=["ab", "cab"])
    >>> pem.discover(agg, top_k=2).words.tolist()
    ['ab', 'cab']
    """

    epsilon: float
    length: int = 8
    alphabet: str | tuple = DEFAULT_ALPHABET
    start: int | None = None
    pool: int = 1024
    g: int | None = None
    seed: int = 0
    codec: WordCodec = field(init=False, repr=False, compare=False)
    family: HashFamily = field(init=False, repr=False, compare=False)
    p: float = field(init=False, repr=False, compare=False)
    q: float = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "codec", WordCodec(self.alphabet, self.length))
        start = default_start(self.codec.base, self.codec.length) if self.start is None else self.start
        object.__setattr__(self, "start", check_int(self.name, "start", start, low=1, high=min(3, self.length)))
        object.__setattr__(self, "pool", check_int(self.name, "pool", self.pool, low=1, high=1 << 16))
        g = round(math.exp(eps)) + 1 if self.g is None else self.g
        object.__setattr__(self, "g", check_int(self.name, "g", g, low=2, high=1 << 16))
        object.__setattr__(self, "seed", check_int(self.name, "seed", self.seed, low=0, high=2**32 - 1))
        object.__setattr__(self, "family", HashFamily(self.pool, self.g, self.seed))
        denom = math.exp(eps) + self.g - 1
        object.__setattr__(self, "p", math.exp(eps) / denom)
        object.__setattr__(self, "q", 1.0 / denom)

    @property
    def groups(self) -> int:
        return self.length - self.start + 1

    @property
    def estimate_groups(self) -> int:
        return self.groups

    def user_model(self) -> UserModel:
        """One user's term (1[y = H_s(x)] − 1/g)/(p − 1/g) in a group's estimate of x: with γ the share
        of the pool under which x and the user's prefix collide, π = q + (p − q)γ supports x, so
        w = (p − q)(γ − 1/g)/(p − 1/g) and τ = π(1 − π)/(p − 1/g)² (docs/math.md §7.1, §7.4.1)."""
        d, s = self.p - self.q, (self.p - 1.0 / self.g) ** 2
        q = self.q
        return UserModel(self.family, d / (self.p - 1.0 / self.g), 1.0 / self.g,
                         (q * (1 - q) / s, d * (1 - 2 * q) / s, -d * d / s))

    def group_prefix_codes(self, rows: np.ndarray) -> np.ndarray:
        """The prefix each group reports of each word (docs/math.md §7.4.1).

        Parameters
        ----------
        rows : ndarray of int
            (D, L) padded symbol rows of D words (:meth:`WordCodec.symbols`).

        Returns
        -------
        ndarray of int
            (D, G) codes: column g is the code of each word's prefix of ``start + g`` symbols.
        """
        return np.stack([self.codec.prefix_codes(rows, self.start + i) for i in range(self.groups)], axis=1)

    def hash_codes(self, seed, codes) -> np.ndarray:
        """The local hash of prefix codes under the hash functions ``seed`` of the pool (docs/math.md §7.4.1).

        Parameters
        ----------
        seed : int or ndarray of int
            Hash functions in [0, ``pool``), broadcast against ``codes``.
        codes : ndarray of int
            Prefix codes (:meth:`group_prefix_codes`).

        Returns
        -------
        ndarray
            Hash values in [0, g): what a report's ``y`` is before its randomized response.
        """
        return self.family.evaluate(seed, np.asarray(codes, dtype=np.int64).astype(np.uint64))

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> PEMReports:
        rng = as_generator(rng)
        rows, inv = self.codec.symbols(values)
        n = inv.size
        group = rng.integers(0, self.groups, size=n)
        code = self.group_prefix_codes(rows)[inv, group] if n else np.zeros(0, dtype=np.int64)
        seed = rng.integers(0, self.pool, size=n)
        h = self.hash_codes(seed, code)
        keep = rng.random(n) < self.p
        other = (h + 1 + rng.integers(0, self.g - 1, size=n)) % self.g
        return PEMReports(group, seed, np.where(keep, h, other))

    # server ------------------------------------------------------------------------------------
    def _check_reports(self, reports, what: str) -> PEMReports:
        if not (isinstance(reports, tuple) and len(reports) == 3):
            raise TypeError(f"{self.name}.{what}: reports must be PEMReports(group, seed, y).")
        arrays = [np.asarray(r) for r in reports]
        for name, a, high in zip(PEMReports._fields, arrays, (self.groups, self.pool, self.g)):
            if a.shape != arrays[0].shape or a.ndim != 1 or (a.size and (
                    not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= high)):
                raise ValueError(f"{self.name}.{what}: {name} must be {arrays[0].size} ints in [0, {high}).")
        return PEMReports(*(a.astype(np.int64) for a in arrays))

    def aggregate(self, reports) -> Aggregate:
        """Server side: T[i, s, y] and T[i, s, g] (class docstring).

        With few reports for the table (G·pool·(g+1) int64 cells, 220 MB at ε = 8) the counts are
        written only where reports fall, into lazily zeroed memory, so the cost follows the reports;
        otherwise one bincount fills the table. Both give the same table.

        Parameters
        ----------
        reports : PEMReports
            As returned by :meth:`perturb` or :meth:`decode`.

        Returns
        -------
        Aggregate
            ``data`` of shape (G, pool, g+1), int64.
        """
        group, seed, y = self._check_reports(reports, "aggregate")
        shape = (self.groups, self.pool, self.g + 1)
        row = (group * self.pool + seed) * (self.g + 1)
        cells = np.concatenate([row + y, row + self.g])
        size = math.prod(shape)
        if cells.size >= size // _DENSE_SHARE:
            return Aggregate(int(y.size), np.bincount(cells, minlength=size).reshape(shape), self.kind)
        data = np.zeros(shape, dtype=np.int64)
        np.add.at(data.reshape(-1), cells, 1)
        return Aggregate(int(y.size), data, self.kind)

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        rng = as_generator(rng)
        rows, counts = word_rows(self, true_counts, items)
        split = split_counts(counts, self.groups, rng)
        prefixes = self.group_prefix_codes(rows)
        data = np.empty((self.groups, self.pool, self.g + 1), dtype=np.int64)
        cells = data[:, :, :self.g]  # written in place: the table is G·pool·(g+1) int64 (220 MB at ε = 8)
        for i in range(self.groups):
            codes, c = grouped_counts(prefixes[:, i], split[:, i])
            keys = np.repeat(codes, c)
            seed = rng.integers(0, self.pool, size=keys.size)
            C = np.bincount(seed * self.g + self.hash_codes(seed, keys), minlength=self.pool * self.g)
            kept = rng.binomial(C, self.p - self.q).reshape(self.pool, self.g)
            moved = np.bincount(seed, minlength=self.pool) - kept.sum(axis=1)
            np.add(kept, rng.multinomial(moved, np.full(self.g, 1.0 / self.g)), out=cells[i])
        data[:, :, self.g] = cells.sum(axis=2)
        return Aggregate(int(counts.sum()), data, self.kind)

    def group_estimate(self, agg: Aggregate, group: int, codes: np.ndarray) -> tuple[np.ndarray, int]:
        """(count estimates of prefix ``codes`` among the group's users, n_i) — class docstring."""
        self._check_aggregate(agg)
        table = np.ascontiguousarray(agg.data[group])
        n_i = int(table[:, self.g].sum())
        s = sketch_sums(self.family, table, np.asarray(codes, dtype=np.int64).astype(np.uint64))
        return (s - n_i / self.g) / (self.p - 1.0 / self.g), n_i

    def discover(self, agg: Aggregate, top_k: int = 20, survivors: int | None = None,
                 false_discoveries: float = DEFAULT_FALSE_DISCOVERIES) -> DiscoveryResult:
        """Extend prefixes group by group (class docstring); ``survivors`` defaults to 2·top_k. A whole word
        of the last group is kept only if its support reaches t, the smallest with
        |C|·P[Bin(n_i, 1/g) ≥ t] ≤ ``false_discoveries`` (expected invented words per run, docs/math.md
        §10.10; 1/g is a user's chance to support a word it does not hold, over the hash pool). A prefix
        of an earlier group whose support reaches that group's bar (the same rule over its own
        candidates) but which falls outside the ``survivors`` cap is counted in ``dropped``."""
        top_k = check_int(self.name, "top_k", top_k, low=1)
        survivors = check_int(self.name, "survivors", 2 * top_k if survivors is None else survivors, low=1)
        rate = check_rate(self.name, false_discoveries)
        alive, dropped = np.zeros(0, dtype=np.int64), 0
        for l in range(self.start - 1):
            alive = self.codec.extend(alive, l)
        for i in range(self.groups):
            cand = self.codec.extend(alive, self.start - 1 + i)
            est, n_i = self.group_estimate(agg, i, cand)
            if i == self.groups - 1:
                alive, est, invented = self.final_test(cand, est, n_i, top_k, rate)
            else:
                dropped += over_cap(self._supports(est, n_i), selection_cut(n_i, 1.0 / self.g, cand.size, rate)[0],
                                    survivors)
                alive, est = top(cand, est, survivors)
        return DiscoveryResult(self.codec.decode(alive, self.length), est * agg.n / max(n_i, 1), agg.n, invented,
                               dropped)

    def final_test(self, cand: np.ndarray, est: np.ndarray, n_i: int, top_k: int,
                   false_discoveries: float = DEFAULT_FALSE_DISCOVERIES) -> tuple[np.ndarray, np.ndarray, float]:
        """The last group's test of :meth:`discover` (docs/math.md §10.10): the words kept of candidates
        ``cand`` with count estimates ``est`` among the group's ``n_i`` users.

        Parameters
        ----------
        cand : ndarray of int
            Codes of the last group's candidates (whole words).
        est : ndarray of float
            Their count estimates (:meth:`group_estimate`).
        n_i : int
            Reports of the last group.
        top_k : int
            Most words kept.
        false_discoveries : float
            Expected invented words per run, φ.

        Returns
        -------
        tuple
            (codes, estimates) of at most ``top_k`` words, largest first, whose support reaches t — the
            smallest with |C|·P[Bin(n_i, 1/g) ≥ t] ≤ φ — once the pool's collisions with the words kept
            before them are taken off; and |C|·P[Bin(n_i, 1/g) ≥ t], the invented words it lets through.
        """
        t, invented = selection_cut(n_i, 1.0 / self.g, cand.size, check_rate(self.name, false_discoveries))
        cand, est = self._past_collisions(cand, est, n_i, t, top_k)
        return (*top(cand, est, top_k), invented)

    def _supports(self, est: np.ndarray, n_i: int) -> np.ndarray:
        """The supports S_x behind count estimates ``est`` of a group of n_i users (class docstring)."""
        return est * (self.p - 1.0 / self.g) + n_i / self.g

    def _past_collisions(self, cand: np.ndarray, est: np.ndarray, n_i: int, t: int, limit: int):
        """(candidates, estimates), largest first, of at most ``limit`` whose support reaches t once the
        pool's collisions with the words kept before them are taken off
        (:func:`~.false_discoveries.peel_collisions`, docs/math.md §10.10)."""
        slope = self.p - 1.0 / self.g
        support = self._supports(est, n_i)
        order = above(support, t)
        kept = order[peel_collisions(support[order], t, lambda j: (self.p - self.q) * (
            self.family.key_collision_counts(cand[order[:j]].astype(np.uint64)) / self.pool - 1.0 / self.g),
            lambda s: (s - n_i / self.g) / slope, limit)]
        return cand[kept], est[kept]

    def privacy_parts(self) -> dict[str, float]:
        """ε of each part of one report: group and hash index (input-independent), the bucket (GRR)."""
        return {"group": 0.0, "hash": 0.0, "bucket": math.log(self.p / self.q)}

    def log_likelihood(self, reports, values) -> np.ndarray:
        """log P[(group, s, y) | word] = −log G − log pool + log(p if y = H_s(prefix) else q)."""
        group, seed, y = self._check_reports(reports, "log_likelihood")
        rows, inv = self.codec.symbols(values)
        hit = self.hash_codes(seed, self.group_prefix_codes(rows)[inv, group]) == y
        return -math.log(self.groups * self.pool) + np.where(hit, math.log(self.p), math.log(self.q))

    # wire form ---------------------------------------------------------------------------------
    @property
    def _widths(self) -> tuple[int, int, int]:
        return uint_bytes(self.groups), uint_bytes(self.pool), uint_bytes(self.g)

    @property
    def report_bytes(self) -> int:
        """Group, hash index and bucket, each a little-endian uint of the fewest whole bytes."""
        return sum(self._widths)

    def encode(self, reports) -> bytes:
        parts = self._check_reports(reports, "encode")
        cols = [np.frombuffer(encode_uints(a, w), np.uint8).reshape(a.size, w) for a, w in zip(parts, self._widths)]
        return np.concatenate(cols, axis=1).tobytes()

    def decode(self, payload: bytes) -> PEMReports:
        n = self._check_payload(payload)
        raw = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes)
        edges = np.cumsum((0,) + self._widths)
        parts = [decode_uints(raw[:, a:b].tobytes(), b - a) for a, b in zip(edges[:-1], edges[1:])]
        return self._check_reports(PEMReports(*parts), "decode")
