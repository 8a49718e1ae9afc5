"""Quadtree budget allocation (docs/math.md §6, seed 004)."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from ldpsim.mechanisms.central.quadtree import (NoisyQuadtree, arithmetic_allocation, cormode_allocation,
                                 geometric_allocation, level_errors, uniform_allocation,
                                 worst_case_nodes_per_level)
from tests.stats import assert_mean


@pytest.mark.parametrize("alloc", [
    lambda: uniform_allocation(0.5, 7), lambda: arithmetic_allocation(0.5, 7, 0.01),
    lambda: geometric_allocation(0.5, 7, 1.415), lambda: cormode_allocation(0.5, 7)])
def test_budgets_sum_to_epsilon_and_are_positive(alloc):
    eps = alloc()
    assert eps.sum() == pytest.approx(0.5) and np.all(eps > 0) and eps.size == 8


def test_arithmetic_d_range_is_validated():
    with pytest.raises(ValueError, match=r"'d' parameter of arithmetic_allocation must be a float in the range \[0"):
        arithmetic_allocation(1.0, 7, 2 / 56)
    with pytest.raises(ValueError, match="'d'"):
        arithmetic_allocation(1.0, 7, -0.001)
    with pytest.raises(ValueError, match="'q'"):
        geometric_allocation(1.0, 7, 0)


def test_seed_004_findings():
    """h = 7, ε = 1: total error minimized at d ≈ 0.024; q ≈ 1.415 gives nearly equal per-level error."""
    h = 7
    r = minimize_scalar(lambda d: level_errors(arithmetic_allocation(1.0, h, d)).sum(),
                        bounds=(0, 2 / (h * (h + 1)) - 1e-12), method="bounded", options={"xatol": 1e-7})
    assert r.x == pytest.approx(0.024, abs=0.0005)
    per_level = level_errors(geometric_allocation(1.0, h, 1.415))
    assert per_level.max() / per_level.min() < 1.01
    assert level_errors(geometric_allocation(1.0, h, np.sqrt(2))).std() < 1e-6 * per_level.mean()


def test_capped_node_bound_moves_the_optimum():
    h = 7
    capped = worst_case_nodes_per_level(h, capped=True)
    assert capped[-1] == 1 and capped[-2] == 4
    r = minimize_scalar(lambda d: level_errors(arithmetic_allocation(1.0, h, d), capped).sum(),
                        bounds=(0, 2 / 56 - 1e-12), method="bounded")
    assert 0.028 < r.x < 0.032


def test_decomposition_covers_the_query_exactly_once():
    pts = np.random.default_rng(0).uniform(-1, 1, size=(5000, 2))
    tree = NoisyQuadtree.build(pts, uniform_allocation(1.0, 4), rng=1)
    for (x0, x1, y0, y1) in [(0, 16, 0, 16), (3, 11, 2, 9), (0, 1, 0, 1), (5, 13, 0, 16)]:
        masks = tree.decomposition(x0, x1, y0, y1)
        cover = np.zeros((16, 16), int)
        for i, m in enumerate(masks):
            cover += np.kron(m.astype(int), np.ones((2 ** i, 2 ** i), int))
        expected = np.zeros((16, 16), int)
        expected[x0:x1, y0:y1] = 1
        np.testing.assert_array_equal(cover, expected)
        exact_from_nodes = sum(tree.counts[i][m].sum() for i, m in enumerate(masks))
        assert exact_from_nodes == tree.counts[0][x0:x1, y0:y1].sum()
    assert [m.sum() for m in tree.decomposition(0, 16, 0, 16)] == [0, 0, 0, 0, 1]


@pytest.mark.slow
def test_measured_query_error_matches_analytic():
    """Noisy answer − exact has mean 0 and variance Σ_i n_i·2/ε_i² (Laplace noise per node)."""
    pts = np.random.default_rng(3).uniform(-1, 1, size=(2000, 2))
    budgets = geometric_allocation(1.0, 3, 1.415)
    rng = np.random.default_rng(4)
    errs, n_used = [], None
    for _ in range(4000):
        tree = NoisyQuadtree.build(pts, budgets, rng)
        noisy, exact, n_used = tree.answer(1, 7, 2, 8)
        errs.append(noisy - exact)
    var = level_errors(budgets, n_used).sum()
    errs = np.array(errs)[:, None]
    assert_mean(errs, [0.0], [var])
    # Laplace sums are not normal: compare the variance with a z-bound using the sample's fourth moment
    m4 = np.mean(errs ** 4)
    se = np.sqrt((m4 - var ** 2) / errs.size)
    assert abs(np.mean(errs ** 2) - var) <= 4.42 * se  # two-sided, alpha = 1e-5


def test_bad_inputs():
    with pytest.raises(ValueError, match="points"):
        NoisyQuadtree.build(np.array([[2.0, 0.0]]), [1.0])
    with pytest.raises(ValueError, match="budgets"):
        NoisyQuadtree.build(np.zeros((3, 2)), [1.0, -1.0])
    tree = NoisyQuadtree.build(np.zeros((3, 2)), [0.5, 0.5])
    with pytest.raises(ValueError, match="query"):
        tree.decomposition(1, 1, 0, 2)
