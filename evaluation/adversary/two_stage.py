"""Exact likelihoods of bit reports made in two stages — a permanent (memoized) response, then a fresh
instantaneous one — for RAPPOR and dBitFlip (docs/math.md §7.2, §7.3, §7.5).

Both mechanisms send, per report, B bits at *positions* a candidate value x either *hits* or not
(RAPPOR: the k Bloom bits of the report's cohort, hit when set in x's Bloom filter; dBitFlip: the d
sampled buckets, hit when the bucket is x). Each bit goes through

* a permanent response B′: P(B′ = 1) = u₁ if the position is hit, u₀ if not
  (RAPPOR: 1 − f/2 and f/2; dBitFlip: a and b, the memoized bit);
* an instantaneous response S: P(S = 1 | B′ = 1) = v₁, P(S = 1 | B′ = 0) = v₀
  (RAPPOR: q and p; dBitFlip: 1 − γ and γ, the output perturbation).

*One report* (a fresh permanent response, or the first report of a memo): the bits are independent
given x with P(S = 1) = h₁ = u₁v₁ + (1 − u₁)v₀ (hit) or h₀ (not), and the layout (cohort; bucket set)
is uniform over its L choices, so log P[report | x] = −log L + Σ_b log P(S_b | hit_b(x))
(:func:`report_log_likelihoods`).

*A memoized device, linked over days*: its layout is fixed (cohort and buckets come from its key) and
the permanent response of a value is shared by all its reports, while the instantaneous response is
fresh. So the reports of one value are *not* independent given x: per position b, with N reports of
which n₁ have S_b = 1, P = Σ_{β∈{0,1}} P(B′_b = β | hit_b(x)) · v_β^{n₁} (1 − v_β)^{N − n₁}
(:func:`device_log_likelihoods` with ρ = 1). A device whose reports are only partly of its favourite
(share ρ; the others drawn from the workload π) is modelled per position as the mixture
ρ·(shared B′ of x) + (1 − ρ)·(independent background bit, P(S = 1) = the π-average of h) — exact for
ρ = 1; for ρ < 1 it ignores that a report's bits come from the same value, the model's one
approximation (as the independence of reports in :mod:`.observer`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse
from scipy.special import logsumexp, xlog1py, xlogy

from ldpsim.mechanisms.frequency.dbitflip import DBitFlip
from ldpsim.mechanisms.frequency.rappor import RAPPOR

MECHANISMS = (RAPPOR, DBitFlip)


def stages(mech) -> tuple[float, float, float, float]:
    """(u₁, u₀, v₁, v₀): P(B′ = 1 | hit / not hit) and P(S = 1 | B′ = 1 / 0) of ``mech``."""
    if isinstance(mech, RAPPOR):
        return 1 - mech.f / 2, mech.f / 2, mech.q, mech.p
    if isinstance(mech, DBitFlip):
        return mech.a, mech.b, 1 - mech.gamma, mech.gamma
    raise TypeError(f"two-stage likelihoods cover RAPPOR and DBitFlip; got {type(mech).__name__}.")


def _one_report(mech) -> tuple[float, float]:
    """(h₁, h₀): P(S = 1) of one report's bit at a hit / not-hit position."""
    u1, u0, v1, v0 = stages(mech)
    return u1 * v1 + (1 - u1) * v0, u0 * v1 + (1 - u0) * v0


def layout(mech, reports, items) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(S, P, T, log L): the bits (n, B), their position ids (n, B), the hit table T (positions ×
    candidates, T[p, x] = 1 iff x hits position p) and the log-number of equally likely layouts."""
    stages(mech)  # TypeError unless RAPPOR or DBitFlip
    if isinstance(mech, RAPPOR):
        cohort, bits = mech.check_reports(reports)
        k = mech.num_bits
        S = np.unpackbits(bits, axis=1, count=k)
        return S, cohort[:, None] * k + np.arange(k)[None, :], mech.bloom_matrix(items), math.log(mech.cohorts)
    buckets, bits = mech.check_reports(reports)
    T = (np.arange(mech.domain_size)[:, None] == np.asarray(items, np.int64)[None, :]).astype(float)
    return bits, buckets, T, math.log(math.comb(mech.domain_size, mech.d))


def _scatter(weights: np.ndarray, positions: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Σ_b weights[r, b]·T[positions[r, b], x] for every row r and candidate x (sparse product)."""
    n, B = weights.shape
    rows = np.repeat(np.arange(n), B)
    M = sparse.csr_matrix((weights.ravel(), (rows, positions.ravel())), shape=(n, T.shape[0]))
    return np.asarray(M @ T)


def report_log_likelihoods(mech, reports, items) -> np.ndarray:
    """log P[report r | x], exact, for every report and candidate (n_reports × n_candidates).

    Parameters
    ----------
    mech : RAPPOR or DBitFlip
    reports
        Decoded reports of ``mech``.
    items : sequence
        Candidates: tokens (RAPPOR) or bucket ids (dBitFlip).

    Returns
    -------
    numpy.ndarray of float, shape (n_reports, n_candidates)
    """
    S, P, T, log_layouts = layout(mech, reports, items)
    h1, h0 = _one_report(mech)
    base = np.where(S == 1, math.log(h0), math.log1p(-h0)).sum(axis=1)
    gap = np.where(S == 1, math.log(h1 / h0), math.log((1 - h1) / (1 - h0)))
    return base[:, None] + _scatter(gap, P, T) - log_layouts


def device_log_likelihoods(mech, reports, items, device: np.ndarray, n_devices: int, rho: float = 1.0,
                           pi=None) -> np.ndarray:
    """log P[all reports of a memoized device | its favourite x] (n_devices × n_candidates; module
    docstring): the permanent response shared across the device's reports of x, the instantaneous
    response fresh; exact for ρ = 1, a per-position mixture with the background π otherwise.

    Parameters
    ----------
    mech : RAPPOR or DBitFlip
    reports
        Decoded reports; a device's reports must share its layout (memoized: cohort / buckets).
    items : sequence
        Candidates.
    device : array_like of int, shape (n_reports,)
        Device index 0..n_devices−1 of each report.
    n_devices : int
    rho : float
        Share of a device's reports that carry its favourite, in (0, 1].
    pi : array_like, optional
        Workload frequencies of the candidates (required when ρ < 1).

    Returns
    -------
    numpy.ndarray of float, shape (n_devices, n_candidates)
    """
    S, P, T, log_layouts = layout(mech, reports, items)
    device = np.asarray(device, np.int64)
    first = np.full(n_devices, -1, np.int64)
    ids, at = np.unique(device, return_index=True)
    first[ids] = at                                                # each device's first report
    if np.any(P != P[first[device]]):
        raise ValueError("device_log_likelihoods: a device's reports must share one layout (memoized reports).")
    N = np.bincount(device, minlength=n_devices).astype(float)[:, None]
    n1 = np.zeros((n_devices, S.shape[1]))
    np.add.at(n1, device, S)
    seen = first >= 0
    Pd = np.where(seen[:, None], P[np.maximum(first, 0)], 0)
    u1, u0, v1, v0 = stages(mech)
    v = np.array([v0, v1])                                         # P(S = 1 | B′ = β)
    if rho < 1:
        h1, h0 = _one_report(mech)
        bg = h0 + (h1 - h0) * (T @ (np.asarray(pi, float) / np.sum(pi)))[Pd]   # (devices, B)
        mix = rho * v[None, None, :] + (1 - rho) * bg[..., None]
    else:
        mix = np.broadcast_to(v, (*n1.shape, 2))
    # log P(the position's N bits | B′ = β), with 0·log 0 = 0 (xlogy): (devices, B, β)
    per_beta = xlogy(n1[..., None], mix) + xlog1py((N - n1)[..., None], -mix)
    with np.errstate(divide="ignore"):
        ell = [logsumexp(per_beta + np.log(np.array([1 - u, u]))[None, None, :], axis=2) for u in (u0, u1)]
    out = ell[0].sum(axis=1)[:, None] + _scatter(ell[1] - ell[0], Pd, T) - log_layouts
    return np.where(seen[:, None], out, 0.0)
