"""Privacy amplification by shuffling: the central (ε, δ) of n shuffled ε₀-LDP reports — docs/math.md §7.5.

Feldman, McMillan, Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal Analysis of Privacy
Amplification by Shuffling", FOCS 2021 (arXiv:2012.12803):

* :func:`closed_form_epsilon` — Theorem 3.1: for ε₀ ≤ ln(n / (16 ln(2/δ))),
  ε ≤ ln(1 + (e^ε₀ − 1)/(e^ε₀ + 1)·(8√(e^ε₀ ln(4/δ))/√n + 8e^ε₀/n)); outside that range the bound
  says nothing and ε₀ is returned (shuffling never hurts: post-processing).
* :func:`numerical_epsilon` — their tighter numerical bound (Theorem 3.2 and Appendix E): the
  shuffled output is a post-processing of the pair
  P = (A + Δ, C − A + 1 − Δ), Q = (A + 1 − Δ, C − A + Δ) with C ~ Bin(n − 1, e^−ε₀),
  A ~ Bin(C, ½), Δ ~ Bern(e^ε₀/(e^ε₀ + 1)), so the shuffle is (ε, δ)-DP whenever the hockey-stick
  divergence D_{e^ε}(P‖Q) ≤ δ (P and Q are mirror images, so one direction suffices).
  Given C = c the divergence is a difference of two Bin(c, ½) CDFs at one cutoff (derived in
  docs/math.md §7.5); the sum over c is vectorized and restricted to the central range of C, the
  neglected tail mass being added to δ, so the result stays an upper bound. ε comes from bisection.

Composing several shuffled batches (windows, days, use cases) is the accountant's:
:func:`ldpsim.evaluation.privacy.composition.compose` (docs/math.md §8.3).

>>> round(closed_form_epsilon(4.0, 100_000, 1e-6), 4)
0.5346
>>> 0.1675 < numerical_epsilon(4.0, 100_000, 1e-6) < 0.1728
True
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ldpsim.mechanisms._validation import check_int, check_real

#: mass of each binomial tail of C left out of the numerical sum (added back to δ, so δ stays an upper bound)
_C_TAIL = 1e-15


def _check(eps0, n, delta) -> tuple[float, int, float]:
    eps0 = check_real("shuffle amplification", "eps0", eps0, 0.0, math.inf)
    n = check_int("shuffle amplification", "n", n, low=1)
    delta = check_real("shuffle amplification", "delta", delta, 0.0, 1.0)
    return eps0, n, delta


def closed_form_epsilon(eps0: float, n: int, delta: float) -> float:
    """Central ε of n shuffled ε₀-LDP reports at δ: FMT21 Theorem 3.1 (docs/math.md §7.5).

    Parameters
    ----------
    eps0 : float in (0, inf)
        Local privacy of each report.
    n : int ≥ 1
        Number of reports shuffled together.
    delta : float in (0, 1)
        The central δ.

    Returns
    -------
    float
        The bound, or ``eps0`` itself where the theorem does not apply (ε₀ > ln(n/(16 ln(2/δ)))).
    """
    eps0, n, delta = _check(eps0, n, delta)
    if n < 2 or eps0 > math.log(n / (16 * math.log(2 / delta))):
        return eps0
    e0 = math.exp(eps0)
    inner = 8 * math.sqrt(e0 * math.log(4 / delta)) / math.sqrt(n) + 8 * e0 / n
    return min(eps0, math.log1p((e0 - 1) / (e0 + 1) * inner))  # FMT21 Thm 3.1


def shuffle_delta(eps: float, eps0: float, n: int) -> float:
    """Upper bound on δ(ε) = D_{e^ε}(P‖Q) for the FMT21 pair (Theorem 3.2), given ε, ε₀ and n.

    For C = c: P(i) = α·b(i) + (1−α)·b(i−1), Q(i) = α·b(i−1) + (1−α)·b(i), b = Bin(c, ½) pmf,
    α = e^ε₀/(e^ε₀+1). P(i) ≥ e^ε Q(i) exactly for i ≤ t = ⌊(c+1)/(1+κ)⌋ with
    κ = (e^ε α − (1−α))/(α − e^ε(1−α)), so the divergence given c is
    α F(t) + (1−α) F(t−1) − e^ε [α F(t−1) + (1−α) F(t)], F the Bin(c, ½) CDF (docs/math.md §7.5).
    """
    from scipy import special

    if eps >= eps0:
        return 0.0
    alpha = math.exp(eps0) / (math.exp(eps0) + 1)
    ee = math.exp(eps)
    kappa = (ee * alpha - (1 - alpha)) / (alpha - ee * (1 - alpha))
    c, mass, left_out = _clone_counts(eps0, n)
    t = np.floor((c + 1) / (1 + kappa))

    def cdf(k):  # the Bin(c, ½) CDF at k, 0 below the support and 1 above it
        return np.where(k < 0, 0.0, np.where(k >= c, 1.0, special.bdtr(np.clip(k, 0, c), c, 0.5)))

    f_t, f_t1 = cdf(t), cdf(t - 1)
    per_c = alpha * f_t + (1 - alpha) * f_t1 - ee * (alpha * f_t1 + (1 - alpha) * f_t)
    return float(np.dot(mass, np.clip(per_c, 0.0, 1.0))) + left_out


@lru_cache(maxsize=32)  # one (ε₀, n) serves a whole bisection; the arrays reach 25 000 entries at n = 10⁷
def _clone_counts(eps0: float, n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """C ~ Bin(n − 1, e^−ε₀) over its central range: the values c, their probabilities, and the mass of the
    two tails left out (each at most ``_C_TAIL``). The same for every ε of a bisection, so computed once."""
    from scipy import stats

    p_clone = math.exp(-eps0)
    lo = max(int(stats.binom.ppf(_C_TAIL, n - 1, p_clone)), 0)
    hi = min(int(stats.binom.isf(_C_TAIL, n - 1, p_clone)), n - 1)
    c = np.arange(lo, hi + 1)
    mass = stats.binom.pmf(c, n - 1, p_clone)
    c.flags.writeable = mass.flags.writeable = False
    return c, mass, max(0.0, 1.0 - float(mass.sum()))


def numerical_epsilon(eps0: float, n: int, delta: float, tol: float = 1e-6) -> float:
    """Central ε of n shuffled ε₀-LDP reports at δ: FMT21's numerical bound (Thm 3.2, App. E).

    Bisection on ε ∈ [0, min(ε₀, closed form)] for the smallest ε with :func:`shuffle_delta` ≤ δ;
    the returned value is the upper end of the final bracket (width ≤ ``tol``), so an upper bound.
    """
    eps0, n, delta = _check(eps0, n, delta)
    check_real("numerical_epsilon", "tol", tol, 0.0, 1.0)
    if n < 2:
        return eps0
    low, high = 0.0, closed_form_epsilon(eps0, n, delta)
    if shuffle_delta(high, eps0, n) > delta:
        high = eps0
    while high - low > tol:
        mid = (low + high) / 2
        if shuffle_delta(mid, eps0, n) <= delta:
            high = mid
        else:
            low = mid
    return high
