"""Square wave (docs/math.md §2.5; its numeric contract is in test_numeric_contract.py): its exact privacy
boundary, its constants, its mean estimate, the closed-form report histogram and EM/EMS on SW reports."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms.numeric.em import EM
from ldpsim.mechanisms.numeric.report_histogram import histogram_moments
from ldpsim.mechanisms.numeric.square_wave import SW, optimal_half_width
from tests.stats import assert_chisquare_gof, assert_mean, assert_variance

SWS = {"sw-eps1": SW(1.0), "sw-eps0.2": SW(0.2), "sw-eps4": SW(4.0), "sw-eps1-b0.4": SW(1.0, b=0.4)}


@pytest.fixture(params=sorted(SWS))
def mech(request):
    return SWS[request.param]


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_density_ratio_is_exactly_e_eps(eps):
    """sup_y max_{x,x'} density(y|x)/density(y|x') on a grid holding every window end: exactly e^ε."""
    m = SW(eps)
    x = np.linspace(-1, 1, 81)
    y = np.unique(np.concatenate([np.linspace(-m.C, m.C, 4001), x - m.w, x + m.w]))
    dens = m.output_density(x[:, None], y[None, :])
    assert np.all(dens > 0)
    ratio = (dens.max(axis=0) / dens.min(axis=0)).max()
    assert math.isclose(ratio, math.exp(eps), rel_tol=1e-12), (ratio, math.exp(eps))
    assert m.output_density(0.0, m.C * 1.001) == 0.0
    assert m.guarantee.epsilon_report == eps


def test_constants_and_optimal_half_width():
    """Total mass one, window mass 2b·e^ε/(2b·e^ε + 1), Li et al.'s b(ε) (series below ε = 0.5 joins
    the closed form there; b → 1/2 as ε → 0)."""
    for eps in (0.01, 0.5, 1.0, 3.0):
        m = SW(eps)
        e = math.exp(eps)
        assert math.isclose(m.p * 2 * m.w + m.q * (2 * m.C - 2 * m.w), 1.0, rel_tol=1e-13)
        assert math.isclose(m.p_window, 2 * m.b * e / (2 * m.b * e + 1), rel_tol=1e-13)
    e = math.exp(1.0)
    assert math.isclose(SW(1.0).b, (1.0 * e - e + 1) / (2 * e * (e - 1 - 1.0)), rel_tol=1e-14)
    below, above = optimal_half_width(0.5 - 1e-12), optimal_half_width(0.5)
    assert math.isclose(below, above, rel_tol=1e-9)
    assert math.isclose(optimal_half_width(1e-6), 0.5, rel_tol=1e-5)
    with pytest.raises(ValueError, match=r"'b' parameter of SW must be a float in the range \(0, 1e\+06\]"):
        SW(1.0, b=0.0)


def test_bin_transition_is_exact_average_of_bin_probabilities(mech):
    """Cut every in-bin where a window end x ± w meets an output edge: P(out-bin | x) is then linear
    on each piece, so the midpoint rule on the pieces is exact up to rounding."""
    in_edges = np.linspace(-1, 1, 9)
    out_edges = np.linspace(-mech.C, mech.C, 13)
    M = mech.bin_transition(in_edges, out_edges)
    np.testing.assert_allclose(M.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    quad = np.empty_like(M)
    for i in range(in_edges.size - 1):
        u0, u1 = in_edges[i], in_edges[i + 1]
        cuts = np.concatenate([[u0, u1], out_edges - mech.w, out_edges + mech.w])
        cuts = np.unique(cuts[(cuts >= u0) & (cuts <= u1)])
        mids = (cuts[:-1] + cuts[1:]) / 2
        quad[i] = (mech.bin_probabilities(mids, out_edges) * np.diff(cuts)[:, None]).sum(axis=0) / (u1 - u0)
    np.testing.assert_allclose(M, quad, rtol=0, atol=1e-12)


def test_estimate_mean_unbiased_with_theoretical_variance():
    """Fixed population, R = 400 repeats: the mean estimate Σx*/(n·a) has mean x̄ and variance
    mean_variance/a² (χ² test; the estimate of 2000 users is close to normal)."""
    m = SW(1.0)
    values = np.random.default_rng(0).beta(2, 5, 2000) * 2 - 1
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(8).spawn(400)]
    est = np.array([[m.estimate_mean(m.aggregate(m.perturb(values, r)))] for r in rngs])
    var = m.mean_variance(values) / m.mean_scale ** 2
    assert_mean(est, [values.mean()], [var], what="SW mean estimate")
    assert_variance(est, [values.mean()], [var], what="SW mean estimate variance")


def test_report_histogram_mean_and_variance_are_closed_form():
    """The EM aggregate (output-bin counts) over R = 400 repeats of a fixed population: every bin's mean
    and variance match histogram_moments (Bonferroni over the bins); the covariance rows sum to zero
    (the total is n)."""
    m = SW(2.0)
    em = EM(m, bins=8)
    values = np.random.default_rng(1).uniform(-1, 0.6, 3000)
    mean, cov = histogram_moments(m, values, em.out_edges)
    np.testing.assert_allclose(cov.sum(axis=1), 0.0, atol=1e-9)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(9).spawn(400)]
    counts = np.array([em.aggregate(m.perturb(values, r)).data for r in rngs], float)
    assert_mean(counts, mean, np.diag(cov), alpha=1e-4 / 2, what="SW histogram mean")
    assert_variance(counts, mean, np.diag(cov), alpha=1e-4 / 2, what="SW histogram variance")


def _smooth_distribution(d):
    g = np.exp(-0.5 * ((np.linspace(-1, 1, d) - 0.2) / 0.35) ** 2) + 0.3 * np.exp(-((np.linspace(-1, 1, d) + 0.6) / 0.1) ** 2)
    return g / g.sum()


def test_iid_client_histogram_is_multinomial_of_the_em_matrix():
    """Values drawn i.i.d. from a piecewise-uniform law f over the EM bins: the client's output histogram
    is Multinomial(n, Mᵀf) exactly (chi-square), so M is the law EM inverts."""
    m, d = SW(1.0), 16
    em = EM(m, bins=d)
    f = _smooth_distribution(d)
    rng = np.random.default_rng(11)
    n = 400_000
    b = rng.choice(d, size=n, p=f)
    x = em.in_edges[b] + rng.random(n) * (em.in_edges[1] - em.in_edges[0])
    assert_chisquare_gof(em.aggregate(m.perturb(x, rng)).data, f @ em.matrix, what="SW histogram of i.i.d. data")


def test_em_on_sw_is_fisher_consistent_and_ems_keeps_a_distribution():
    """EM fed the expected histogram n·Mᵀf (the n → ∞ limit) returns f (the MLE of exact data is the truth:
    consistency); EMS returns a distribution whose smoothing bias is bounded by EM's error plus f's roughness."""
    m, d = SW(4.0), 16  # EM converges slowly at small ε (ε = 2: 6·10⁴ iterations); ε = 4 takes 2·10³
    f = _smooth_distribution(d)
    em = EM(m, bins=d, tol=1e-9, max_iter=200_000)
    from ldpsim.mechanisms.base import Aggregate
    agg = Aggregate(10**6, 10**6 * (f @ em.matrix), em.kind)
    res = em.run(agg)
    assert res.converged
    np.testing.assert_allclose(res.f, f, atol=1e-5)
    ems = EM(m, bins=d, smoothing=True).run(agg).f
    assert ems.min() >= 0 and math.isclose(ems.sum(), 1.0, rel_tol=1e-12)


def test_em_error_shrinks_with_n():
    """Consistency at finite n: the mean Wasserstein-1 error of EM over 10 repeats falls from n = 10⁴ to 10⁶
    (exact multinomial aggregates of i.i.d. piecewise-uniform data)."""
    from ldpsim.mechanisms.base import Aggregate
    m, d = SW(1.0), 32
    em = EM(m, bins=d)
    f = _smooth_distribution(d)
    pi = f @ em.matrix
    rng = np.random.default_rng(5)
    err = {}
    for n in (10**4, 10**6):
        errs = [np.abs(np.cumsum(em.estimate(Aggregate(n, rng.multinomial(n, pi / pi.sum()), em.kind)) - f)).sum()
                * 2 / d for _ in range(10)]
        err[n] = np.mean(errs)
    assert err[10**6] < err[10**4] / 3, err
