"""A seeded family of k hash functions items → [m] built on MurmurHash3 — docs/math.md §1.5.

Construction (one Python-level mmh3 call per *distinct* item, everything else vectorized numpy):

* key(d) = the first 64 bits of MurmurHash3_x64_128(bytes(d), seed) (``mmh3.hash64``), split into
  32-bit halves x₀ (low) and x₁ (high).
* row l has its own parameters (A_l, B_l, C_l), 64-bit words fixed by the seed (fmix64, MurmurHash3's
  finalizer, of a Weyl sequence: fmix64((3l + t + 1)·φ + fmix64(seed + 1)), t = 0, 1, 2).
* h_l(d) = ⌊g_l(d) · m / 2^32⌋ with g_l(d) = ((A_l·x₀ + B_l·x₁ + C_l) mod 2^64) >> 32.

g_l is Thorup's vector multiply-shift hash ("High speed hashing for integers and strings", 2015):
strongly universal (pairwise independent, uniform) over 64-bit keys when (A, B, C) are uniform, so
for two items the collision events of different rows are independent, each of probability 1/m up to
the multiply-shift reduction's non-uniformity (≤ m/2^32). Hence γ(d') ≈ Binomial(k, 1/m)/k over
families, as docs/math.md §1.5's family-averaged formulas assume.

Why not Kirsch–Mitzenmacher double hashing h_l = a + l·b + (l³−l)/6 mod m (docs/math.md §1.5)? For two
items the cubic term cancels, so h_l(d) = h_l(d') iff Δa + l·Δb ≡ 0 (mod m): a pair's collision pattern
repeats with period m in l, and a pair collides in *every* row with probability ≈ 1/m² (Δa ≡ Δb ≡ 0).
Rows beyond m add nothing: over families Var γ ≈ (log₂m/2 + 1)/m² for m = 2^w instead of
(m−1)/(m²k), so the CMS bias would not shrink as k grows (docs/math.md §1.5 says it does). Independent rows
cost the same: three multiply-adds per (row, item) in numpy uint64.

Item encoding: ``str`` (and ``numpy.str_``) as UTF-8, ``bytes`` as is, integers (Python or numpy, not
bool) by their decimal string — so ``42`` and ``"42"`` are the same token. Anything else is a TypeError
naming the item.

Randomness: none; the family is a deterministic function of (k, m, seed).

>>> fam = HashFamily(k=3, m=8, seed=1)
>>> fam.hash(["apple", "pear"]).shape
(3, 2)
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import mmh3
import numpy as np
from scipy import sparse

from ldpsim.mechanisms._validation import check_int

#: 2^64 / golden ratio: the increment that spreads consecutive counters and keys before mixing (fmix64)
PHI = np.uint64(0x9E3779B97F4A7C15)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_S32 = np.uint64(32)
_LOW = np.uint64(0xFFFFFFFF)
_CHUNK = 1 << 16  # (row, item) pairs per vectorized hashing step (temporaries stay in cache)
MAX_K = 1 << 24
MAX_M = 1 << 32


def fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer on a uint64 array (in place on an array: pass a fresh one; wraps
    mod 2^64) — the mixer of the hash families' parameters here and of the memoized clients' keyed draws
    (:mod:`ldpsim.mechanisms.memo`)."""
    x ^= x >> _S33
    x *= _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


def _token_bytes(item) -> bytes:
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, bytes):
        return item
    if isinstance(item, numbers.Integral) and not isinstance(item, (bool, np.bool_)):
        return str(int(item)).encode("ascii")
    raise TypeError(f"HashFamily: items must be str, bytes or int tokens; got {item!r} "
                    f"of type {type(item).__name__}.")


def factorize(values) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, inverse)`` with ``distinct[inverse] == values`` for a 1-D array of tokens.

    Integer arrays use ``np.unique``; str/object arrays a dict (≈10× faster than sorting strings).
    Distinct tokens are in first-seen order for str/object input, sorted for integer input.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"HashFamily: values must be a 1-D array of tokens; got shape {arr.shape}.")
    if arr.size == 0:  # no users: as for every oracle, an empty batch is valid (whatever its dtype)
        return np.empty(0, dtype=object), np.empty(0, dtype=np.intp)
    if arr.dtype.kind in "iu":
        if arr.min() >= 0 and arr.max() <= 4 * arr.size:  # small ids: a presence table instead of a sort
            present = np.bincount(arr) > 0
            uniq = np.flatnonzero(present)
            return uniq.astype(object), (np.cumsum(present) - 1)[arr]
        uniq, inv = np.unique(arr, return_inverse=True)
        return uniq.astype(object), inv.astype(np.intp)
    if arr.dtype.kind not in "USO":
        raise TypeError(f"HashFamily: values must hold str, bytes or int tokens; got dtype {arr.dtype}.")
    lst = arr.tolist()
    bad = {t for t in set(map(type, lst))
           if not issubclass(t, (str, bytes, numbers.Integral)) or issubclass(t, (bool, np.bool_))}
    if bad:
        first = next(v for v in lst if type(v) in bad)
        _token_bytes(first)  # raises the TypeError naming the item
    index = {v: i for i, v in enumerate(dict.fromkeys(lst))}
    inv = np.fromiter(map(index.__getitem__, lst), dtype=np.intp, count=len(lst))
    uniq = np.empty(len(index), dtype=object)
    uniq[:] = list(index)
    return uniq, inv


def _tokens(items) -> np.ndarray:
    """A 1-D array of tokens from a sequence (object dtype unless it is already an array)."""
    if isinstance(items, np.ndarray):
        return items
    arr = np.empty(len(items), dtype=object)
    arr[:] = list(items)
    return arr


@dataclass(frozen=True)
class HashFamily:
    """k seeded hash functions h_0 … h_{k−1}: tokens → [0, m) (docs/math.md §1.5; module docstring).

    Deterministic in (k, m, seed): clients and server that share them hash alike.

    Parameters
    ----------
    k : int
        Number of functions (sketch rows), in [1, 2^24].
    m : int
        Range of each function (sketch width), in [2, 2^32].
    seed : int, default 0
        The mmh3 seed, in [0, 2^32 − 1]; it also fixes the rows' multiply-shift parameters, so
        different seeds give independent-looking families.

    Attributes
    ----------
    row_params : numpy.ndarray of uint64, shape (3, k)
        (A_l, B_l, C_l) of every row l.

    Examples
    --------
    >>> fam = HashFamily(k=3, m=8, seed=1)
    >>> H = fam.hash(["apple", "pear", "apple"])
    >>> H.shape, bool((H[:, 0] == H[:, 2]).all()), int(H.max()) < 8
    ((3, 3), True, True)
    """

    k: int
    m: int
    seed: int = 0
    row_params: np.ndarray = field(init=False, repr=False, compare=False)  #: (3, k) uint64: A, B, C

    def __post_init__(self):
        object.__setattr__(self, "k", check_int("HashFamily", "k", self.k, low=1, high=MAX_K))
        object.__setattr__(self, "m", check_int("HashFamily", "m", self.m, low=2, high=MAX_M))
        object.__setattr__(self, "seed", check_int("HashFamily", "seed", self.seed, low=0, high=2**32 - 1))
        with np.errstate(over="ignore"):
            offset = fmix64(np.array([self.seed + 1], dtype=np.uint64))
            counter = np.arange(1, 3 * self.k + 1, dtype=np.uint64).reshape(self.k, 3).T
            params = np.ascontiguousarray(fmix64(counter * PHI + offset))
        params.setflags(write=False)
        object.__setattr__(self, "row_params", params)

    # keys and per-(row, key) evaluation --------------------------------------------------------
    def keys(self, items) -> np.ndarray:
        """64-bit mmh3 key of each item (one mmh3 call per item; pass distinct items)."""
        seq = items.tolist() if isinstance(items, np.ndarray) else list(items)
        return np.fromiter((mmh3.hash64(_token_bytes(d), self.seed, signed=False)[0] for d in seq),
                           dtype=np.uint64, count=len(seq))

    def evaluate(self, rows, keys) -> np.ndarray:
        """h_{rows}(keys) elementwise with broadcasting (int64, values in [0, m)); rows in [0, k)."""
        a, b, c = (p.take(rows) for p in self.row_params)
        keys = np.asarray(keys, dtype=np.uint64)
        with np.errstate(over="ignore"):
            v = a * (keys & _LOW)
            b = b * (keys >> _S32)
            v += b
            v += c
            if self.m & (self.m - 1):
                v >>= _S32
                v *= np.uint64(self.m)
                v >>= _S32
            else:  # m = 2^w: ⌊(v >> 32)·2^w / 2^32⌋ = v >> (64 − w), one pass instead of three
                v >>= np.uint64(64 - self.m.bit_length() + 1)
        return v.view(np.int64)

    def row_blocks(self, keys, max_elements: int = _CHUNK):
        """Yield ``(rows, H)`` with H[i, j] = h_{rows[i]}(keys[j]), over all k rows in blocks."""
        keys = np.asarray(keys, dtype=np.uint64)
        step = max(1, max_elements // max(keys.size, 1))
        for l0 in range(0, self.k, step):
            rows = np.arange(l0, min(l0 + step, self.k))
            yield rows, self.evaluate(rows[:, None], keys[None, :])

    def hash(self, items) -> np.ndarray:
        """Every function on every item.

        Parameters
        ----------
        items : sequence of tokens
            str (UTF-8), bytes, or int (by its decimal string); anything else is a TypeError.

        Returns
        -------
        numpy.ndarray of int64, shape (k, len(items))
            ``H[l, i] = h_l(items[i])`` in [0, m).
        """
        uniq, inv = factorize(_tokens(items))
        keys = self.keys(uniq)[inv]
        out = np.empty((self.k, keys.size), dtype=np.int64)
        for rows, block in self.row_blocks(keys):
            out[rows] = block
        return out

    def hash_values(self, rows, values) -> np.ndarray:
        """h_{rows[u]}(values[u]) per user: hashes each distinct token once, then indexes."""
        uniq, inv = factorize(values)
        return self.evaluate(np.asarray(rows), self.keys(uniq)[inv])

    # collision diagnostics (docs/math.md §1.5) -------------------------------------------------------------
    def gamma(self, items, target) -> np.ndarray:
        """γ(d') = fraction of rows l with h_l(d') = h_l(target), for every d' in ``items`` (docs/math.md §1.5).

        Parameters
        ----------
        items : sequence of tokens
            The d'.
        target : token
            The item d.

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
        """
        return (self.hash(items) == self.hash([target])).mean(axis=0)

    def collision_counts(self, items, rows_per_step: int = 1024) -> np.ndarray:
        """G[i, i'] = number of rows l with h_l(items[i]) = h_l(items[i']) (dense int64 D × D).

        Cost O(k·Σ_c n_c²) ≈ k·(D + D²/m) via sparse one-hot products, in steps of rows;
        memory O(D²).
        """
        uniq, inv = factorize(_tokens(items))
        G = self.key_collision_counts(self.keys(uniq), rows_per_step)
        return G[np.ix_(inv, inv)]

    def key_collision_counts(self, keys, rows_per_step: int = 1024) -> np.ndarray:
        """:meth:`collision_counts` of 64-bit keys given directly (no mmh3 step), dense int64 D × D."""
        keys = np.asarray(keys, dtype=np.uint64)
        d = keys.size
        G = np.zeros((d, d), dtype=np.int64)
        for rows, H in self.row_blocks(keys, max(rows_per_step * d, 1)):
            cols = H + (rows[:, None] - rows[0]) * self.m      # (rows, D): one-hot column per item
            E = sparse.csr_matrix((np.ones(cols.size, dtype=np.int64), cols.T.ravel(),
                                   np.arange(0, cols.size + 1, rows.size)), shape=(d, rows.size * self.m))
            G += (E @ E.T).toarray()
        return G

    def collision_sums(self, items, weights) -> tuple[np.ndarray, np.ndarray]:
        """Per item d: (Σ_{d'≠d} w(d')·γ(d, d'), Σ_{d'≠d} w(d')·γ(d, d')²), with γ = G / k."""
        g = self.collision_counts(items) / self.k
        np.fill_diagonal(g, 0.0)
        w = np.asarray(weights, dtype=float)
        return g @ w, (g * g) @ w

    def collision_summary(self, items) -> dict:
        """Off-diagonal γ statistics over all pairs of distinct items (ideal family: mean 1/m)."""
        g = self.collision_counts(items) / self.k
        off = g[~np.eye(g.shape[0], dtype=bool)]
        return {"pairs": off.size // 2, "expected_mean": 1.0 / self.m,
                "mean": float(off.mean()) if off.size else float("nan"),
                "var": float(off.var()) if off.size else float("nan"),
                "expected_var": (self.m - 1) / (self.m ** 2 * self.k),
                "max": float(off.max()) if off.size else float("nan"),
                "full_collisions": int((off == 1.0).sum()) // 2}
