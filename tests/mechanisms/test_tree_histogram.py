"""Tree histograms with consistency (docs/math.md §2.6): consistency, exact range/CDF variances,
the direct sampler against the client path, quantiles by the delta method, privacy per level."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms.frequency.grr import GRR
from ldpsim.mechanisms.frequency.oue import OUE
from ldpsim.mechanisms.numeric.tree_histogram import TreeHistogram, make_consistent
from ldpsim.runtime.errors import InputError
from tests.stats import assert_mean, assert_same_distribution, assert_variance

TREES = {"b4-h3-auto": TreeHistogram(1.0, 4, 3), "b2-h5-grr": TreeHistogram(2.0, 2, 5, "grr"),
         "b3-h3-oue": TreeHistogram(0.5, 3, 3, "oue"),
         # large ε: the sampling of levels dominates the oracles' noise (the −(Σ_ℓ μ_ℓ)² term matters)
         "b4-h3-eps5-oue": TreeHistogram(5.0, 4, 3, "oue")}


@pytest.fixture(params=sorted(TREES))
def tree(request):
    return TREES[request.param]


def _leaf_counts(tree, n, seed=0):
    """A skewed population: leaf shares ∝ a Beta(2, 5) shape, some leaves empty."""
    t = (np.arange(tree.leaves) + 0.5) / tree.leaves
    w = t * (1 - t) ** 4
    w[-max(1, tree.leaves // 8):] = 0
    return np.random.default_rng(seed).multinomial(n, w / w.sum())


def test_consistency_is_linear_unbiased_and_sums_up():
    """Exact node counts are a fixed point; any input gives children summing to their parent at every
    level (checked by rebuilding the tree from the leaves) and leaves summing to the root."""
    b, h = 3, 4
    rng = np.random.default_rng(0)
    leaves = rng.integers(0, 50, b ** h).astype(float)
    exact = [leaves.reshape(b ** lv, -1).sum(axis=1) for lv in range(1, h + 1)]
    np.testing.assert_allclose(make_consistent(exact, leaves.sum(), b), leaves, rtol=1e-12)
    noisy = [e + rng.normal(0, 5, e.size) for e in exact]
    out = make_consistent(noisy, 1000.0, b)
    assert math.isclose(out.sum(), 1000.0, rel_tol=1e-12)
    # the top-down pass keeps every level's adjusted values: the level sums of the leaves equal them when
    # recomputed, and the operator is linear (A·ŷ + n/D)
    tree = TreeHistogram(1.0, b, h)
    flat = np.concatenate(noisy)
    np.testing.assert_allclose(tree.consistency_matrix @ flat + 1000.0 / b ** h, out, rtol=1e-10)


@pytest.mark.parametrize("eps, k, kind", [(1.0, 4, GRR), (1.0, 16, OUE), (3.0, 16, GRR), (3.0, 64, OUE)])
def test_auto_oracle_rule_and_privacy_per_level(eps, k, kind):
    """auto: GRR while k − 2 < 3e^ε; each level's oracle is ε-LDP with its ratio exactly e^ε."""
    tree = TreeHistogram(eps, 4, int(round(math.log(k, 4))))
    o = tree.level_oracles[-1]
    assert isinstance(o, kind) and o.epsilon == eps == tree.guarantee.epsilon_report
    ratio = o.p / o.q if kind is GRR else o.p * (1 - o.q) / (o.q * (1 - o.p))
    assert math.isclose(ratio, math.exp(eps), rel_tol=1e-12)


def test_range_and_leaf_estimates_match_exact_mean_and_variance(tree):
    """R = 400 aggregates from the exact sampler: consistent ranges (three sizes) and a raw decomposition
    range have mean = truth and variance = the closed form (Bonferroni over the 4 columns, two tests)."""
    counts = _leaf_counts(tree, 4000)
    D = tree.leaves
    ranges = [(0, 1), (1, D // 2 + 1), (D // 4, D - 1)]
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(3).spawn(400)]
    est = []
    for r in rngs:
        agg = tree.sample_aggregate(counts, r)
        leaves = tree.estimate(agg)
        est.append([leaves[a:b].sum() for a, b in ranges] + [tree.range_count(agg, 1, D // 2 + 1, consistent=False)])
    truth = [counts[a:b].sum() for a, b in ranges] + [counts[1:D // 2 + 1].sum()]
    var = [tree.range_variance(counts, a, b) for a, b in ranges] + [tree.range_variance(counts, 1, D // 2 + 1, False)]
    assert_mean(np.array(est), truth, var, alpha=1e-4 / 2, what="tree range mean")
    assert_variance(np.array(est), truth, var, alpha=1e-4 / 2, what="tree range variance")


def test_consistency_lowers_the_range_variance(tree):
    """The consistent estimate of a range is never worse than the raw decomposition's, here strictly better."""
    counts = _leaf_counts(tree, 4000)
    D = tree.leaves
    for a, b in [(0, D // 2), (1, D - 1), (D // 3, 2 * D // 3)]:
        assert tree.range_variance(counts, a, b) < tree.range_variance(counts, a, b, consistent=False)
    assert tree.range_variance(counts, 0, D) < 1e-9 * counts.sum()  # the root is n exactly


def test_cdf_variance_is_the_prefix_range_variance():
    tree = TREES["b4-h3-auto"]
    counts = _leaf_counts(tree, 4000)
    v = tree.cdf_variance(counts)
    assert v[0] == pytest.approx(0, abs=1e-15) and v[-1] == pytest.approx(0, abs=1e-12)
    assert math.isclose(v[10], tree.range_variance(counts, 0, 10) / 4000 ** 2, rel_tol=1e-12)


def test_direct_sampler_matches_the_client_path():
    """Range estimates from per-user reports and from sample_aggregate have the same law (R = 200 each)."""
    tree = TREES["b2-h5-grr"]
    counts = _leaf_counts(tree, 1500)
    values = np.repeat((np.arange(tree.leaves) + 0.5) / tree.leaves * 2 - 1, counts)
    ss = np.random.SeedSequence(4).spawn(400)

    def cols(agg):
        leaves = tree.estimate(agg)
        return [leaves[:5].sum(), leaves[3:20].sum(), tree.range_count(agg, 2, 11, consistent=False)]

    a = [cols(tree.perturb_aggregate(values, np.random.default_rng(s))) for s in ss[:200]]
    b = [cols(tree.sample_aggregate(counts, np.random.default_rng(s))) for s in ss[200:]]
    assert_same_distribution(a, b, what="tree: client path vs direct sampler")


def test_quantiles_match_the_delta_method_at_large_n():
    """n = 10⁶ devices, R = 300: the median and 90th percentile estimates have mean = the true quantile
    (of the leaf-uniform population) and variance = the delta method's, which is first-order: the
    bias and the variance's relative error are O(1/√n)-small here, so the χ² test at α = 1e-4 applies."""
    tree = TreeHistogram(1.0, 4, 4)
    counts = _leaf_counts(tree, 10**6)
    alphas = np.array([0.5, 0.9])
    e = tree.edges
    F = np.concatenate([[0.0], np.cumsum(counts)]) / counts.sum()
    from ldpsim.mechanisms.numeric.tree_histogram import quantile_from_cdf
    truth = quantile_from_cdf(e, F, alphas)
    var = tree.quantile_variance(counts, alphas)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(6).spawn(300)]
    est = np.array([tree.quantile(tree.sample_aggregate(counts, r), alphas) for r in rngs])
    assert_mean(est, truth, var, alpha=1e-4 / 2, what="tree quantile mean")
    assert_variance(est, truth, var, alpha=1e-4 / 2, what="tree quantile variance")


def test_bad_parameters_and_inputs_are_named():
    with pytest.raises(InputError, match=r"'oracle' parameter of TreeHistogram must be one of"):
        TreeHistogram(1.0, oracle="olh")
    with pytest.raises(InputError, match=r"'height' parameter of TreeHistogram"):
        TreeHistogram(1.0, 2, 20)
    with pytest.raises(TypeError, match=r"'branching' parameter"):
        TreeHistogram(1.0, 2.0)
    tree = TREES["b4-h3-auto"]
    with pytest.raises(InputError, match=r"'alpha' must lie in the open interval"):
        tree.quantile(tree.perturb_aggregate([0.0, 0.5], rng=0), [0.0])
    with pytest.raises(InputError, match=r"'hi' parameter"):
        tree.range_variance(np.ones(64, int), 5, 5)
    with pytest.raises(InputError, match=r"'values'"):
        tree.perturb([1.5])
    with pytest.raises(ValueError, match="aggregate was made by"):
        TREES["b2-h5-grr"].estimate(tree.perturb_aggregate([0.0], rng=0))


def test_level_sampling_variance_alone_at_large_epsilon():
    """At ε = 30 the level oracles are exact to 10⁻¹³, so a range estimate varies only through which level
    each device chose: the h·Σ_ℓ μ_ℓ² − (Σ_ℓ μ_ℓ)² part of the closed form, checked with R = 400."""
    tree = TreeHistogram(30.0, 4, 3, "grr")
    counts = _leaf_counts(tree, 300)
    ranges = [(1, 33), (16, 63), (5, 6)]
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(12).spawn(400)]
    est = np.array([[tree.estimate(agg)[a:b].sum() for a, b in ranges]
                    for agg in (tree.sample_aggregate(counts, r) for r in rngs)])
    truth = [counts[a:b].sum() for a, b in ranges]
    var = [tree.range_variance(counts, a, b) for a, b in ranges]
    assert_mean(est, truth, var, alpha=1e-4 / 2, what="tree range mean (ε = 30)")
    assert_variance(est, truth, var, alpha=1e-4 / 2, what="tree range variance (ε = 30)")
