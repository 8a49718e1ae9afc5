"""The contract every numeric mechanism (PM, SDPM, SW; docs/math.md §2.1, §2.2, §2.5) meets, one suite
over all of them: validated parameters and inputs, same seed ⇒ same reports, closed-form theory = the exact
moments of the density, the client's empirical mean/variance = theory, the client's output histogram = the
exact bin probabilities (chi-square), merging and the wire form.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.mechanisms.numeric.pm import PM
from ldpsim.mechanisms.numeric.sdpm import SDPM
from ldpsim.mechanisms.numeric.square_wave import SW
from tests.stats import assert_chisquare_gof, assert_z

NUMERIC = {
    "pm-eps1": PM(1.0),
    "pm-eps0.2": PM(0.2),
    "pm-eps4": PM(4.0),
    "sdpm-eps1": SDPM(1.0, low=(-0.5, 0.5)),
    "sdpm-eps0.5-asym": SDPM(0.5, low=(-0.3, 0.7)),
    "sdpm-eps3-edge": SDPM(3.0, low=(0.2, 1.0)),
    "sw-eps1": SW(1.0),
    "sw-eps0.2": SW(0.2),
    "sw-eps4": SW(4.0),
    "sw-eps1-b0.4": SW(1.0, b=0.4),
}
#: inputs covering both ends, the middle and (for SDPM) both sides of each low boundary
XS = np.array([-1.0, -0.7, -0.5, -0.3, -0.05, 0.0, 0.2, 0.45, 0.5, 0.7, 0.71, 1.0])


@pytest.fixture(params=sorted(NUMERIC))
def mech(request):
    return NUMERIC[request.param]


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
