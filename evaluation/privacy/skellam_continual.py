"""Privacy per person over the run of a continual counter with Skellam noise in the secure sum — docs/math.md §12.10.

A counter A = L·R whose encoder R is a non-negative *integer* matrix releases R·x + z through a secure
sum, z_i i.i.d. Skellam(μ) (each device adds Skellam(μ/n) to each coordinate of its R·u). A person
whose use of the item may differ on every day moves coordinate i by (R·u)_i ∈ {0, …, Δ_i}, Δ = R·1.
The release is m independent Skellam mechanisms, coordinate i shifted by (R·u)_i; the Skellam law is
log-concave, so each coordinate's hockey-stick curve grows with its shift and u = 1 is the worst
person (§12.10). Its privacy-loss distribution is the composition, over the coordinates a person
touches, of one Skellam PLD per coordinate at shift Δ_i: dp-accounting's PLD of the exact pmf
(:func:`~ldpsim.evaluation.privacy.trust_accounting.noise_pld`, the truncated tail of every
coordinate's table added to δ), coordinates of equal shift self-composed.
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.evaluation.privacy.trust_accounting import EPS_CAP, noise_pld
from ldpsim.mechanisms._validation import check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.runtime.errors import InputError

#: privacy-loss grid step of one coordinate's PLD (pessimistic: ε is overstated by at most m·step)
SKELLAM_GRID = 1e-3


def integer_shifts(encoder) -> np.ndarray:
    """Δ = R·1, each coordinate's largest shift by one person, as int64 (raises unless R is a non-negative integer matrix)."""
    r = np.asarray(encoder, dtype=float)
    if r.ndim != 2 or r.min() < 0 or not np.array_equal(r, np.round(r)):
        raise InputError("skellam_counter_epsilon: the encoder 'R' must be a non-negative integer matrix "
                         "(secure aggregation sums integers).")
    return np.round(r.sum(axis=1)).astype(np.int64)


def skellam_counter_epsilon(encoder, mu: float, delta: float, discretization: float = SKELLAM_GRID) -> float:
    """Central ε at ``delta`` of R·x + Skellam(μ)^m per person over the run, any daily use (docs/math.md §12.10).

    Parameters
    ----------
    encoder : array_like, shape (m, T)
        R, non-negative integers.
    mu : float
        μ of each coordinate's total noise Skellam(μ) (variance 2μ).
    delta : float in (0, 1)
    discretization : float
        dp-accounting's loss grid (pessimistic rounding: the ε returned is within m·``discretization``
        above the exact one).

    Returns
    -------
    float
        ∞ above the accountant's cap.
    """
    mu = check_real("skellam_counter_epsilon", "mu", mu, 0.0)
    delta = check_real("skellam_counter_epsilon", "delta", delta, 0.0, 1.0)
    shifts, counts = np.unique(integer_shifts(encoder), return_counts=True)
    noise = IntegerNoise("skellam", mu)
    pld, left = None, 0.0
    for d, c in zip(shifts.tolist(), counts.tolist()):
        if d == 0:
            continue
        one, out = noise_pld(noise, discretization, shift=d)
        part = one.self_compose(c) if c > 1 else one
        pld = part if pld is None else pld.compose(part)
        left += c * out
    if pld is None:
        return 0.0
    if delta - left <= 0:
        raise InputError(f"skellam_counter_epsilon: 'delta' = {delta:g} is below the truncation mass of the noise tables.")
    with np.errstate(over="ignore"):      # dp-accounting's tail bound overflows harmlessly for large losses
        eps = float(pld.get_epsilon_for_delta(delta - left))
    return math.inf if eps > EPS_CAP else eps
