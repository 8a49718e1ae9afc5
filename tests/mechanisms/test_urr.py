"""URR (docs/math.md §1.3): parameters, transition table, the two ULDP conditions at their exact boundary."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms import URR, Aggregate
from ldpsim.mechanisms.linear_theory import linear_estimator_variance

D, SENSITIVE = 7, (1, 2, 5)



@pytest.fixture(params=[0.1, 1.0, 5.0])
def mech(request):
    return URR(request.param, D, SENSITIVE)


def test_transition_matrix_is_the_spec_table(mech):
    e, s = math.exp(mech.epsilon), len(SENSITIVE)
    c1, c2, c3 = e / (s + e - 1), 1 / (s + e - 1), (e - 1) / (s + e - 1)  # docs/math.md §1.3
    P = mech.transition_matrix()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    for x in range(D):
        for y in range(D):
            if x in SENSITIVE:
                want = c1 if y == x else (c2 if y in SENSITIVE else 0.0)
            else:
                want = c3 if y == x else (c2 if y in SENSITIVE else 0.0)
            assert math.isclose(P[x, y], want, rel_tol=1e-12, abs_tol=1e-15), (x, y, P[x, y], want)


def test_uldp_condition_sensitive_outputs_exact_boundary(mech):
    """(1) For all x, x' and every y ∈ X_S: P[y|x] ≤ e^ε P[y|x'], with equality attained."""
    P = mech.transition_matrix()[:, list(SENSITIVE)]
    assert np.all(P > 0)
    ratio = (P[:, None, :] / P[None, :, :]).max()
    assert math.isclose(ratio, math.exp(mech.epsilon), rel_tol=1e-12)


def test_uldp_condition_non_sensitive_outputs_have_one_preimage(mech):
    """(2) Every y ∈ X_N has exactly one x with P[y|x] > 0 (namely y itself)."""
    P = mech.transition_matrix()
    for y in sorted(set(range(D)) - set(SENSITIVE)):
        np.testing.assert_array_equal(np.flatnonzero(P[:, y] > 0), [y])


def test_estimator_is_linear_and_unbiased(mech):
    A, P = mech.estimator_matrix(), mech.transition_matrix()
    np.testing.assert_allclose(A @ P.T, np.eye(D), atol=1e-12)
    agg = mech.sample_aggregate(np.arange(D) * 10, rng=0)
    np.testing.assert_allclose(mech.estimate(agg), A @ agg.data, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(mech.estimate(agg, [5, 0]), mech.estimate(agg)[[5, 0]])


def test_variance_closed_form(mech):
    """Each URR estimate uses one output count: Var = Var(c_y)/slope², Var(c_y) = Σ_x f_x P[y|x](1−P[y|x])."""
    f = np.array([50, 0, 300, 10, 7, 1000, 3])
    P = mech.transition_matrix()
    slope = np.where(np.isin(np.arange(D), SENSITIVE), mech.c1 - mech.c2, mech.c3)
    np.testing.assert_allclose(mech.variance(f), (f @ (P * (1 - P))) / slope ** 2, rtol=1e-10)
    np.testing.assert_allclose(mech.variance(f), linear_estimator_variance(P, mech.estimator_matrix(), f),
                               rtol=1e-10)
    np.testing.assert_allclose(mech.variance(f, [3, 1]), mech.variance(f)[[3, 1]])


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"sensitive": ()}, ValueError, r"'sensitive' parameter of URR must be a non-empty .* Got an empty set"),
    ({"sensitive": (1, 1, 2)}, ValueError, r"'sensitive' .* Got id 1 more than once"),
    ({"sensitive": (0, 7)}, ValueError, r"'sensitive' .* ids in \[0, 7\)\. Got id 7 \(out of range\)"),
    ({"sensitive": (-1,)}, ValueError, r"Got id -1 \(out of range\)"),
    ({"sensitive": tuple(range(7))}, ValueError, r"strict subset of \[0, 7\).*is GRR"),
    ({"sensitive": (1.0, 2)}, TypeError, r"'sensitive' .* Got element 1\.0"),
    ({"sensitive": (True,)}, TypeError, r"'sensitive' .* Got element True"),
    ({"sensitive": "12"}, TypeError, r"'sensitive' parameter of URR"),
    ({"sensitive": 3}, TypeError, r"'sensitive' parameter of URR"),
    ({"domain_size": 1, "sensitive": (0,)}, ValueError, r"'domain_size' parameter of URR must be an int in "
                                                        r"the range \[2, 4294967296\]\. Got 1"),
    ({"domain_size": 7.0}, TypeError, r"'domain_size' parameter of URR"),
    ({"epsilon": -1.0}, ValueError, r"'epsilon' parameter of URR must be a float in the range \[1e-06, 50\]"),
    ({"epsilon": math.inf}, ValueError, r"'epsilon' parameter of URR"),
])
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        URR(**{"epsilon": 1.0, "domain_size": D, "sensitive": SENSITIVE, **kwargs})


def test_sensitive_set_is_canonical():
    assert URR(1.0, D, [5, 1, 2]) == URR(1.0, D, np.array([1, 2, 5]))
    assert URR(1.0, D, [5, 1, 2]).kind == URR(1.0, D, (1, 2, 5)).kind


def test_out_of_domain_values_rejected():
    m = URR(1.0, D, SENSITIVE)
    with pytest.raises(ValueError, match=r"item ids in \[0, 7\); got 7 at index 2"):
        m.perturb([0, 1, 7])
    with pytest.raises(ValueError, match="aggregate was made by"):
        m.estimate(Aggregate(1, np.zeros(D, dtype=int), "GRR(epsilon=1.0, domain_size=7)"))
