"""Binary local hashing (BLH) and fast local hashing (FLH) — docs/math.md §7.1.

* BLH: Wang, Blocki, Li, Jha, USENIX Security 2017 (§4.4, "Binary Local Hashing"): local hashing
  with g = 2 buckets, i.e. :class:`~ldpsim.mechanisms.frequency.olh.OLH` with g fixed to 2.
* FLH: Cormode, Maddock, Maple, "Frequency Estimation under Local Differential Privacy", VLDB 2021
  (§3.3, "Fast Local Hashing"): the same GRR over g = round(e^ε) + 1 hashed buckets, but every user
  draws its hash function from a fixed pool of ``pool_size`` (k′) functions. The server then counts
  reports per (pool index, bucket) — a k′ × g table, mergeable — and evaluates only k′·D hashes to
  estimate all D items, instead of n·D.

FLH theory is exact *given the pool* (the pool is fixed, not redrawn per estimate): with
γ(x, v) = fraction of pool functions under which x and v collide, a user holding v supports x with
probability π(x, v) = q + (p − q)·γ(x, v), so for counts f,
E[ĉ_x] = f_x + Σ_{v≠x} f_v (p − q)(γ(x, v) − 1/g)/(p − 1/g) and
Var[ĉ_x] = Σ_v f_v π(x, v)(1 − π(x, v))/(p − 1/g)². Over random pools the bias averages to zero
(E γ = 1/g); a small pool leaves a bias of order √(1/(k′g)) per colliding item.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy import sparse

from ldpsim.mechanisms._validation import as_generator, check_counts, check_epsilon, check_int, check_item_ids, check_memory
from ldpsim.mechanisms.base import Aggregate, DiscreteOracle, FrequencyOracle, decode_uints, encode_uints, uint_bytes
from ldpsim.mechanisms.frequency.olh import OLH, MAX_G

MAX_POOL = 1 << 16
_CACHED_TABLE_CELLS = 1 << 24  # whole-domain pool tables up to this size are cached (≤ 128 MiB)


@dataclass(frozen=True)
class BLH(OLH):
    """Binary local hashing: :class:`~ldpsim.mechanisms.frequency.olh.OLH` with g = 2 (docs/math.md §7.1).

    p = e^ε/(e^ε + 1); estimate (S_x − n/2)/(p − 1/2); Var = [f_x p(1−p) + (n − f_x)/4]/(p − ½)².

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of items D, in [2, 2^32].

    Examples
    --------
    >>> m = BLH(epsilon=1.0, domain_size=10)
    >>> m.g, round(m.p, 4)
    (2, 0.7311)
    """

    g: int | None = field(default=2, init=False)


class FLHReports(NamedTuple):
    """One FLH report per user: the index j of its pool hash function and the perturbed bucket y."""

    index: np.ndarray  # int64 in [0, pool_size)
    y: np.ndarray      # int64 in [0, g)


@dataclass(frozen=True)
class FLH(FrequencyOracle):
    """Fast local hashing over item ids ``0 .. domain_size-1`` with a pool of ``pool_size`` hashes
    (docs/math.md §7.1).

    Hash j of the pool is OLH's hash with seed ``seed·pool_size + j`` (mod 2^32). Client: j uniform
    in [0, k′), h = H_j(x), y = h w.p. p = e^ε/(e^ε+g−1), else uniform among the other g − 1 buckets.
    Privacy: ε-LDP with equality whenever some pool hash separates the two inputs
    (P[(j, y) | x] = P[y | H_j(x)]/k′). Aggregate: counts per (j, y), shape (k′, g).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of items D, in [2, 2^32].
    pool_size : int
        Hash functions in the pool k′, in [1, 2^16] (default 1024).
    g : int, optional
        Hash range; None: round(e^ε) + 1.
    seed : int
        Picks the pool, in [0, 2^32 − 1].

    Examples
    --------
    >>> m = FLH(epsilon=2.0, domain_size=50, pool_size=16)
    >>> m.g, m.report_bytes
    (8, 2)
    """

    epsilon: float
    domain_size: int
    pool_size: int = 1024
    g: int | None = None
    seed: int = 0
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    _items = DiscreteOracle._items

    def __post_init__(self):
        eps = check_epsilon("FLH", self.epsilon)
        d = check_int("FLH", "domain_size", self.domain_size, low=2, high=1 << 32)
        k = check_int("FLH", "pool_size", self.pool_size, low=1, high=MAX_POOL)
        # the optimal g = e^ε + 1, capped (from ε ≈ 11.1 on) so that the k × g table of counts stays small
        g = check_int("FLH", "g", min(round(math.exp(eps)) + 1, 1 << 16) if self.g is None else self.g,
                      low=2, high=MAX_G)
        check_memory("FLH", 8.0 * k * g, f"its pool_size × g = {k} × {g} table of counts", "pool_size or g")
        seed = check_int("FLH", "seed", self.seed, low=0, high=2 ** 32 - 1)
        for name, value in (("epsilon", eps), ("domain_size", d), ("pool_size", k), ("g", g), ("seed", seed)):
            object.__setattr__(self, name, value)
        denom = math.exp(eps) + g - 1
        object.__setattr__(self, "p", math.exp(eps) / denom)
        object.__setattr__(self, "q", 1.0 / denom)

    @property
    def _hasher(self) -> OLH:
        return OLH(epsilon=self.epsilon, domain_size=self.domain_size, g=self.g)

    def pool_seeds(self) -> np.ndarray:
        """The 32-bit OLH seeds of the k′ pool functions."""
        return ((self.seed * self.pool_size + np.arange(self.pool_size, dtype=np.uint64)) % (1 << 32)).astype(np.uint32)

    def hash_table(self, items=None) -> np.ndarray:
        """``H[j, i] = H_j(items[i])`` (int64, shape (k′, len(items))): k′·|items| hash evaluations, or
        columns of the cached whole-domain table when it has at most 2^24 entries."""
        x = self._items(items)
        if self.pool_size * self.domain_size <= _CACHED_TABLE_CELLS:
            return _domain_table(self)[:, x]
        return self._compute_table(x)

    def _compute_table(self, x: np.ndarray) -> np.ndarray:
        return self._hasher.hash_items(self.pool_seeds()[:, None], x[None, :]).astype(np.int64)

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> FLHReports:
        x = check_item_ids(self.name, values, self.domain_size)
        rng = as_generator(rng)
        j = rng.integers(0, self.pool_size, size=x.size)
        h = self._hasher.hash_items(self.pool_seeds()[j], x).astype(np.int64)
        keep = rng.random(x.size) < self.p
        other = (h + 1 + rng.integers(0, self.g - 1, size=x.size)) % self.g
        return FLHReports(j, np.where(keep, h, other))

    # server ------------------------------------------------------------------------------------
    def _check_reports(self, reports, what: str) -> FLHReports:
        if not (isinstance(reports, tuple) and len(reports) == 2):
            raise TypeError(f"{self.name}.{what}: reports must be an FLHReports(index, y) pair of arrays; "
                            f"got {type(reports).__name__}.")
        j, y = (np.asarray(r) for r in reports)
        if j.shape != y.shape:
            raise ValueError(f"{self.name}.{what}: index and y must have the same shape; got {j.shape} and {y.shape}.")
        return FLHReports(check_item_ids(f"{self.name}.{what}", j, self.pool_size, "index"),
                          check_item_ids(f"{self.name}.{what}", y, self.g, "y"))

    def aggregate(self, reports) -> Aggregate:
        j, y = self._check_reports(reports, "aggregate")
        counts = np.bincount(j * self.g + y, minlength=self.pool_size * self.g)
        return Aggregate(int(y.size), counts.reshape(self.pool_size, self.g).astype(np.int64), self.kind)

    def support_counts(self, agg: Aggregate, items=None) -> np.ndarray:
        """S_x = Σ_j counts[j, H_j(x)] for each item (k′·|items| hash evaluations)."""
        self._check_aggregate(agg)
        H = self.hash_table(items)
        return np.take_along_axis(agg.data, H, axis=1).sum(axis=0)

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        s = self.support_counts(agg, items)
        return (s - agg.n / self.g) / (self.p - 1.0 / self.g)

    # theory (exact given the pool) -------------------------------------------------------------
    def collision_fractions(self, items=None) -> np.ndarray:
        """γ[i, v] = fraction of pool functions with H_j(items[i]) = H_j(v), v over the whole domain."""
        d, k, g = self.domain_size, self.pool_size, self.g
        cols = (self.hash_table() + np.arange(k)[:, None] * g).T.ravel()  # item v's one-hot cells
        E = sparse.csr_matrix((np.ones(d * k, dtype=np.int64), cols, np.arange(0, d * k + 1, k)), shape=(d, k * g))
        return (E[self._items(items)] @ E.T).toarray() / k

    def _support_probabilities(self, true_counts, items):
        f = check_counts(self.name, true_counts, self.domain_size)
        return f, self.q + (self.p - self.q) * self.collision_fractions(items)

    def bias(self, true_counts, items=None) -> np.ndarray:
        f, pi = self._support_probabilities(true_counts, items)
        x = self._items(items)
        return (pi @ f - f.sum() / self.g) / (self.p - 1.0 / self.g) - f[x]

    def variance(self, true_counts, items=None) -> np.ndarray:
        f, pi = self._support_probabilities(true_counts, items)
        return (pi * (1 - pi)) @ f / (self.p - 1.0 / self.g) ** 2

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact given the pool. GRR = "keep w.p. p − q, else uniform" (p = (p − q) + q, q·g = 1 − (p − q)),
        and the pool function is uniform and independent of that choice: Bin(f_v, p − q) users of item v
        report H_j(v) for a uniform j (placed one by one, or split Multinomial(·, 1/k′) when that is
        cheaper); all other users fall uniformly on the k′·g cells (one multinomial).

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
        k, g = self.pool_size, self.g
        kept = rng.binomial(f, self.p - self.q)        # users reporting their own bucket H_j(v)
        live = np.flatnonzero(kept)
        if kept.sum() <= live.size * k:                 # place each kept user on a uniform pool function
            v = np.repeat(live, kept[live])
            j = rng.integers(0, k, size=v.size)
            cells = j * g + self._hasher.hash_items(self.pool_seeds()[j], v).astype(np.int64)
            counts = np.bincount(cells, minlength=k * g).reshape(k, g)
        else:                                           # or split each item's kept users over the pool
            split = rng.multinomial(kept[live], np.full(k, 1.0 / k))           # (live, k)
            counts = np.zeros((k, g), dtype=np.int64)
            H = self.hash_table(live)                                          # (k, live)
            np.add.at(counts, (np.broadcast_to(np.arange(k)[:, None], H.shape), H), split.T)
        # everyone else: pool function and bucket both uniform, whatever the item
        counts = counts + rng.multinomial(int(f.sum() - kept.sum()), np.full(k * g, 1.0 / (k * g))).reshape(k, g)
        return Aggregate(int(f.sum()), counts, self.kind)

    def all_reports(self) -> FLHReports:
        """Every report (j, y), j-major: report j·g + y."""
        j, y = np.divmod(np.arange(self.pool_size * self.g), self.g)
        return FLHReports(j, y)

    def report_distribution(self, items=None) -> np.ndarray:
        """``P[x, j·g + y] = P[y | H_j(x)]/k′`` over :meth:`all_reports` (exact)."""
        H = self.hash_table(items)                                              # (k, |items|)
        n_items = H.shape[1]
        P = np.full((n_items, self.pool_size, self.g), self.q / self.pool_size)
        P[np.arange(n_items)[None, :], np.arange(self.pool_size)[:, None], H] = self.p / self.pool_size
        return P.reshape(n_items, -1)

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """The pool index then y, each a little-endian unsigned int of the fewest whole bytes."""
        return uint_bytes(self.pool_size) + uint_bytes(self.g)

    def encode(self, reports) -> bytes:
        j, y = self._check_reports(reports, "encode")
        a = uint_bytes(self.pool_size)
        raw = np.empty((y.size, self.report_bytes), dtype=np.uint8)
        raw[:, :a] = np.frombuffer(encode_uints(j, a), dtype=np.uint8).reshape(y.size, a)
        raw[:, a:] = np.frombuffer(encode_uints(y, self.report_bytes - a), dtype=np.uint8).reshape(y.size, -1)
        return raw.tobytes()

    def decode(self, payload: bytes) -> FLHReports:
        n = self._check_payload(payload)
        a = uint_bytes(self.pool_size)
        raw = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes)
        return self._check_reports(FLHReports(decode_uints(raw[:, :a].tobytes(), a),
                                              decode_uints(raw[:, a:].tobytes(), self.report_bytes - a)), "decode")


@functools.lru_cache(maxsize=8)
def _domain_table(mech: FLH) -> np.ndarray:
    """H_j(x) for the whole pool and domain (read-only, cached: sweeps reuse one configuration)."""
    table = mech._compute_table(np.arange(mech.domain_size))
    table.setflags(write=False)
    return table
