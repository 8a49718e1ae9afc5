"""Every metric on small examples computed by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation import metrics as M

# truth a = (10, 4, 2), n = 16; two runs of estimates
A = np.array([10, 4, 2])
RUNS = np.array([[12.0, 3.0, 2.0],
                 [5.0, 6.0, 1.0]])


def test_expectation_bias_and_delta_method_se():
    # means (8.5, 4.5, 1.5) → ΔE = (1.5/10, 0.5/4, 0.5/2)
    de, se = M.expectation_bias_with_se(A, RUNS)
    np.testing.assert_allclose(de, [0.15, 0.125, 0.25])
    # sample sd: col0 |12−5|/√2 = 4.95 → se = 4.95/√2 = 3.5; col1 3/√2/√2 = 1.5; col2 0.5 → /a
    np.testing.assert_allclose(se, [0.35, 0.375, 0.25])
    np.testing.assert_allclose(M.expectation_bias(A, RUNS), de)
    zero = M.expectation_bias([3, 0], [[3.0, 1.0]])
    assert zero[0] == 0 and math.isnan(zero[1])


def test_rank_deviation():
    # true ranks (1, 2, 3); run 1 ranks (1, 2, 3); run 2 (5, 6, 1) → ranks (2, 1, 3)
    np.testing.assert_array_equal(M.rank_errors(A, RUNS), [[0, 0, 0], [1, 1, 0]])
    np.testing.assert_allclose(M.rank_deviation(A, RUNS), [0.5, 0.5, 0.0])
    # ties broken by item order: estimates (1, 1, 2) → ranks (2, 3, 1)
    np.testing.assert_array_equal(M.ranks_of([1, 1, 2]), [2, 3, 1])
    np.testing.assert_array_equal(M.ranks_of([[1, 1, 2], [0, 5, 5]]), [[2, 3, 1], [3, 1, 2]])


def test_squared_deviation_absolute_and_relative():
    # errors run 1 (2, −1, 0), run 2 (−5, 2, −1): squares (4, 1, 0), (25, 4, 1)
    np.testing.assert_allclose(M.squared_deviation(A, RUNS), [14.5, 2.5, 0.5])
    np.testing.assert_allclose(M.squared_deviation(A, RUNS, relative=True), [0.145, 2.5 / 16, 0.125])


def test_mse_and_mae():
    # all six squares sum to 35 → 35/6 on the count scale, 35/6/16² on the frequency scale
    assert M.mse(A, RUNS, scale="count") == pytest.approx(35 / 6)
    assert M.mse(A, RUNS) == pytest.approx(35 / 6 / 256)
    np.testing.assert_allclose(M.mse(A, RUNS, scale="count", per_run=True), [5 / 3, 10])
    # absolute errors (2, 1, 0), (5, 2, 1): run means 1 and 8/3, overall 11/6
    assert M.mae(A, RUNS, scale="count") == pytest.approx(11 / 6)
    assert M.mae(A, RUNS) == pytest.approx(11 / 6 / 16)
    assert M.mae(A, RUNS[0], scale="count", per_run=True) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="'scale' parameter must be one of"):
        M.mse(A, RUNS, scale="percent")


def test_with_standard_error():
    # (1, 2, 3, 4): mean 2.5, s² = (2.25 + 0.25 + 0.25 + 2.25)/3 = 5/3, se = √(5/3)/2
    mean, se = M.with_standard_error([1, 2, 3, 4])
    assert mean == 2.5 and se == pytest.approx(math.sqrt(5 / 3) / 2)
    mean, se = M.with_standard_error(M.rank_errors(A, RUNS))
    np.testing.assert_allclose(mean, [0.5, 0.5, 0.0])
    np.testing.assert_allclose(se, [0.5, 0.5, 0.0])  # values (0, 1): s = 1/√2, se = 1/2


def test_confidence_interval():
    # (1, 2, 3, 4): se = √(5/3)/2, t_{3, 0.975} = 3.182446305284263
    low, high = M.confidence_interval([1, 2, 3, 4])
    half = 3.182446305284263 * math.sqrt(5 / 3) / 2
    assert low == pytest.approx(2.5 - half) and high == pytest.approx(2.5 + half)


def test_variance_ratio():
    # empirical variances (ddof 1): 24.5, 4.5, 0.5
    np.testing.assert_allclose(M.variance_ratio(A, RUNS, [49.0, 9.0, 0.25]), [0.5, 0.5, 2.0])


def test_collision_bias_share():
    # a = 10, runs (11, 13): mean 12, s² = 2 → b̂² = 4 − 2/2 = 3; MSE = (1 + 9)/2 = 5 → 0.6
    assert M.collision_bias_share([10], [[11.0], [13.0]]) == pytest.approx(0.6)
    # a constant offset is all bias
    assert M.collision_bias_share(A, [[12, 4, 2], [12, 4, 2]]) == pytest.approx(1.0)
    # pure noise whose bias estimate comes out negative is clipped to 0
    assert M.collision_bias_share(A, RUNS) == 0.0


# top-k: truth (10, 4, 4, 1) has a tie at the 2nd count, so T_2 = {0, 1, 2}; estimates (3, 9, 1, 5)
T = np.array([10, 4, 4, 1])
E = np.array([3.0, 9.0, 1.0, 5.0])


def test_top_k_precision_and_recall():
    # top-2 estimates {1, 3}; ∩ T_2 = {1}
    assert M.top_k_precision(T, E, 2) == 0.5
    assert M.top_k_recall(T, E, 2) == pytest.approx(1 / 3)
    # top-3 estimates {1, 3, 0} ∩ T_2 = {0, 1}
    assert M.top_k_recall(T, E, 2, candidates=3) == pytest.approx(2 / 3)
    np.testing.assert_allclose(M.top_k_precision(T, np.vstack([E, T]), 2), [0.5, 1.0])
    np.testing.assert_array_equal(M.true_top_set(T, 1), [True, False, False, False])
    with pytest.raises(ValueError, match=r"'k' parameter must be an int in the range \[1, 4\]"):
        M.top_k_precision(T, E, 5)


def test_ndcg_at_k():
    # estimated order (1, 3): DCG = 4/log2(2) + 1/log2(3); ideal (0, 1): 10 + 4/log2(3)
    expect = (4 + 1 / math.log2(3)) / (10 + 4 / math.log2(3))
    assert M.ndcg_at_k(T, E, 2) == pytest.approx(expect)
    assert M.ndcg_at_k(T, T.astype(float), 4) == pytest.approx(1.0)


def test_kendall_tau_top_k():
    a = np.array([10, 4, 2, 1])
    # top-3 items (0, 1, 2) with estimates (3, 9, 1): pair (0,1) discordant, (0,2) and (1,2) concordant
    assert M.kendall_tau_top_k(a, E, 3) == pytest.approx(1 / 3)
    # estimates (3, 3, 1): one pair tied in the estimate → τ_b = 2/√(3·2)
    assert M.kendall_tau_top_k(a, [3.0, 3.0, 1.0, 0.0], 3) == pytest.approx(2 / math.sqrt(6))
    np.testing.assert_allclose(M.kendall_tau_top_k(a, np.vstack([E, a]), 3), [1 / 3, 1.0])
    assert math.isnan(M.kendall_tau_top_k(a, [1.0, 1.0, 1.0, 1.0], 3))


def test_shape_errors():
    with pytest.raises(ValueError, match="R × D with D = 3"):
        M.rank_deviation(A, [[1.0, 2.0]])
    with pytest.raises(ValueError, match="at least 2 runs"):
        M.variance_ratio(A, RUNS[:1], [1, 1, 1])
