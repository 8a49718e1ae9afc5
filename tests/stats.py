"""Statistical assertions with tolerances derived from theory.

Every assertion has a stated false-alarm rate ``alpha``: the probability that a *correct*
implementation fails it. Vectors are tested entry by entry with a Bonferroni correction, so
``alpha`` is family-wise. Tests use fixed seeds, so a pass is reproducible; the tolerance is what a
correct implementation would exceed with probability at most ``alpha``, never tuned until green.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: default family-wise false-alarm rate of one statistical assertion
ALPHA = 1e-4


def z_bound(alpha: float = ALPHA, n_tests: int = 1) -> float:
    """Two-sided normal quantile with a Bonferroni correction over ``n_tests``."""
    return float(stats.norm.isf(alpha / (2 * n_tests)))


def assert_z(observed, expected, sd, alpha: float = ALPHA, what: str = "value") -> None:
    """|observed − expected| ≤ z·sd for every entry (normal approximation; Bonferroni)."""
    observed, expected, sd = np.broadcast_arrays(*(np.asarray(a, float) for a in (observed, expected, sd)))
    z = np.abs(observed - expected) / sd
    bound = z_bound(alpha, z.size)
    worst = int(np.argmax(z))
    assert z.flat[worst] <= bound, (
        f"{what}: entry {worst} observed {observed.flat[worst]:.6g}, expected {expected.flat[worst]:.6g} "
        f"(sd {sd.flat[worst]:.4g}): |z| = {z.flat[worst]:.2f} > {bound:.2f} at alpha={alpha:g}")


def assert_mean(samples, expected_mean, expected_var, alpha: float = ALPHA, what: str = "mean") -> None:
    """The mean of R i.i.d. rows of ``samples`` (R × D) matches ``expected_mean`` given the theoretical variance."""
    samples = np.asarray(samples, float)
    r = samples.shape[0]
    assert_z(samples.mean(axis=0), expected_mean, np.sqrt(np.asarray(expected_var, float) / r), alpha, what)


def assert_variance(samples, expected_mean, expected_var, alpha: float = ALPHA, what: str = "variance") -> None:
    """Σ_r (x_r − μ)²/σ² ~ χ²_R for each column (normal estimator; two-sided; Bonferroni over columns)."""
    samples = np.atleast_2d(np.asarray(samples, float))
    r, d = samples.shape
    s = (((samples - expected_mean) ** 2) / np.asarray(expected_var, float)).sum(axis=0)
    lo = stats.chi2.ppf(alpha / (2 * d), r)
    hi = stats.chi2.isf(alpha / (2 * d), r)
    s = np.atleast_1d(s)
    bad = np.flatnonzero((s < lo) | (s > hi))
    assert bad.size == 0, (
        f"{what}: column {bad[0]} has empirical/theoretical variance ratio {s[bad[0]] / r:.4f}, "
        f"outside [{lo / r:.4f}, {hi / r:.4f}] at alpha={alpha:g} with R={r}")


def assert_same_distribution(a, b, alpha: float = ALPHA, what: str = "aggregate") -> None:
    """Two samples (R_a × C and R_b × C) of aggregates agree column by column.

    Two tests per column, Bonferroni over 2·C: Welch's z on the means, and a two-sample
    Kolmogorov–Smirnov test (conservative for discrete data, so its false-alarm rate is at most alpha).
    """
    a = np.atleast_2d(np.asarray(a, float))
    b = np.atleast_2d(np.asarray(b, float))
    c = a.shape[1]
    each = alpha / (2 * c)
    se = np.sqrt(a.var(axis=0, ddof=1) / a.shape[0] + b.var(axis=0, ddof=1) / b.shape[0])
    se = np.where(se > 0, se, np.inf)
    z = np.abs(a.mean(axis=0) - b.mean(axis=0)) / se
    bound = stats.norm.isf(each / 2)
    worst = int(np.argmax(z))
    assert z[worst] <= bound, f"{what}: column {worst} means differ, |z| = {z[worst]:.2f} > {bound:.2f}"
    for j in range(c):
        if np.ptp(a[:, j]) == 0 and np.ptp(b[:, j]) == 0 and a[0, j] == b[0, j]:
            continue
        pv = stats.ks_2samp(a[:, j], b[:, j]).pvalue
        assert pv >= each, f"{what}: column {j} distributions differ (KS p = {pv:.3g} < {each:.3g})"


def assert_chisquare_gof(observed_counts, expected_probs, alpha: float = ALPHA, what: str = "output") -> None:
    """Pearson chi-square goodness of fit of observed category counts to probabilities."""
    obs = np.asarray(observed_counts, float)
    p = np.asarray(expected_probs, float)
    n = obs.sum()
    exp = n * p
    support = exp > 0
    assert np.all(obs[~support] == 0), f"{what}: outputs observed where the theory says probability 0"
    stat = (((obs - exp) ** 2)[support] / exp[support]).sum()
    dof = max(int(support.sum()) - 1, 1)
    pv = stats.chi2.sf(stat, dof)
    assert pv >= alpha, f"{what}: chi-square {stat:.1f} on {dof} dof, p = {pv:.3g} < {alpha:g}"


# ---- the EM tests of the numeric mechanisms: samples with a known histogram, and the MLE's covariance ----
def em_draw(f, edges, n, rng):
    """n i.i.d. values: a bin from f, then uniform inside it (so π = Mᵀf holds exactly)."""
    i = rng.choice(f.size, size=n, p=f)
    return edges[i] + (edges[i + 1] - edges[i]) * rng.random(n)


def fisher_covariance(em, f, n):
    """Asymptotic covariance of the MLE f̂ on the simplex: J (Jᵀ I J)⁻¹ Jᵀ / n with I = M diag(1/π) Mᵀ
    and J the (d × d−1) chart f_d = 1 − Σ_{i<d} f_i."""
    m = em.matrix
    info = (m / (f @ m)) @ m.T
    jac = np.vstack([np.eye(f.size - 1), -np.ones(f.size - 1)])
    return jac @ np.linalg.inv(jac.T @ info @ jac) @ jac.T / n
