"""Sample-and-threshold rounds composed through their exact privacy-loss distribution — docs/math.md §10.9.

One round of TrieHH / TrieHH++ (:mod:`ldpsim.mechanisms.discovery.threshold_privacy`, §10.2) releases,
about the prefix a device votes for, a function of V ~ Bin(c, γ) without the device and V + Bern(γ)
with it, c the other voters. Basic composition charges R rounds R·ε and R·δ(ε); this module composes
the rounds' whole privacy-loss distributions instead:

* :func:`round_profile`: the round's hockey-stick curves δ(ε) in both directions (add: D(P′‖P),
  remove: D(P‖P′)) on a grid of ε (negative ones too), the largest over c = 0..c₀ − 1 of the two output
  laws written out in full, and of the *raw* pair (Bin(c₀ + 1, γ), Bin(c₀, γ)), which dominates every
  c ≥ c₀ (the release at c is the raw pair at c₀ post-processed: add an independent Bin(c − c₀, γ),
  then threshold); c₀ is where P[Bin(c₀, γ) < θ] falls below τ = 10⁻³⁰. Outputs with less than τ
  mass under both laws are left out and 2τ added to every δ (pessimistic).
* :func:`round_pld` (:func:`family_pld` of the round's laws): a privacy-loss distribution dominating
  every c at once — the pessimistic connect-the-dots distribution (Doroshenko, Ghazi, Kamath, Kumar,
  Manurangsi, PETS 2022) of that envelope, which is convex in e^ε (a maximum of convex curves), hence
  the curve of one pair of distributions; ``dp_accounting`` builds it and composes it.
* :func:`composed_delta`, :func:`composed_epsilon`: R rounds (the device may vote in each, for any
  prefix, adaptively), at a total ε or δ. Valid for any number of other voters in any round.
* :func:`tight_threshold`: the smallest θ whose R rounds are (ε, δ)-DP by this composition;
  :func:`threshold_run` gives it for a protocol beside the basic composition's θ.

>>> f"{composed_delta(4.0, gamma=0.05, theta=9, rounds=112):.2g}"   # basic composition needs θ = 136
'2.2e-10'
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats

from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.discovery.threshold_privacy import holders_searched

#: mass under which an output is left out of a round's laws (and added to every δ instead)
TAIL = 1e-30
#: default privacy-loss grid step and half-width of the grid of ε (losses beyond go to infinity)
DISCRETIZATION = 1e-2
LOSS_RANGE = 12.0


def _dominating_holders(gamma: float, theta: int) -> int:
    """c₀: the fewest other voters with P[Bin(c₀, γ) < θ] below 10⁻¹⁵ (from there on the threshold
    hardly bites; any c₀ is valid, this one keeps the raw pair from loosening the envelope)."""
    c = holders_searched(gamma, theta)
    below = stats.binom.cdf(theta - 1, c, gamma) < 1e-15
    return int(c[np.argmax(below)]) if below.any() else int(c[-1])


def _window(c, gamma: float, low):
    """Per row, the released values [lo, hi] outside of which Bin(c, γ) and Bin(c + 1, γ) each have less
    than TAIL: Bernstein's bounds P[V ≥ μ + t] ≤ exp(−t²/(2(μ + t/3))), P[V ≤ μ − t] ≤ exp(−t²/(2μ))."""
    mu, log_tail = (np.asarray(c) + 1) * gamma, math.log(1 / TAIL)
    up = log_tail / 3 + np.sqrt((log_tail / 3) ** 2 + 2 * mu * log_tail)
    lo = np.maximum(low, np.floor(np.asarray(c) * gamma - np.sqrt(2 * mu * log_tail)).astype(np.int64))
    hi = np.minimum(np.asarray(c) + 1, np.ceil(mu + up).astype(np.int64))
    return lo, np.maximum(hi, lo)


def _laws(gamma: float, theta: int, counts: bool) -> tuple[np.ndarray, np.ndarray]:
    """(P, P′): rows c = 0..c₀ − 1 of the round's output laws without / with the device (⊥ first, then the
    released counts in a window of non-negligible mass; a set release has ⊥ and "released"), and a last
    row for the raw pair at c₀ (no threshold), which dominates every c ≥ c₀ (module docstring)."""
    c0 = _dominating_holders(gamma, theta)
    c = np.arange(c0, dtype=np.int64)
    rows = []
    for m in (c, c + 1):
        bottom = stats.binom.cdf(theta - 1, m, gamma)
        if counts:
            lo, hi = _window(c, gamma, theta)
            v = lo[:, None] + np.arange(int((hi - lo).max(initial=0)) + 1)[None, :]
            rows.append(np.column_stack([bottom, np.where(v <= hi[:, None], stats.binom.pmf(v, m[:, None], gamma), 0.0)]))
        else:
            rows.append(np.column_stack([bottom, stats.binom.sf(theta - 1, m, gamma)]))
    lo, hi = _window(np.array([c0]), gamma, 0)
    v = np.arange(lo[0], hi[0] + 1)
    raw = [stats.binom.pmf(v, c0, gamma), stats.binom.pmf(v, c0 + 1, gamma)]
    width = max(rows[0].shape[1], v.size)
    return tuple(np.vstack([np.pad(r, ((0, 0), (0, width - r.shape[1]))), np.pad(w, (0, width - w.size))[None, :]])
                 for r, w in zip(rows, raw))


def _hockey_stick(upper: np.ndarray, lower: np.ndarray, epsilons: np.ndarray) -> np.ndarray:
    """max over rows of Σ_o (upper_o − e^ε lower_o)₊ at every ε of ``epsilons`` (rows: pairs of laws).

    An output counts at ε when its privacy loss ln(upper/lower) exceeds ε: each output's masses are put
    in the bin of the grid points below its loss, and the sums over the outputs above each ε are
    cumulative sums over the bins from the top (largest losses, smallest masses, first).
    """
    order = np.argsort(epsilons)
    grid = np.asarray(epsilons, dtype=float)[order]
    n_rows, size = upper.shape[0], grid.size + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.nan_to_num(np.log(upper) - np.log(lower), nan=-np.inf)   # both 0: never counts
    # bin size − 1 − (grid points below the loss): the largest losses first; laid out bins × rows
    bins = (size - 1 - np.searchsorted(grid, loss, side="left")) * n_rows + np.arange(n_rows)[:, None]

    def above(mass):   # Σ over outputs whose loss exceeds each grid point (grid × rows)
        h = np.bincount(bins.ravel(), weights=mass.ravel(), minlength=n_rows * size).reshape(size, n_rows)
        return np.cumsum(h, axis=0)[size - 2::-1]
    delta = np.maximum(0.0, above(upper) - np.exp(grid)[:, None] * above(lower)).max(axis=1)
    out = np.empty_like(delta)
    out[order] = delta
    return np.minimum(1.0, out + 2 * TAIL)


def round_profile(gamma: float, theta: int, counts: bool, epsilons) -> tuple[np.ndarray, np.ndarray]:
    """(δ_add(ε), δ_remove(ε)) of one round at each ε of ``epsilons`` (any sign), the largest over the
    number of other voters (module docstring; docs/math.md §10.9)."""
    gamma = check_real("round_profile", "gamma", gamma, 0.0, 1.0, high_open=False)
    theta = check_int("round_profile", "theta", theta, low=1)
    eps = np.asarray(epsilons, dtype=float)
    P, Pp = _laws(gamma, theta, bool(counts))
    return _hockey_stick(Pp, P, eps), _hockey_stick(P, Pp, eps)


def family_pld(P: np.ndarray, P_prime: np.ndarray, discretization: float = DISCRETIZATION,
               loss_range: float = LOSS_RANGE):
    """A pessimistic privacy-loss distribution dominating every pair of rows (P[i], P′[i]) at once: the
    connect-the-dots distribution of the largest hockey-stick curve of the rows, each direction
    (``dp_accounting`` ``PrivacyLossDistribution``; docs/math.md §10.9).

    Parameters
    ----------
    P, P_prime : array (pairs × outputs)
        Each row a law of one release without / with the device.
    discretization : float
        Step of the privacy-loss grid.
    loss_range : float
        The grid covers ε in [−loss_range, loss_range]; larger losses are put at +∞ (pessimistic).
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    discretization = check_real("family_pld", "discretization", discretization, 0.0, 1.0)
    n = int(math.ceil(loss_range / discretization))
    grid = np.arange(-n, n + 1) * discretization
    P, P_prime = np.atleast_2d(P), np.atleast_2d(P_prime)
    pmfs = [pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(discretization, -n, n,
                                                                  np.minimum.accumulate(_hockey_stick(u, w, grid)))
            for u, w in ((P, P_prime), (P_prime, P))]
    return PrivacyLossDistribution(*pmfs)


@functools.lru_cache(maxsize=64)
def round_pld(gamma: float, theta: int, counts: bool = False, discretization: float = DISCRETIZATION):
    """The pessimistic privacy-loss distribution of one sample-and-threshold round, dominating every
    number of other voters (:func:`family_pld` of the round's laws; module docstring)."""
    gamma = check_real("round_pld", "gamma", gamma, 0.0, 1.0, high_open=False)
    theta = check_int("round_pld", "theta", theta, low=1)
    return family_pld(*_laws(gamma, theta, bool(counts)), discretization)


def _composed(gamma, theta, rounds, counts, discretization):
    rounds = check_int("composed", "rounds", rounds, low=1)
    return _self_composed(float(gamma), int(theta), rounds, bool(counts), float(discretization))


@functools.lru_cache(maxsize=64)
def _self_composed(gamma: float, theta: int, rounds: int, counts: bool, discretization: float):
    pld = round_pld(gamma, theta, counts, discretization)
    return pld.self_compose(rounds) if rounds > 1 else pld


def composed_delta(epsilon_device: float, gamma: float, theta: int, rounds: int, counts: bool = False,
                   discretization: float = DISCRETIZATION) -> float:
    """δ at total ε = ``epsilon_device`` of ``rounds`` sample-and-threshold rounds, an upper bound
    (docs/math.md §10.9). ``dp_accounting`` sums in floating point: values below about 10⁻¹⁴ are
    rounding noise (shown as 0 when the sum falls below it)."""
    epsilon_device = check_real("composed_delta", "epsilon_device", epsilon_device, 0.0, math.inf, low_open=False)
    delta = _composed(gamma, theta, rounds, counts, discretization).get_delta_for_epsilon(epsilon_device)
    return float(min(1.0, max(0.0, delta)))


def composed_epsilon(delta: float, gamma: float, theta: int, rounds: int, counts: bool = False,
                     discretization: float = DISCRETIZATION) -> float:
    """ε at total δ = ``delta`` of ``rounds`` sample-and-threshold rounds (inf when δ is below the
    rounds' mass at infinite loss)."""
    delta = check_real("composed_epsilon", "delta", delta, 0.0, 1.0)
    return float(_composed(gamma, theta, rounds, counts, discretization).get_epsilon_for_delta(delta))


@functools.lru_cache(maxsize=64)
def tight_threshold(gamma: float, epsilon_device: float, delta: float, rounds: int, counts: bool = False) -> int:
    """The smallest θ whose ``rounds`` rounds are (ε_total, δ)-DP per device by :func:`composed_delta`.

    No θ with 1 − (1 − γ^θ)^R > δ can do: a device whose prefix has θ − 1 other voters is revealed
    whenever all θ are sampled (infinite loss, probability γ^θ a round), in every round. The search
    starts there and steps up by doubling, then bisects (the composed δ falls as θ grows).
    """
    gamma = check_real("tight_threshold", "gamma", gamma, 0.0, 1.0, high_open=False)
    delta = check_real("tight_threshold", "delta", delta, 0.0, 1.0)
    rounds = check_int("tight_threshold", "rounds", rounds, low=1)

    def ok(theta: int) -> bool:
        return composed_delta(epsilon_device, gamma, theta, rounds, counts) <= delta

    lo = 1   # every θ < lo fails
    while lo < 10_000 and -math.expm1(rounds * math.log1p(-gamma ** lo)) > delta:
        lo += 1
    hi, step = lo, 1
    while not ok(hi):
        lo, hi, step = hi + 1, hi + step, 2 * step
        if hi > 10_000:
            raise ValueError(f"tight_threshold: no threshold θ <= 10000 reaches δ = {delta:g} at ε = "
                             f"{epsilon_device:g} over {rounds} rounds with gamma = {gamma:g}.")
    while lo < hi:   # ok(hi); every θ < lo fails
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid + 1, hi)
    return hi


def threshold_run(protocol, epsilon_device: float, delta: float, rounds: int) -> dict:
    """The threshold of a run of ``rounds`` rounds of a sample-and-threshold protocol (``gamma``,
    ``counts_released``, ``threshold_for``) at (ε_total, δ) per device: ``theta``, the smallest by the
    composed privacy-loss distribution, ``theta_basic`` by basic composition (the protocol's own
    ``threshold_for``; None when no θ below 10 000 meets it), and at ``theta`` the composed ``delta`` at
    ε_total and ``epsilon_pld`` at δ."""
    try:
        basic = protocol.threshold_for(epsilon_device, delta, rounds)
    except ValueError:
        basic = None
    gamma, counts = float(protocol.gamma), bool(protocol.counts_released)
    theta = tight_threshold(gamma, float(epsilon_device), float(delta), int(rounds), counts)
    return {"theta": theta, "theta_basic": basic, "delta": composed_delta(epsilon_device, gamma, theta, rounds, counts),
            "epsilon_pld": composed_epsilon(delta, gamma, theta, rounds, counts)}
