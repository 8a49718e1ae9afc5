"""(ε, δ) of releasing sampled counts above a threshold — docs/math.md §10.2.

One round of TrieHH / TrieHH++ (:mod:`.triehh`, :mod:`.sample_threshold`): every device takes part
independently with probability γ (Poisson sampling); the server learns, for each prefix, whether its
number of votes V reached θ (TrieHH: the *set* of prefixes) or V itself when V ≥ θ (TrieHH++: the
*counts*, Cormode & Bharadwaj's sample-and-threshold). Neighbouring fleets differ by one device
(add/remove), which votes for one prefix per round; the c other devices voting for that prefix give
V ~ Bin(c, γ) without it and V' = V + Bern(γ) with it. The exact hockey-stick divergence of the two
laws of the round's output, maximised over c ≥ 0 and both directions, is the round's δ(ε)
(:func:`round_delta`); it is attained: the pair of fleets with the worst c has exactly that δ.
Over R rounds a device votes at most once per round: basic composition gives (R·ε, R·δ)
(:func:`composed`).

Beside the exact δ, :func:`paper_parameters` gives the closed form of Zhu et al. (AISTATS 2020,
Corollary 1, as their released simulation applies it; docs/math.md §10.1): the smallest θ with
δ = (θ − 2)/((θ − 3)·θ!) at most the target, and the sampling rate γ = (e^{ε/L} − 1)/(θ·e^{ε/L}).

>>> d = round_delta(1.0, gamma=0.1, theta=10)
>>> 0 < d < 1e-6
True
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ldpsim.mechanisms._validation import check_int, check_real


def _sf(a, c, gamma):
    """P[Bin(c, γ) ≥ a] (1 for a ≤ 0)."""
    return stats.binom.sf(np.asarray(a) - 1, c, gamma)


def _cdf(a, c, gamma):
    """P[Bin(c, γ) ≤ a] (0 for a < 0): lower tails straight from the cdf, never as 1 − sf, so a
    tiny tail keeps its digits."""
    return stats.binom.cdf(np.asarray(a), c, gamma)


def holders_searched(gamma: float, theta: int) -> np.ndarray:
    """The holders c = 0..c_max searched, c_max = ⌈(θ + 40√θ + 40)/γ⌉: beyond it P[Bin(c, γ) ≤ θ]
    (the mass every divergence needs) is below 10⁻¹⁰⁰, far under any δ of interest."""
    c_max = int(math.ceil((theta + 40 * math.sqrt(theta) + 40) / gamma))
    return np.arange(0, c_max + 1, dtype=np.int64)


def divergences(epsilon: float, gamma: float, theta: int, counts: bool, holders) -> tuple[np.ndarray, np.ndarray]:
    """(δ_add(c), δ_remove(c)): the hockey-stick divergences D_{e^ε}(P'‖P) and D_{e^ε}(P‖P') of one
    round's output for a prefix with c other voters, P without and P' with the device (§10.2).

    ``counts`` False: the output is [V ≥ θ]; True: V when V ≥ θ, else ⊥.
    """
    c = np.asarray(holders, dtype=np.int64)
    e = math.exp(epsilon)
    s_theta = _sf(theta, c, gamma)                            # P[V ≥ θ]
    low = _cdf(theta - 1, c, gamma)                           # P[V < θ] = P(⊥)
    edge = gamma * stats.binom.pmf(theta - 1, c, gamma)       # P[V' ≥ θ] − P[V ≥ θ] = P(⊥) − P'(⊥)
    bottom = low - e * (low - edge)
    if not counts:
        return np.maximum(0.0, edge - (e - 1) * s_theta), np.maximum(0.0, bottom)
    # released v ≥ θ: P'(v)/P(v) = (1−γ)(c+1)/(c+1−v), increasing in v (∞ at v = c + 1); it exceeds e^ε
    # from v = c + 2 − ⌈t⌉, t = (1−γ)(c+1)/e^ε (never above c + 1), computed without forming 1 − t/(c+1),
    # which rounds to 1 at large ε and would lose the v = c + 1 outcome
    t = np.ceil((1 - gamma) * (c + 1) / e)
    a = np.maximum(theta, c + 2 - np.maximum(t, 1).astype(np.int64))
    add = np.maximum(0.0, gamma * _sf(a - 1, c, gamma) + (1 - gamma - e) * _sf(a, c, gamma))
    # P(v)/P'(v) > e^ε for θ ≤ v ≤ hi, hi the largest v < (c + 1)(1 − (1 − γ)e^ε)
    hi = np.maximum(np.ceil((c + 1) * (1 - (1 - gamma) * e)) - 1, theta - 1).astype(np.int64)
    mass = _cdf(hi, c, gamma) - low                           # P[θ ≤ V ≤ hi], a lower tail
    body = mass - e * (gamma * (_cdf(hi - 1, c, gamma) - _cdf(theta - 2, c, gamma)) + (1 - gamma) * mass)
    remove = np.maximum(0.0, body) * (hi >= theta) + np.maximum(0.0, bottom)
    return add, remove


def round_delta(epsilon: float, gamma: float, theta: int, counts: bool = False) -> float:
    """δ(ε) of one round: the largest divergence over holders c and both directions (module docstring).

    Parameters
    ----------
    epsilon : float in [0, inf)
    gamma : float in (0, 1]
        Each device's chance of taking part in the round.
    theta : int ≥ 1
        The vote threshold.
    counts : bool
        Whether released counts are published (TrieHH++), or only which prefixes passed (TrieHH).

    Returns
    -------
    float
        δ such that the round is (ε, δ)-DP for add/remove neighbours, and no smaller δ is.
    """
    epsilon = check_real("round_delta", "epsilon", epsilon, 0.0, math.inf, low_open=False)
    gamma = check_real("round_delta", "gamma", gamma, 0.0, 1.0, high_open=False)
    theta = check_int("round_delta", "theta", theta, low=1)
    add, remove = divergences(epsilon, gamma, theta, counts, holders_searched(gamma, theta))
    return float(max(add.max(), remove.max()))


def worst_holders(epsilon: float, gamma: float, theta: int, counts: bool = False) -> int:
    """The number c of other voters at which :func:`round_delta` is attained."""
    add, remove = divergences(epsilon, gamma, theta, counts, holders_searched(gamma, theta))
    return int(np.argmax(np.maximum(add, remove)))


def composed(epsilon_round: float, delta_round: float, rounds: int) -> tuple[float, float]:
    """Basic composition of ``rounds`` (ε, δ) rounds: (R·ε, R·δ) (Dwork & Roth, Thm 3.16)."""
    rounds = check_int("composed", "rounds", rounds, low=0)
    return rounds * epsilon_round, min(1.0, rounds * delta_round)


def run_privacy(epsilon_device: float, gamma: float, theta: int, rounds: int,
                counts: bool = False) -> dict[str, float]:
    """Per device over ``rounds`` rounds at total ε = ``epsilon_device`` (ε/R per round), basic
    composition: ``{"epsilon", "delta", "epsilon_round", "delta_round", "rounds"}``."""
    epsilon_device = check_real("run_privacy", "epsilon_device", epsilon_device, 0.0, math.inf)
    rounds = check_int("run_privacy", "rounds", rounds, low=1)
    eps_r = epsilon_device / rounds
    d_r = round_delta(eps_r, gamma, theta, counts)
    eps, delta = composed(eps_r, d_r, rounds)
    return {"epsilon": eps, "delta": delta, "epsilon_round": eps_r, "delta_round": d_r, "rounds": rounds}


def paper_delta(theta: int) -> float:
    """δ = (θ − 2)/((θ − 3)·θ!) of Zhu et al.'s Corollary 1 for an L-round run with threshold θ ≥ 4
    at the sampling rate of :func:`paper_parameters` (docs/math.md §10.1): a bound, not attained."""
    theta = check_int("paper_delta", "theta", theta, low=4)
    return math.exp(math.log((theta - 2) / (theta - 3)) - math.lgamma(theta + 1))  # θ! by log-gamma: θ may be huge


def paper_parameters(epsilon_device: float, delta_total: float, rounds: int) -> dict[str, float]:
    """TrieHH's (θ, γ) for a target (ε, δ) over ``rounds`` rounds by the paper's closed form
    (docs/math.md §10.1): θ the smallest integer ≥ 4 with :func:`paper_delta` ≤ δ and θ ≥ e^{ε/L} − 1
    (the corollary's condition, i.e. γ ≤ 1/(θ + 1)), γ = (e^{ε/L} − 1)/(θ·e^{ε/L}).

    Returns ``{"theta", "gamma", "delta"}``, ``delta`` the closed form's δ at that θ (≤ the target).

    >>> p = paper_parameters(4.0, 2.3e-12, 10)
    >>> p["theta"], round(p["gamma"], 5)
    (15, 0.02198)
    """
    epsilon_device = check_real("paper_parameters", "epsilon_device", epsilon_device, 0.0, math.inf)
    delta_total = check_real("paper_parameters", "delta_total", delta_total, 0.0, 1.0)
    rounds = check_int("paper_parameters", "rounds", rounds, low=1)
    growth = math.expm1(epsilon_device / rounds)               # e^{ε/L} − 1
    theta = max(4, math.ceil(growth))
    while paper_delta(theta) > delta_total:
        theta += 1
    return {"theta": theta, "gamma": growth / (theta * (growth + 1)), "delta": paper_delta(theta)}
