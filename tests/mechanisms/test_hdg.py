"""HDG heat maps (docs/math.md §2.8): the guideline's granularities, the grids' exact mean and variance
before and after consistency, consistency itself, Norm-Sub and the weighted update, the per-user path,
the privacy boundary of every group's oracle, and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.workloads.key_taps import key_taps
from ldpsim.mechanisms.frequency.grr import GRR
from ldpsim.mechanisms.numeric.hdg import HDG, hdg_granularity, norm_sub, weighted_update
from ldpsim.runtime.errors import InputError
from tests.stats import assert_mean, assert_variance


def _grid(side=16, n=30_000, seed=0):
    return key_taps(n, rng=seed, keys=1).grid_counts(side)[0]


def test_guideline_granularities():
    """n = 10⁵, ε = 1: the paper's g₁ = 20.7 and g₂ = 3.38 round to 16 and 4; n = 10⁴: 9.61 → 8, 1.90 → 2;
    a huge ε caps both at the map's side."""
    assert hdg_granularity(1.0, 100_000, 16) == (16, 4)
    assert hdg_granularity(1.0, 10_000, 16) == (8, 2)
    assert hdg_granularity(1.0, 10_000, 64) == (8, 2)
    assert hdg_granularity(20.0, 10_000, 16) == (16, 16)
    hdg = HDG(1.0, 10_000, side=16)
    assert (hdg.g1, hdg.g2) == (8, 2)
    assert (HDG(1.0, 10_000, side=16, g1=16, g2=8).g1, HDG(1.0, 10_000, side=16, g1=16, g2=8).g2) == (16, 8)


@pytest.mark.parametrize("epsilon, oracle", [(1.0, "auto"), (30.0, "grr")])
@pytest.mark.parametrize("consistent", [False, True])
def test_grid_estimates_match_exact_mean_and_variance(consistent, epsilon, oracle):
    """R = 400 exact-sampler aggregates of a key's taps (x, y grids of 16, 2-D grid of 4 × 4): every grid
    cell's (raw or consistent) estimate has mean = its true count and variance = the closed form
    (Bonferroni over the cells, α = 10⁻⁴ per test). ε = 1 (OUE and GRR groups) is mostly the oracles'
    noise; ε = 30 (GRR, flips < 10⁻¹¹) is the group draw's alone, c·(3 − 1) for a cell of c devices."""
    hdg = HDG(epsilon, 100_000, side=16, g1=16, g2=4, oracle=oracle)
    grid = _grid()
    truth = hdg.true_grids(grid)
    var = hdg.node_variance(grid, consistent=consistent)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(11).spawn(400)]
    est = np.array([(hdg.consistent_grids if consistent else hdg.grid_estimates)(hdg.sample_aggregate(grid, r))
                    for r in rngs])
    live = var > 1e-6 * var.max()  # at ε = 30 an empty cell's variance is ~10⁻¹¹: no flips seen, nothing to test
    assert_mean(est[:, live], truth[live], var[live], what="HDG grid cell mean")
    assert_variance(est[:, live], truth[live], var[live], what="HDG grid cell variance")


def test_consistency_makes_the_grids_agree_and_sum_to_n():
    """After the linear step every grid sums to n and the 1-D grids summed into the 2-D grid's blocks are its
    marginals (x: column sums, y: row sums)."""
    hdg = HDG(1.0, 100_000, side=16, g1=16, g2=4)
    grid = _grid()
    agg = hdg.sample_aggregate(grid, 3)
    x, y, g = np.split(hdg.consistent_grids(agg), [16, 32])
    g = g.reshape(4, 4)
    for part in (x, y, g):
        assert part.sum() == pytest.approx(agg.n, rel=1e-12)
    np.testing.assert_allclose(x.reshape(4, 4).sum(axis=1), g.sum(axis=0), rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(y.reshape(4, 4).sum(axis=1), g.sum(axis=1), rtol=1e-10, atol=1e-8)


def test_consistency_lowers_the_variance_of_each_marginal():
    """With g₂ = 2 and k = g₁/g₂ = 8 cells per block, a block of the x grid (sum of 8 cells) and the 2-D
    grid's column (sum of 2) have unequal variances: the consistent block, their inverse-variance blend,
    has a variance below both (exact variances, a uniform population; a swapped weighting gives more
    than the better of the two)."""
    hdg = HDG(1.0, 100_000, side=16, g1=16, g2=2)
    grid = np.full((16, 16), 40)
    n_nodes = 2 * 16 + 4
    block = np.zeros(n_nodes)
    block[:8] = 1.0                               # the x grid's first block (columns 0..7)
    column = np.zeros(n_nodes)
    column[[32, 34]] = 1.0                        # the 2-D grid's first column (rows 0 and 1)
    raw_block, raw_column = hdg.linear_variance(grid, np.stack([block, column], axis=1))
    consistent = hdg.linear_variance(grid, hdg.consistency_matrix.T @ block)
    assert consistent < min(raw_block, raw_column)


def test_norm_sub_and_weighted_update():
    """Norm-Sub leaves non-negative counts summing to n that are the input shifted by one constant where
    positive; the weighted update fed consistent non-negative grids reproduces them as its margins."""
    c = np.array([50.0, -10.0, 30.0, 5.0, -2.0])
    out = norm_sub(c, 60.0)
    assert out.sum() == pytest.approx(60.0) and np.all(out >= 0)
    pos = out > 0
    assert np.ptp((c - out)[pos]) == pytest.approx(0.0)
    truth = np.outer(np.arange(1, 9), np.arange(8, 0, -1)).astype(float)  # y × x, 8 × 8
    n = truth.sum()
    fit = weighted_update(truth.sum(axis=0), truth.sum(axis=1), truth.reshape(4, 2, 4, 2).sum(axis=(1, 3)), n, 200)
    assert fit.sum() == pytest.approx(n)
    np.testing.assert_allclose(fit.sum(axis=0), truth.sum(axis=0), rtol=1e-6)
    np.testing.assert_allclose(fit.sum(axis=1), truth.sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(fit.reshape(4, 2, 4, 2).sum(axis=(1, 3)), truth.reshape(4, 2, 4, 2).sum(axis=(1, 3)),
                               rtol=1e-6)


def test_estimate_is_a_map_of_n_non_negative_counts_near_the_truth():
    """ε = 1, 10⁵ devices on one key: the map sums to n, has no negative cell, and its L2 error on shares
    is below the flat LDP map's expected error at that n (0.061; docs/math.md §9.10)."""
    hdg = HDG(1.0, 100_000, side=16)
    grid = _grid(n=100_000)
    est = hdg.estimate(hdg.sample_aggregate(grid, 5))
    assert est.shape == (16, 16) and est.sum() == pytest.approx(100_000) and est.min() >= 0
    assert np.sqrt(((est - grid) ** 2).sum()) / 100_000 < 0.061


def test_per_user_path_puts_points_in_their_cells():
    """ε = 30 with GRR (flip probability < 10⁻¹¹): each group's raw estimate is 3 × the true counts of the
    devices that drew the group, and the per-user aggregate has the sampler's layout."""
    hdg = HDG(30.0, 1000, side=8, g1=8, g2=4, oracle="grr")
    pts = np.random.default_rng(1).uniform(-1, 1, (600, 2))
    reports = hdg.perturb(pts, rng=0)
    agg = hdg.aggregate(reports)
    cell = hdg.cells(pts)
    expected = np.concatenate([3 * np.bincount(nodes[cell[reports.groups == g]], minlength=o.domain_size)
                               for g, (o, nodes) in enumerate(zip(hdg.oracles, hdg.node_of))])
    np.testing.assert_allclose(hdg.grid_estimates(agg), expected, atol=1e-6)
    assert agg.data.shape == hdg.sample_aggregate(hdg.cell_grid(pts), 0).data.shape


def test_each_group_is_epsilon_ldp_at_its_exact_boundary():
    """One report through one group's oracle: its largest likelihood ratio is e^ε exactly (GRR: p/q; OUE:
    p(1 − q)/((1 − p)q)), and the group is drawn independently of the point."""
    hdg = HDG(1.0, 100_000, side=16)
    for o in hdg.oracles:
        ratio = o.p / o.q if isinstance(o, GRR) else o.p * (1 - o.q) / ((1 - o.p) * o.q)
        assert ratio == pytest.approx(math.e, rel=1e-12)
    assert hdg.guarantee.epsilon_report == 1.0 and hdg.guarantee.kind == "ldp"


@pytest.mark.parametrize("kwargs, word", [
    (dict(side=12), "side"), (dict(g1=12), "g1"), (dict(g1=4, g2=8), "g2"), (dict(oracle="olh"), "oracle"),
    (dict(n=0), "n"), (dict(epsilon=-1.0), "epsilon"), (dict(iterations=0), "iterations")])
def test_bad_parameters_are_refused(kwargs, word):
    args = dict(epsilon=1.0, n=1000, side=16) | kwargs
    with pytest.raises(InputError, match=word):
        HDG(**args)


def test_bad_points_are_refused():
    hdg = HDG(1.0, 1000, side=8)
    with pytest.raises(InputError, match="points"):
        hdg.perturb(np.zeros((3, 3)))
    with pytest.raises(InputError, match="points"):
        hdg.perturb(np.array([[0.0, 1.5]]))
