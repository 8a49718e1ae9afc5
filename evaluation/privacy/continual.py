"""Privacy of a continual counter per person over the whole run — docs/math.md §12.4.

One release of a factorisation counter (:mod:`ldpsim.mechanisms.continual`) over T days is ONE
Gaussian (or Laplace) mechanism applied to R·x, whose sensitivity to one person is computed from R
for the stated neighbouring relation. So the run's guarantee is that mechanism's: ρ = Δ₂²/(2σ²)
zCDP, and (ε, δ)-DP from ``dp-accounting``'s exact privacy-loss distribution of the Gaussian
mechanism (pessimistic discretization: an upper bound within one grid step); Laplace noise of
scale b gives (Δ₁/b, 0)-DP. The guarantee is central (a trusted aggregator or secure sum adds the
noise), per person, per item stream, over all T days together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import check_real
from ldpsim.mechanisms.continual import Factorization, Sensitivity
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime.errors import InputError


@dataclass(frozen=True)
class ContinualGuarantee:
    """The guarantee of one continual release per person over its T days (docs/math.md §12.4).

    Parameters
    ----------
    counter : str
        The counter's name.
    days : int
        T, the days the guarantee covers (all released together).
    noise : str
        "gaussian" or "laplace".
    sensitivity : Sensitivity
        Δ₂ (Gaussian) or Δ₁ (Laplace) with its neighbouring relation and exactness.
    rho : float or None
        ρ-zCDP (Gaussian only).
    epsilon, delta : float
        (ε, δ)-DP, central, per person over the run (δ = 0 for Laplace).

    Examples
    --------
    >>> from ldpsim.mechanisms.continual import binary_tree
    >>> g = continual_guarantee(binary_tree(90), "laplace", 7.0)
    >>> g.epsilon, g.delta
    (1.0, 0.0)
    """

    counter: str
    days: int
    noise: str
    sensitivity: Sensitivity
    rho: float | None
    epsilon: float
    delta: float


def gaussian_epsilon(sensitivity: float, sigma: float, delta: float, discretization: float | None = None) -> float:
    """ε at δ of the Gaussian mechanism N(0, σ²) with L2 sensitivity Δ (``dp-accounting`` PLD; §12.4).

    Parameters
    ----------
    sensitivity : float
        Δ₂ > 0.
    sigma : float
        σ > 0.
    delta : float in (0, 1)
    discretization : float, optional
        Privacy-loss grid step (pessimistic: the ε returned is an upper bound within a few steps);
        default 10⁻⁴·max(1, Δ/σ), so the grid's size, and the time, stay bounded as Δ/σ grows.

    Returns
    -------
    float
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    sensitivity = check_real("gaussian_epsilon", "sensitivity", sensitivity, 0.0)
    sigma = check_real("gaussian_epsilon", "sigma", sigma, 0.0)
    delta = check_real("gaussian_epsilon", "delta", delta, 0.0, 1.0)
    if discretization is None:
        discretization = 1e-4 * max(1.0, sensitivity / sigma)
    pld = pld_lib.from_gaussian_mechanism(sigma, sensitivity=sensitivity,
                                          value_discretization_interval=discretization)
    return float(pld.get_epsilon_for_delta(delta))


def continual_guarantee(counter: Factorization, noise: str, scale: float, per_day: float = 1.0, days: int = 1,
                        delta: float = DELTA_RELEASE) -> ContinualGuarantee:
    """The per-person guarantee of ``counter`` released with ``noise`` of ``scale`` (docs/math.md §12.4).

    Parameters
    ----------
    counter : Factorization
        The continual counter (T days).
    noise : {"gaussian", "laplace"}
    scale : float
        σ (Gaussian) or b (Laplace), > 0.
    per_day, days : float, int
        The contribution bound: at most ``per_day`` on each of at most ``days`` days of one item.
    delta : float
        δ of the (ε, δ) statement (Gaussian; ignored for Laplace, which is pure).

    Returns
    -------
    ContinualGuarantee
    """
    scale = check_real("continual_guarantee", "scale", scale, 0.0)
    if noise == "gaussian":
        sens = counter.l2_sensitivity(per_day, days)
        rho = sens.value ** 2 / (2 * scale ** 2)
        with np.errstate(over="ignore"):
            eps = gaussian_epsilon(sens.value, scale, delta)
        return ContinualGuarantee(counter.name, counter.days, noise, sens, rho, eps, delta)
    if noise == "laplace":
        sens = counter.l1_sensitivity(per_day, days)
        return ContinualGuarantee(counter.name, counter.days, noise, sens, None, sens.value / scale, 0.0)
    raise InputError(f"The 'noise' parameter of continual_guarantee must be 'gaussian' or 'laplace'. "
                     f"Got {noise!r} instead.")


def sigma_for_rho(counter: Factorization, rho: float, per_day: float = 1.0, days: int = 1) -> float:
    """σ = Δ₂/√(2ρ): the Gaussian scale that makes the whole release ρ-zCDP per person (§12.4).

    >>> from ldpsim.mechanisms.continual import fresh_daily
    >>> round(sigma_for_rho(fresh_daily(90), rho=0.5, days=90) ** 2, 9)
    90.0
    """
    rho = check_real("sigma_for_rho", "rho", rho, 0.0)
    return float(counter.l2_sensitivity(per_day, days).value / np.sqrt(2 * rho))
