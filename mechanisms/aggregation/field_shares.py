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
class PrimeField:
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


FIELD64 = PrimeField("Field64", 2**32 * 4294967295 + 1, 8)
FIELD128 = PrimeField("Field128", 2**66 * 4611686018427387897 + 1, 16)


def split(reports, field: PrimeField = FIELD64, rng=None):
    """Two additive shares of each report: x₀ uniform, x₁ = x − x₀ mod p (docs/math.md §9.3).

    Parameters
    ----------
    reports : array_like of non-negative ints < p, shape (n, L)
    field : PrimeField
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


def reconstruct(leader_sum, helper_sum, field: PrimeField = FIELD64) -> np.ndarray:
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
#: the Prio3 instances sized by :func:`prio3_bytes` (draft-irtf-cfrg-vdaf-20 §7.4: Prio3Count, Prio3Sum,
#: Prio3SumVec, Prio3Histogram, Prio3MultihotCountVec)
PRIO3 = ("count", "sum", "sumvec", "histogram", "multihot")


def _next_power_of_2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _prio3_circuit(vdaf: str, length: int, bound: int, chunk_length: int | None):
    """(field, encoded measurement length, gadget arity, gadget calls, joint randomness used, chunk)."""
    who = f"prio3_bytes({vdaf!r})"
    if vdaf == "count":
        return FIELD64, 1, 2, 1, False, None                      # Mul gadget, called once
    bits = check_int(who, "bound", bound, low=1).bit_length()     # range-checked integer encoding
    if vdaf == "sum":
        return FIELD64, bits, 1, bits, False, None                # PolyEval(x² − x), once per bit
    length = check_int(who, "length", length, low=1)
    if vdaf == "multihot" and bound > length:
        raise InputError(f"{who}: 'bound' (the largest number of ones) must be at most 'length' = {length}; "
                         f"got {bound}.")
    meas = {"sumvec": length * bits, "histogram": length, "multihot": length + bits}[vdaf]
    c = math.ceil(math.sqrt(meas)) if chunk_length is None else check_int(who, "chunk_length",
                                                                          chunk_length, low=1)
    return FIELD128, meas, 2 * c, math.ceil(meas / c), True, c    # ParallelSum(Mul, c)


def prio3_bytes(vdaf: str = "histogram", length: int = 1, bound: int = 1,
                chunk_length: int | None = None) -> dict:
    """Bytes of one Prio3 report with two aggregators, at the VDAF level (docs/math.md §9.3).

    Sizes follow draft-irtf-cfrg-vdaf-20 §7 and were checked against its Python reference
    implementation (``scenarios/studies/bench/vdaf_poc.py``). Every gadget has degree 2; a gadget of arity A
    called C times gives an FLP proof of A + 2(P − 1) + 1 field elements, P the next power of 2 ≥ 1 + C,
    and a verifier of 1 + A + 1 elements. The leader's input share holds the encoded measurement and the
    proof; the helper's one seed from which both are expanded; circuits with joint randomness (all but
    Count and Sum) add a blind seed to each input share and one joint-randomness part per aggregator
    to the public share. DAP's framing and HPKE encryption come on top.

    Parameters
    ----------
    vdaf : {"count", "sum", "sumvec", "histogram", "multihot"}
        Prio3Count (Field64, a bit), Prio3Sum (Field64, a value in [0, bound]), Prio3SumVec (Field128,
        ``length`` values in [0, bound]), Prio3Histogram (Field128, one-hot of ``length``),
        Prio3MultihotCountVec (Field128, ``length`` bits with at most ``bound`` ones).
    length : int ≥ 1
    bound : int ≥ 1
        max_measurement (sum, sumvec) or max_weight (multihot, ≤ ``length``).
    chunk_length : int ≥ 1 or None
        ParallelSum chunk; default ⌈√(encoded length)⌉, near the draft's recommended optimum.

    Returns
    -------
    dict
        ``upload`` (client → both aggregators, bytes) = ``public_share`` + ``leader_share`` +
        ``helper_share``; ``field``, ``measurement_elements``, ``proof_elements``,
        ``verifier_elements``, ``prep_per_aggregator`` (the verifier share sent while preparing, bytes)
        and ``rounds`` (1).

    Examples
    --------
    >>> prio3_bytes("count")["upload"]
    80
    """
    if vdaf not in PRIO3:
        raise InputError(f"The 'vdaf' parameter of prio3_bytes must be one of {', '.join(PRIO3)}. "
                         f"Got {vdaf!r} instead.")
    field, meas, arity, calls, joint, chunk = _prio3_circuit(vdaf, length, bound, chunk_length)
    proof = arity + 2 * (_next_power_of_2(1 + calls) - 1) + 1
    verifier = 1 + arity + 1
    blind = SEED_BYTES if joint else 0
    public = 2 * blind
    leader = (meas + proof) * field.encoded_bytes + blind
    helper = SEED_BYTES + blind
    return {"upload": public + leader + helper, "public_share": public, "leader_share": leader,
            "helper_share": helper, "field": field.name, "chunk_length": chunk, "measurement_elements": meas,
            "proof_elements": proof, "verifier_elements": verifier,
            "prep_per_aggregator": verifier * field.encoded_bytes + blind, "rounds": 1}


def prio3_histogram_bytes(length: int, chunk_length: int | None = None) -> dict:
    """:func:`prio3_bytes` of a Prio3Histogram of ``length`` buckets (docs/math.md §9.3)."""
    return prio3_bytes("histogram", length=length, chunk_length=chunk_length)
