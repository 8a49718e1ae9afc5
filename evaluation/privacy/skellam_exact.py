"""An independent bracket on the ε of composed Skellam mechanisms: the exact privacy-loss law by FFT — docs/math.md §12.11.

The check of :func:`~ldpsim.evaluation.privacy.skellam_continual.skellam_counter_epsilon` shares no code
with dp-accounting. For one coordinate at shift d the privacy loss is L = ln P(Z = k) − ln P(Z = k − d)
with k drawn from Skellam(μ) (the law is symmetric, so both directions have this one loss law). The
losses of independent coordinates add, so the composed loss law is the convolution of the
coordinates' laws, computed here on a grid of step h by FFT, twice:

* **upper**: every loss rounded *up* to the grid, every mass outside the pmf table or below the
  truncation put at +∞ — the composed law dominates the true one, so its δ(ε) = E[(1 − e^{ε − L})₊]
  + P[L = ∞] is an upper bound, and so is the ε read from it;
* **lower**: every loss rounded *down*, those masses dropped — a lower bound.

The true ε at δ lies in [lower, upper], an interval of width at most m·h (m coordinates).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft, stats

from ldpsim.mechanisms._validation import check_real
from ldpsim.runtime.errors import InputError

#: a coordinate's loss values of mass below this are moved to +∞ (upper) or dropped (lower)
_NEGLIGIBLE = 1e-30


def _loss_law(mu: float, shift: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(losses, masses, mass not described) of one Skellam(μ) coordinate at ``shift``, exact to float rounding."""
    half = int(math.ceil(14 * math.sqrt(2 * mu) + 20 + shift))
    k = np.arange(-half, half + 1)
    logp = stats.skellam.logpmf(k, mu, mu)
    logq = stats.skellam.logpmf(k - shift, mu, mu)
    p = np.exp(logp)
    keep = p > _NEGLIGIBLE
    return logp[keep] - logq[keep], p[keep], max(0.0, 1.0 - float(p[keep].sum()))


def _compose(laws, step: float, direction: int) -> tuple[np.ndarray, int, float]:
    """Grid masses (index i ↔ loss i·step), the first index, and the mass at +∞ (upper) or dropped (lower)."""
    spans, parts, at_inf, first = [], [], 0.0, 0
    for losses, masses, out, count in laws:
        idx = np.ceil(losses / step) if direction > 0 else np.floor(losses / step)
        idx = idx.astype(np.int64)
        lo = int(idx.min())
        grid = np.bincount(idx - lo, weights=masses)
        parts.append((grid, count))
        spans.append(count * (grid.size - 1))
        first += count * lo
        at_inf = 1.0 - (1.0 - at_inf) * (1.0 - out) ** count   # P[some coordinate's loss is +∞]
    size = sum(spans) + 1
    n = fft.next_fast_len(size, real=True)
    spectrum = np.ones(n // 2 + 1, dtype=complex)
    for grid, count in parts:
        spectrum *= fft.rfft(grid, n) ** count
    law = np.clip(fft.irfft(spectrum, n)[:size], 0.0, None)
    return law, first, at_inf


def _epsilon_at(law: np.ndarray, first: int, at_inf: float, step: float, delta: float) -> float:
    """The least ε ≥ 0 with E[(1 − e^{ε − L})₊] + mass(∞) ≤ δ (bisection to 10⁻⁹)."""
    losses = (first + np.arange(law.size)) * step

    def delta_of(eps):
        above = losses > eps
        return float(np.dot(law[above], -np.expm1(eps - losses[above]))) + at_inf

    if delta_of(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, float(losses[-1])
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if delta_of(mid) <= delta else (mid, hi)
    return hi


def exact_skellam_epsilon(shifts, mu: float, delta: float, step: float = 1e-4) -> tuple[float, float]:
    """(lower, upper) bracket on the exact ε at ``delta`` of Skellam(μ) coordinates at ``shifts`` (module docstring).

    Parameters
    ----------
    shifts : array_like of int ≥ 0
        Each coordinate's shift (e.g. R·1 of an integer counter; zeros are ignored).
    mu : float
        μ of each coordinate's Skellam(μ, μ).
    delta : float in (0, 1)
    step : float
        Loss grid h; the bracket's width is at most (number of coordinates)·h.

    Returns
    -------
    (float, float)

    Examples
    --------
    >>> lo, hi = exact_skellam_epsilon([1], 50.0, 1e-6)
    >>> bool(0 < lo <= hi < lo + 1e-4 + 1e-8)
    True
    """
    mu = check_real("exact_skellam_epsilon", "mu", mu, 0.0)
    delta = check_real("exact_skellam_epsilon", "delta", delta, 0.0, 1.0)
    step = check_real("exact_skellam_epsilon", "step", step, 0.0)
    s = np.asarray(shifts)
    if s.ndim != 1 or not np.issubdtype(s.dtype, np.integer) or s.size == 0 or s.min() < 0:
        raise InputError(f"exact_skellam_epsilon: 'shifts' must be a non-empty 1-d array of integers ≥ 0; got {s!r}.")
    values, counts = np.unique(s[s > 0], return_counts=True)
    if values.size == 0:
        return 0.0, 0.0
    laws = [(*_loss_law(mu, int(d)), int(c)) for d, c in zip(values, counts)]
    upper = _epsilon_at(*_compose(laws, step, +1), step, delta)
    lower = _epsilon_at(*_compose([(loss, mass, 0.0, c) for loss, mass, _, c in laws], step, -1), step, delta)
    return lower, upper
