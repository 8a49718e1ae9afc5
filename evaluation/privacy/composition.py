"""Composition of privacy guarantees: basic, advanced, exact for randomized response, and PLD — docs/math.md §8.3.

The closed forms the accountant (:mod:`ldpsim.evaluation.privacy.accountant`) is checked against,
and the privacy-loss-distribution (PLD) composition it uses:

* :func:`basic_composition` — T mechanisms that are ε_i-DP compose to (Σε_i)-DP (δ = 0).
* :func:`advanced_composition` — Dwork, Rothblum, Vadhan (FOCS 2010), Theorem III.3: T-fold ε-DP is
  (ε', δ')-DP with ε' = √(2T ln(1/δ'))·ε + T·ε·(e^ε − 1).
* :func:`rr_composition_delta` — the exact δ(ε_t) of T-fold k-ary randomized response (k-RR at ε) on
  its worst pair of inputs, a sum over the counts (a, b) of reports equal to either input:
  δ = Σ_{a,b} T!/(a! b! c!)·(k − 2)^c·(e^{aε} − e^{ε_t + bε})₊ / (e^ε + k − 1)^T, c = T − a − b.
  For k = 2 it is Kairouz–Oh–Viswanath's optimal composition of any T ε-DP mechanisms (ICML 2015),
  so it bounds every pure ε-LDP mechanism composed T times.
* :func:`compose` — composition of (ε_i, δ_i) guarantees with Google's ``dp-accounting`` PLDs
  (pessimistic discretization: an upper bound).

>>> basic_composition([1.0, 0.5, 0.5])
2.0
>>> round(advanced_composition(0.1, 100, 1e-6), 4)
6.3081
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

from ldpsim.mechanisms._validation import check_int, check_real


def basic_composition(epsilons) -> float:
    """Σε_i: the ε of the sequential composition of ε_i-DP mechanisms (δ = 0; docs/math.md §8.3).

    Parameters
    ----------
    epsilons : iterable of float
        The ε_i (non-negative).

    Returns
    -------
    float
    """
    eps = np.asarray(list(epsilons), dtype=float)
    if eps.size and (not np.all(np.isfinite(eps)) or eps.min() < 0):
        raise ValueError(f"The 'epsilons' parameter of basic_composition must be finite and non-negative. "
                         f"Got {eps.tolist()!r} instead.")
    return float(eps.sum())


def advanced_composition(epsilon: float, k: int, delta: float) -> float:
    """ε' of the k-fold composition of ε-DP mechanisms at δ' = ``delta`` (Dwork–Rothblum–Vadhan 2010).

    ε' = √(2k ln(1/δ'))·ε + k·ε·(e^ε − 1) (docs/math.md §8.3); never above basic composition k·ε.
    """
    epsilon = check_real("advanced_composition", "epsilon", epsilon, 0.0, math.inf)
    k = check_int("advanced_composition", "k", k, low=1)
    delta = check_real("advanced_composition", "delta", delta, 0.0, 1.0)
    drv = math.sqrt(2 * k * math.log(1 / delta)) * epsilon + k * epsilon * math.expm1(epsilon)
    return min(drv, k * epsilon)


def rr_composition_delta(epsilon: float, k: int, target: float, domain_size: int = 2) -> float:
    """Exact δ at ε = ``target`` of k reports of ``domain_size``-ary randomized response at ``epsilon``.

    The formula of the module docstring (docs/math.md §8.3), summed in log space over all (a, b).

    Parameters
    ----------
    epsilon : float
        ε of one report (k-RR keeps its value w.p. e^ε/(e^ε + D − 1)).
    k : int
        Number of reports composed (≥ 1).
    target : float
        The composed ε (≥ 0) at which δ is wanted.
    domain_size : int
        D ≥ 2; D = 2 is the worst case of any ε-DP mechanism (optimal composition).

    Returns
    -------
    float
        δ(target) in [0, 1].
    """
    epsilon = check_real("rr_composition_delta", "epsilon", epsilon, 0.0, math.inf)
    k = check_int("rr_composition_delta", "k", k, low=1)
    target = check_real("rr_composition_delta", "target", target, 0.0, math.inf, low_open=False)
    d = check_int("rr_composition_delta", "domain_size", domain_size, low=2)
    a = np.arange(k + 1)[:, None]
    b = np.arange(k + 1)[None, :]
    c = k - a - b
    ok = c >= 0
    c = np.where(ok, c, 0)
    log_z = k * math.log(math.exp(epsilon) + d - 1)
    log_mult = gammaln(k + 1) - gammaln(a + 1) - gammaln(b + 1) - gammaln(c + 1)
    log_mult = log_mult + (c * math.log(d - 2) if d > 2 else np.where(c > 0, -np.inf, 0.0))
    # (e^{aε} − e^{t + bε})₊ = e^{aε}·(1 − e^{t − (a − b)ε})₊
    gap = -np.expm1(np.minimum(target - (a - b) * epsilon, 0.0))
    with np.errstate(divide="ignore"):
        terms = np.exp(log_mult + a * epsilon - log_z) * gap
    return float(min(1.0, np.sum(np.where(ok, terms, 0.0))))


class Composed(NamedTuple):
    """An (ε, δ)-DP guarantee obtained by composition, and how it was obtained."""

    epsilon: float
    delta: float
    method: str


def compose(guarantees, delta: float, discretization: float = 1e-3) -> Composed:
    """ε at total ``delta`` of the sequential composition of (ε_i, δ_i) guarantees (docs/math.md §8.3).

    Uses ``dp_accounting``'s privacy-loss distributions (``from_privacy_parameters`` per guarantee,
    identical ones self-composed, then ``get_epsilon_for_delta``; pessimistic discretization, so an
    upper bound). ``delta`` must exceed Σδ_i. Falls back to basic composition Σε_i (with Σδ_i ≤
    ``delta``) when ``dp_accounting`` is not installed; ``method`` says which was used. Never above Σε_i.

    Parameters
    ----------
    guarantees : iterable of (float, float)
        The (ε_i, δ_i) of the mechanisms composed.
    delta : float in (0, 1)
        The δ of the composition.
    discretization : float
        The PLD's privacy-loss grid step (its error is at most one step per distinct guarantee).

    Returns
    -------
    Composed
    """
    pairs = [(float(e), float(d)) for e, d in guarantees]
    delta = check_real("compose", "delta", delta, 0.0, 1.0)
    if not pairs:
        return Composed(0.0, 0.0, "none")
    spent = sum(d for _, d in pairs)
    if spent >= delta:
        raise ValueError(f"The 'delta' parameter of compose must exceed the sum of the δ_i ({spent:g}). "
                         f"Got {delta!r} instead.")
    basic = sum(e for e, _ in pairs)
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld_lib
        from dp_accounting.pld.common import DifferentialPrivacyParameters
    except ImportError:
        return Composed(basic, spent, "basic composition (dp-accounting not installed)")
    counts: dict = {}
    for p in pairs:
        counts[p] = counts.get(p, 0) + 1
    total = None
    for (eps, d), k in counts.items():
        if eps == 0.0 and d == 0.0:
            continue
        pld = pld_lib.from_privacy_parameters(DifferentialPrivacyParameters(eps, d),
                                              value_discretization_interval=discretization)
        pld = pld.self_compose(k) if k > 1 else pld
        total = pld if total is None else total.compose(pld)
    if total is None:
        return Composed(0.0, 0.0, "none")
    eps = float(total.get_epsilon_for_delta(delta))
    return Composed(min(eps, basic), delta, "dp-accounting PLD")
