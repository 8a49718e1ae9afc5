"""PM (docs/math.md §2.1), and the exact EM matrix of PM and SDPM: the average of the bin probabilities
(quadrature with a stated error bound). The contract every numeric mechanism meets is in
test_numeric_contract.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms.numeric.pm import PM
from ldpsim.mechanisms.numeric.sdpm import SDPM
from tests.stats import assert_mean, assert_variance

NUMERIC = {
    "pm-eps1": PM(1.0),
    "pm-eps0.2": PM(0.2),
    "pm-eps4": PM(4.0),
    "sdpm-eps1": SDPM(1.0, low=(-0.5, 0.5)),
    "sdpm-eps0.5-asym": SDPM(0.5, low=(-0.3, 0.7)),
    "sdpm-eps3-edge": SDPM(3.0, low=(0.2, 1.0)),
}


@pytest.fixture(params=sorted(NUMERIC))
def mech(request):
    return NUMERIC[request.param]


# the exact EM matrix ------------------------------------------------------------------------------
def test_bin_transition_is_the_average_of_bin_probabilities(mech):
    """Composite midpoint rule with K nodes per smooth piece of each in-bin (pieces split at a, b
    and at the output edges, where the atom jumps). On a piece, P(out-bin | x) is piecewise linear
    with at most 4 kinks (window ends crossing the out-bin's edges), each a slope jump J ≤ (p−q)(C+1);
    a kink costs the midpoint rule at most J·δ²/8 (node spacing δ = width/K), linear parts cost 0.
    Summed over pieces of an in-bin of width h and divided by h: |error| ≤ (p−q)(C+1)·h/(2K²)."""
    in_edges = np.linspace(-1, 1, 9)
    out_edges = np.linspace(-mech.C, mech.C, 13)
    M = mech.bin_transition(in_edges, out_edges)
    np.testing.assert_allclose(M.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(M >= 0)
    k = 2000
    pm = mech if isinstance(mech, PM) else mech.pm
    extra = np.asarray(getattr(mech, "low", ()), float)
    quad = np.empty_like(M)
    for i in range(in_edges.size - 1):
        u0, u1 = in_edges[i], in_edges[i + 1]
        cuts = np.concatenate([[u0, u1], extra, out_edges])
        cuts = np.unique(cuts[(cuts >= u0) & (cuts <= u1)])
        total = np.zeros(M.shape[1])
        for c0, c1 in zip(cuts[:-1], cuts[1:]):
            nodes = c0 + (c1 - c0) * (np.arange(k) + 0.5) / k
            total += mech.bin_probabilities(nodes, out_edges).sum(axis=0) * (c1 - c0) / k
        quad[i] = total / (u1 - u0)
    h = 2 / 8
    bound = (pm.p - pm.q) * (pm.C + 1) * h / (2 * k ** 2)
    np.testing.assert_allclose(M, quad, rtol=0, atol=bound)


# PM specifics ----------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_pm_density_ratio_is_exactly_e_eps(eps):
    """sup_y max_{x,x'} density(y|x)/density(y|x') on a fine grid including every breakpoint."""
    m = PM(eps)
    x = np.linspace(-1, 1, 81)
    y = np.unique(np.concatenate([np.linspace(-m.C, m.C, 4001), m.left(x), m.left(x) + m.C - 1]))
    dens = m.output_density(x[:, None], y[None, :])
    assert np.all(dens > 0)
    ratio = (dens.max(axis=0) / dens.min(axis=0)).max()
    assert math.isclose(ratio, math.exp(eps), rel_tol=1e-12), (ratio, math.exp(eps))
    assert m.output_density(0.0, m.C * 1.001) == 0.0


def test_pm_constants_and_window_probability():
    m = PM(1.0)
    t = math.exp(0.5)
    assert math.isclose(m.C, (t + 1) / (t - 1)) and math.isclose(m.p, (math.e - t) / (2 * t + 2))
    assert math.isclose(m.p * (m.C - 1), t / (t + 1), rel_tol=1e-12)  # window mass
    assert math.isclose(m.p * (m.C - 1) + m.q * (m.C + 1), 1.0, rel_tol=1e-12)
    assert m.report_variance(0.0) == pytest.approx((t + 3) / (3 * (t - 1) ** 2))


def test_pm_estimate_mean_unbiased_with_theoretical_variance():
    """Fixed population, R repeats: mean and variance of the estimate vs mean_variance (the
    estimate of n=2000 users is close to normal by the CLT, so the χ² variance test applies)."""
    m = PM(1.0)
    values = np.random.default_rng(0).beta(2, 5, 2000) * 2 - 1
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(8).spawn(400)]
    est = np.array([[m.estimate_mean(m.aggregate(m.perturb(values, r)))] for r in rngs])
    var = m.mean_variance(values)
    assert math.isclose(var, m.report_variance(values).mean() / values.size)
    assert_mean(est, [values.mean()], [var], what="PM mean estimate")
    assert_variance(est, [values.mean()], [var], what="PM mean estimate variance")
    with pytest.raises(ValueError, match="aggregate was made by"):
        PM(2.0).estimate_mean(m.aggregate(np.zeros(3)))
