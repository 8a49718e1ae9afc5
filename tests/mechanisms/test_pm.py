"""PM (docs/math.md §2.1), and the contract every numeric mechanism (PM, SDPM) must meet.

The contract: validated parameters and inputs, same seed ⇒ same reports, closed-form theory = the
exact moments of the density, the client's empirical mean/variance = theory, the client's output
histogram = the exact bin probabilities (chi-square), the EM matrix = the average of the bin
probabilities (quadrature with a stated error bound), merging and the wire form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms.numeric.pm import PM
from ldpsim.mechanisms.numeric.sdpm import SDPM
from tests.stats import assert_chisquare_gof, assert_mean, assert_variance, assert_z

NUMERIC = {
    "pm-eps1": PM(1.0),
    "pm-eps0.2": PM(0.2),
    "pm-eps4": PM(4.0),
    "sdpm-eps1": SDPM(1.0, low=(-0.5, 0.5)),
    "sdpm-eps0.5-asym": SDPM(0.5, low=(-0.3, 0.7)),
    "sdpm-eps3-edge": SDPM(3.0, low=(0.2, 1.0)),
}
#: inputs covering both ends, the middle and (for SDPM) both sides of each low boundary
XS = np.array([-1.0, -0.7, -0.5, -0.3, -0.05, 0.0, 0.2, 0.45, 0.5, 0.7, 0.71, 1.0])


@pytest.fixture(params=sorted(NUMERIC))
def mech(request):
    return NUMERIC[request.param]


# parameters and inputs ---------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon_value(mech, bad):
    with pytest.raises(ValueError, match=r"'epsilon' parameter of \w+ must be a float in the range \[1e-06, 50\]"):
        type(mech)(bad)


@pytest.mark.parametrize("bad", ["1", None, True])
def test_bad_epsilon_type(mech, bad):
    with pytest.raises(TypeError, match=r"'epsilon' parameter"):
        type(mech)(bad)


@pytest.mark.parametrize("bad, shown", [(1.5, "1.5"), (-1.0000001, "-1.0000001"), (float("nan"), "nan"),
                                        (float("inf"), "inf")])
def test_bad_values_name_index_and_value(mech, bad, shown):
    values = np.array([0.0, 0.3, bad, 1.0])
    with pytest.raises(ValueError, match=rf"'values'.*\[-1, 1\].*{shown}.* at index 2"):
        mech.perturb(values, rng=0)


def test_same_seed_same_output_and_range(mech):
    x = np.random.default_rng(0).uniform(-1, 1, 5000)
    y1, y2 = mech.perturb(x, rng=7), mech.perturb(x, rng=7)
    np.testing.assert_array_equal(y1, y2)
    assert y1.dtype == np.float64 and np.all(np.abs(y1) <= mech.C)


# theory ---------------------------------------------------------------------------------------
def test_closed_forms_equal_exact_moments_of_the_density(mech):
    """report_mean/report_variance (closed forms) vs moments integrated from the pieces."""
    np.testing.assert_allclose(mech.moment(XS, 0), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mech.moment(XS, 1), mech.report_mean(XS), rtol=0, atol=1e-12)
    var = mech.moment(XS, 2) - mech.moment(XS, 1) ** 2
    np.testing.assert_allclose(mech.report_variance(XS), var, rtol=1e-12)


def test_client_mean_and_variance_match_theory(mech):
    """R draws per input. Mean: z with sd σ/√R. Variance: the mean of (x*−μ)² has variance
    (μ₄ − σ⁴)/R with μ₄ from the exact moments (no normality assumed). Bonferroni over 2·|XS|."""
    r = 40_000
    y = mech.perturb(np.repeat(XS, r), rng=3).reshape(XS.size, r)
    mu, var = mech.report_mean(XS), mech.report_variance(XS)
    m = [mech.moment(XS, k) for k in range(5)]
    mu4 = m[4] - 4 * mu * m[3] + 6 * mu ** 2 * m[2] - 3 * mu ** 4
    alpha = 1e-4 / 2
    assert_z(y.mean(axis=1), mu, np.sqrt(var / r), alpha, "report mean")
    assert_z(((y - mu[:, None]) ** 2).mean(axis=1), var, np.sqrt((mu4 - var ** 2) / r), alpha, "report variance")


# empirical neighbour test -------------------------------------------------------------------------
def test_client_histogram_matches_exact_bin_probabilities(mech):
    """Two neighbouring inputs (and a low one for SDPM) through the client code; chi-square on 40
    equal output bins plus, for SDPM, the bin holding the atom — and the exact ratio ≤ e^ε."""
    edges = np.unique(np.concatenate([np.linspace(-mech.C, mech.C, 41), [-0.2, -0.19, 0.4, 0.41]]))
    inputs = (-0.2, 0.4)
    probs = mech.bin_probabilities(np.array(inputs), edges)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    rng = np.random.default_rng(5)
    for x, p in zip(inputs, probs):
        y = mech.perturb(np.full(200_000, x), rng)
        counts = np.histogram(y, edges)[0]
        assert_chisquare_gof(counts, p, alpha=1e-4 / 2, what=f"{mech!r} outputs for input {x}")


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


# merging, estimates, wire form ----------------------------------------------------------------------
def test_aggregates_merge_by_addition(mech):
    rng = np.random.default_rng(2)
    y = mech.perturb(rng.uniform(-1, 1, 1001), rng)
    merged = mech.aggregate(y[:400]) + mech.aggregate(y[400:])
    whole = mech.aggregate(y)
    assert merged.n == whole.n == 1001
    np.testing.assert_allclose(merged.data, whole.data, rtol=1e-12)
    with pytest.raises(ValueError, match="Cannot merge"):
        _ = whole + PM(9.0).aggregate(np.zeros(3))


def test_wire_form_round_trip(mech):
    y = mech.perturb(np.linspace(-1, 1, 101), rng=4)
    payload = mech.encode(y)
    assert len(payload) == 101 * mech.report_bytes == 808
    np.testing.assert_array_equal(mech.decode(payload), y)
    with pytest.raises(ValueError, match="not a whole number"):
        mech.decode(payload[:-1])
    with pytest.raises(ValueError, match="reports"):
        mech.decode(np.array([mech.C * 1.01]).tobytes())


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
