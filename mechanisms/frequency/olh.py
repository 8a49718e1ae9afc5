"""Optimized local hashing (OLH) — Wang et al., USENIX Security 2017 ("Local Hashing" section).

Formulas, the exact variance and the hash family: docs/math.md §7.1 (local hashing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import (as_generator, check_counts, check_domain_size, check_epsilon, check_int,
    check_item_ids)
from ldpsim.mechanisms.base import Aggregate, DiscreteOracle, FrequencyOracle, decode_uints, encode_uints, uint_bytes
from ldpsim.mechanisms.linear_theory import sample_support_counts, support_count_variance
from ldpsim.mechanisms.memo import check_keys, key_streams, keyed_ints

MAX_G = (1 << 32) - 1    # largest hash range (the range reduction works in 32-bit halves)
_SEED_BYTES = 4
_CELLS = 1 << 16         # user×item hash evaluations per vectorized step (temporaries stay in L2)
_M1 = np.uint64(0xBF58476D1CE4E5B9)  # SplitMix64 finalizer constants (Stafford's Mix13)
_M2 = np.uint64(0x94D049BB133111EB)


class OLHReports(NamedTuple):
    """One OLH report per user: the hash seed and the perturbed hash value y in [0, g)."""

    seed: np.ndarray  # uint32
    y: np.ndarray     # int64


def _seed_part(seed) -> np.ndarray:
    """Seed half of the first SplitMix64 round: with key = s·2^32 + x (x < 2^32),
    key ^ (key >> 30) = [(s << 32) ^ (s << 2)] ^ [x ^ (x >> 30)]."""
    s = np.asarray(seed, dtype=np.uint64)
    return (s << np.uint64(32)) ^ (s << np.uint64(2))


def _item_part(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.uint64)
    return x ^ (x >> np.uint64(30))


def _finish(z: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """The rest of the SplitMix64 finalizer, in place (``tmp`` is scratch of the same shape)."""
    z *= _M1
    np.right_shift(z, np.uint64(27), out=tmp)
    z ^= tmp
    z *= _M2
    np.right_shift(z, np.uint64(31), out=tmp)
    z ^= tmp
    return z


@dataclass(frozen=True)
class OLH(FrequencyOracle):
    """Optimized local hashing over item ids ``0 … D−1`` (Wang, Blocki, Li, Jha 2017, OLH).

    Math: docs/math.md §7.1 (local hashing).

    Client: draw a seed s uniform in [0, 2^32) (from ``rng``), hash the item to h = H_s(x) in [g],
    then report (s, y) with y = GRR over [g] of h: y = h w.p. p = e^ε/(e^ε+g−1), else uniform among
    the other g−1 values (each w.p. q = 1/(e^ε+g−1)). Default g = round(e^ε) + 1 (the paper's optimum).
    Privacy: ε-LDP. P[(s, y) | x] = 2^-32 · P[y | H_s(x)], so the ratio between any two inputs is at
    most p/q = e^ε, with equality whenever H_s(x) ≠ H_s(x').
    Server: support counts S_x = #{u : H_{s_u}(x) = y_u} for every x in the domain (length D,
    mergeable by addition; this is why ``aggregate`` needs ``domain_size``); unbiased count
    estimate (S_x − n/g)/(p − 1/g).
    Theory (ideal random hash family): S_x = Bin(f_x, p) + Bin(n − f_x, 1/g), independent across
    items, so Var = [f_x·p(1−p) + (n − f_x)(1/g)(1 − 1/g)] / (p − 1/g)².

    Hash family: H_s(x) = ⌊g · mix64(s·2^32 + x) / 2^64⌋, where mix64 is SplitMix64's output
    finalizer (Stafford's Mix13, a bijection of 64-bit words) and ⌊g·z/2^64⌋ is Lemire's
    multiply-shift range reduction. The analysis assumes an ideal random hash; this concrete family
    only approximates it, which the tests compare (per-user path versus the ideal direct sampler).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of values D, in [2, 2^32]; users hold ids 0 … D−1. The server's ``aggregate`` costs
        n·D hash evaluations.
    g : int, optional
        Hash range (buckets), in [2, 2^32 − 1]; default round(e^ε) + 1 (OLH). g = 2 is BLH.

    Attributes
    ----------
    p : float
        P[y = H_s(x)] = e^ε/(e^ε+g−1).
    q : float
        P[y = b] for each other bucket b, 1/(e^ε+g−1).

    Examples
    --------
    >>> m = OLH(epsilon=1.0, domain_size=100)
    >>> m.g, round(m.p, 4), m.report_bytes
    (4, 0.4754, 5)
    >>> r = m.perturb([3, 3, 7], rng=0)
    >>> int(m.aggregate(r).n)
    3
    """

    epsilon: float
    domain_size: int
    g: int | None = None
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    _items = DiscreteOracle._items  # reuse: items default to all ids 0..D-1

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        d = check_domain_size(self.name, self.domain_size, bytes_per_item=0)  # hashes any 32-bit domain
        # the optimal g = e^ε + 1, capped at the hash range (reached from ε ≈ 22.2 on)
        g = min(round(math.exp(eps)) + 1, MAX_G) if self.g is None else self.g
        g = check_int(self.name, "g", g, low=2, high=MAX_G)
        for name, value in (("epsilon", eps), ("domain_size", d), ("g", g)):
            object.__setattr__(self, name, value)
        denom = math.exp(eps) + g - 1
        object.__setattr__(self, "p", math.exp(eps) / denom)
        object.__setattr__(self, "q", 1.0 / denom)

    def hash_items(self, seed, items) -> np.ndarray:
        """H_seed(item) in [0, g), elementwise with broadcasting.

        Parameters
        ----------
        seed : array_like of uint32
            Per-report hash seeds.
        items : array_like of int
            Item ids < 2^32.

        Returns
        -------
        numpy.ndarray of uint64
            Buckets in [0, g).
        """
        z = np.array(_seed_part(seed) ^ _item_part(items), dtype=np.uint64)  # an array, even 0-d
        _finish(z, np.empty_like(z))
        # ⌊g·z/2^64⌋ from 32-bit halves (exact for g < 2^32)
        g = np.uint64(self.g)
        lo = (z & np.uint64(0xFFFFFFFF)) * g >> np.uint64(32)
        return ((z >> np.uint64(32)) * g + lo) >> np.uint64(32)

    def _lower_bound(self, y: np.ndarray) -> np.ndarray:
        """⌈y·2^64/g⌉ = y·⌊2^64/g⌋ + ⌈y·(2^64 mod g)/g⌉ in uint64 (y = g wraps to 2^64 mod 2^64 = 0).

        H_s(x) = y  ⟺  ⌈y·2^64/g⌉ ≤ mix64 < ⌈(y+1)·2^64/g⌉: no division, no 128-bit products.
        """
        g = self.g
        whole, rest = divmod(1 << 64, g)
        y = np.asarray(y, dtype=np.uint64)
        return y * np.uint64(whole) + (y * np.uint64(rest) + np.uint64(g - 1)) // np.uint64(g)

    def hashed_transition_matrix(self) -> np.ndarray:
        """``P[h, y] = P[y | H_s(x) = h]``: GRR over [g] (every report's likelihood is 2^-32 times this)."""
        return np.full((self.g, self.g), self.q) + np.eye(self.g) * (self.p - self.q)

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> OLHReports:
        """Client side: a random seed per user and the GRR-perturbed bucket of its item.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            One item id in [0, D) per user.
        rng : numpy.random.Generator, int or None
            Source of randomness (seeds and perturbation).

        Returns
        -------
        OLHReports
            ``seed`` (uint32) and ``y`` (int64 in [0, g)), each of shape (n,).
        """
        x = check_item_ids(self.name, values, self.domain_size)
        rng = as_generator(rng)
        seed = rng.integers(0, 1 << 32, size=x.size, dtype=np.uint32)
        return self._reports(x, seed, rng.random(x.size), rng.integers(0, self.g - 1, size=x.size))

    def perturb_keyed(self, values, keys) -> OLHReports:
        """Memoized client: report i a deterministic function of ``keys[i]`` with the law of :meth:`perturb`.

        The seed, the keep coin and the other bucket are uniforms 0, 1 and 2 of the key's stream (the
        keyed hash of docs/math.md §7.5, "Memoization in the ledger"); the rest is :meth:`perturb`'s.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            One item id in [0, D) per report.
        keys : array_like of uint64, shape (n,)
            One key per report (a memo: one per device and value).

        Returns
        -------
        OLHReports
            As :meth:`perturb` returns them.
        """
        x = check_item_ids(self.name, values, self.domain_size)
        keys = check_keys(f"{self.name}.perturb_keyed", keys, x.size)
        seed = keyed_ints(keys, 1 << 32, 0).astype(np.uint32)
        return self._reports(x, seed, key_streams(keys, 1, 1)[:, 0], keyed_ints(keys, self.g - 1, 2))

    def _reports(self, x: np.ndarray, seed: np.ndarray, u_keep: np.ndarray, shift: np.ndarray) -> OLHReports:
        """(seed, y): y = h = H_seed(x) if ``u_keep`` < p, else (h + 1 + ``shift``) mod g, ``shift`` in [0, g − 1)
        (the other g − 1 buckets alike when ``shift`` is uniform)."""
        h = self.hash_items(seed, x).astype(np.int64)
        return OLHReports(seed, np.where(u_keep < self.p, h, (h + 1 + shift) % self.g))

    # server ------------------------------------------------------------------------------------
    def _check_reports(self, reports, what: str) -> OLHReports:
        if not (isinstance(reports, tuple) and len(reports) == 2):
            raise TypeError(f"{self.name}.{what}: reports must be an OLHReports(seed, y) pair of arrays; "
                            f"got {type(reports).__name__}.")
        seed, y = (np.asarray(r) for r in reports)
        if seed.shape != y.shape:
            raise ValueError(f"{self.name}.{what}: seed and y must have the same shape; "
                             f"got {seed.shape} and {y.shape}.")
        seed = check_item_ids(f"{self.name}.{what}", seed, 1 << 32, "seed").astype(np.uint32)
        return OLHReports(seed, check_item_ids(f"{self.name}.{what}", y, self.g, "y"))

    def aggregate(self, reports) -> Aggregate:
        """Support counts S_x = #{u : H_{s_u}(x) = y_u} for x = 0 … D−1.

        n·D hash evaluations, vectorized in L2-sized chunks.

        Parameters
        ----------
        reports : OLHReports
            ``(seed, y)`` arrays of equal shape.

        Returns
        -------
        Aggregate
            ``data`` = the D support counts (int64).
        """
        seed, y = self._check_reports(reports, "aggregate")
        d = self.domain_size
        item = _item_part(np.arange(d))
        counts = np.zeros(d, dtype=np.int64)
        lo = self._lower_bound(y)                              # H_s(x) = y  ⟺  lo ≤ mix64 < lo + width
        width = self._lower_bound(y + 1) - lo                  # (wraps correctly for y = g − 1)
        users = min(255, max(1, _CELLS // d))                 # ≤ 255: hits per chunk fit uint8 lanes
        z = np.empty((users, d), dtype=np.uint64)
        tmp = np.empty_like(z)
        hit = np.empty((users, d), dtype=bool)
        for start in range(0, y.size, users):
            part = _seed_part(seed[start:start + users])[:, None]
            m = part.shape[0]
            zb, tb, hb = z[:m], tmp[:m], hit[:m]
            np.copyto(zb, item)
            zb ^= part
            _finish(zb, tb)
            zb -= lo[start:start + m, None]
            np.less(zb, width[start:start + m, None], out=hb)
            counts += np.add.reduce(hb.view(np.uint8), axis=0, dtype=np.uint8)
        return Aggregate(int(y.size), counts, self.kind)

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Unbiased count estimates (S_x − n/g)/(p − 1/g) (docs/math.md §7.1).

        Parameters
        ----------
        agg : Aggregate
            Support counts of this configuration.
        items : array_like of int, optional
            Ids to estimate (default: all D ids).

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
        """
        self._check_aggregate(agg)
        s = agg.data[self._items(items)]
        return (s - agg.n / self.g) / (self.p - 1.0 / self.g)  # pure-protocol estimator, counts

    # theory ------------------------------------------------------------------------------------
    def variance(self, true_counts, items=None) -> np.ndarray:
        """Count-scale variance [f_x·p(1−p) + (n − f_x)(1/g)(1 − 1/g)]/(p − 1/g)² (ideal hash family).

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
        return support_count_variance(counts[self._items(items)], counts.sum(), self.p, 1.0 / self.g)

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Direct sampler, exact for an ideal random hash family: S_x = Bin(f_x, p) + Bin(n − f_x, 1/g).

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
        return Aggregate(int(f.sum()), sample_support_counts(f, self.p, 1.0 / self.g, as_generator(rng)), self.kind)

    def log_likelihood(self, reports, values) -> np.ndarray:
        """log P[(seed_u, y_u) | input values_u] = −32·log 2 + log P[y_u | H_seed(x_u)] per user."""
        seed, y = self._check_reports(reports, "log_likelihood")
        x = check_item_ids(self.name, values, self.domain_size)
        if x.size != y.size:
            raise ValueError(f"{self.name}.log_likelihood: {y.size} reports but {x.size} values.")
        hit = self.hash_items(seed, x) == y.astype(np.uint64)
        return np.where(hit, math.log(self.p), math.log(self.q)) - 32 * math.log(2)

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """4-byte little-endian seed, then y as a little-endian unsigned int of ⌈log2 g / 8⌉ bytes."""
        return _SEED_BYTES + uint_bytes(self.g)

    def encode(self, reports) -> bytes:
        """Wire form: per report the seed (4 bytes) then y, little-endian."""
        seed, y = self._check_reports(reports, "encode")
        raw = np.empty((y.size, self.report_bytes), dtype=np.uint8)
        raw[:, :_SEED_BYTES] = seed.astype("<u4").view(np.uint8).reshape(-1, _SEED_BYTES)
        raw[:, _SEED_BYTES:] = np.frombuffer(encode_uints(y, self.report_bytes - _SEED_BYTES),
                                             dtype=np.uint8).reshape(y.size, -1)
        return raw.tobytes()

    def decode(self, payload: bytes) -> OLHReports:
        """Reports from their wire form: a 4-byte seed then y, little-endian (``report_bytes`` each).

        Parameters
        ----------
        payload : bytes
            Output of :meth:`encode`.

        Returns
        -------
        OLHReports
            ``ValueError`` on a partial report or y ≥ g.
        """
        n = self._check_payload(payload)
        raw = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes)
        seed = np.ascontiguousarray(raw[:, :_SEED_BYTES]).view("<u4").ravel().astype(np.uint32)
        y = decode_uints(raw[:, _SEED_BYTES:].tobytes(), self.report_bytes - _SEED_BYTES)
        return self._check_reports(OLHReports(seed, y), "decode")
