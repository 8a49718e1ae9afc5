"""EM / EMS post-processing (docs/math.md §2.3): parameters, the cached exact matrix, the smoothing step,
mergeable histograms, recovery of known input distributions and the SDPM mean.

Recovery is tested with a Wald statistic. For x drawn i.i.d. from f (a bin, then uniform inside it),
the reports' output-bin counts are Multinomial(n, π) with π = Mᵀf exactly. The MLE f̂ has
W = n·Σ_j (π̂_j − π_j)²/π_j = n·(f̂−f)ᵀ I (f̂−f), I = M diag(1/π) Mᵀ the Fisher information on the
simplex, asymptotically χ²_{d−1} when f is interior; when f is on the boundary (a point mass, a
floor hit) the constrained MLE is the I-metric projection of the unconstrained one onto a convex
cone, which can only shrink W. So P(W > χ²_{d−1}(1−α)) ≤ α (asymptotically) in every case.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms.numeric.em import BATCH_ROWS, EM, _DenseOperator, _PiecewiseOperator, smooth
from ldpsim.mechanisms.numeric.pm import PM
from ldpsim.mechanisms.numeric.sdpm import SDPM
from tests.stats import em_draw as _draw, fisher_covariance as _fisher_covariance
from tests.stats import assert_variance

ALPHA = 1e-4


def test_parameters_are_validated():
    with pytest.raises(TypeError, match=r"'mechanism' parameter of EM must be a NumericMechanism"):
        EM("PM")
    with pytest.raises(ValueError, match=r"'bins' parameter of EM must be an int in the range \[2, 65536\]"):
        EM(PM(1.0), bins=1)
    with pytest.raises(TypeError, match=r"'bins' parameter"):
        EM(PM(1.0), bins=8.0)
    with pytest.raises(ValueError, match=r"'tol' parameter of EM must be a float in the range \[0, inf\)"):
        EM(PM(1.0), tol=-1.0)
    with pytest.raises(ValueError, match=r"'max_iter' parameter"):
        EM(PM(1.0), max_iter=0)
    with pytest.raises(TypeError, match=r"'smoothing' parameter of EM must be a bool"):
        EM(PM(1.0), smoothing=1)
    assert EM(PM(2.0)).tol == pytest.approx(math.exp(2.0) * 1e-3)  # the paper's default


@pytest.mark.parametrize("mech", [PM(1.0), SDPM(1.0, low=(-0.35, 0.5))])
def test_matrix_is_the_exact_cached_bin_transition(mech):
    em = EM(mech, bins=16)
    np.testing.assert_array_equal(em.in_edges, np.linspace(-1, 1, 17))
    np.testing.assert_array_equal(em.matrix, mech.bin_transition(em.in_edges, em.out_edges))
    np.testing.assert_allclose(em.matrix.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert em.matrix is em.matrix and em == EM(mech, bins=16)


def test_smoothing_step_is_binomial_and_mass_preserving():
    f = np.array([0.4, 0.0, 0.2, 0.1, 0.3])
    g = smooth(f.copy())
    expected = [(3 * 0.4 + 0.0) / 4, (0.4 + 0 + 0.2) / 4, (0 + 0.4 + 0.1) / 4, (0.2 + 0.2 + 0.3) / 4,
                (0.1 + 3 * 0.3) / 4]
    np.testing.assert_allclose(g, expected, rtol=1e-15)
    assert math.isclose(g.sum(), 1.0, rel_tol=1e-15)
    np.testing.assert_allclose(smooth(np.full(7, 1 / 7)), 1 / 7, rtol=1e-15)


def test_histograms_merge_and_refuse_other_bins():
    em = EM(SDPM(1.0, low=(-0.5, 0.5)), bins=32)
    rng = np.random.default_rng(1)
    y = em.mechanism.perturb(rng.uniform(-1, 1, 3000), rng)
    whole = em.aggregate(y)
    merged = em.aggregate(y[:1000]) + em.aggregate(y[1000:])
    np.testing.assert_array_equal(merged.data, whole.data)
    assert whole.n == 3000 == whole.data.sum()
    assert EM(em.mechanism, bins=32, tol=1.0, smoothing=True).kind == em.kind
    with pytest.raises(ValueError, match="aggregate was made by"):
        EM(em.mechanism, bins=16).run(whole)
    with pytest.raises(ValueError, match="Cannot merge"):
        _ = whole + EM(em.mechanism, bins=16).aggregate(y)
    empty = EM(PM(1.0), bins=4).run(EM(PM(1.0), bins=4).aggregate(np.array([])))
    np.testing.assert_array_equal(empty.f, 0.25)


D = 8
DISTRIBUTIONS = {
    "uniform": np.full(D, 1 / D),
    "two-bumps": (lambda g: g / g.sum())(0.03 + np.array([0, 2, 5, 1, 0, 1, 4, 1.0])),
    "point-mass": np.eye(D)[6],  # bin [0.5, 0.75): a high input for the SDPM below
}


@pytest.mark.parametrize("dist", sorted(DISTRIBUTIONS))
@pytest.mark.parametrize("mech", [PM(2.0), SDPM(2.0, low=(-0.5, 0.5))], ids=["pm", "sdpm"])
def test_em_recovers_known_distribution_wald(mech, dist):
    f = DISTRIBUTIONS[dist]
    em = EM(mech, bins=D, tol=1e-7, max_iter=200_000)  # run to the MLE, not the paper's early stop
    n = 100_000
    rng = np.random.default_rng(zlib.crc32(f"{mech!r} {dist}".encode()))
    agg = em.aggregate(mech.perturb(_draw(f, em.in_edges, n, rng), rng))
    res = em.run(agg)
    assert res.converged and math.isclose(res.f.sum(), 1.0) and np.all(res.f >= 0)
    pi, pi_hat = f @ em.matrix, res.f @ em.matrix
    pos = pi > 0
    wald = n * (((pi_hat - pi) ** 2)[pos] / pi[pos]).sum()
    bound = stats.chi2.isf(ALPHA, D - 1)
    assert wald <= bound, f"{dist}: Wald {wald:.1f} > chi2_{D - 1}({1 - ALPHA}) = {bound:.1f}; f̂ = {res.f.round(3)}"


@pytest.mark.slow
def test_sdpm_em_mean_unbiased_with_fisher_variance():
    """R = 40 replications (fresh users and reports, spawned streams) of the EM mean for SDPM, run to
    the MLE, d = 8, n = 10⁵. The design keeps every f_i ≥ 5 Fisher sd from 0 (checked), so the
    simplex constraint practically never binds and the MLE is asymptotically N(f, Σ_F). Hence
    t = (mean − μ)/(s/√R) ~ t_{R−1} (μ = Σ mid_i f_i exactly: values are uniform in bins), and the
    replicate means have variance midᵀΣ_F mid (χ² test, the means being asymptotically normal)."""
    mech = SDPM(1.0, low=(-0.5, 0.5))
    em = EM(mech, bins=8, tol=1e-6, max_iter=100_000)
    mids = np.linspace(-1 + 1 / 8, 1 - 1 / 8, 8)  # the bin centres, independently of em.midpoints
    f = 1 + np.exp(-0.5 * ((mids - 0.3) / 0.3) ** 2)
    f /= f.sum()
    r, n = 40, 100_000
    cov = _fisher_covariance(em, f, n)
    assert np.all(f >= 5 * np.sqrt(np.diag(cov)))  # the design condition above
    mu, var = float(mids @ f), float(mids @ cov @ mids)
    means = []
    for seed in np.random.SeedSequence(17).spawn(r):
        rng = np.random.default_rng(seed)
        means.append(em.mean(em.aggregate(mech.perturb(_draw(f, em.in_edges, n, rng), rng))))
    means = np.array(means)
    t = (means.mean() - mu) / (means.std(ddof=1) / math.sqrt(r))
    bound = stats.t.isf(ALPHA / 4, r - 1)  # α/2 for this test (two-sided), α/2 for the variance test
    assert abs(t) <= bound, f"EM mean {means.mean():.5f} vs {mu:.5f}: |t| = {abs(t):.2f} > {bound:.2f}"
    assert_variance(means[:, None], [mu], [var], alpha=ALPHA / 2, what="EM mean variance vs Fisher")


@pytest.mark.slow
def test_ems_converges_to_a_fixed_point_of_smoothed_em():
    """EMS (Li et al. 2020): at convergence f = smooth(normalize(f ⊙ M(c/π))) — one more step moves
    nothing (up to the stopping tolerance) — and the result is smoother than plain EM's."""
    mech = PM(1.0)
    em, ems = EM(mech, bins=64, tol=1e-6, max_iter=100_000), EM(mech, bins=64, smoothing=True, tol=1e-9)
    rng = np.random.default_rng(4)
    agg = ems.aggregate(mech.perturb(np.clip(rng.normal(0.2, 0.3, 50_000), -1, 1), rng))
    res = ems.run(agg)
    assert res.converged
    c = agg.data.astype(float)
    step = res.f * (ems.matrix @ (c / (res.f @ ems.matrix)))
    np.testing.assert_allclose(smooth(step / step.sum()), res.f, rtol=0, atol=1e-6)
    rough = [np.abs(np.diff(e.estimate(agg))).sum() for e in (ems, em)]
    assert rough[0] < rough[1]


@pytest.mark.parametrize("mech", [PM(1.0), PM(0.1), PM(5.0), SDPM(1.0, low=(-0.5, 0.5)),
                                  SDPM(0.1, low=(-0.33, 0.71)), SDPM(3.0, low=(0.2, 1.0)),
                                  SDPM(1.0, low=(-1, 1)), SDPM(2.0, low=(-1, -0.95))])
@pytest.mark.parametrize("bins", [8, 37, 256])
def test_piecewise_operator_equals_dense_matrix(mech, bins):
    """The O(d + m) operator multiplies by the exact matrix: equal to the dense products up to
    rounding (the double integrals cancel ~log10(C²·d) digits: 1e-11 relative is generous)."""
    em = EM(mech, bins=bins)
    op = _PiecewiseOperator(*mech.piecewise_parts(), em.in_edges, em.out_edges)
    rng = np.random.default_rng(bins)
    f, r = rng.dirichlet(np.ones(bins)), rng.exponential(size=em.out_edges.size - 1)
    np.testing.assert_allclose(op.pi(f), f @ em.matrix, rtol=0, atol=1e-11 * (f @ em.matrix).max())
    np.testing.assert_allclose(op.back(r), em.matrix @ r, rtol=0, atol=1e-11 * (em.matrix @ r).max())


def test_large_em_uses_the_piecewise_operator_and_agrees_with_dense():
    mech = SDPM(1.0, low=(-0.5, 0.5))
    em = EM(mech, bins=512, tol=1e-3)
    assert isinstance(em.operator, _PiecewiseOperator) and isinstance(EM(mech, bins=8).operator, _DenseOperator)
    rng = np.random.default_rng(8)
    agg = em.aggregate(mech.perturb(np.clip(rng.normal(0.2, 0.3, 200_000), -1, 1), rng))
    fast = em.run(agg)
    object.__setattr__(em, "operator", _DenseOperator(em.matrix))
    dense = em.run(agg)
    assert fast.n_iter == dense.n_iter
    np.testing.assert_allclose(fast.f, dense.f, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("bins, smoothing", [(16, False), (16, True), (600, True)], ids=["em", "ems", "piecewise"])
def test_means_of_many_histograms_are_each_histograms_own_em_mean(bins, smoothing):
    """``means`` runs EM on every row at once (the run's parametric bootstrap); each row stops where ``run``
    stops on it alone, so every mean equals :meth:`EM.mean` of that row (up to float rounding of the batched
    products), rows that converge early included."""
    from ldpsim.mechanisms.base import Aggregate

    em = EM(PM(2.0), bins=bins, smoothing=smoothing)
    rng = np.random.default_rng(11)
    agg = em.aggregate(em.mechanism.perturb(rng.uniform(-0.6, 0.9, 400), rng=rng))
    pi = em.matrix.T @ em.estimate(agg)
    draws = rng.multinomial(agg.n, pi.clip(min=0) / pi.clip(min=0).sum(), size=BATCH_ROWS + 5)  # two batches
    draws[0] = np.eye(draws.shape[1], dtype=int)[draws.shape[1] // 2] * agg.n  # every report in one bin
    runs = [em.run(Aggregate(agg.n, c, agg.kind)) for c in draws]
    assert len({r.n_iter for r in runs}) > 1  # rows stop at different iterations
    expected = [float(em.midpoints @ r.f) for r in runs]
    np.testing.assert_allclose(em.means(draws), expected, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"'counts' parameter of EM.means"):
        em.means(draws[:, :-1])
