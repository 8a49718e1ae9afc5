"""Two-server (Prio3 / DAP) reports at the level of the numbers: additive shares over the VDAF fields, the
validity rules an aggregator pair checks, and what the cryptography costs — docs/math.md §9.3.

A report x ∈ F^L (a one-hot or multi-hot histogram vector, or a bounded value) is split into two
additive shares x = x₀ + x₁ over a prime field F, x₀ uniform: either share alone is independent of x.
Each aggregator sums its shares; the two sums add up to Σx (mod p). The FLP of Boneh et al. (2019) lets the
two servers check a validity predicate on x without learning x (soundness error ≈ (degree·calls)/|F|,
negligible for Field64/Field128); this module evaluates the same predicate in the clear, which is what
the check decides for an honest-but-curious pair. No cryptography runs here.

Fields (draft-irtf-cfrg-vdaf, §6.1 "Field64", "Field128"):
p₆₄ = 2³²·4294967295 + 1, p₁₂₈ = 2⁶⁶·4611686018427387897 + 1.

>>> FIELD64.modulus == 2**32 * 4294967295 + 1
True
>>> import numpy as np
>>> x = np.array([[0, 1, 0], [1, 0, 0]], dtype=np.uint64)
>>> a, b = split(x, FIELD64, rng=1)
>>> bool(np.array_equal(reconstruct(FIELD64.sum(a), FIELD64.sum(b)), x.sum(axis=0)))
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int
from ldpsim.runtime.errors import InputError


@dataclass(frozen=True)
class Field:
    """A VDAF prime field: its name, modulus and encoded size in bytes (docs/math.md §9.3).

    Parameters
    ----------
    name : str
    modulus : int
    encoded_bytes : int

    Examples
    --------
    >>> FIELD128.encoded_bytes
    16
    """

    name: str
    modulus: int
    encoded_bytes: int

    @property
    def native(self) -> bool:
        """True when elements fit numpy's uint64 (Field64): vectorized arithmetic; else Python ints."""
        return self.modulus < 2**64

    def random(self, shape, rng) -> np.ndarray:
        """Uniform field elements: uint64 for Field64, an object array of Python ints for Field128."""
        if self.native:
            # rejection: draws ≥ p (probability < 2^-32) are redrawn, so the result is exactly uniform
            out = rng.integers(0, 2**64, size=shape, dtype=np.uint64)
            bad = out >= np.uint64(self.modulus)
            while bad.any():
                out[bad] = rng.integers(0, 2**64, size=int(bad.sum()), dtype=np.uint64)
                bad = out >= np.uint64(self.modulus)
            return out
        words = [rng.integers(0, 2**64, size=shape, dtype=np.uint64).astype(object) for _ in range(3)]
        wide = (words[0] << 128) + (words[1] << 64) + words[2]   # 192 random bits, reduced: bias < 2^-64
        return wide % self.modulus

    def add(self, a, b):
        """a + b mod p, elementwise (no overflow: the uint64 wrap is corrected by 2⁶⁴ − p)."""
        if not self.native:
            return (a + b) % self.modulus
        s = a + b                                   # wraps modulo 2^64
        wrapped = s < a
        s = s + np.where(wrapped, np.uint64(2**64 - self.modulus), np.uint64(0))
        return np.where(s >= np.uint64(self.modulus), s - np.uint64(self.modulus), s)

    def sub(self, a, b):
        """a − b mod p, elementwise."""
        if not self.native:
            return (a - b) % self.modulus
        return np.where(a >= b, a - b, a + (np.uint64(self.modulus) - b))

    def sum(self, shares, axis: int = 0):
        """Σ over ``axis`` mod p (pairwise tree of :meth:`add`, so Field64 never overflows)."""
        x = np.moveaxis(np.asarray(shares), axis, 0)
        if not self.native:
            return x.sum(axis=0) % self.modulus
        while x.shape[0] > 1:
            if x.shape[0] % 2:
                x = np.concatenate([x, np.zeros((1,) + x.shape[1:], dtype=x.dtype)])
            x = self.add(x[0::2], x[1::2])
        return x[0]


FIELD64 = Field("Field64", 2**32 * 4294967295 + 1, 8)
FIELD128 = Field("Field128", 2**66 * 4611686018427387897 + 1, 16)


def split(reports, field: Field = FIELD64, rng=None):
    """Two additive shares of each report: x₀ uniform, x₁ = x − x₀ mod p (docs/math.md §9.3).

    Parameters
    ----------
    reports : array_like of non-negative ints < p, shape (n, L)
    field : Field
    rng : numpy.random.Generator, int or None

    Returns
    -------
    (leader, helper) : two arrays of the reports' shape
    """
    rng = as_generator(rng)
    x = np.asarray(reports)
    x = x.astype(np.uint64) if field.native else x.astype(object) % field.modulus
    leader = field.random(x.shape, rng)
    return leader, field.sub(x, leader)


def reconstruct(leader_sum, helper_sum, field: Field = FIELD64) -> np.ndarray:
    """The aggregate Σx from the two aggregators' share sums as signed int64: the representative in
    (−p/2, p/2], so noise that took a sum below zero comes back negative."""
    total = field.add(np.asarray(leader_sum), np.asarray(helper_sum))
    half = field.modulus // 2
    if not field.native:
        return np.array([int(v) - field.modulus if v > half else int(v) for v in np.ravel(total)],
                        dtype=np.int64).reshape(np.shape(total))
    total = np.asarray(total, dtype=np.uint64)
    negative = total > np.uint64(half)
    magnitude = np.where(negative, np.uint64(field.modulus) - total, total).astype(np.int64)
    return np.where(negative, -magnitude, magnitude)


# ---- validity predicates (what the FLP proves about each report) ------------------------------------
VALIDITY = ("one_hot", "multi_hot", "bounded_sum")


def valid_reports(reports, rule: str = "one_hot", max_ones: int = 1, bound: int = 1) -> np.ndarray:
    """Which reports pass the aggregators' validity check (docs/math.md §9.3).

    Parameters
    ----------
    reports : array_like of ints, shape (n, L)
        Reports as submitted (a malicious client may submit anything).
    rule : {"one_hot", "multi_hot", "bounded_sum"}
        one_hot: entries in {0, 1} with exactly one 1 (Prio3Histogram); multi_hot: entries in {0, 1}
        with at most ``max_ones`` ones (Prio3MultihotCountVec); bounded_sum: entries in [0, ``bound``]
        (Prio3SumVec with ⌈log₂(bound+1)⌉-bit entries; here the entries' range is checked).
    max_ones, bound : int ≥ 1

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
    """
    if rule not in VALIDITY:
        raise InputError(f"The 'rule' parameter of valid_reports must be one of {', '.join(VALIDITY)}. "
                         f"Got {rule!r} instead.")
    x = np.asarray(reports)
    if x.ndim != 2:
        raise InputError(f"valid_reports: 'reports' must be a 2-D array (reports × entries); got shape {x.shape}.")
    if rule == "bounded_sum":
        bound = check_int("valid_reports", "bound", bound, low=1)
        return np.all((x >= 0) & (x <= bound), axis=1)
    bits = np.all((x == 0) | (x == 1), axis=1)
    ones = x.sum(axis=1)
    if rule == "one_hot":
        return bits & (ones == 1)
    max_ones = check_int("valid_reports", "max_ones", max_ones, low=1)
    return bits & (ones <= max_ones)


# ---- what the cryptography costs (bytes on the wire) ------------------------------------------------
#: XOF seed size in bytes (XofTurboShake128, draft-irtf-cfrg-vdaf §6.2)
SEED_BYTES = 32


def _next_power_of_2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def prio3_histogram_bytes(length: int, chunk_length: int | None = None, field: Field = FIELD128) -> dict:
    """Upload and aggregator traffic of one Prio3Histogram report (draft-irtf-cfrg-vdaf §7.4.4, §7.3).

    The validity circuit uses one ParallelSum(Mul, c) gadget (arity 2c, degree 2) called ⌈L/c⌉ times, so
    the FLP proof has 2c + 2(P − 1) + 1 elements with P = next power of 2 ≥ 1 + ⌈L/c⌉ (the draft's
    ``proof_len``); c defaults to ⌈√L⌉. The leader's input share holds L + proof elements and a blind
    seed; the helper's holds two seeds and a blind; the public share two joint-randomness parts. Each
    aggregator sends one verifier share (1 + 2c + 1 elements) and a joint-randomness part while preparing.

    Returns
    -------
    dict
        ``upload`` (client → both aggregators, bytes), ``proof_elements``, ``prep_per_aggregator`` (bytes),
        ``rounds`` (1: one prepare round between the aggregators).
    """
    length = check_int("prio3_histogram_bytes", "length", length, low=1)
    c = math.ceil(math.sqrt(length)) if chunk_length is None else check_int(
        "prio3_histogram_bytes", "chunk_length", chunk_length, low=1)
    calls = math.ceil(length / c)
    proof = 2 * c + 2 * (_next_power_of_2(1 + calls) - 1) + 1
    leader = (length + proof) * field.encoded_bytes + SEED_BYTES
    helper = 3 * SEED_BYTES
    public = 2 * SEED_BYTES
    verifier = (1 + 2 * c + 1) * field.encoded_bytes + SEED_BYTES
    return {"upload": leader + helper + public, "proof_elements": proof, "prep_per_aggregator": verifier,
            "rounds": 1}
