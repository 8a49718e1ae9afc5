"""Distribution, range, quantile and heat-map errors (docs/math.md §4.2) against hand-computed values,
scipy's W₁ on samples, and their expectations under an estimator with a known variance."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.distribution_metrics import heatmap_error, quantile_error, range_query_mse, wasserstein1
from ldpsim.runtime.errors import InputError
from tests.stats import assert_z


def test_wasserstein1_matches_numerical_integration_and_scipy_point_masses():
    """Piecewise-uniform laws: ∫|F − G| by the trapezoid rule on 10⁶ + 1 nodes; |F − G| is linear between
    nodes except at ≤ 1 sign change per bin, where the rule errs by ≤ slope·h²/4 (slope ≤ 2·max mass/width),
    so |error| ≤ 8 bins · 2 · 4 · h²/4 with h = 2·10⁻⁶. A whole bin moved 50 bins of width 0.02 has W₁ = 1,
    scipy's W₁ between point masses at 0 and 1."""
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(8)), rng.dirichlet(np.ones(8))
    grid = np.linspace(-1, 1, 1_000_001)
    edges = np.linspace(-1, 1, 9)
    diff = np.interp(grid, edges, np.concatenate([[0], np.cumsum(p)])) - np.interp(grid, edges, np.concatenate([[0], np.cumsum(q)]))
    h = grid[1] - grid[0]
    numeric = float(np.sum((np.abs(diff[1:]) + np.abs(diff[:-1])) / 2) * h)
    assert abs(wasserstein1(p, q) - numeric) <= 8 * 2 * 4 * h ** 2 / 4
    a, b = np.zeros(100), np.zeros(100)
    a[10], b[60] = 1, 1
    assert wasserstein1(a, b) == pytest.approx(stats.wasserstein_distance([0.0], [1.0]))  # 50 bins of 0.02


def test_wasserstein1_hand_values():
    assert wasserstein1([1, 0], [0, 1]) == pytest.approx(1.0)  # a unit of mass moved one bin (width 1)
    assert wasserstein1([2, 0, 0, 2], [2, 0, 0, 2]) == 0.0
    # crossing inside a bin: F − G goes from +0.5 to −0.5 within bin 1 → 2 × area 0.5·0.5/2 … exactly:
    # bins of width 1 on [0, 3]: p = (0.5, 0, 0.5), q = (0, 1, 0): F − G at edges 0, .5, −.5, 0
    assert wasserstein1([0.5, 0, 0.5], [0, 1, 0], 0, 3) == pytest.approx(0.25 + 0.25 + 0.25)
    with pytest.raises(InputError, match="non-negative masses"):
        wasserstein1([1, 0], [1.5, -0.5])
    with pytest.raises(InputError, match="same shape|one shape"):
        wasserstein1([1, 0], [1, 0, 0])


def test_range_query_mse_expectation_is_the_mean_range_variance():
    """Estimates true + independent N(0, σ²) per bin: E[MSE_s] = s·σ²/n² for every size s; the
    average over 2000 repeats is within a z bound of it (its sd from the repeats)."""
    rng = np.random.default_rng(1)
    true = rng.integers(0, 100, 32)
    n, sigma = true.sum(), 7.0
    sizes = [1, 4, 16, 32]
    runs = np.array([range_query_mse(true, true + rng.normal(0, sigma, 32), sizes) for _ in range(2000)])
    assert_z(runs.mean(axis=0), np.array(sizes) * sigma ** 2 / n ** 2, runs.std(axis=0, ddof=1) / np.sqrt(2000),
             what="range-query MSE")
    with pytest.raises(InputError, match="'sizes' must be integers in \\[1, 32\\]"):
        range_query_mse(true, true, [0])


def test_quantile_and_heatmap_errors():
    np.testing.assert_allclose(quantile_error([0.1, 0.5], [0.2, 0.4]), [0.1, 0.1])
    true = np.zeros((2, 4, 4))
    true[0, 1, 1], true[1] = 10, 1
    est = true.copy()
    est[0, 1, 1], est[0, 0, 0] = 8, 2
    err = heatmap_error(true, est)
    np.testing.assert_allclose(err.l1, [0.4, 0.0])
    np.testing.assert_allclose(err.l2sq, [0.08, 0.0])
    np.testing.assert_allclose(err.max_abs, [0.2, 0.0])
    with pytest.raises(InputError, match="positive total per key"):
        heatmap_error(np.zeros((1, 2, 2)), np.zeros((1, 2, 2)))
