"""Integer noise for sums: Skellam, Pólya (discrete Laplace) and discrete Gaussian — docs/math.md §9.1.

Secure aggregation and two-server (Prio3/DAP) protocols compute sums over integers (a finite field), so
their noise is integer-valued. Three laws, each a family closed under the sum of i.i.d. copies:

* ``"skellam"``: Poisson(μ) − Poisson(μ), variance 2μ; the sum of n copies of Skellam(μ/n) is exactly
  Skellam(μ) (infinitely divisible; Agarwal, Kairouz, Liu, NeurIPS 2021);
* ``"polya"``: NB(r, 1−α) − NB(r, 1−α) with α = e^{−1/b}; r = 1 is the discrete Laplace law
  P(k) ∝ α^|k|, and the sum of n copies with r = 1/n is exactly discrete Laplace (Pólya shares;
  Goryczka–Xiong 2015, Balle et al. 2020), variance 2rα/(1−α)²;
* ``"discrete_gaussian"``: N_Z(0, σ²), P(k) ∝ e^{−k²/(2σ²)} (Canonne, Kamath, Steinke 2020), and with
  ``copies`` = m the sum of m i.i.d. copies. That sum is *not* a discrete Gaussian (the law is not
  infinitely divisible); its exact pmf is computed here by an FFT power of the one-copy pmf, so
  variance and accounting use the law the server really faces (no approximation theorem needed).

Every law exposes its pmf on a truncated support whose left-out mass is returned, so privacy bounds
computed from it stay upper bounds.

>>> round(IntegerNoise("skellam", 50.0).variance(), 6)
100.0
>>> IntegerNoise("skellam", 50.0).share(100).scale
0.5
>>> round(IntegerNoise("polya", 2.0).share(4).times(4).variance(), 9) == round(IntegerNoise("polya", 2.0).variance(), 9)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.runtime.errors import InputError

KINDS = ("skellam", "polya", "discrete_gaussian")

#: target mass left out of a truncated support (added to δ by every bound computed from it)
_TAIL = 1e-20


@dataclass(frozen=True)
class IntegerNoise:
    """An integer noise law of the three infinitely-divisible-or-convolved families (docs/math.md §9.1).

    Parameters
    ----------
    kind : {"skellam", "polya", "discrete_gaussian"}
        The family.
    scale : float > 0
        μ of each Poisson (skellam); b of α = e^{−1/b} (polya; r = 1 is discrete Laplace of scale b);
        σ of each N_Z(0, σ²) copy (discrete_gaussian).
    copies : float > 0, default 1
        r of the negative binomials (polya); the number m of summed i.i.d. N_Z copies
        (discrete_gaussian, a whole number); ignored by skellam (fold it into ``scale``).

    Examples
    --------
    >>> z = IntegerNoise("polya", 3.0)            # discrete Laplace of scale 3
    >>> round(z.variance(), 4)
    17.8343
    >>> k, p, left = z.pmf_table()
    >>> bool(abs(p.sum() + left - 1) < 1e-12)
    True
    """

    kind: str
    scale: float
    copies: float = 1.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise InputError(f"The 'kind' parameter of IntegerNoise must be one of {', '.join(KINDS)}. "
                             f"Got {self.kind!r} instead.")
        object.__setattr__(self, "scale", check_real("IntegerNoise", "scale", self.scale, 0.0, math.inf))
        object.__setattr__(self, "copies", check_real("IntegerNoise", "copies", self.copies, 0.0, math.inf))
        if self.kind == "discrete_gaussian" and self.copies != round(self.copies):
            raise InputError("The 'copies' parameter of IntegerNoise must be a whole number for "
                             f"kind='discrete_gaussian'. Got {self.copies!r} instead.")

    # ---- the family's algebra -------------------------------------------------------------------
    @property
    def alpha(self) -> float:
        """α = e^{−1/b} of the Pólya law (NaN for the other kinds)."""
        return math.exp(-1.0 / self.scale) if self.kind == "polya" else math.nan

    def share(self, n: int) -> "IntegerNoise":
        """The law of one of ``n`` device shares whose sum is this law (exact for skellam and polya;
        for discrete_gaussian each share is N_Z(0, σ²/n) and the sum is only *close* to this law)."""
        n = check_int("IntegerNoise.share", "n", n, low=1)
        if self.kind == "skellam":
            return IntegerNoise("skellam", self.scale / n)
        if self.kind == "polya":
            return IntegerNoise("polya", self.scale, self.copies / n)
        if self.copies != 1:
            raise InputError("IntegerNoise.share: a discrete Gaussian share needs copies = 1.")
        return IntegerNoise("discrete_gaussian", self.scale / math.sqrt(n))

    def times(self, m: int) -> "IntegerNoise":
        """The law of the sum of ``m`` ≥ 1 i.i.d. copies of this law (docs/math.md §9.1)."""
        m = check_int("IntegerNoise.times", "m", m, low=1)
        if self.kind == "skellam":
            return IntegerNoise("skellam", self.scale * m)
        return IntegerNoise(self.kind, self.scale, self.copies * m)

    # ---- moments ---------------------------------------------------------------------------------
    def _dg_one_variance(self) -> float:
        s = self.scale
        k = np.arange(1, int(12 * s + 12))
        w = np.exp(-k.astype(float) ** 2 / (2 * s * s))
        return float(2 * np.dot(k * k, w) / (1 + 2 * w.sum()))

    def variance(self) -> float:
        """Exact variance: 2μ (skellam), 2rα/(1−α)² (polya), m·Var N_Z(0, σ²) (discrete_gaussian)."""
        if self.kind == "skellam":
            return 2.0 * self.scale
        if self.kind == "polya":
            a = self.alpha
            return 2.0 * self.copies * a / (1.0 - a) ** 2
        return self.copies * self._dg_one_variance()

    def sd(self) -> float:
        """Standard deviation (square root of :meth:`variance`)."""
        return math.sqrt(self.variance())

    # ---- the law on a truncated support -------------------------------------------------------------
    def _half_width(self) -> int:
        if self.kind == "polya":   # exponential tails: P(|Z| > K) ≲ α^K·const
            return int(math.ceil(12 * self.sd() + self.scale * (50 + math.log1p(self.copies)) + 10))
        return int(math.ceil(12 * self.sd() + 12))

    def pmf_table(self) -> tuple[np.ndarray, np.ndarray, float]:
        """Support k = −K … K, the pmf on it, and the mass left out (≤ 1e-20 by construction, checked).

        Returns
        -------
        k : numpy.ndarray of int64
        pmf : numpy.ndarray of float
        left_out : float
            1 − Σ pmf (clipped at 0): added to δ by the bounds computed from this table.
        """
        from scipy import signal, stats

        half = self._half_width()
        k = np.arange(-half, half + 1)
        if self.kind == "skellam":
            p = stats.skellam.pmf(k, self.scale, self.scale)
        elif self.kind == "polya":
            j = np.arange(0, 2 * half + 1)
            nb = stats.nbinom.pmf(j, self.copies, 1.0 - self.alpha)
            # P(D = d) = Σ_j nb(j) nb(j + d): a correlation of the two negative binomials
            full = signal.fftconvolve(nb, nb[::-1])       # lags −2K … 2K
            mid = len(full) // 2
            p = full[mid - half: mid + half + 1]
        else:
            p = self._dg_sum_pmf(k)
        p = np.clip(p, 0.0, None)
        return k, p, max(0.0, 1.0 - float(p.sum()))

    def _dg_sum_pmf(self, k: np.ndarray) -> np.ndarray:
        s, m = self.scale, int(self.copies)
        # one copy's support covers k: the table's half width follows the sd, which is below s for a
        # small s (a discrete Gaussian of s = 0.3 has sd 0.09), so 12·s + 12 alone can be the narrower
        one_half = max(int(math.ceil(12 * s + 12)), int(-k[0]))
        j = np.arange(-one_half, one_half + 1)
        one = np.exp(-j.astype(float) ** 2 / (2 * s * s))
        one /= one.sum()
        if m == 1:
            return one[k + one_half]
        size = 1 << int(math.ceil(math.log2(k.size + one.size)))
        grid = np.zeros(size)
        grid[j % size] = one                         # centred at 0 (negative lags wrap around)
        summed = np.fft.irfft(np.fft.rfft(grid) ** m, n=size)
        return summed[k % size]

    def pmf(self, values) -> np.ndarray:
        """P(Z = k) for integer ``values`` (0 outside the truncated support)."""
        k, p, _ = self.pmf_table()
        v = np.asarray(values, dtype=np.int64)
        idx = v - k[0]
        inside = (idx >= 0) & (idx < k.size)
        out = np.zeros(v.shape)
        out[inside] = p[idx[inside]]
        return out

    # ---- sampling --------------------------------------------------------------------------------
    def sample(self, size, rng=None) -> np.ndarray:
        """Draw i.i.d. values of this law (int64), shape ``size``.

        Skellam and Pólya draw their Poisson / negative-binomial pairs; one discrete Gaussian copy uses
        the exact rejection sampler of Canonne–Kamath–Steinke (discrete Laplace proposal, Algorithm 3,
        here in floating point); a sum of m > 1 copies draws from its exact pmf table.
        """
        rng = as_generator(rng)
        if self.kind == "skellam":
            return rng.poisson(self.scale, size) - rng.poisson(self.scale, size)
        if self.kind == "polya":
            p = 1.0 - self.alpha
            return rng.negative_binomial(self.copies, p, size) - rng.negative_binomial(self.copies, p, size)
        if self.copies == 1:
            return _discrete_gaussian(self.scale, size, rng)
        k, p, _ = self.pmf_table()
        return rng.choice(k, size=size, p=p / p.sum())


def _discrete_gaussian(sigma: float, size, rng: np.random.Generator) -> np.ndarray:
    """N_Z(0, σ²) by rejection from the discrete Laplace of scale t = ⌊σ⌋ + 1 (CKS 2020, Alg. 3)."""
    shape = (size,) if np.isscalar(size) else tuple(size)
    total = int(np.prod(shape))
    out = np.empty(total, dtype=np.int64)
    t = math.floor(sigma) + 1
    q = 1.0 - math.exp(-1.0 / t)
    filled = 0
    while filled < total:
        want = int((total - filled) * 1.6) + 16
        y = (rng.geometric(q, want) - rng.geometric(q, want)).astype(np.int64)
        keep = rng.random(want) < np.exp(-(np.abs(y) - sigma * sigma / t) ** 2 / (2 * sigma * sigma))
        y = y[keep][: total - filled]
        out[filled: filled + y.size] = y
        filled += y.size
    return out.reshape(shape)


def hockey_stick(noise: IntegerNoise, epsilon: float, sensitivity: int = 1) -> float:
    """δ(ε) of the additive mechanism x ↦ x + Z for a change of one count by ``sensitivity``.

    δ = Σ_k (P_Z(k − Δ) − e^ε P_Z(k))_+ plus the mass left out of the truncated support (docs/math.md
    §9.1). All three laws are symmetric, so one direction suffices.

    Parameters
    ----------
    noise : IntegerNoise
    epsilon : float ≥ 0
    sensitivity : int ≥ 1

    Returns
    -------
    float
        An upper bound on the hockey-stick divergence (exact up to the ≤ 1e-20 truncation).
    """
    epsilon = check_real("hockey_stick", "epsilon", epsilon, 0.0, math.inf, low_open=False)
    sensitivity = check_int("hockey_stick", "sensitivity", sensitivity, low=1)
    _, p, left = noise.pmf_table()
    shifted = np.concatenate([np.zeros(sensitivity), p])
    base = np.concatenate([p, np.zeros(sensitivity)])
    return float(np.clip(shifted - math.exp(epsilon) * base, 0.0, None).sum()) + left
