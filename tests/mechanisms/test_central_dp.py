"""Central-DP histogram release (docs/math.md §6, seed 002)."""

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms.central.central_dp import LaplaceHistogram, project_lattice, project_simplex_l1, synthetic_data
from tests.stats import ALPHA, assert_chisquare_gof, assert_mean


def test_noise_scale_follows_neighbouring_relation():
    assert LaplaceHistogram(1.0).noise_scale(100) == pytest.approx(2 / 100)
    assert LaplaceHistogram(0.5, neighbour="add-remove").noise_scale(100) == pytest.approx(1 / 50)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="'epsilon' parameter of LaplaceHistogram"):
        LaplaceHistogram(bad)


def test_bad_neighbour_and_counts():
    with pytest.raises(ValueError, match="'neighbour'"):
        LaplaceHistogram(1.0, neighbour="swap")
    with pytest.raises(ValueError, match="non-negative"):
        LaplaceHistogram(1.0).noisy([3, -1])
    with pytest.raises(ValueError, match="at least one record"):
        LaplaceHistogram(1.0).noisy([0, 0])


def test_noise_is_laplace_with_the_stated_variance():
    counts = np.array([50, 30, 20])
    mech = LaplaceHistogram(1.0)
    rng = np.random.default_rng(0)
    z = np.array([mech.noisy(counts, rng) for _ in range(20_000)])
    var = 2 * mech.noise_scale(100) ** 2
    assert_mean(z, counts / 100, np.full(3, var))
    # Laplace noise is not normal: test its variance via the exact law of |L| ~ Exp(b): KS per bin
    b = mech.noise_scale(100)
    for j in range(3):
        pv = stats.kstest(np.abs(z[:, j] - counts[j] / 100), "expon", args=(0, b)).pvalue
        assert pv >= ALPHA / 3


@pytest.mark.slow
def test_privacy_ratio_of_laplace_densities_is_exactly_e_eps():
    """Neighbouring histograms differ by Δ in L1; the density ratio of the release is at most e^ε, attained."""
    n, eps = 10, 0.7
    mech = LaplaceHistogram(eps)
    theta, theta2 = np.array([0.5, 0.5]), np.array([0.4, 0.6])  # one record replaced: L1 = 2/n
    b = mech.noise_scale(n)
    grid = np.linspace(-1, 2, 3001)
    zz = np.stack(np.meshgrid(grid, grid), -1).reshape(-1, 2)
    log_ratio = (np.abs(zz - theta2).sum(1) - np.abs(zz - theta).sum(1)) / b
    assert log_ratio.max() == pytest.approx(eps, rel=1e-9)


def test_simplex_projection_is_l1_optimal_and_valid():
    rng = np.random.default_rng(1)
    for _ in range(200):
        z = rng.normal(0.2, 0.3, size=6)
        p = project_simplex_l1(z)
        assert np.all(p >= 0) and p.sum() == pytest.approx(1.0)
        lower_bound = np.clip(-z, 0, None).sum() + abs(1 - np.clip(z, 0, None).sum())
        assert np.abs(z - p).sum() == pytest.approx(lower_bound)


def test_lattice_projection_hand_examples():
    np.testing.assert_array_equal(project_lattice([0.51, 0.276, 0.216], 100), [51, 28, 21])  # seed 002's example
    # over-full: every c <= z*n summing to n costs 6; the documented choice scales down proportionally
    np.testing.assert_array_equal(project_lattice([1.5, -0.2, 0.1], 10), [9, 0, 1])
    np.testing.assert_array_equal(project_lattice([-1.0, -1.0], 3), [2, 1])


@pytest.mark.slow
def test_lattice_projection_is_l1_optimal():
    rng = np.random.default_rng(2)
    for _ in range(200):
        n = int(rng.integers(1, 50))
        z = rng.normal(0.25, 0.4, size=4)
        c = project_lattice(z, n)
        assert c.sum() == n and np.all(c >= 0)
        # brute force over all compositions of n into 4 parts
        best = min(np.abs(z * n - np.array([a, b, cc, n - a - b - cc])).sum()
                   for a in range(n + 1) for b in range(n + 1 - a) for cc in range(n + 1 - a - b))
        assert np.abs(z * n - c).sum() == pytest.approx(best)


def test_release_and_synthetic_data():
    counts = np.array([500, 300, 200])
    rel = LaplaceHistogram(1.0).release(counts, rng=3, lattice=True)
    assert rel.sum() == pytest.approx(1) and np.all(rel * 1000 == np.round(rel * 1000))
    data = synthetic_data(rel, 50_000, rng=4, labels=np.array(["a", "b", "c"]))
    assert_chisquare_gof([np.sum(data == x) for x in "abc"], rel)
    with pytest.raises(ValueError, match="valid released histogram"):
        synthetic_data([0.5, 0.6], 10)
