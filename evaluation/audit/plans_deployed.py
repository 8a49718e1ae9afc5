"""Audit plans of SHE, 1BitMean and RAPPOR (docs/math.md §7.5).

* SHE (x = 0, x′ = 1): S = {y_0 ≥ 1, y_1 ≤ 0}. Every report in S has log-density ratio exactly ε
  (each of the two coordinates contributes ε/2, the most it can), and S is the whole set where the
  ratio is e^ε, so P[S|x] = ¼ vs ¼e^{−ε} is the most probable boundary event: a shifted quadrant
  {y_0 ≥ t, y_1 ≤ 1 − t}, t > 1, keeps the ratio but multiplies both probabilities by e^{−ε(t−1)},
  and any one-coordinate half-line reaches only e^{ε/2}.
* 1BitMean (x = m, x′ = 0): the bit is 1: π(m) = e^ε/(e^ε+1) vs π(0) = 1/(e^ε+1).
* RAPPOR (two tokens, fixed from the public hash family: the first pair of 0 … 7 with the most cohorts
  where their 2h Bloom bits are distinct): S = the cohort is one of those G "good" cohorts, every
  Bloom bit of x reported 1 and every Bloom bit of x′ reported 0. Target "report" (one report,
  permanent then instantaneous response): (G/C)·(q*(1−p*))^h vs (G/C)·(p*(1−q*))^h, ratio e^{ε₁}, judged
  against ε₁; target "permanent" (the memoized permanent response B′ of a device with a random key):
  (G/C)·(1−f/2)^{2h} vs (G/C)·(f/2)^{2h}, ratio e^{ε_∞}, judged against ε_∞.
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.evaluation.audit.event import AuditPlan, packed_bit
from ldpsim.mechanisms import RAPPORReports
from ldpsim.mechanisms.memo import device_keys

#: RAPPOR audit tokens are chosen among these (a fixed, pre-registered list)
RAPPOR_TOKENS = tuple(range(8))


def she_plan(mech) -> AuditPlan:
    return AuditPlan(0, 1, "y_0 >= 1 and y_1 <= 0", lambda r: (r[:, 0] >= 1.0) & (r[:, 1] <= 0.0),
                     0.25, 0.25 * math.exp(-mech.epsilon))


def one_bit_mean_plan(mech) -> AuditPlan:
    p, p_prime = (float(v) for v in mech.bit_probability([mech.m, 0.0]))
    return AuditPlan(float(mech.m), 0.0, "bit == 1", lambda r: np.asarray(r) == 1, p, p_prime)


def _rappor_pair(mech) -> tuple[object, object, np.ndarray, np.ndarray, np.ndarray]:
    """(x, x′, Bloom positions of each per cohort (C, h) twice, good-cohort mask (C,))."""
    keys = mech.family.keys(list(RAPPOR_TOKENS))
    cohorts = np.arange(mech.cohorts)
    pos = [mech.bloom_positions(cohorts, np.full(mech.cohorts, key)) for key in keys]
    best = None
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            both = np.sort(np.concatenate([pos[i], pos[j]], axis=1), axis=1)
            good = (np.diff(both, axis=1) > 0).all(axis=1)
            if best is None or good.sum() > best[-1].sum():
                best = (RAPPOR_TOKENS[i], RAPPOR_TOKENS[j], pos[i], pos[j], good)
    if not best[-1].any():
        raise ValueError(f"{mech.name}: no cohort separates any two of the tokens {RAPPOR_TOKENS} with "
                         f"{2 * mech.num_hashes} distinct Bloom bits (num_bits={mech.num_bits} too small).")
    return best


def rappor_plan(mech, target: str) -> AuditPlan:
    x, x_prime, pos, pos_p, good = _rappor_pair(mech)
    share = float(good.mean())

    def event(r):
        c = np.asarray(r.cohort)
        hit = good[c].copy()
        for l in range(mech.num_hashes):
            hit &= (packed_bit(r.bits, pos[c, l]) == 1) & (packed_bit(r.bits, pos_p[c, l]) == 0)
        return hit
    what = f"cohort separates {x}, {x_prime}; Bloom bits of {x} all 1, of {x_prime} all 0"
    h = mech.num_hashes
    if target == "report":
        qs, ps = mech.bit_probabilities()
        return AuditPlan(x, x_prime, what + " (one report)", event, share * (qs * (1 - ps)) ** h,
                         share * (ps * (1 - qs)) ** h, claim=float(mech.epsilon_report))
    f = mech.f

    def permanent(values, rng):
        keys = device_keys(len(values), rng)
        bits = np.packbits(mech.permanent_response(values, keys), axis=1)
        return RAPPORReports(mech.device_cohorts(keys), bits)
    return AuditPlan(x, x_prime, what + " (permanent response)", event, share * (1 - f / 2) ** (2 * h),
                     share * (f / 2) ** (2 * h), claim=float(mech.epsilon_permanent), client=permanent)

