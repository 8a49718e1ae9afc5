"""Privacy computed by hand, independently of the library, for tests to check its accountants against."""

from __future__ import annotations

import math

from scipy import optimize, stats


def analytic_gaussian_epsilon(sigma: float, sensitivity: float, delta: float) -> float:
    """ε of N(0, σ²) noise at L2 sensitivity Δ and δ, from Balle & Wang's exact δ(ε) (docs/math.md §9.13)."""
    def excess(eps):
        a, b = sensitivity / (2 * sigma), eps * sigma / sensitivity
        return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b) - delta
    return optimize.brentq(excess, 1e-9, 60.0, xtol=1e-12)


def tee_epsilon_by_hand(tee, changes: int, delta: float) -> float:
    """ε of the enclave's release (a :class:`~ldpsim.mechanisms.aggregation.tee.TeeDesign`) over ``changes``
    unit changes of L∞ (one person replaced over C cells: 2·C): the threshold's δ_T = 1 − (1 − p₁)^changes,
    the Gaussian at L2 sensitivity √changes·L∞ and δ − δ_T."""
    p1 = stats.norm.sf((tee.threshold - tee.max_per_key) / tee.scale)
    delta_t = 1 - (1 - p1) ** changes
    return analytic_gaussian_epsilon(tee.scale, math.sqrt(changes) * tee.max_per_key, delta - delta_t)
