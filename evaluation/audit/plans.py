"""Audit plans for the mechanisms of this package: the input pair, the event, its exact probabilities.

A plan fixes, before any trial, the neighbouring inputs x, x′ and the output event S with the largest
likelihood ratio the mechanism claims, P[S|x] / P[S|x′] = e^ε (docs/math.md §7.5). ``event(reports)``
tests S on real reports of the mechanism's client (the *sample* mode audits the implementation);
``p_x``, ``p_x_prime`` are the mechanism's own probabilities of S (the *exact* mode draws the two counts
from Binomial(N, p) directly, which checks the claimed math at any N in microseconds).

Events ("supports x and not x′", the distinguishing attack of Arcolezi & Gambs 2024):

* GRR, RR, URR, SDGRR (keep-or-uniform): the single output y and pair (x, x′) maximising
  P[y|x]/P[y|x′] over the pairs and outputs the mechanism's definition covers (URR: sensitive outputs
  only — ULDP; SDGRR: two high inputs, or any inputs on a high output — SDLDP);
* OUE: bit x set and bit x′ clear: p(1−q) vs q(1−p);
* OLH: H_s(x) = y ≠ H_s(x′): (1−1/g)·p vs (1−1/g)·q (ideal hash: P[H_s(x) ≠ H_s(x′)] = 1 − 1/g);
* CMS: bit h_j(x) is +1 and bit h_j(x′) is −1: c(1−f)² vs c·f², c the share of rows where x, x′ differ;
* HCMS: w̃ = H[l, h_j(x)] ≠ H[l, h_j(x′)]: (c/2)(1−f′) vs (c/2)·f′;
* PM, SDPM (pair 1, −1, both high for SDPM): report in [1, C] = the window of x = 1: p(C−1) vs q(C−1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ldpsim.mechanisms import CMS, HCMS, OLH, OUE, PM, SDPM, SDGRR, URR
from ldpsim.mechanisms.hcms import hadamard_sign
from ldpsim.mechanisms.mixture import KeepOrUniform


@dataclass(frozen=True)
class AuditPlan:
    """Neighbouring inputs, the event S (a test on reports) and the mechanism's own P[S|x], P[S|x′]."""

    x: object
    x_prime: object
    description: str
    event: Callable  # reports -> bool array
    p_x: float
    p_x_prime: float


def packed_bit(bits: np.ndarray, j) -> np.ndarray:
    """Bit ``j`` (a scalar, or one index per row) of np.packbits rows (big-endian within each byte)."""
    j = np.broadcast_to(np.asarray(j, dtype=np.int64), (bits.shape[0],))
    return (bits[np.arange(bits.shape[0]), j >> 3] >> (7 - (j & 7))) & 1


def _keep_or_uniform(mech: KeepOrUniform) -> AuditPlan:
    T = mech.transition_matrix()
    d = mech.domain_size
    best = (-np.inf, 0, 1, 0)
    for y in range(d):
        if isinstance(mech, URR) and y not in mech.sensitive:
            continue  # ULDP constrains sensitive outputs only
        inputs = np.arange(d)
        if isinstance(mech, SDGRR) and y not in mech.high:
            inputs = np.array(mech.high)  # SDLDP: low outputs constrain pairs of high inputs only
        col = T[inputs, y]
        hi, lo = int(np.argmax(col)), int(np.argmin(col))
        ratio = np.log(col[hi]) - np.log(col[lo]) if col[lo] > 0 else np.inf
        if ratio > best[0]:
            best = (ratio, int(inputs[hi]), int(inputs[lo]), y)
    _, x, xp, y = best
    return AuditPlan(x, xp, f"report == {y}", lambda r: np.asarray(r) == y, float(T[x, y]), float(T[xp, y]))


def _oue(mech: OUE) -> AuditPlan:
    p, q = mech.p, mech.q
    return AuditPlan(0, 1, "bit 0 set, bit 1 clear",
                     lambda r: (packed_bit(r, 0) == 1) & (packed_bit(r, 1) == 0), p * (1 - q), q * (1 - p))


def _olh(mech: OLH) -> AuditPlan:
    def event(r):
        return (mech.hash_items(r.seed, 0) == r.y) & (mech.hash_items(r.seed, 1) != r.y)
    share = 1 - 1 / mech.g
    return AuditPlan(0, 1, "H_s(0) = y != H_s(1)", event, share * mech.p, share * mech.q)


def _differ_share(mech) -> float:
    h = mech.family.hash([0, 1])
    return float((h[:, 0] != h[:, 1]).mean())


def _cms(mech: CMS) -> AuditPlan:
    def event(r):
        pos = mech.family.hash_values(r.row, np.zeros(r.row.size, dtype=np.int64))
        pos_p = mech.family.hash_values(r.row, np.ones(r.row.size, dtype=np.int64))
        return (packed_bit(r.bits, pos) == 1) & (packed_bit(r.bits, pos_p) == 0)
    c, f = _differ_share(mech), mech.flip
    return AuditPlan(0, 1, "bit h_j(0) = +1, bit h_j(1) = -1", event, c * (1 - f) ** 2, c * f * f)


def _hcms(mech: HCMS) -> AuditPlan:
    def event(r):
        s0 = hadamard_sign(r.col, mech.family.hash_values(r.row, np.zeros(r.row.size, dtype=np.int64)))
        s1 = hadamard_sign(r.col, mech.family.hash_values(r.row, np.ones(r.row.size, dtype=np.int64)))
        w = 2 * r.bit.astype(np.int64) - 1
        return (w == s0) & (s0 != s1)
    c, f = _differ_share(mech), mech.flip
    return AuditPlan(0, 1, "w = H[l, h_j(0)] != H[l, h_j(1)]", event, c / 2 * (1 - f), c / 2 * f)


def _piecewise(mech) -> AuditPlan:
    pm = mech.pm if isinstance(mech, SDPM) else mech
    if isinstance(mech, SDPM) and (mech.is_low(1.0) or mech.is_low(-1.0)):
        raise ValueError(f"{mech.name}: the audit pair (1, -1) must be two high-sensitivity inputs; "
                         f"got low range {mech.low}.")
    width = pm.C - 1
    return AuditPlan(1.0, -1.0, f"report >= 1 (window of x = 1, [1, {pm.C:.4g}])",
                     lambda r: np.asarray(r) >= 1.0, pm.p * width, pm.q * width)


def _best_ratio(P: np.ndarray) -> tuple[int, int, int]:
    """(x, x′, r) maximising P[x, r] / P[x′, r] over a row-stochastic matrix (rows inputs, columns outputs)."""
    hi, lo = P.argmax(axis=0), P.argmin(axis=0)
    cols = np.arange(P.shape[1])
    with np.errstate(divide="ignore"):
        ratio = np.log(P[hi, cols]) - np.log(P[lo, cols])
    r = int(np.argmax(ratio))
    return int(hi[r]), int(lo[r]), r


def _transition(mech) -> AuditPlan:
    """Any oracle with a finite transition matrix: the single output with the largest ratio."""
    P = mech.transition_matrix()
    x, xp, y = _best_ratio(P)
    return AuditPlan(x, xp, f"report == {y}", lambda r: np.asarray(r) == y, float(P[x, y]), float(P[xp, y]))


def _enumerated(mech) -> AuditPlan:
    """Any oracle with enumerable reports (``all_reports``, ``report_distribution``): the single whole
    report with the largest ratio, recognised by its wire form."""
    P = mech.report_distribution()
    x, xp, r = _best_ratio(P)
    width = mech.report_bytes
    ref = np.frombuffer(mech.encode(_take(mech.all_reports(), r)), dtype=np.uint8)

    def event(reports):
        rows = np.frombuffer(mech.encode(reports), dtype=np.uint8).reshape(-1, width)
        return (rows == ref).all(axis=1)
    return AuditPlan(x, xp, f"report #{r} of the enumerated reports", event, float(P[x, r]), float(P[xp, r]))


def _take(reports, r: int):
    if isinstance(reports, tuple):  # a NamedTuple of arrays
        return type(reports)(*(np.asarray(a)[r:r + 1] for a in reports))
    return np.asarray(reports)[r:r + 1]


_PLANS = ((KeepOrUniform, _keep_or_uniform), (OUE, _oue), (OLH, _olh), (CMS, _cms), (HCMS, _hcms),
          (SDPM, _piecewise), (PM, _piecewise))


def plan_for(mech) -> AuditPlan:
    """The audit plan of one of this package's mechanisms; ValueError for those without one.

    Specific plans first (table above); then any oracle with a transition matrix, then any with
    enumerable reports (HR, SUE, THE, FLH, dBitFlip, ...): the single output of largest ratio.
    """
    for cls, make in _PLANS:
        if isinstance(mech, cls):
            return make(mech)
    if hasattr(mech, "transition_matrix"):
        return _transition(mech)
    if hasattr(mech, "report_distribution") and hasattr(mech, "all_reports"):
        return _enumerated(mech)
    raise ValueError(f"No audit plan for {type(mech).__name__}: supported are "
                     f"{sorted(c.__name__ for c, _ in _PLANS)} and their subclasses (GRR, RR, URR, SDGRR), and "
                     f"oracles with a transition matrix or enumerable reports.")
