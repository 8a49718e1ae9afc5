"""SUE, SHE and THE beyond the contract suite: parameters from the paper, SHE's privacy at its
boundary and its exact gamma-difference sampler, THE's threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms import SHE, SUE, THE, make
from ldpsim.mechanisms.frequency.histogram_encoding import optimal_theta, the_bit_probabilities
from tests.stats import assert_same_distribution


def test_sue_probabilities_and_headline_variance():
    m = make("sue", epsilon=1.0, domain_size=5)
    assert isinstance(m, SUE)
    h = math.exp(0.5)
    assert m.bit_probabilities() == pytest.approx((h / (h + 1), 1 / (h + 1)), rel=1e-15)
    counts = np.array([10, 0, 30, 5, 5])
    np.testing.assert_allclose(m.variance(counts), 50 * h / (h - 1) ** 2, rtol=1e-12)  # f-independent


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_the_threshold_minimises_the_variance_factor(eps):
    theta = optimal_theta(eps)
    assert 0.5 <= theta <= 1.0
    grid = np.linspace(0.5, 0.999, 2000)
    def factor(t):
        p, q = the_bit_probabilities(eps, t)
        return q * (1 - q) / (p - q) ** 2
    assert factor(theta) <= min(factor(t) for t in grid) * (1 + 1e-9)
    m = THE(epsilon=eps, domain_size=4)
    assert m.epsilon_report <= eps


def test_the_bits_are_thresholded_laplace():
    """P[1 + Lap(2/ε) > θ] and P[Lap(2/ε) > θ] from Laplace tails match (p, q)."""
    eps, theta = 1.5, 0.7
    p, q = the_bit_probabilities(eps, theta)
    from scipy import stats
    assert math.isclose(p, stats.laplace.sf(theta - 1, scale=2 / eps), rel_tol=1e-12)
    assert math.isclose(q, stats.laplace.sf(theta, scale=2 / eps), rel_tol=1e-12)
    with pytest.raises(ValueError, match="'theta'"):
        THE(epsilon=1.0, domain_size=4, theta=0.2)


def test_she_privacy_boundary_is_exactly_epsilon():
    """Log-density ratio of one report between inputs 0 and 1 is ≤ ε, with equality at y_0 ≥ 1, y_1 ≤ 0."""
    m = SHE(epsilon=1.2, domain_size=3)
    rng = np.random.default_rng(0)
    y = rng.normal(0, 3, size=(5000, 3))
    diff = m.log_likelihood(y, np.zeros(5000, int)) - m.log_likelihood(y, np.ones(5000, int))
    assert diff.max() <= 1.2 + 1e-12
    corner = np.array([[1.5, -0.5, 0.3]])
    assert math.isclose(float(m.log_likelihood(corner, [0])[0] - m.log_likelihood(corner, [1])[0]), 1.2, rel_tol=1e-12)


def test_she_gamma_sampler_equals_laplace_sums():
    """Σ of n Laplace(b) = Gamma(n, b) − Gamma(n, b): direct vs per-user sums (z and KS per column)."""
    m = SHE(epsilon=0.8, domain_size=3)
    counts = np.array([7, 0, 3])
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(2).spawn(4000)]
    direct = np.array([m.sample_aggregate(counts, r).data for r in rngs[:2000]])
    users = np.array([m.perturb_aggregate(np.repeat(np.arange(3), counts), r).data for r in rngs[2000:]])
    assert_same_distribution(direct, users, what="SHE sums")
    empty = m.sample_aggregate(np.zeros(3, int), rng=0)
    assert empty.n == 0 and np.all(empty.data == 0)


def test_she_report_noise_is_exactly_laplace():
    """Each report entry minus the one-hot bit is Laplace(2/ε): mean, variance 2b² and a KS test against
    the Laplace CDF over 4·10⁵ entries (the reports are drawn as sign × exponential)."""
    from scipy import stats
    from tests.stats import assert_mean, assert_variance
    m = SHE(epsilon=0.7, domain_size=40)
    x = np.random.default_rng(1).integers(0, 40, 10_000)
    y = m.perturb(x, rng=2)
    y[np.arange(x.size), x] -= 1.0
    b = m.scale
    assert_mean(y, 0.0, 2 * b * b, what="SHE noise mean per coordinate")
    assert_variance(y, 0.0, 2 * b * b, what="SHE noise variance per coordinate")
    assert stats.kstest(y.ravel(), stats.laplace(scale=b).cdf).pvalue >= 1e-4  # false alarm 10⁻⁴
    assert (y > 0).mean() == pytest.approx(0.5, abs=4.5 * 0.5 / math.sqrt(y.size))  # the sign is fair


def test_she_fused_sums_are_laplace_sums_across_batches(monkeypatch):
    """perturb_aggregate in batches of 3 users and blocks of 2 columns (7 users and 5 items: ragged
    batches and blocks, and K = 0 or K = m often) has the law of f_x + Gamma(n, b) − Gamma(n, b) per
    column (the direct sampler)."""
    from ldpsim.mechanisms.frequency import histogram_encoding
    monkeypatch.setattr(histogram_encoding, "_BATCH_USERS", 3)
    monkeypatch.setattr(histogram_encoding, "_BLOCK_CELLS", 6)
    m = SHE(epsilon=1.5, domain_size=5)
    counts = np.array([4, 0, 2, 1, 0])
    values = np.repeat(np.arange(5), counts)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(5).spawn(6000)]
    fused = np.array([m.perturb_aggregate(values, r).data for r in rngs[:3000]])
    direct = np.array([m.sample_aggregate(counts, r).data for r in rngs[3000:]])
    assert_same_distribution(fused, direct, what="SHE fused sums")
    from tests.stats import assert_mean, assert_variance
    assert_mean(fused, counts, 7 * 2 * m.scale ** 2, what="SHE fused mean")
    assert_variance(fused, counts, 7 * 2 * m.scale ** 2, what="SHE fused variance")
