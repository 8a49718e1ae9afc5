"""Devices per key by heat-map design (docs/math.md §9.10): each design's device count, simulated, gives
the stated error — the mean of ‖p̂ − p‖² over repeats equals its closed form (z test, sd from the repeats)
and that is ≤ τ²."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.distribution_metrics import heatmap_error
from ldpsim.evaluation.heatmap_designs import _secagg_devices, heatmap_designs
from ldpsim.evaluation.privacy.trust_accounting import calibrate
from ldpsim.evaluation.privacy.trust_models import trust_model
from ldpsim.evaluation.workloads.key_taps import key_taps
from ldpsim.evaluation.workloads.types import largest_remainder
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.central.quadtree import NoisyQuadtree, geometric_allocation
from ldpsim.mechanisms.numeric.tree_histogram import TreeHistogram
from tests.stats import assert_z

SIDE, TAU = 8, 0.05


@pytest.fixture(scope="module")
def shares():
    g = key_taps(200_000, rng=5, keys=1).grid_counts(SIDE)[0]
    return g / g.sum()


def _check(l2sq, expected, what):
    assert expected <= TAU ** 2 * (1 + 1e-2)
    assert_z(l2sq.mean(), expected, l2sq.std(ddof=1) / math.sqrt(l2sq.size), what=what)


def test_central_quadtree_count_delivers_the_error(shares):
    """Seed 004's tree (geometric split) at its device count: a cell is its noisy leaf, Var = 2/ε₀²."""
    n = next(r.devices for r in heatmap_designs(shares) if r.design == "central-quadtree")
    eps0 = geometric_allocation(1.0, 3, 2 ** (1 / 3))[0]
    counts = largest_remainder(shares.ravel(), n)
    centres = (np.stack(np.meshgrid(np.arange(SIDE), np.arange(SIDE), indexing="ij"), -1).reshape(-1, 2) + 0.5)
    points = np.repeat(centres / SIDE * 2 - 1, counts, axis=0)
    rngs = np.random.SeedSequence(1).spawn(300)
    l2sq = []
    for s in rngs:
        tree = NoisyQuadtree.build(points, geometric_allocation(1.0, 3, 2 ** (1 / 3)), rng=np.random.default_rng(s))
        l2sq.append(heatmap_error(tree.counts[0][None], tree.noisy[0][None]).l2sq[0])
    _check(np.array(l2sq), SIDE ** 2 * 2 / eps0 ** 2 / n ** 2, "central quadtree ‖p̂ − p‖²")


def test_ldp_flat_count_delivers_the_error(shares):
    n = next(r.devices for r in heatmap_designs(shares) if r.design == "ldp-flat")
    flat = TreeHistogram(1.0, SIDE ** 2, 1, "oue")
    counts = largest_remainder(shares.ravel(), n)
    expected = flat.linear_variance(counts, flat.consistency_matrix.T).sum() / n ** 2
    l2sq = np.array([heatmap_error(counts.reshape(1, SIDE, SIDE),
                                   flat.estimate(flat.sample_aggregate(counts, np.random.default_rng(s)))
                                   .reshape(1, SIDE, SIDE)).l2sq[0]
                     for s in np.random.SeedSequence(2).spawn(200)])
    _check(l2sq, expected, "LDP flat ‖p̂ − p‖²")


def test_secagg_count_delivers_the_error_and_its_epsilon(shares):
    """Distributed Skellam at its device count (cohorts of 200, so the count is not the one-cohort floor):
    the released cells' error matches the summed cohort noise (the noise the accountant calibrated)."""
    n, var = _secagg_devices(1.0, 1e-9, SIDE ** 2, TAU, 200)
    assert n > 400  # several cohorts: the search, not the one-cohort floor, sets n
    model = calibrate(trust_model("secagg", noise=IntegerNoise("skellam", 10.0), min_cohort=200), 1.0, n=200,
                      days=1, delta=1e-9, neighbour="add-remove")
    assert model.noise.variance() == var
    protocol = model.secure_sum()
    counts = largest_remainder(shares.ravel(), n)
    l2sq = []
    for s in np.random.SeedSequence(3).spawn(200):
        est, published = protocol.release(counts, rng=np.random.default_rng(s))
        l2sq.append(heatmap_error(counts.reshape(1, SIDE, SIDE), est.reshape(1, SIDE, SIDE)).l2sq[0])
    _check(np.array(l2sq), SIDE ** 2 * protocol.noise_variance(n) / n ** 2, "secagg ‖p̂ − p‖²")
