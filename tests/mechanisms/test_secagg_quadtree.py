"""The adaptive quadtree under secure aggregation with distributed Skellam noise (docs/math.md §9.11): the
calibrated noise at its exact (ε, δ) boundary, node and map estimates against their exact mean and
variance, the expected false splits, the per-device path's law, and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise, hockey_stick
from ldpsim.mechanisms.aggregation.secagg_quadtree import SecAggQuadtree, skellam_for
from ldpsim.runtime.errors import InputError
from tests.stats import assert_mean, assert_same_distribution, assert_variance, assert_z


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-9), (0.5, 1e-6)])
def test_calibrated_noise_sits_at_its_exact_boundary(epsilon, delta):
    """δ(ε) of Sk(μ) for a count moving by one is ≤ δ, and for μ one bisection step smaller (10⁻⁴) it is
    above δ: the calibration is the smallest noise with the guarantee, not just a safe one."""
    z = skellam_for(epsilon, delta)
    assert hockey_stick(z, epsilon) <= delta
    assert hockey_stick(IntegerNoise("skellam", z.scale / (1 + 2e-4)), epsilon) > delta
    qt = SecAggQuadtree(epsilon, delta, side=4, min_cohort=100)
    assert qt.noise == z and qt.guarantee.kind == "central" and qt.guarantee.delta == delta


# side 4 (h = 2), 3000 devices: each level has ~1500 ± 27 devices, one cohort of min_cohort = 1000 (so its
# noise is exactly the target Sk(μ)); the bar of 8 sd makes the shape certain: the three busy quadrants
# split (their estimates are ≥ 500 ± 25 against a bar of ~78), the empty one does not (P < 10⁻¹³)
GRID = np.zeros((4, 4), np.int64)
GRID[0, 0], GRID[3, 3], GRID[1, 2], GRID[0, 1] = 1200, 1000, 500, 300


def _model():
    return SecAggQuadtree(1.0, side=4, split_sd=8.0, min_cohort=1000)


def test_shape_is_certain_in_the_planted_population():
    qt = _model()
    assert qt.false_split_probability(1500) < 1e-13
    out = qt.release(GRID, rng=0)
    np.testing.assert_array_equal(np.sort(out.asked[1] // 4), [0, 0, 0, 0, 1, 1, 1, 1, 3, 3, 3, 3])
    assert out.deepest[2:, :2].tolist() == [[1, 1], [1, 1]]  # the empty top-left quadrant (rows 2–3, columns 0–1)


def test_map_matches_exact_mean_and_variance():
    """R = 400 runs: every map cell has mean = its count (leaves read at level 2) or a quarter of its
    quadrant's (the empty quadrant, read at level 1), and variance = node_variance (÷ 16 when spread);
    the level's devices only set the cohort count, one cohort in every run here."""
    qt = _model()
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(5).spawn(400)]
    runs = [qt.release(GRID, r) for r in rngs]
    assert all(np.all((1000 <= r.level_devices) & (r.level_devices < 2000)) for r in runs)
    maps = np.array([r.estimate.ravel() for r in runs])
    leaves = qt.layout.to_leaves(GRID)
    quad = leaves.reshape(4, 4).sum(axis=1)  # level-1 counts in Morton order
    at_leaf = qt.layout.to_leaves(runs[0].deepest) == 2
    leaf_mean = np.where(at_leaf, leaves, quad.repeat(4) / 4)
    leaf_var = np.where(at_leaf, qt.node_variance(leaves, 1500), qt.node_variance(quad, 1500).repeat(4) / 16)
    mean, var = qt.layout.to_grid(leaf_mean).ravel(), qt.layout.to_grid(leaf_var).ravel()
    assert_mean(maps, mean, var, what="SecAgg quadtree cell mean")
    assert_variance(maps, mean, var, what="SecAgg quadtree cell variance")


def test_expected_false_splits_match_the_exact_noise_law():
    """A bar of 1.5 sd and all 4000 devices in one cell: level 1 asks 3 empty quadrants, and over R = 300 runs
    the number that split has mean Σ_runs 3·p and variance Σ 3·p(1 − p), p = false_split_probability at the
    run's level-1 devices (1 or 2 cohorts; normal z-test, α = 10⁻⁴)."""
    qt = SecAggQuadtree(1.0, side=4, split_sd=1.5, min_cohort=1000)
    grid = np.zeros((4, 4), np.int64)
    grid[0, 0] = 4000
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(9).spawn(300)]
    splits, p = 0, []
    for r in rngs:
        out = qt.release(grid, r)
        splits += int((out.asked[1] // 4 != 0).sum() // 4)
        p.append(qt.false_split_probability(out.level_devices[0]))
    expected = 3 * float(np.sum(p))
    assert_z(splits, expected, math.sqrt(3 * float(np.sum(np.array(p) * (1 - np.array(p))))) + 1e-9,
             what="false splits of empty quadrants")


def test_per_device_path_has_the_count_level_law():
    """R = 150 runs of each path on the planted population: every map cell agrees (Welch z and KS)."""
    qt = _model()
    pts = np.concatenate([np.column_stack([np.full(c, (col + 0.5) / 2 - 1), np.full(c, (row + 0.5) / 2 - 1)])
                          for (row, col), c in np.ndenumerate(GRID) if c])
    assert np.array_equal(qt.layout.cell_grid(pts), GRID)
    seeds = np.random.SeedSequence(13).spawn(300)
    a = [qt.release(GRID, np.random.default_rng(s)).estimate.ravel() for s in seeds[:150]]
    b = [qt.release_points(pts, np.random.default_rng(s)).estimate.ravel() for s in seeds[150:]]
    assert_same_distribution(a, b, what="SecAgg quadtree map, per device vs count level")


@pytest.mark.parametrize("kwargs, word", [
    (dict(side=12), "side"), (dict(epsilon=0.0), "epsilon"), (dict(delta=2.0), "delta"),
    (dict(split_sd=-1.0), "split_sd"), (dict(min_cohort=1), "min_cohort")])
def test_bad_parameters_are_refused(kwargs, word):
    with pytest.raises(InputError, match=word):
        SecAggQuadtree(**(dict(epsilon=1.0) | kwargs))


def test_bad_counts_are_refused():
    with pytest.raises(InputError, match="grid_counts"):
        _model().release(np.zeros((4, 3), np.int64))
