"""LDP quadtree heat maps (docs/math.md §2.7) and the per-key tap model (docs/math.md §5.1): the Morton
layout is a quadtree, cell estimates match their exact mean and variance, and the device count the
closed form asks for delivers the stated error."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.distribution_metrics import heatmap_error
from ldpsim.evaluation.workloads.key_taps import key_taps
from ldpsim.evaluation.workloads.types import largest_remainder
from ldpsim.mechanisms.numeric.quadtree_heatmap import QuadtreeHeatmap, morton
from ldpsim.runtime.errors import InputError
from tests.stats import assert_mean, assert_variance, assert_z


def test_morton_leaves_are_a_quadtree():
    """Leaves of one level-ℓ node (consecutive Morton blocks of 4^{h−ℓ}) are exactly one square block of the grid."""
    hm = QuadtreeHeatmap(1.0, side=8)
    grid = np.arange(64).reshape(8, 8)
    leaves = hm.to_leaves(grid)
    np.testing.assert_array_equal(hm.to_grid(leaves), grid)
    for level, block in ((1, 4), (2, 2)):
        sums = leaves.reshape(4 ** level, -1).sum(axis=1)
        blocks = grid.reshape(8 // block, block, 8 // block, block).sum(axis=(1, 3))
        np.testing.assert_array_equal(np.sort(sums), np.sort(blocks.ravel()))
    assert morton(np.array([1, 0, 1]), np.array([0, 1, 1]), 1).tolist() == [1, 2, 3]


def _tap_grid(side=8, n=3000, seed=0):
    taps = key_taps(n, rng=seed, keys=1)
    return taps.grid_counts(side)[0]


def test_cell_estimates_match_exact_mean_and_variance():
    """R = 300 exact-sampler aggregates of a tap population: 6 cells (busy, sparse, empty) have mean =
    truth and variance = cell_variance (Bonferroni over 6 cells, two tests)."""
    hm = QuadtreeHeatmap(1.0, side=8)
    grid = _tap_grid()
    var = hm.cell_variance(grid)
    cells = [(3, 3), (4, 4), (0, 0), (7, 7), (2, 5), (5, 2)]
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(7).spawn(300)]
    rows, cols = np.array(cells).T
    est = np.array([hm.estimate(hm.sample_aggregate(grid, r))[rows, cols] for r in rngs])
    truth, v = [grid[c] for c in cells], [var[c] for c in cells]
    assert_mean(est, truth, v, alpha=1e-4 / 2, what="heat-map cell mean")
    assert_variance(est, truth, v, alpha=1e-4 / 2, what="heat-map cell variance")


def test_client_path_points_land_in_their_cells():
    """Per-user reports of points at ε = 30 (GRR exact to 10⁻¹³): the leaf level's estimate is h × the
    Morton cells of the devices that chose the leaf level, and the consistent map sums to n."""
    hm = QuadtreeHeatmap(30.0, side=4, oracle="grr")
    pts = np.random.default_rng(1).uniform(-1, 1, (400, 2))
    reports = hm.perturb(pts, rng=0)
    agg = hm.aggregate(reports)
    leaf_level = reports.levels == hm.tree.height
    expected = hm.tree.height * np.bincount(hm.cells(pts)[leaf_level], minlength=16)
    np.testing.assert_allclose(hm.tree.node_estimates(agg)[-1], expected, atol=1e-6)
    assert abs(hm.estimate(agg).sum() - 400) < 1e-6


def test_devices_needed_delivers_the_stated_error():
    """At ε = 1, a tap map on 8 × 8 cells, target √E‖p̂ − p‖² = 0.05: n = devices_needed. A population of
    exactly n devices with those shares: the mean of ‖p̂ − p‖² over R = 200 repeats equals Σ Var/n² (z test
    with the repeats' sd) and that is ≤ 0.05² (it is 0.05² up to the rounding of n and of the counts)."""
    hm = QuadtreeHeatmap(1.0, side=8)
    grid = _tap_grid()
    shares = grid / grid.sum()
    n = hm.devices_needed(shares, 0.05)
    counts = largest_remainder(shares.ravel(), n).reshape(8, 8)
    expected = hm.cell_variance(counts).sum() / n ** 2
    assert expected <= 0.05 ** 2 * (1 + 1e-3)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(8).spawn(200)]
    l2sq = np.array([heatmap_error(counts[None], hm.estimate(hm.sample_aggregate(counts, r))[None]).l2sq[0]
                     for r in rngs])
    assert_z(l2sq.mean(), expected, l2sq.std(ddof=1) / np.sqrt(l2sq.size), what="E‖p̂ − p‖²")
    with pytest.raises(InputError, match="summing to one"):
        hm.devices_needed(grid, 0.05)


def test_tap_model_structure():
    """Seeded; one tap per device; left-handed taps sit 2·hand_shift_x to the left of right-handed ones
    (small spreads: no clipping; z test on the difference of means, sd from the samples)."""
    a, b = key_taps(5000, rng=3, keys=4), key_taps(5000, rng=3, keys=4)
    np.testing.assert_array_equal(a.xy, b.xy)
    assert a.grid_counts(16).sum() == 5000 and np.all(np.abs(a.xy) <= 1)
    one = a._replace(keys=np.array([1]), xy=np.array([[0.9, -0.9]]))  # right edge, bottom row
    assert one.grid_counts(4)[1, 0, 3] == 1 and one.grid_counts(4).sum() == 1
    t = key_taps(200_000, rng=4, keys=1, key_spread=0.05, habit_spread=0.05, tap_spread=(0.1, 0.1),
                 left_share=0.3, hand_shift=(0.2, 0.0))
    x_left, x_right = t.xy[t.left_handed, 0], t.xy[~t.left_handed, 0]
    sd = np.sqrt(x_left.var() / x_left.size + x_right.var() / x_right.size)
    assert_z(x_right.mean() - x_left.mean(), 0.4, sd, what="handedness shift")
    assert_z(t.left_handed.mean(), 0.3, np.sqrt(0.3 * 0.7 / t.left_handed.size), what="left-handed share")


def test_bad_parameters():
    with pytest.raises(InputError, match="power of two"):
        QuadtreeHeatmap(1.0, side=12)
    with pytest.raises(InputError, match="shape \\(n, 2\\)"):
        QuadtreeHeatmap(1.0, side=4).cells(np.zeros(3))
    with pytest.raises(InputError, match="'points'"):
        QuadtreeHeatmap(1.0, side=4).cells(np.array([[0.0, 1.5]]))
    with pytest.raises(InputError, match="'left_share'"):
        key_taps(10, left_share=1.5)
