"""Clopper–Pearson bounds and the empirical lower bound on ε — docs/math.md §7.5.

Arcolezi, Gambs, "Revealing the True Cost of Local Privacy: An Auditing Perspective", PETS 2024:
for neighbouring inputs x, x′ and an output event S, run N trials per input and count the reports
in S. With one-sided Clopper–Pearson bounds at level α/2 each, with probability ≥ 1 − α
P[S|x] ≥ p_lo and P[S|x′] ≤ p_hi, so an ε-LDP client (P[S|x] ≤ e^ε P[S|x′]) satisfies
ε ≥ ε_lb = ln(p_lo / p_hi). A lower bound above the claimed ε refutes the claim at confidence 1 − α.

>>> round(epsilon_lower_bound(2689, 10_000, 1000, 10_000, 0.05), 3)
0.898
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.mechanisms._validation import check_int, check_real


def clopper_pearson(k, n, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided exact binomial bounds (lower, upper), each holding with probability ≥ 1 − ``alpha``.

    lower = Beta⁻¹(α; k, n − k + 1) (0 when k = 0); upper = Beta⁻¹(1 − α; k + 1, n − k) (1 when k = n).
    """
    from scipy import stats

    k, n = np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)
        hi = np.where(k < n, stats.beta.isf(alpha, k + 1, np.maximum(n - k, 1)), 1.0)
    return lo, hi


def epsilon_lower_bound(k_x, n_x, k_xp, n_xp, alpha: float, delta: float = 0.0):
    """ε_lb = ln((p_lo(S|x) − δ) / p_hi(S|x′)) at confidence 1 − ``alpha`` (−inf when p_lo ≤ δ, e.g. S never
    seen under x). With ``delta`` = δ > 0 it bounds the ε of an (ε, δ)-DP claim: P[S|x] ≤ e^ε P[S|x′] + δ
    (docs/math.md §11.5)."""
    alpha = check_real("epsilon_lower_bound", "alpha", alpha, 0.0, 1.0)
    delta = check_real("epsilon_lower_bound", "delta", delta, 0.0, 1.0, low_open=False)
    lo, _ = clopper_pearson(k_x, n_x, alpha / 2)
    _, hi = clopper_pearson(k_xp, n_xp, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.maximum(lo - delta, 0.0)) - np.log(hi)
    return float(out) if np.ndim(out) == 0 else out


def largest_lower_bound(n_x, n_xp, alpha: float, delta: float = 0.0) -> float:
    """The largest ε_lb that ``n_x`` and ``n_xp`` trials can give at level ``alpha``: every trial of x in S,
    none of x′ (docs/math.md §11.3). An audit whose claim is at or above it can never FAIL: it has no power.

    >>> round(largest_lower_bound(10, 10, 0.05), 3), round(largest_lower_bound(10**6, 10**6, 0.05), 2)
    (0.807, 12.51)
    """
    if min(n_x, n_xp) < 1:
        return -math.inf
    return float(epsilon_lower_bound(n_x, n_x, 0, n_xp, alpha, delta))


def trials_for_power(epsilon_claimed: float, alpha: float = 0.05) -> int:
    """The fewest trials per input whose :func:`largest_lower_bound` exceeds ``epsilon_claimed``:
    a^{1/N} / (1 − a^{1/N}) > e^ε with a = α/2, i.e. N > ln a / ln(e^ε/(1 + e^ε)) (docs/math.md §11.3)."""
    a = alpha / 2
    return math.floor(math.log(a) / -math.log1p(math.exp(-epsilon_claimed))) + 1


def trials_to_detect(p_x: float, p_xp: float, epsilon_claimed: float, alpha: float = 0.05,
                     max_trials: int = 10**13) -> int:
    """Trials per input after which the *expected* counts give ε_lb > ``epsilon_claimed``.

    Plugging the expected counts k = N·p into the bound gives the median detection point (the counts
    are binomial; about half the audits of that size detect). Bisection on N over powers up to
    ``max_trials``; returns ``max_trials`` + 1 when even that does not detect (e.g. ln(p_x/p_xp) ≤ claim;
    p_xp = 0 is an unbounded ratio).
    """
    check_int("trials_to_detect", "max_trials", max_trials, low=1)
    if p_x <= 0 or (p_xp > 0 and math.log(p_x / p_xp) <= epsilon_claimed):
        return max_trials + 1

    return fewest_trials(lambda n: epsilon_lower_bound(round(n * p_x), n, round(n * p_xp), n, alpha) > epsilon_claimed,
                         max_trials)


def fewest_trials(enough, max_trials: int) -> int:
    """The fewest trials N (to 1 %) for which ``enough(N)`` holds, ``enough`` rising in N: doubling from
    16, then bisection; ``max_trials`` + 1 when even that many do not suffice."""
    hi = 16
    while not enough(hi):
        if hi > max_trials:
            return max_trials + 1
        hi *= 2
    lo = hi // 2
    while hi - lo > max(1, lo // 100):  # 1 % resolution
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi
