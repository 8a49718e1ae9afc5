"""What secure aggregation costs a device, from the published protocols' message sizes — docs/math.md §9.3.

Bonawitz et al. (CCS 2017, §7.1) count, per user of a round of n users with m-dimensional inputs,
2n·a_K + (5n − 4)·a_S + m·b bits communicated: two public keys advertised to and received from every other
user (a_K bits each), the encrypted Shamir shares of the mask seeds sent and received and the shares
returned in the unmasking round (a_S bits each), and the masked vector of m elements of b bits, where b must
hold the round's sum (input bits + ⌈log₂ n⌉). With a_K = a_S = 256 this gives the paper's stated
communication expansion of 1.73× (n = 2¹⁰, m = 2²⁰, 16-bit inputs) and 1.98× (n = 2¹⁴, m = 2²⁴).

Bell, Bonawitz, Gascón, Lepoint, Raykova (CCS 2020, "SecAgg+") replace the complete graph by a k-regular
graph with k = O(log n) neighbours: the same messages, exchanged with k neighbours instead of n − 1 others,
so the key and share terms scale with k, the vector term is unchanged. Their example: with 10⁴ clients each
client talks to 3 % of them (k = 300) to have its input summed with at least 5 000 others while tolerating
5 % corrupt clients and 5 % dropouts (semi-malicious) — :data:`SECAGG_PLUS_NEIGHBOURS`.

>>> round(expansion(n=2**10, m=2**20, input_bits=16), 2), round(expansion(n=2**14, m=2**24, input_bits=16), 2)
(1.73, 1.98)
"""

from __future__ import annotations

import math

from ldpsim.mechanisms._validation import check_int

#: bits of a public key (a_K) and of an encrypted secret share (a_S) in Bonawitz et al.'s cost count
KEY_BITS, SHARE_BITS = 256, 256
#: neighbours per client of SecAgg+ in Bell et al.'s example for 10⁴ clients (3 %, semi-malicious)
SECAGG_PLUS_NEIGHBOURS = 300
#: rounds of the protocol (advertise keys, share keys, masked input, unmasking; Bonawitz et al. §4)
ROUNDS = 4


def secagg_bits(m: int, n: int, sum_bits: int, neighbours: int | None = None) -> int:
    """Bits one device communicates in one secure-aggregation round (module docstring).

    Parameters
    ----------
    m : int ≥ 1
        Length of the summed vector (the histogram's D bins).
    n : int ≥ 2
        Devices in the round (the cohort).
    sum_bits : int ≥ 1
        Bits b of each masked element: enough for the cohort's sum (with its noise).
    neighbours : int, optional
        k of SecAgg+ (Bell et al. 2020); None: every other device of the round (Bonawitz et al. 2017).

    Returns
    -------
    int
        2k·a_K + (5k − 4)·a_S + m·b with k = n (Bonawitz) or the neighbours (Bell et al.).
    """
    m = check_int("secagg_bits", "m", m, low=1)
    n = check_int("secagg_bits", "n", n, low=2)
    sum_bits = check_int("secagg_bits", "sum_bits", sum_bits, low=1)
    k = n if neighbours is None else min(n, check_int("secagg_bits", "neighbours", neighbours, low=1) + 1)
    return 2 * k * KEY_BITS + (5 * k - 4) * SHARE_BITS + m * sum_bits


def expansion(n: int, m: int, input_bits: int, neighbours: int | None = None) -> float:
    """Communication expansion: :func:`secagg_bits` over the m·input_bits of sending the input in the
    clear, with b = input_bits + ⌈log₂ n⌉ (Bonawitz et al.'s measure)."""
    return secagg_bits(m, n, input_bits + math.ceil(math.log2(n)), neighbours) / (m * input_bits)


def secagg_bytes(m: int, n: int, sum_range: float, neighbours: int | None = SECAGG_PLUS_NEIGHBOURS) -> int:
    """Bytes per device per round for a cohort of n whose per-bin sum spans ``sum_range`` values:
    b = ⌈log₂ sum_range⌉ bits per element (:func:`secagg_bits`, rounded up to whole bytes)."""
    return math.ceil(secagg_bits(m, n, max(1, math.ceil(math.log2(max(sum_range, 2.0)))), neighbours) / 8)
