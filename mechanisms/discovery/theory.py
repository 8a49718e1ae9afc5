"""Bias and variance of a discovered word's estimate: a frequency oracle's estimate as a sum of
per-user terms, over a uniform split of the users into groups — docs/math.md §7.4.1."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import stats

from ldpsim.mechanisms.hashing import HashFamily


def expected_inverse(n: int, share: float) -> float:
    """E[1/N | N ≥ 1] for N ~ Binomial(n, share), summed over the pmf (terms beyond 40 s.d. of the
    mean weigh < 10⁻³⁰⁰ and are left out)."""
    if share >= 1.0:
        return 1.0 / n
    mu, sd = n * share, math.sqrt(n * share * (1 - share))
    k = np.arange(max(1, math.floor(mu - 40 * sd)), min(n, math.ceil(mu + 40 * sd)) + 1)
    pmf = stats.binom.pmf(k, n, share)
    return float((pmf / k).sum() / stats.binom.sf(0, n, share))


class UserModel(NamedTuple):
    """A frequency oracle's estimate as a sum of per-user terms whose law depends on the user's word v only
    through γ, the share of the family's ``rows`` functions under which v and the estimated word x collide:
    mean w(γ) = slope·(γ − mu), variance τ(γ) = t0 + t1·γ + t2·γ² (w(1) = 1) — docs/math.md §7.4.1."""

    family: HashFamily
    slope: float
    mu: float  #: E γ over random families (a collision's probability)
    tau: tuple  #: (t0, t1, t2)

    def moments(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(w, τ) matrices for the estimate of ``codes[i]`` and a user holding ``codes[j]``, this family."""
        g = self.family.key_collision_counts(np.asarray(codes, dtype=np.int64).astype(np.uint64)) / self.family.k
        t0, t1, t2 = self.tau
        return self.slope * (g - self.mu), t0 + t1 * g + t2 * g * g

    def family_averaged(self, counts: np.ndarray, groups: int) -> np.ndarray:
        """MSE of :func:`split_moments`' estimate over random families too: γ(x, v) for v ≠ x independent,
        each the mean of ``rows`` independent collisions of probability ``mu`` (E γ = μ,
        Var γ = μ(1 − μ)/rows), so the bias averages to 0 and adds its variance Σ_{v≠x} f_v²·slope²·Var γ."""
        f = np.asarray(counts, dtype=float)
        n = f.sum()
        var_g = self.mu * (1 - self.mu) / self.family.k
        t0, t1, t2 = self.tau
        ww = self.slope ** 2 * var_g                     # E w_v², v ≠ x (E w_v = 0)
        others, squares = n - f, (f * f).sum() - f * f
        tau_mean = (f * (t0 + t1 + t2) + others * (t0 + t1 * self.mu + t2 * (var_g + self.mu ** 2))) / n
        w_var = (f + others * ww) / n - (f * f + squares * ww) / n ** 2
        return split_variance(n, tau_mean, w_var, groups) + squares * ww


def split_variance(n: float, tau_mean: np.ndarray, w_var: np.ndarray, groups: int) -> np.ndarray:
    """n²·E[1/N]·(τ̄ + n·s²/(n−1)) − n²·s²/(n−1) (:func:`split_moments`; s² = ``w_var``)."""
    spread = n * w_var / (n - 1) if n > 1 else np.zeros_like(w_var)
    return n * n * expected_inverse(int(n), 1.0 / groups) * (tau_mean + spread) - n * spread


def split_moments(counts: np.ndarray, w: np.ndarray, tau: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """(bias, variance) of f̂(x_i) = (n/N)·Σ_{u in the group} Y_u, the group a uniform 1-in-``groups``
    split of the n users (N its size, N ≥ 1), given the users' words — docs/math.md §7.4.1.

    ``w[i, j]``, ``tau[i, j]``: mean and variance of Y_u for estimate i when user u holds word j
    (``w[i, i]`` = 1); ``counts[j]`` users hold word j. With w̄_i, s²_i the mean and variance of
    w[i, word_u] over all n users and τ̄_i the mean of tau[i, word_u]:
    bias = Σ_j counts[j]·w[i, j] − counts[i], variance = n²·E[1/N]·(τ̄ + n·s²/(n−1)) − n²·s²/(n−1).
    """
    f = np.asarray(counts, dtype=float)
    n = f.sum()
    w_mean = w @ f / n
    w_var = np.maximum((w * w) @ f / n - w_mean ** 2, 0.0)
    return n * w_mean - f, split_variance(n, tau @ f / n, w_var, groups)
