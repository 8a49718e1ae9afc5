"""What an audit plan is — two inputs, one output event, its exact probabilities — and the event tests
the sketch-based plans share (docs/math.md §7.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class AuditPlan:
    """Neighbouring inputs, the event S (a test on reports) and the mechanism's own P[S|x], P[S|x′].

    ``claim`` is the ε the audit is judged against (None: the mechanism's ``epsilon``; RAPPOR's one
    report: its ε₁; discovery protocols: the sum of their parts; a threshold round: ε at ``delta``). ``client`` replaces the mechanism's
    ``perturb(values, rng)`` in the sample mode when the audited report is made by another public
    path of the same client (one group of a personalized mechanism, RAPPOR's permanent response).
    """

    x: object
    x_prime: object
    description: str
    event: Callable  # reports -> bool array
    p_x: float
    p_x_prime: float
    claim: float | None = None
    client: Callable | None = None  # perturb(values, rng) -> reports
    target: str = ""
    at_least: int = 1  #: repeated audits: a device is in S_T when at least this many of its reports are in S
    delta: float = 0.0  #: δ of an (ε, δ) claim: the bound is ln((P[S|x] − δ)/P[S|x′]) (docs/math.md §11.5)


def packed_bit(bits: np.ndarray, j) -> np.ndarray:
    """Bit ``j`` (a scalar, or one index per row) of np.packbits rows (big-endian within each byte)."""
    j = np.broadcast_to(np.asarray(j, dtype=np.int64), (bits.shape[0],))
    return (bits[np.arange(bits.shape[0]), j >> 3] >> (7 - (j & 7))) & 1


def differ_share(family, key, key_prime) -> float:
    """Share of a sketch family's rows on which two 64-bit keys hash to different columns."""
    rows = np.arange(family.k)
    return float(np.mean(family.evaluate(rows, np.uint64(key)) != family.evaluate(rows, np.uint64(key_prime))))


def sketch_pair_event(family, bits, row, key, key_prime) -> np.ndarray:
    """CMS reports (bits, row) whose bit h_row(key) is +1 and bit h_row(key′) is −1 (per-report keys allowed).

    For a CMS at flip f this has probability c(1 − f)² under key and c·f² under key′, c the
    :func:`differ_share` (a bit cannot be both, so rows where the keys collide never count).
    """
    pos = family.evaluate(row, np.asarray(key, dtype=np.uint64))
    pos_p = family.evaluate(row, np.asarray(key_prime, dtype=np.uint64))
    return (packed_bit(bits, pos) == 1) & (packed_bit(bits, pos_p) == 0)
