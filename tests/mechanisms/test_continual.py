"""Continual counters A = L·R: structure, unbiasedness and exact variances (docs/math.md §12.1–12.3).

Statistical tests draw R repeats of one 90-day stream at once (rows = repeats) with fixed seeds;
each assertion is family-wise at false-alarm rate ALPHA = 1e-4 (Bonferroni over days and windows).
"""

import itertools

import numpy as np
import pytest

from ldpsim.mechanisms.continual import (COUNTERS, binary_tree, fresh_daily, noise_variance, sqrt_coefficients,
                                         square_root, tree_levels)
from ldpsim.runtime.errors import InputError
from tests.stats import assert_mean, assert_variance, assert_z

T = 90
REPEATS = 20_000
WINDOWS = ((0, 89), (29, 29), (89, 89), (0, 0), (10, 40), (31, 62), (63, 88), (45, 46))


def _stream(seed=0):
    return np.random.default_rng(seed).poisson(50.0, T).astype(float)


@pytest.mark.parametrize("make", COUNTERS.values(), ids=COUNTERS.keys())
@pytest.mark.parametrize("days", [1, 2, 7, 64, 90])
def test_every_counter_factorises_the_prefix_sum_matrix(make, days):
    f = make(days)
    np.testing.assert_allclose(f.L @ f.R, np.tril(np.ones((days, days))), atol=1e-12)
    assert f.R.min() >= 0


@pytest.mark.parametrize("days", [1, 2, 3, 63, 64, 65, 90, 128])
def test_tree_has_floor_log2_plus_one_levels_and_every_node_is_used(days):
    f = binary_tree(days)
    assert tree_levels(days) == int(np.floor(np.log2(days))) + 1
    # one p-sum per day; a day lies in at most one per level (day 0 in one per level); every p-sum serves a prefix
    assert f.R.shape == (days, days)
    assert f.R.sum(axis=0).max() == f.R.sum(axis=0)[0] == tree_levels(days)
    assert np.all(np.abs(f.L).sum(axis=0) > 0)
    # ‖L_t‖² = popcount(t + 1): one node per set bit of the prefix length
    popcount = np.array([bin(n).count("1") for n in range(1, days + 1)])
    np.testing.assert_array_equal(f.prefix_variance(1.0), popcount)


def test_square_root_is_the_toeplitz_square_root_of_the_prefix_matrix():
    f = sqrt_coefficients(6)
    np.testing.assert_allclose(f, [1, 1 / 2, 3 / 8, 5 / 16, 35 / 128, 63 / 256])
    sq = square_root(T)
    np.testing.assert_allclose(sq.prefix_variance(1.0), np.cumsum(sqrt_coefficients(T) ** 2))


@pytest.mark.parametrize("make", COUNTERS.values(), ids=COUNTERS.keys())
def test_window_variance_is_the_squared_norm_of_the_difference_of_rows(make):
    f = make(T)
    a, b = np.array(WINDOWS).T
    padded = np.vstack([np.zeros(f.L.shape[1]), f.L])
    expected = 3.0 * np.array([np.sum((padded[j + 1] - padded[i]) ** 2) for i, j in WINDOWS])
    np.testing.assert_allclose(f.window_variance(3.0, a, b), expected)
    np.testing.assert_allclose(f.daily_variance(3.0), f.window_variance(3.0, np.arange(T), np.arange(T)))


def _draws(f, noise, scale, seed):
    x = _stream()
    prefix, daily = f.release(np.broadcast_to(x, (REPEATS, T)), noise, scale, rng=seed)
    a, b = np.array(WINDOWS).T
    padded = np.hstack([np.zeros((REPEATS, 1)), prefix])
    windows = padded[:, b + 1] - padded[:, a]
    truth = np.cumsum(x), x, np.array([x[i:j + 1].sum() for i, j in WINDOWS])
    variances = (f.prefix_variance(noise_variance(noise, scale)), f.daily_variance(noise_variance(noise, scale)),
                 f.window_variance(noise_variance(noise, scale), a, b))
    weights = (f.L, f.window_weights(np.arange(T), np.arange(T)), f.window_weights(a, b))
    return (prefix, daily, windows), truth, variances, weights


@pytest.mark.parametrize("make", COUNTERS.values(), ids=COUNTERS.keys())
def test_gaussian_estimates_are_unbiased_with_their_exact_variances(make):
    draws, truth, variances, _ = _draws(make(T), "gaussian", 2.5, seed=11)
    for what, s, mu, v in zip(("prefix", "daily", "window"), draws, truth, variances):
        assert_mean(s, mu, v, what=f"{what} mean")
        assert_variance(s, mu, v, what=f"{what} variance")     # exact χ²_R: the estimates are normal


@pytest.mark.parametrize("make", COUNTERS.values(), ids=COUNTERS.keys())
def test_laplace_estimates_are_unbiased_with_their_exact_variances(make):
    """Mean squared error about the truth: mean v, variance (κ₄ + 2v²)/R with κ₄ = 12b⁴·Σw⁴ (CLT)."""
    b = 1.5
    draws, truth, variances, weights = _draws(make(T), "laplace", b, seed=12)
    for what, s, mu, v, w in zip(("prefix", "daily", "window"), draws, truth, variances, weights):
        assert_mean(s, mu, v, what=f"{what} mean")
        kappa4 = 12 * b ** 4 * np.sum(w ** 4, axis=-1)
        assert_z(((s - mu) ** 2).mean(axis=0), v, np.sqrt((kappa4 + 2 * v ** 2) / REPEATS), what=f"{what} variance")


def test_items_are_released_together_and_the_seed_fixes_the_output():
    f = binary_tree(T)
    x = np.vstack([_stream(0), _stream(1), np.zeros(T)])
    p1, d1 = f.release(x, "gaussian", 1.0, rng=5)
    p2, d2 = f.release(x, "gaussian", 1.0, rng=5)
    assert p1.shape == d1.shape == (3, T)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_allclose(np.cumsum(d1, axis=1), p1)
    one, _ = f.release(x[0], "gaussian", 1.0, rng=5)
    assert one.shape == (T,)


def test_sensitivities_match_brute_force_over_every_contribution():
    """‖R·u‖ is convex in u, so its maximum over {0 ≤ u ≤ c, ≤ k days} is at some u ∈ {0, c}^S."""
    days, c = 8, 2.0
    for f in (binary_tree(days), square_root(days), fresh_daily(days)):
        for k in range(1, days + 1):
            best1 = best2 = 0.0
            for size in range(1, k + 1):
                for s in itertools.combinations(range(days), size):
                    u = np.zeros(days)
                    u[list(s)] = c
                    best1, best2 = max(best1, np.abs(f.R @ u).sum()), max(best2, np.linalg.norm(f.R @ u))
            l1, l2 = f.l1_sensitivity(c, k), f.l2_sensitivity(c, k)
            assert l1.exact and l1.value == pytest.approx(best1)
            if l2.exact:
                assert l2.value == pytest.approx(best2)
            else:
                assert l2.value >= best2 * (1 - 1e-12)
            assert l2.exact == (k in (1, days))


def test_a_person_with_a_total_of_m_has_the_event_level_sensitivity_at_c_equal_m():
    rng = np.random.default_rng(3)
    u = 4.0 * rng.dirichlet(np.full(T, 0.2), size=2_000)          # contributions totalling m = 4
    for make in COUNTERS.values():
        f = make(T)
        assert np.linalg.norm(u @ f.R.T, axis=1).max() <= f.l2_sensitivity(4.0, 1).value * (1 + 1e-12)
        assert np.abs(u @ f.R.T).sum(axis=1).max() <= f.l1_sensitivity(4.0, 1).value * (1 + 1e-12)


def test_event_level_sensitivity_is_the_largest_column_norm():
    for make in COUNTERS.values():
        f = make(T)
        assert f.l2_sensitivity(3.0, 1).value == pytest.approx(3.0 * np.linalg.norm(f.R, axis=0).max())
        assert f.rho(2.0, 3.0, 1) == pytest.approx(f.l2_sensitivity(3.0, 1).value ** 2 / 8)
    assert binary_tree(T).l2_sensitivity().value ** 2 == pytest.approx(7)


def test_bad_inputs_name_the_parameter():
    f = square_root(10)
    with pytest.raises(InputError, match="windows"):
        f.window_variance(1.0, 3, 10)
    with pytest.raises(InputError, match="windows"):
        f.window_variance(1.0, 4, 3)
    with pytest.raises(InputError, match="counts"):
        f.release(np.ones(9), "gaussian", 1.0)
    with pytest.raises(InputError, match="'noise'"):
        f.release(np.ones(10), "cauchy", 1.0)
    with pytest.raises(ValueError, match="'scale'"):
        f.release(np.ones(10), "gaussian", 0.0)
    with pytest.raises(ValueError, match="'days'"):
        f.l2_sensitivity(1.0, 11)
    with pytest.raises(ValueError, match="'days'"):
        binary_tree(0)
