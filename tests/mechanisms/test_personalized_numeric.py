"""Personalized SDPM (docs/math.md §2.4): parameters, per-group client, mergeable aggregate, wire form, the
inverse-variance combination of per-group EM means, and its unbiasedness and variance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.numeric.em import EM
from ldpsim.mechanisms.frequency.personalized import combine_inverse_variance
from ldpsim.mechanisms.numeric.personalized_numeric import PersonalizedSDPM
from ldpsim.mechanisms.numeric.sdpm import SDPM
from tests.stats import em_draw as _draw, fisher_covariance as _fisher_covariance
from tests.stats import assert_variance

RANGES = ((-0.75, 0.75), (-0.5, 0.5), (-0.25, 0.25))  # the paper's SDPM-Personalized (25/50/75 % high)
SHARES = (0.4, 0.3, 0.3)


@pytest.fixture(scope="module")
def mech():
    return PersonalizedSDPM(2.0, ranges=RANGES, bins=8, tol=1e-6, max_iter=100_000)


def _population(n, rng):
    groups = np.repeat(np.arange(3), (np.array(SHARES) * n).astype(int))
    return rng.uniform(-1, 1, groups.size), groups


@pytest.mark.parametrize("bad, exc, match", [
    ([], ValueError, r"'ranges' parameter of PersonalizedSDPM must be a non-empty sequence"),
    ([(0, 0.5), (0.0, 0.5)], ValueError, r"distinct low ranges.*Got \[\(0, 0.5\), \(0.0, 0.5\)\]"),
    ([(0, 0.5), (0.2, 1.5)], ValueError, r"'ranges\[1\]' parameter of PersonalizedSDPM must be a pair"),
    ([(0.5,)], TypeError, r"'ranges\[0\]' parameter"),
    ("ab", TypeError, r"'ranges' parameter"),
])
def test_bad_ranges(bad, exc, match):
    with pytest.raises(exc, match=match):
        PersonalizedSDPM(1.0, ranges=bad, bins=8)


def test_bad_epsilon_bins_and_groups(mech):
    with pytest.raises(ValueError, match=r"'epsilon' parameter of PersonalizedSDPM"):
        PersonalizedSDPM(0.0, ranges=RANGES, bins=8)
    with pytest.raises(ValueError, match=r"'bins' parameter of EM"):
        PersonalizedSDPM(1.0, ranges=RANGES, bins=1)
    with pytest.raises(ValueError, match=r"'groups'.*\[0, 3\).*got 3 at index 1"):
        mech.perturb([0.1, 0.2], groups=[0, 3], rng=0)
    with pytest.raises(ValueError, match="same length"):
        mech.perturb([0.1, 0.2], groups=[0], rng=0)
    with pytest.raises(ValueError, match=r"PersonalizedSDPM: 'values'.*1.5.* at index 0"):
        mech.perturb([1.5], groups=[0], rng=0)


def test_client_uses_each_users_own_range(mech):
    rng = np.random.default_rng(3)
    x, g = _population(30_000, rng)
    r = mech.perturb(x, g, rng)
    np.testing.assert_array_equal(r.group, g)
    for k, (a, b) in enumerate(RANGES):
        mine = g == k
        own_low = mine & (x >= a) & (x <= b) & (r.y >= a) & (r.y <= b)
        np.testing.assert_array_equal(r.y[own_low], x[own_low])  # condition (9) for the chosen range
        high = mine & ((x < a) | (x > b))
        assert np.any((r.y[high] >= a) & (r.y[high] <= b))  # high users are PM: they land anywhere


def test_aggregate_concatenates_group_histograms_and_merges(mech):
    rng = np.random.default_rng(4)
    x, g = _population(5000, rng)
    r = mech.perturb(x, g, rng)
    agg = mech.aggregate(r)
    parts = [EM(SDPM(2.0, low), bins=8).aggregate(r.y[g == k]).data for k, low in enumerate(RANGES)]
    np.testing.assert_array_equal(agg.data, np.concatenate(parts))
    half = type(r)(r.y[:2000], r.group[:2000]), type(r)(r.y[2000:], r.group[2000:])
    merged = mech.aggregate(half[0]) + mech.aggregate(half[1])
    np.testing.assert_array_equal(merged.data, agg.data)
    assert merged.n == agg.n == g.size
    other = PersonalizedSDPM(2.0, ranges=RANGES[:2], bins=8)
    with pytest.raises(ValueError, match="aggregate was made by"):
        other.estimate_mean(agg)


def test_wire_form_round_trip(mech):
    rng = np.random.default_rng(5)
    x, g = _population(1000, rng)
    r = mech.perturb(x, g, rng)
    payload = mech.encode(r)
    assert mech.report_bytes == 9 and len(payload) == 9 * g.size
    back = mech.decode(payload)
    np.testing.assert_array_equal(back.y, r.y)
    np.testing.assert_array_equal(back.group, r.group)
    with pytest.raises(ValueError, match="not a whole number"):
        mech.decode(payload[:-1])


def test_group_estimates_and_combination(mech):
    rng = np.random.default_rng(6)
    x, g = _population(20_000, rng)
    g[g == 2] = 1  # group 2 left empty: skipped
    agg = mech.aggregate(mech.perturb(x, g, rng))
    means, variances = mech.group_estimates(agg)
    for k in (0, 1):
        em = mech.ems[k]
        f = em.estimate(Aggregate(int((g == k).sum()), agg.data[mech.offsets[k]:mech.offsets[k + 1]], em.kind))
        assert means[k] == pytest.approx(em.midpoints @ f, rel=1e-12)
        assert variances[k] == pytest.approx(f @ em.mechanism.report_variance(em.midpoints) / (g == k).sum(),
                                             rel=1e-12)
    assert math.isnan(means[2]) and variances[2] == math.inf
    mean, var = mech.estimate_mean_and_variance(agg)
    expected = combine_inverse_variance(means, variances)
    assert mean == pytest.approx(float(expected[0])) and var == pytest.approx(float(expected[1]))
    assert mech.estimate_mean(agg) == mean


@pytest.mark.slow
def test_combined_mean_unbiased_with_fisher_variance(mech):
    """R = 30 replications with fixed group sizes (40/30/30 % of n = 1.5·10⁵) and fresh values drawn
    from f (uniform in bins). Design: ε = 2, d = 8, every group's f_i ≥ 5 Fisher sd from 0 (checked),
    so each group's EM mean is asymptotically N(μ, V_g) with V_g = midᵀΣ_F mid. The weights
    w_g = 1/Var_g (plug-in) are, to first order, their values at the true f, so the combination is
    ≈ N(μ, Σ w_g² V_g / (Σ w_g)²): a t-test on the mean and a χ² test on the variance (α/2 each)."""
    n, r = 150_000, 30
    edges = np.linspace(-1, 1, 9)
    mids = (edges[:-1] + edges[1:]) / 2
    f = 1 + np.exp(-0.5 * ((mids - 0.3) / 0.3) ** 2)
    f /= f.sum()
    mu = float(mids @ f)
    sizes = (np.array(SHARES) * n).astype(int)
    groups = np.repeat(np.arange(3), sizes)
    fisher, weight = [], []
    for em, n_g in zip(mech.ems, sizes):
        cov = _fisher_covariance(em, f, n_g)
        assert np.all(f >= 5 * np.sqrt(np.diag(cov)))
        fisher.append(mids @ cov @ mids)
        weight.append(n_g / (f @ em.mechanism.report_variance(mids)))
    weight = np.array(weight)
    var = float((weight ** 2 * np.array(fisher)).sum() / weight.sum() ** 2)
    estimates = []
    for seed in np.random.SeedSequence(23).spawn(r):
        rng = np.random.default_rng(seed)
        x = _draw(f, edges, n, rng)
        estimates.append(mech.estimate_mean(mech.aggregate(mech.perturb(x, groups, rng))))
    estimates = np.array(estimates)
    t = (estimates.mean() - mu) / (estimates.std(ddof=1) / math.sqrt(r))
    bound = stats.t.isf(1e-4 / 4, r - 1)
    assert abs(t) <= bound, f"combined mean {estimates.mean():.5f} vs {mu:.5f}: |t| = {abs(t):.2f} > {bound:.2f}"
    assert_variance(estimates[:, None], [mu], [var], alpha=1e-4 / 2, what="combined mean variance")
