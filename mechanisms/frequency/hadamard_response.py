"""Hadamard Response (HR) — Acharya, Sun, Zhang, "Hadamard Response: Estimating Distributions
Privately, Efficiently, and with Little Communication", AISTATS 2019 — docs/math.md §7.1 (HR).

Outputs are B blocks of b = 2^m cells (K = B·b outputs). Item x lives in block j = x // (b−1) and
owns row r = x mod (b−1) + 1 of the b × b Sylvester–Hadamard matrix H(r, y) = (−1)^popcount(r & y)
(row 0, all ones, is never used); its set C_x = {(j, y) : H(r, y) = +1} has s = b/2 cells.
Client: P[output o | x] = e^ε/Z if o ∈ C_x else 1/Z, Z = s·e^ε + K − s; sampled as the mixture
"w.p. λ = s(e^ε−1)/Z uniform on C_x, else uniform on all K outputs".
Privacy: ε-LDP, the largest ratio of two rows is exactly e^ε (C_x ⊄ C_x' for x ≠ x').

B = 1 is the paper's scheme for small ε (K = b ≥ D + 1, |C_x| = K/2); B > 1 is its variant for large
ε, where each block is a small Hadamard response and a report also reveals its block (the regime
e^ε ≫ 1, where a set of size ≈ K/e^ε is optimal). ``blocks`` is an upper bound: b is the smallest
power of two with blocks·(b−1) ≥ D and B = ⌈D/(b−1)⌉ blocks are used (the paper's layout leaves
blocks without items when B·(b−1) ≫ D; they would only add uniform noise, so they are dropped);
``blocks=None`` is the paper's choice (:func:`paper_blocks`): 1 for ε ≤ 1, else the largest power of
two ≤ min(e^ε, 2D).

Server: output histogram (length K, mergeable). With S_x = outputs in C_x and T_j = outputs in block j,
ĉ_x = κ·(2S_x − T_j), κ = Z/(s(e^ε−1)), unbiased; 2S_x − T_j for every x of a block is the block's
fast Walsh–Hadamard transform (O(K log b) for all items). Exact variance (fixed population; F_j =
users whose item is in x's block): Var ĉ_x = κ²[F_j·s(e^ε+1) + (n − F_j)·2s]/Z − f_x.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_epsilon, check_int, check_item_ids
from ldpsim.mechanisms.base import Aggregate, DiscreteOracle, decode_uints, encode_uints, uint_bytes
from ldpsim.mechanisms.hadamard import fwht

_MULTINOMIAL_CELLS = 1 << 22  # items × |C_x| cells per step of the direct sampler


def layout(domain_size: int, blocks: int) -> tuple[int, int]:
    """(B, b) for at most ``blocks`` blocks: b = the smallest power of two with blocks·(b − 1) ≥ D,
    then B = ⌈D/(b − 1)⌉ blocks actually used (empty blocks would only add noise)."""
    b = 1 << (-(-domain_size // blocks)).bit_length()
    return -(-domain_size // (b - 1)), b


def paper_blocks(epsilon: float, domain_size: int) -> int:
    """The paper's number of blocks: 1 for ε ≤ 1 (the high-privacy scheme), else the largest power of two
    ≤ min(e^ε, 2D) (Acharya, Sun, Zhang's general scheme, as their reference code and pure-ldp choose it)."""
    if epsilon <= 1.0:
        return 1
    return 1 << int(math.floor(math.log2(min(math.exp(epsilon), 2.0 * domain_size))))


def parity(a: np.ndarray) -> np.ndarray:
    """popcount(a) mod 2 for non-negative int64 arrays (< 2^32)."""
    a = a ^ (a >> 16)
    a = a ^ (a >> 8)
    a = a ^ (a >> 4)
    a = a ^ (a >> 2)
    return (a ^ (a >> 1)) & 1


@dataclass(frozen=True)
class HR(DiscreteOracle):
    """Hadamard Response over item ids ``0 .. domain_size-1`` (module docstring; docs/math.md §7.1).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of items D, in [2, 2^30].
    blocks : int, optional
        Upper bound on the number of blocks B, in [1, 2D]; None: the paper's choice.

    Examples
    --------
    >>> m = HR(epsilon=1.0, domain_size=6)
    >>> m.blocks, m.block_size, m.n_outputs
    (1, 8, 8)
    >>> HR(epsilon=5.0, domain_size=100).blocks, HR(epsilon=4.0, domain_size=2000).n_outputs
    (100, 2048)
    """

    epsilon: float
    domain_size: int
    blocks: int | None = None
    block_size: int = field(init=False)
    n_outputs: int = field(init=False)

    def __post_init__(self):
        eps = check_epsilon("HR", self.epsilon)
        d = check_int("HR", "domain_size", self.domain_size, low=2, high=1 << 30)
        B = paper_blocks(eps, d) if self.blocks is None else check_int("HR", "blocks", self.blocks, low=1, high=2 * d)
        B, b = layout(d, B)
        for name, value in (("epsilon", eps), ("domain_size", d), ("blocks", B), ("block_size", b),
                            ("n_outputs", B * b)):
            object.__setattr__(self, name, value)

    # constants ---------------------------------------------------------------------------------
    @property
    def _s(self) -> int:
        return self.block_size // 2

    @property
    def _z(self) -> float:
        return self._s * math.exp(self.epsilon) + self.n_outputs - self._s

    @property
    def kappa(self) -> float:
        """The estimator's scale κ: an output o adds κ·(2·[o ∈ C_x] − [o in x's block]) to item x's count."""
        return self._z / (self._s * math.expm1(self.epsilon))

    def _place(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(block, Hadamard row) of each item id."""
        return x // (self.block_size - 1), x % (self.block_size - 1) + 1

    def in_set(self, x, outputs) -> np.ndarray:
        """Whether each output lies in C_x (broadcasting)."""
        block, row = self._place(np.asarray(x, dtype=np.int64))
        o = np.asarray(outputs, dtype=np.int64)
        return (o // self.block_size == block) & (parity(row & (o % self.block_size)) == 0)

    def transition_matrix(self) -> np.ndarray:
        P = np.where(self.in_set(np.arange(self.domain_size)[:, None], np.arange(self.n_outputs)[None, :]),
                     math.exp(self.epsilon), 1.0)
        return P / self._z

    # client ------------------------------------------------------------------------------------
    def _uniform_in_set(self, x: np.ndarray, rng) -> np.ndarray:
        """A uniform cell of C_x: a uniform column, its parity with r fixed by flipping r's lowest bit."""
        block, row = self._place(x)
        col = rng.integers(0, self.block_size, size=x.size)
        col ^= np.where(parity(row & col) == 1, row & -row, 0)
        return block * self.block_size + col

    def perturb(self, values, rng=None) -> np.ndarray:
        """One output id in [0, K) per user.

        Parameters
        ----------
        values : array_like, shape (n,)
            One value per user.
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        reports
        """
        x = check_item_ids(self.name, values, self.domain_size)
        rng = as_generator(rng)
        lam = self._s * math.expm1(self.epsilon) / self._z
        in_set = rng.random(x.size) < lam
        return np.where(in_set, self._uniform_in_set(x, rng), rng.integers(0, self.n_outputs, size=x.size))

    # server ------------------------------------------------------------------------------------
    def aggregate(self, reports) -> Aggregate:
        y = check_item_ids(f"{self.name}.aggregate", reports, self.n_outputs, "reports")
        return Aggregate(y.size, np.bincount(y, minlength=self.n_outputs), self.kind)

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """κ·(2S_x − T_j) for every item at once via one Walsh–Hadamard transform per block.

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration.
        items : array_like, optional
            Items to estimate.

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
        """
        self._check_aggregate(agg)
        signed = fwht(agg.data.reshape(self.blocks, self.block_size).astype(np.float64))[:, 1:].ravel()
        return self.kappa * signed[self._items(items)]

    # theory ------------------------------------------------------------------------------------
    def variance(self, true_counts, items=None) -> np.ndarray:
        f = check_counts(self.name, true_counts, self.domain_size).astype(float)
        x = self._items(items)
        per = self.block_size - 1
        F = np.bincount(np.arange(self.domain_size) // per, weights=f, minlength=self.blocks)[x // per]
        e, s = math.exp(self.epsilon), self._s
        return self.kappa ** 2 * (F * s * (e + 1) + (f.sum() - F) * 2 * s) / self._z - f[x]

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact: a_x = Bin(f_x, λ) users uniform on C_x (a multinomial over its s cells, or one uniform
        cell of C_x per user when there are fewer such users than cells), the other n − Σa_x uniform on
        all K outputs (one multinomial).

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
        lam = self._s * math.expm1(self.epsilon) / self._z
        a = rng.binomial(f, lam)
        hist = rng.multinomial(int(f.sum() - a.sum()), np.full(self.n_outputs, 1.0 / self.n_outputs))
        live = np.flatnonzero(a)
        if a.sum() <= live.size * self._s:  # fewer in-set users than cells: place each one (same law)
            cells = self._uniform_in_set(np.repeat(live, a[live]), rng)
            return Aggregate(int(f.sum()), hist + np.bincount(cells, minlength=self.n_outputs), self.kind)
        cols = np.arange(self.block_size)
        step = max(1, _MULTINOMIAL_CELLS // self.block_size)
        for start in range(0, live.size, step):
            xs = live[start:start + step]
            block, row = self._place(xs)
            members = np.sort(np.where(parity(row[:, None] & cols) == 0, cols, self.block_size), axis=1)
            members = members[:, :self._s] + (block * self.block_size)[:, None]      # C_x, (xs, s)
            draws = rng.multinomial(a[xs], np.full(self._s, 1.0 / self._s))
            hist += np.bincount(members.ravel(), weights=draws.ravel(), minlength=self.n_outputs).astype(np.int64)
        return Aggregate(int(f.sum()), hist, self.kind)

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """The output id as a little-endian unsigned int of ⌈log2 K / 8⌉ bytes."""
        return uint_bytes(self.n_outputs)

    def encode(self, reports) -> bytes:
        y = check_item_ids(f"{self.name}.encode", reports, self.n_outputs, "reports")
        return encode_uints(y, self.report_bytes)

    def decode(self, payload: bytes) -> np.ndarray:
        self._check_payload(payload)
        y = decode_uints(payload, self.report_bytes)
        return check_item_ids(f"{self.name}.decode", y, self.n_outputs, "payload")
