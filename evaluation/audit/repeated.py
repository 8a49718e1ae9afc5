"""Audit the T reports of one device jointly: memoized and longitudinal clients (docs/math.md §11).

A memoizing client promises one ε for a device's whole history while its value stays the same (ε_∞:
RAPPOR's permanent response, dBitFlip and 1BitMean's memoized bits, the simulator's memoized reports of
GRR, OUE, OLH, CMS, HCMS). One report's audit cannot see whether the client keeps that promise: a
client that redraws its "permanent" response on every call passes it, and composes to T·ε₁ over T
reports. Here a *device* is audited: ``trials`` devices per input, each with a fresh key, each calling
the client T times with the same key and value, and the event is over the joint output:

    S_T = "every one of the T reports is in S",

S the one-report event of the mechanism's plan (:func:`~.plans.plan_for`; RAPPOR: its "report"
target). The claim is the device's ε over the T reports, ``mech.epsilon`` (ε_∞). Under a client that
memoizes the whole report, P[S_T|x] = P[S|x]; under RAPPOR's memoized permanent response with fresh
instantaneous bits, P[S_T|x] = share·a_T(x)^h·b_T(x)^h (:func:`_rappor_joint`); under a client that
redraws everything, P[S_T|x] = P[S|x]^T, ratio e^{T·ε₁} (:func:`redraw_probabilities`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ldpsim.evaluation.audit.event import AuditPlan
from ldpsim.evaluation.audit.plans import plan_for
from ldpsim.mechanisms import MECHANISMS, RAPPOR
from ldpsim.mechanisms.memo import keyed_words
from ldpsim.runtime.errors import InputError
from ldpsim.mechanisms.memo import keyed_perturb


def memoizes(mech) -> bool:
    """Whether ``mech`` has a memoizing device client here (:func:`device_client`): its own
    ``perturb_memoized`` or a vectorized keyed sampler ``perturb_keyed``."""
    return hasattr(mech, "perturb_memoized") or hasattr(mech, "perturb_keyed")


def device_client(mech):
    """The memoizing client of one device, ``perturb(values, keys, rng) -> reports``: the mechanism's own
    ``perturb_memoized`` (RAPPOR, dBitFlip, 1BitMean) or the simulator's keyed report (every report a
    deterministic function of hash(device key, value): :func:`ldpsim.mechanisms.memo.keyed_perturb`)."""
    own = getattr(mech, "perturb_memoized", None)
    if own is not None:
        return lambda values, keys, rng: own(values, keys, rng=rng)
    if not memoizes(mech):
        audited = ", ".join(name for name, cls in MECHANISMS.items() if memoizes(cls))
        raise InputError(f"The repeated audit has no memoizing client for {mech.name}: it audits {audited}; "
                         f"audit another client with client=... and days=...")

    def client(values, keys, rng):
        ids = np.asarray(values, dtype=np.int64)
        tokens = values if mech.takes_tokens else None
        return keyed_perturb(mech, ids, keyed_words(keys, ids), tokens=tokens, rng=rng)
    return client


def joint_k(p_x: float, p_xp: float, epsilon_claimed: float, days: int) -> int:
    """The k in 1..T with the fewest trials to detect a client that redraws every report (its law
    P[Bin(T, P[S|·]) ≥ k], :func:`~.bounds.trials_to_detect`): fixed from the declared probabilities
    before any trial, so the choice costs no confidence (docs/math.md §11.1)."""
    from scipy import stats

    from ldpsim.evaluation.audit.bounds import trials_to_detect
    cost = [trials_to_detect(float(stats.binom.sf(k - 1, days, p_x)), float(stats.binom.sf(k - 1, days, p_xp)),
                             epsilon_claimed) for k in range(1, days + 1)]
    return int(np.argmin(cost)) + 1


def _rappor_joint(mech: RAPPOR, days: int, k: int, share: float) -> tuple[float, float]:
    """P[S_T | x], P[S_T | x′] for memoized RAPPOR (docs/math.md §11.2). Given the device's permanent
    bits on the h Bloom bits of x and the h of x′ — i of x's set (B′ = 1), j of x′'s clear (B′ = 0) — a
    report is in S w.p. π = q^i p^{h−i} (1 − p)^j (1 − q)^{h−j}, independently over the T reports; under
    x, i and j are Binomial(h, 1 − f/2), under x′ Binomial(h, f/2)."""
    from scipy import stats

    f, p, q, h = mech.f, mech.p, mech.q, mech.num_hashes
    i = np.arange(h + 1)
    pi = (q ** i * p ** (h - i))[:, None] * ((1 - p) ** i * (1 - q) ** (h - i))[None, :]
    tail = stats.binom.sf(k - 1, days, pi)
    out = []
    for keep in (1 - f / 2, f / 2):
        w = stats.binom.pmf(i, h, keep)
        out.append(share * float(w @ tail @ w))
    return out[0], out[1]


def repeated_plan(mech, days: int) -> AuditPlan:
    """The joint plan of ``days`` reports of one device of ``mech`` (module docstring): the one-report
    event S, the device client, the claim ε_∞ = ``mech.epsilon`` and the exact P[S_T|·] of the correct
    memoizing client (NaN where the client redraws part of the report with a law not modelled here:
    output perturbation γ > 0)."""
    one, k = _one(mech, days)
    if isinstance(mech, RAPPOR):
        qs, ps = mech.bit_probabilities()
        p_x, p_xp = _rappor_joint(mech, days, k, one.p_x / (qs * (1 - ps)) ** mech.num_hashes)
    elif getattr(mech, "gamma", 0):
        p_x = p_xp = math.nan
    else:  # the whole report is memoized: all T reports are the first one
        p_x, p_xp = one.p_x, one.p_x_prime
    return replace(one, description=f"at least {k} of {days} reports: {one.description}", p_x=p_x,
                   p_x_prime=p_xp, claim=float(mech.epsilon), client=device_client(mech),
                   target=f"{days} reports", at_least=k)


def _one(mech, days: int):
    """The one-report plan and k (module docstring)."""
    one = plan_for(mech, "report" if isinstance(mech, RAPPOR) else None)
    return one, joint_k(one.p_x, one.p_x_prime, float(mech.epsilon), days)


def redraw_probabilities(mech, days: int) -> tuple[float, float]:
    """P[S_T|x], P[S_T|x′] of a client that redraws every report, P[Bin(T, P[S|·]) ≥ k]: the law of the
    memoization bug, for :func:`~.bounds.trials_to_detect`."""
    from scipy import stats

    one, k = _one(mech, days)
    return (float(stats.binom.sf(k - 1, days, one.p_x)), float(stats.binom.sf(k - 1, days, one.p_x_prime)))
