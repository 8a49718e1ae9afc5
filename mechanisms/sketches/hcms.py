"""Apple's Hadamard count-mean sketch (HCMS): one-bit reports — docs/math.md §1.6, seed 003."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import as_generator
from ldpsim.mechanisms.base import Aggregate, decode_uints, encode_uints, uint_bytes
from ldpsim.mechanisms.sketches.cms import Sketch
from ldpsim.mechanisms.hadamard import fwht
from ldpsim.mechanisms.memo import key_streams, keyed_ints


class HCMSReports(NamedTuple):
    """HCMS reports of n users: the flipped Hadamard bit (1 ⇔ +1), the row j and the coefficient l."""

    bit: np.ndarray  #: uint8 in {0, 1}
    row: np.ndarray  #: int64 in [0, k)
    col: np.ndarray  #: int64 in [0, m)


def hadamard_sign(l, c) -> np.ndarray:
    """H_m[l, c] ∈ {−1, +1} of the Sylvester Hadamard matrix: (−1)^popcount(l & c), elementwise.

    ``l`` and ``c`` are non-negative int arrays (broadcast); returns an int64 array of ±1.

    >>> hadamard_sign(np.arange(4), 3).tolist()
    [1, -1, -1, 1]
    """
    x = np.bitwise_and(l, c).astype(np.uint64)
    for s in (32, 16, 8, 4, 2, 1):
        x ^= x >> np.uint64(s)
    return 1 - 2 * (x & np.uint64(1)).astype(np.int64)


@dataclass(frozen=True)
class HCMS(Sketch):
    """Hadamard count-mean sketch over arbitrary tokens (str, bytes, int) — docs/math.md §1.6, seed 003.

    Apple Differential Privacy Team, "Learning with Privacy at Scale" (2017).

    Privacy: ε-LDP; the one report bit is flipped w.p. f' = 1/(1+e^ε), (j, l) do not depend on the
    input, so the likelihood ratio of any report is at most (1−f')/f' = e^ε, attained.

    Client: j uniform in [k], l uniform in [m] (m a power of 2), w = H_m[l, h_j(d)] ∈ {±1}, flip w
    w.p. f'; send (w̃, j, l). Server aggregate (exact, integer, mergeable): ``data`` has shape
    (2, k, m): data[0, j, l] = reports (j, l) with w̃ = +1, data[1, j, l] = all reports (j, l).
    The M of docs/math.md §1.6: M[j, l] = k·c'_ε·Σ w̃ = k·c'_ε·(2·data[0] − data[1]),
    c'_ε = (e^ε+1)/(e^ε−1); M ← M·H_mᵀ
    (fast Walsh–Hadamard transform on the integer counts); f̂(d) = m/(m−1)·((1/k)Σ_l M[l, h_l(d)] − n/m).

    Theory for a fixed hash family (derived here; users' randomness only). User u contributes
    Y_u = c'_ε·w̃_u·H[l_u, h_{j_u}(d)]. Given (j, l): E[w̃] = H[l, h_j(d_u)]/c'_ε, and averaging over l,
    (1/m)Σ_l H[l, a]H[l, b] = 1[a = b], so E[Y_u] = γ(d_u): the bias is CMS's (docs/math.md §1.5). Since
    Y_u² = c'_ε² always, Var Y_u = c'_ε² − γ(d_u)², and the users are independent:
    Var f̂(d) = (m/(m−1))²·[n(c'_ε²−1) + Σ_{d'≠d} f(d')(1 − γ(d')²)].
    Averaged over random families (independent rows; E γ = 1/m, Var γ = (m−1)/(m²k)) the MSE is
    (m/(m−1))²·[n(c'_ε²−1) + (1−1/m²)·Σ_{d'≠d} f(d') + (m−1)/(m²k)·Σ_{d'≠d} f(d')(f(d')−1)].

    Parameters
    ----------
    epsilon, k, m, seed
        As for the base class ``Sketch`` (ε in (0, inf); k rows in [1, 2^24]; width m in [2, 2^16], here
        a power of 2 for the Hadamard matrix; hash seed in [0, 2^32 − 1], default 0).

    Attributes
    ----------
    flip : float
        Flip probability of the one report bit, f' = 1/(1+e^ε).
    c_eps : float
        Debiasing constant c'_ε = (e^ε+1)/(e^ε−1).
    family : HashFamily
        The k hash functions.

    Examples
    --------
    >>> h = HCMS(epsilon=2.0, k=4, m=8)
    >>> h.report_bytes, h.report_bits
    (3, 6)
    >>> agg = h.aggregate(h.perturb(["a", "b", "a"], rng=0))
    >>> agg.data.shape, h.estimate(agg, ["a"]).shape
    ((2, 4, 8), (1,))
    """

    flip: float = field(init=False, repr=False, compare=False)
    c_eps: float = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        super().__post_init__()
        if self.m & (self.m - 1):
            raise ValueError(f"The 'm' parameter of HCMS must be a power of 2 (for the Hadamard matrix). "
                             f"Got {self.m!r} instead.")
        e = math.exp(self.epsilon)
        object.__setattr__(self, "flip", 1.0 / (1.0 + e))
        object.__setattr__(self, "c_eps", (e + 1) / (e - 1))

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> HCMSReports:
        """Client side: one row, one Hadamard coefficient and its flipped sign per user.

        Parameters
        ----------
        values : array_like of tokens, shape (n,)
            One str/bytes/int token per user.
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        HCMSReports
            ``bit`` (uint8, 1 ⇔ +1), ``row`` in [0, k), ``col`` in [0, m), each of shape (n,).
        """
        rng = as_generator(rng)
        keys = self.value_keys(values)
        rows, pos = self._user_positions(keys, rng)
        return self._reports(rows, pos, rng.integers(0, self.m, size=keys.size), rng.random(keys.size))

    def perturb_keyed(self, values, keys) -> HCMSReports:
        """Memoized client: report i a deterministic function of ``keys[i]`` with the law of :meth:`perturb`.

        The row, the coefficient and the flip coin are uniforms 0, 1 and 2 of the key's stream (the keyed
        hash of docs/math.md §7.5, "Memoization in the ledger"); the rest is :meth:`perturb`'s.

        Parameters
        ----------
        values : array_like of tokens, shape (n,)
            One str/bytes/int token per report.
        keys : array_like of uint64, shape (n,)
            One key per report (a memo: one per device and value).

        Returns
        -------
        HCMSReports
            As :meth:`perturb` returns them.
        """
        keys, rows, pos = self._keyed_positions(values, keys)
        return self._reports(rows, pos, keyed_ints(keys, self.m, 1), key_streams(keys, 1, 2)[:, 0])

    def _reports(self, rows: np.ndarray, pos: np.ndarray, col: np.ndarray, u_flip: np.ndarray) -> HCMSReports:
        """(bit, j, l): the sign H_m[l, pos] as a bit (1 ⇔ +1), flipped where ``u_flip`` < f."""
        plus = hadamard_sign(col, pos) > 0
        return HCMSReports((plus ^ (u_flip < self.flip)).astype(np.uint8), rows, col)

    # server ------------------------------------------------------------------------------------
    def _check_reports(self, reports, what: str) -> HCMSReports:
        try:
            bit, row, col = (np.asarray(r) for r in reports)
        except (TypeError, ValueError):
            raise ValueError(f"{self.name}.{what}: reports must be HCMSReports(bit, row, col).") from None
        n = bit.shape[0] if bit.ndim == 1 else -1
        for name, arr, hi in (("bit", bit, 2), ("row", row, self.k), ("col", col, self.m)):
            if arr.shape != (n,) or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
                raise ValueError(f"{self.name}.{what}: {name} must be a 1-D integer array of the same "
                                 f"length as bit; got {arr.dtype} {arr.shape}.")
            if arr.size and (arr.min() < 0 or arr.max() >= hi):
                raise ValueError(f"{self.name}.{what}: {name} values must be in [0, {hi}).")
        return HCMSReports(bit.astype(np.uint8), row.astype(np.int64), col.astype(np.int64))

    def aggregate(self, reports) -> Aggregate:
        """Integer counts per cell (j, l): reports with w̃ = +1, and all reports.

        Parameters
        ----------
        reports : HCMSReports

        Returns
        -------
        Aggregate
            ``data`` of shape (2, k, m), int64.
        """
        bit, row, col = self._check_reports(reports, "aggregate")
        cell = row * self.m + col
        size = self.k * self.m
        data = np.stack([np.bincount(cell[bit == 1], minlength=size), np.bincount(cell, minlength=size)])
        return Aggregate(bit.size, data.reshape(2, self.k, self.m), self.kind)

    def sketch_matrix(self, agg: Aggregate) -> np.ndarray:
        """The k × m matrix M of docs/math.md §1.6 after the transform M ← M·H_mᵀ (float).

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration.

        Returns
        -------
        numpy.ndarray of float, shape (k, m)
        """
        self._check_aggregate(agg)
        return self.k * self.c_eps * fwht(2 * agg.data[0] - agg.data[1])

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Count estimates m/(m−1)·((1/k)Σ_l M[l, h_l(d)] − n/m) (docs/math.md §1.6).

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration.
        items : sequence of tokens
            Items to estimate (required).

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
            Biased by hash collisions for a fixed family, like CMS (:meth:`bias`).
        """
        self._check_aggregate(agg)
        s = self._query_sums(fwht(2 * agg.data[0] - agg.data[1]), items)  # exact integers
        n, m = agg.n, self.m
        return m / (m - 1) * (self.c_eps * s - n / m)  # (1/k)Σ_l M[l, h_l(d)] = c'_ε·s

    # theory ------------------------------------------------------------------------------------
    def variance(self, true_counts, items=None) -> np.ndarray:
        """(m/(m−1))²·[n(c'_ε²−1) + Σ_{d'≠d} f(d')(1 − γ(d')²)] (docs/math.md §1.6), exact.

        Parameters
        ----------
        true_counts : array_like of non-negative numbers
            True count of each of ``items`` (n = their sum).
        items : sequence of tokens
            The items (required), aligned with ``true_counts``.

        Returns
        -------
        numpy.ndarray of float
            Count-scale variance of each estimate for this hash family.
        """
        arr, f = self._counts(true_counts, items)
        _, s2 = self._collision_sums(arr, f)
        m, n = self.m, f.sum()
        return (m / (m - 1)) ** 2 * (n * (self.c_eps ** 2 - 1) + (n - f) - s2)

    def family_averaged_variance(self, true_counts, items=None) -> np.ndarray:
        """MSE averaged over random families with independent rows (class docstring)."""
        _, f = self._counts(true_counts, items)
        others, pairs = self._family_terms(f)
        m = self.m
        return (m / (m - 1)) ** 2 * (f.sum() * (self.c_eps ** 2 - 1) + (1 - 1 / m ** 2) * others
                                     + (m - 1) / (m ** 2 * self.k) * pairs)

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact direct sampler: (j, l) per user, then per cell ones = Bin(T⁺, 1−f') + Bin(N−T⁺, f').

        T⁺ = users of the cell whose Hadamard sign w is +1, N = the cell's users.

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
        """
        keys = self._population_keys(true_counts, items)
        rng = as_generator(rng)
        rows, pos = self._user_positions(keys, rng)
        col = rng.integers(0, self.m, size=keys.size)
        cell = rows * self.m + col
        size = self.k * self.m
        total = np.bincount(cell, minlength=size)
        plus = np.bincount(cell[hadamard_sign(col, pos) > 0], minlength=size)
        ones = rng.binomial(plus, 1.0 - self.flip) + rng.binomial(total - plus, self.flip)
        return Aggregate(keys.size, np.stack([ones, total]).reshape(2, self.k, self.m), self.kind)

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bits(self) -> int:
        """Information content of a report: 1 + ⌈log2 k⌉ + log2 m bits."""
        return 1 + max(self.k - 1, 0).bit_length() + (self.m - 1).bit_length()

    @property
    def report_bytes(self) -> int:
        """One byte for the bit, then j and l as little-endian uints of uint_bytes(k), uint_bytes(m)."""
        return 1 + uint_bytes(self.k) + uint_bytes(self.m)

    def encode(self, reports) -> bytes:
        """Wire form: per report one byte for the bit, then j and l (little-endian)."""
        bit, row, col = self._check_reports(reports, "encode")
        wk, wm = uint_bytes(self.k), uint_bytes(self.m)
        out = np.empty((bit.size, self.report_bytes), dtype=np.uint8)
        out[:, 0] = bit
        out[:, 1:1 + wk] = np.frombuffer(encode_uints(row, wk), np.uint8).reshape(bit.size, wk)
        out[:, 1 + wk:] = np.frombuffer(encode_uints(col, wm), np.uint8).reshape(bit.size, wm)
        return out.tobytes()

    def decode(self, payload: bytes) -> HCMSReports:
        """Reports from their wire form.

        Parameters
        ----------
        payload : bytes
            Output of :meth:`encode`.

        Returns
        -------
        HCMSReports
            ``ValueError`` on a partial report or an out-of-range field.
        """
        n = self._check_payload(payload)
        raw = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes)
        wk = uint_bytes(self.k)
        row = decode_uints(raw[:, 1:1 + wk].tobytes(), wk)
        col = decode_uints(raw[:, 1 + wk:].tobytes(), uint_bytes(self.m))
        return self._check_reports(HCMSReports(raw[:, 0].astype(np.int64), row, col), "decode")
