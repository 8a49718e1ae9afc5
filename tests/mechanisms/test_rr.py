"""Warner randomized response (docs/math.md §1.1): parameters, formulas, and the CI of the yes/no share."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms import GRR, RR, Aggregate



def test_is_grr_on_two_values():
    m = RR(epsilon=0.7)
    p = math.exp(0.7) / (1 + math.exp(0.7))
    assert m.domain_size == 2
    np.testing.assert_allclose(m.transition_matrix(), [[p, 1 - p], [1 - p, p]], rtol=1e-14)
    np.testing.assert_array_equal(m.perturb(np.array([0, 1, 1, 0] * 50), rng=3),
                                  GRR(0.7, 2).perturb(np.array([0, 1, 1, 0] * 50), rng=3))


def test_estimate_and_variance_follow_spec():
    m = RR(epsilon=1.3)
    p, n, n1 = m.p, 1000, 420
    agg = Aggregate(n, np.array([n - n1, n1]), m.kind)
    pi_hat = (p - 1 + n1 / n) / (2 * p - 1)  # docs/math.md §1.1
    np.testing.assert_allclose(m.estimate(agg), [n * (1 - pi_hat), n * pi_hat], rtol=1e-12)
    spec_var = p * (1 - p) / (n * (2 * p - 1) ** 2)  # frequency scale, independent of π
    for counts in ([n, 0], [300, 700], [0, n]):
        np.testing.assert_allclose(m.variance(counts), n ** 2 * spec_var, rtol=1e-12)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"epsilon": 0.0}, ValueError, r"'epsilon' parameter of RR must be a float in the range \[1e-06, 50\]"),
    ({"epsilon": float("nan")}, ValueError, r"'epsilon' parameter of RR"),
    ({"epsilon": "1"}, TypeError, r"'epsilon' parameter of RR"),
    ({"epsilon": 1.0, "domain_size": 3}, TypeError, "domain_size"),
])
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        RR(**kwargs)


def test_out_of_domain_values_rejected():
    with pytest.raises(ValueError, match=r"item ids in \[0, 2\); got 2 at index 1"):
        RR(1.0).perturb([0, 2, 1])
    with pytest.raises(TypeError, match="integer item ids"):
        RR(1.0).perturb([0.0, 1.0])


def test_proportion_point_estimates_and_clipping():
    m = RR(epsilon=math.log(3))  # p = 3/4
    est = m.proportion(Aggregate(100, np.array([80, 20]), m.kind))  # π̂ = (20/100 − 1/4)/(1/2) = −0.1
    assert math.isclose(est.estimate, -0.1, abs_tol=1e-12)
    assert est.mle == 0.0 and est.low == 0.0
    sd = math.sqrt(0.75 * 0.25 / 100) / 0.5
    assert math.isclose(est.high, -0.1 + stats.norm.isf(0.025) * sd, rel_tol=1e-9)
    top = m.proportion(Aggregate(100, np.array([10, 90]), m.kind), confidence=0.5)
    assert math.isclose(top.estimate, 1.3) and top.mle == 1.0
    assert top.low == top.high == 1.0  # 1.3 ± 0.674·sd lies wholly above 1
    mid = m.proportion(Aggregate(100, np.array([35, 65]), m.kind), confidence=0.5)  # π̂ = 0.8
    assert math.isclose(mid.mle, 0.8) and math.isclose(mid.low, 0.8 - stats.norm.isf(0.25) * sd)


@pytest.mark.parametrize("bad, exc", [(0.0, ValueError), (1.0, ValueError), (1.5, ValueError),
                                      ("0.9", TypeError)])
def test_proportion_rejects_bad_confidence(bad, exc):
    m = RR(1.0)
    with pytest.raises(exc, match=r"'confidence' parameter of RR must be a float in the range \(0, 1\)"):
        m.proportion(Aggregate(10, np.array([5, 5]), m.kind), confidence=bad)


def test_proportion_rejects_empty_or_foreign_aggregate():
    m = RR(1.0)
    with pytest.raises(ValueError, match="no reports"):
        m.proportion(Aggregate(0, np.array([0, 0]), m.kind))
    with pytest.raises(ValueError, match="aggregate was made by"):
        m.proportion(RR(2.0).aggregate(np.array([0, 1])))


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, share", [(0.5, 0.3), (2.0, 0.05)])
def test_confidence_interval_coverage(epsilon, share):
    """Coverage of the 95% CI over R fixed-population repeats ~ Binomial(R, 0.95): two-sided test, α = 1e-4.

    With n = 10⁵ users the normal approximation's error in coverage (discreteness, skew) is ~1e-3,
    well inside the test's tolerance (≈ 0.006 at R = 20 000), and the truth is far from the clipping bounds.
    """
    m, n, repeats = RR(epsilon), 100_000, 20_000
    n1 = int(share * n)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(2024).spawn(repeats)]
    covered = 0
    for rng in rngs:
        ci = m.proportion(m.sample_aggregate([n - n1, n1], rng))
        covered += ci.low <= n1 / n <= ci.high
    pvalue = stats.binomtest(covered, repeats, 0.95).pvalue
    assert pvalue >= 1e-4, f"coverage {covered / repeats:.4f} of a 95% CI (p = {pvalue:.3g})"
