"""BLH and FLH beyond the contract suite: BLH is OLH with g = 2; FLH's exact theory given its pool
against the linear theory of its report distribution; the pool's server-side shortcut."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.mechanisms import BLH, FLH, OLH, make
from ldpsim.mechanisms.linear_theory import linear_estimator_variance
from tests.stats import assert_z


def test_blh_is_olh_with_two_buckets():
    b = make("blh", epsilon=1.0, domain_size=10)
    assert isinstance(b, BLH) and b.g == 2
    o = OLH(epsilon=1.0, domain_size=10, g=2)
    assert (b.p, b.q) == (o.p, o.q)
    reports = b.perturb(np.arange(10), rng=0)
    np.testing.assert_array_equal(b.aggregate(reports).data, o.aggregate(reports).data)
    with pytest.raises(TypeError):
        BLH(epsilon=1.0, domain_size=10, g=4)


@pytest.mark.parametrize("pool, eps", [(3, 1.0), (16, 2.5)])
def test_flh_theory_equals_linear_theory_of_its_reports(pool, eps):
    m = FLH(epsilon=eps, domain_size=9, pool_size=pool)
    P = m.report_distribution()
    H = m.hash_table()
    A = np.zeros((9, pool * m.g))
    A[np.arange(9)[:, None], np.arange(pool)[None, :] * m.g + H.T] = 1.0
    A = (A - 1.0 / m.g) / (m.p - 1.0 / m.g)  # ĉ_x = (S_x − n/g)/(p − 1/g), n = Σ of all report counts
    counts = np.random.default_rng(0).integers(0, 50, 9)
    np.testing.assert_allclose(A @ P.T @ counts - counts, m.bias(counts), atol=1e-9)
    np.testing.assert_allclose(linear_estimator_variance(P, A, counts), m.variance(counts), rtol=1e-9)
    # the server's shortcut (k′·D hashes on the (j, y) table) equals the definition Σ_u [H_{j_u}(x) = y_u]
    y = m.perturb(np.repeat(np.arange(9), counts), rng=1)
    agg = m.aggregate(y)
    hits = m.hash_table()[y.index] == y.y[:, None]                        # (n, D)
    np.testing.assert_array_equal(m.support_counts(agg), hits.sum(axis=0))
    np.testing.assert_allclose(m.estimate(agg), A @ agg.data.ravel(), rtol=1e-12)


def test_flh_bias_averages_to_zero_over_pools():
    """Given a pool the estimate is biased (Σ_v f_v (p−q)(γ − 1/g)/(p − 1/g)); over pool seeds γ has mean
    1/g, so the bias of an item averages to zero (z-test over 60 pools, α = 1e-4)."""
    counts = np.full(20, 1000)
    bias = np.array([FLH(epsilon=2.0, domain_size=20, pool_size=64, seed=s).bias(counts)[0] for s in range(60)])
    assert_z(bias.mean(), 0.0, bias.std(ddof=1) / np.sqrt(bias.size), what="FLH bias over pools")
    assert bias.std() > 0  # a fixed pool does bias the estimate


def test_flh_parameters():
    with pytest.raises(ValueError, match="'pool_size' parameter of FLH"):
        FLH(epsilon=1.0, domain_size=5, pool_size=0)


@pytest.mark.slow
def test_flh_direct_sampler_placement_branch_matches_theory():
    """Few kept users for a large pool (k′ = 1024): users placed one by one; mean and variance of the
    estimates against the exact given-pool theory (α = 1e-4)."""
    from tests.stats import assert_mean, assert_variance
    m = FLH(epsilon=1.0, domain_size=30, pool_size=1024)
    counts = np.random.default_rng(4).integers(0, 40, 30)
    est = np.array([m.estimate(m.sample_aggregate(counts, np.random.default_rng(s))) for s in range(3000)])
    mean, var = counts + m.bias(counts), m.variance(counts)
    assert_mean(est, mean, var, what="FLH placement mean")
    assert_variance(est, mean, var, what="FLH placement variance")
