"""SDGRR (docs/math.md §1.4) and the exact linear-estimator variance it relies on (mechanisms/linear_theory.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms import GRR, SDGRR
from ldpsim.mechanisms.linear_theory import linear_estimator_variance
from tests.stats import assert_chisquare_gof, assert_mean, assert_variance

D, HIGH = 7, (0, 3, 4)
LOW = (1, 2, 5, 6)


# linear_theory -------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon, d", [(0.5, 2), (1.0, 6), (3.0, 40)])
def test_linear_variance_equals_grr_closed_form(epsilon, d):
    m = GRR(epsilon, d)
    f = np.random.default_rng(d).integers(0, 500, size=d)
    A = (np.eye(d) - m.q) / (m.p - m.q)  # (c_x − n q)/(p − q) with n = Σ_y c_y
    P = m.transition_matrix()
    np.testing.assert_allclose(linear_estimator_variance(P, A, f), m.variance(f), rtol=1e-9)


def test_linear_variance_equals_empirical_variance():
    """Arbitrary P and A: R fixed-population draws of the output counts; chi-square band, α = 1e-4.

    Sharp rows (Dirichlet(0.3)) make the i.i.d.-input variance 1.9–2.9× the fixed-population one here,
    so the test tells the two apart; drawing the inputs i.i.d. instead reproduces the i.i.d. form
    (fixed + Σ_x f_x (M[k,x] − μ_k)², M = A Pᵀ), as the module docstring states.
    """
    rng = np.random.default_rng(8)
    P = rng.dirichlet(np.full(5, 0.3), size=4)  # 4 inputs, 5 outputs
    A = rng.normal(size=(3, 5))
    f = np.array([40, 0, 25, 100])
    repeats = 4000
    c = rng.multinomial(f, P, size=(repeats, 4)).sum(axis=1)  # (R, 5): sum of per-input multinomials
    mean, var = A @ P.T @ f, linear_estimator_variance(P, A, f)
    assert_mean(c @ A.T, mean, var, what="linear estimator mean")
    assert_variance(c @ A.T, mean, var, what="linear estimator variance")

    M = A @ P.T
    iid_var = var + ((M - (M @ f / f.sum())[:, None]) ** 2) @ f
    inputs = rng.multinomial(f.sum(), f / f.sum(), size=repeats)  # (R, 4) i.i.d. inputs
    c_iid = rng.multinomial(inputs, P[None], size=(repeats, 4)).sum(axis=1)
    assert_variance(c_iid @ A.T, mean, iid_var, what="i.i.d.-input variance")


@pytest.mark.parametrize("P, A, f, match", [
    (np.eye(3), np.eye(2), [1, 1, 1], r"need P \(D_in, D_out\)"),
    (np.eye(3), np.eye(3), [1, 1], r"counts \(2,\)"),
    (np.eye(3), np.eye(3), [1, -1, 1], "non-negative"),
    (np.eye(3), np.eye(3), [1, np.nan, 1], "finite"),
])
def test_linear_variance_rejects_bad_shapes(P, A, f, match):
    with pytest.raises(ValueError, match=match):
        linear_estimator_variance(P, A, f)


# SDGRR: the docs/math.md §1.4 table and the three SDLDP conditions ---------------------------------------------
@pytest.fixture(params=[0.1, 1.0, 5.0])
def mech(request):
    return SDGRR(request.param, D, HIGH)


def test_transition_matrix_is_the_spec_table(mech):
    e = math.exp(mech.epsilon)
    c1, c2, c3 = e / (D + e - 1), 1 / (D + e - 1), (len(LOW) + e - 1) / (D + e - 1)  # docs/math.md §1.4
    P = mech.transition_matrix()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    for x in range(D):
        for y in range(D):
            if x in HIGH:
                want = c1 if y == x else c2
            else:
                want = c3 if y == x else (c2 if y in HIGH else 0.0)
            assert math.isclose(P[x, y], want, rel_tol=1e-12, abs_tol=1e-15), (x, y, P[x, y], want)


def _max_ratio(rows_a, rows_b):
    return (rows_a[:, None, :] / rows_b[None, :, :]).max()


def test_condition_8_high_inputs_on_every_output(mech):
    """(8) x, x' ∈ X_H, every y: P[y|x] ≤ e^ε P[y|x'] — binds: max ratio == e^ε."""
    P = mech.transition_matrix()[list(HIGH)]
    assert np.all(P > 0)
    assert math.isclose(_max_ratio(P, P), math.exp(mech.epsilon), rel_tol=1e-12)


def test_condition_9_low_outputs_have_one_low_preimage(mech):
    """(9) x ∈ X_L: P[x|x] > 0 and P[x|x'] = 0 for every other x' ∈ X_L."""
    P = mech.transition_matrix()
    for x in LOW:
        assert P[x, x] > 0
        others = [v for v in LOW if v != x]
        np.testing.assert_array_equal(P[others, x], 0.0)


def test_condition_10_every_input_on_high_outputs(mech):
    """(10) every x, x' and y ∈ X_H: P[y|x] ≤ e^ε P[y|x'] — binds: max ratio == e^ε."""
    P = mech.transition_matrix()[:, list(HIGH)]
    assert np.all(P > 0)
    assert math.isclose(_max_ratio(P, P), math.exp(mech.epsilon), rel_tol=1e-12)


def test_not_pure_ldp_on_low_outputs(mech):
    """Documented: a low output separates its own input from a high one by c3/c2 = |X_L| + e^ε − 1."""
    P = mech.transition_matrix()
    assert math.isclose(P[LOW[0], LOW[0]] / P[HIGH[0], LOW[0]], len(LOW) + math.exp(mech.epsilon) - 1,
                        rel_tol=1e-12)


# estimators and theory -------------------------------------------------------------------------------
def test_estimator_is_spec_formula_linear_and_unbiased(mech):
    A, P = mech.estimator_matrix(), mech.transition_matrix()
    np.testing.assert_allclose(A @ P.T, np.eye(D), atol=1e-10)
    agg = mech.sample_aggregate(np.arange(D) * 100, rng=1)
    c, n = agg.data / agg.n, agg.n
    high = (c[list(HIGH)] - mech.c2) / (mech.c1 - mech.c2)  # docs/math.md §1.4, frequency scale
    low = (c[list(LOW)] - mech.c2 * high.sum()) / mech.c3
    est = mech.estimate(agg)
    np.testing.assert_allclose(est[list(HIGH)], n * high, rtol=1e-9)
    np.testing.assert_allclose(est[list(LOW)], n * low, rtol=1e-9)
    np.testing.assert_allclose(A @ agg.data, est, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(mech.estimate(agg, [6, 0]), est[[6, 0]])


@pytest.mark.parametrize("epsilon, d, high", [(1.0, 7, HIGH), (0.3, 5, (2,)), (2.5, 6, (0, 1, 2, 4, 5)),
                                               (4.0, 30, tuple(range(0, 30, 3)))])
def test_closed_form_variance_equals_linear_theory(epsilon, d, high):
    m = SDGRR(epsilon, d, high)
    rng = np.random.default_rng(d)
    for f in (rng.integers(0, 1000, size=d), np.eye(d, dtype=int)[0] * 50, rng.integers(0, 3, size=d)):
        general = linear_estimator_variance(m.transition_matrix(), m.estimator_matrix(), f)
        np.testing.assert_allclose(m.variance(f), general, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(m.variance(f, [d - 1, 0]), general[[d - 1, 0]], rtol=1e-9, atol=1e-9)


def test_mean_and_variance_larger_domain():
    """Direct sampler, D = 40, 10 high values: estimates match the exact theory (α = 1e-4 each)."""
    m = SDGRR(0.8, 40, range(0, 40, 4))
    f = np.random.default_rng(3).integers(0, 300, size=40)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(9).spawn(5000)]
    est = np.array([m.estimate(m.sample_aggregate(f, r)) for r in rngs])
    assert_mean(est, f, m.variance(f), what="SDGRR D=40 mean")
    assert_variance(est, f, m.variance(f), what="SDGRR D=40 variance")


def test_approx_variance_low_is_eq_12(mech):
    e, n, fh = math.exp(mech.epsilon), 1000, 0.3
    want = (D + e - 1 - fh) * fh / (n * (len(LOW) + e - 1) ** 2)  # paper eq. (12)
    assert math.isclose(mech.approx_variance_low(n, fh), want, rel_tol=1e-12)
    uniform = mech.approx_variance_low(n, len(HIGH) / D)  # the default: the uniform distribution
    assert math.isclose(mech.approx_variance_low(n), uniform, rel_tol=1e-12)
    with pytest.raises(ValueError, match=r"'high_mass' parameter of SDGRR must be a float in the range \[0, 1"):
        mech.approx_variance_low(n, 1.5)
    with pytest.raises(ValueError, match=r"'n' parameter of SDGRR"):
        mech.approx_variance_low(0)


# client code against the transition rows -------------------------------------------------------------
def _neighbour_test(m, reference):
    rng = np.random.default_rng(12)
    P = reference.transition_matrix()
    for x in (HIGH[0], LOW[0]):
        y = m.perturb(np.full(200_000, x), rng)
        assert_chisquare_gof(np.bincount(y, minlength=D), P[x], alpha=1e-4 / 2, what=f"input {x}")


def test_client_matches_transition_rows():
    m = SDGRR(1.0, D, HIGH)
    _neighbour_test(m, m)


def test_planted_bug_fails_neighbour_test():
    """c3 off by 0.01 in the client: the empirical neighbour test must reject it."""
    good = SDGRR(1.0, D, HIGH)
    bad = SDGRR(1.0, D, HIGH)
    object.__setattr__(bad, "_keep", np.where(bad._is_high, bad.c1 - bad.c2, bad.c3 - 0.01))
    with pytest.raises(AssertionError, match="chi-square"):
        _neighbour_test(bad, good)


# parameters -------------------------------------------------------------------------------------------
def test_low_defaults_to_complement_and_is_canonical():
    a = SDGRR(1.0, D, [4, 0, 3])
    assert a.high == HIGH and a.low == LOW
    assert a == SDGRR(1.0, D, HIGH, low=[6, 5, 2, 1])
    assert a.kind == SDGRR(1.0, D, HIGH, low=LOW).kind


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"high": ()}, ValueError, r"'high' parameter of SDGRR must be a non-empty .* Got an empty set"),
    ({"high": (0, 0)}, ValueError, r"'high' .* Got id 0 more than once"),
    ({"high": (7,)}, ValueError, r"'high' .* ids in \[0, 7\)\. Got id 7 \(out of range\)"),
    ({"high": (0.5,)}, TypeError, r"'high' .* Got element 0\.5"),
    ({"high": None}, TypeError, r"'high' parameter of SDGRR"),
    ({"high": tuple(range(7))}, ValueError, r"'low' parameter of SDGRR must be non-empty.*is GRR"),
    ({"low": (1, 2, 3, 5, 6)}, ValueError, r"'high' and 'low' parameters of SDGRR must be disjoint\. "
                                           r"Got ids \[3\] in both"),
    ({"low": (1, 2, 5)}, ValueError, r"'high' and 'low' .* must together cover \[0, 7\)\. "
                                     r"Got ids \[6\] in neither"),
    ({"low": ()}, ValueError, r"'low' parameter of SDGRR must be a non-empty .* Got an empty set"),
    ({"low": (1, 9)}, ValueError, r"'low' .* Got id 9 \(out of range\)"),
    ({"domain_size": 1, "high": (0,)}, ValueError, r"'domain_size' parameter of SDGRR must be an int in the "
                                                   r"range \[2, 4294967296\]"),
    ({"domain_size": "7"}, TypeError, r"'domain_size' parameter of SDGRR"),
    ({"epsilon": 0}, ValueError, r"'epsilon' parameter of SDGRR must be a float in the range \[1e-06, 50\]"),
    ({"epsilon": float("nan")}, ValueError, r"'epsilon' parameter of SDGRR"),
])
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        SDGRR(**{"epsilon": 1.0, "domain_size": D, "high": HIGH, **kwargs})


def test_out_of_domain_values_rejected():
    m = SDGRR(1.0, D, HIGH)
    with pytest.raises(ValueError, match=r"item ids in \[0, 7\); got -1 at index 0"):
        m.perturb([-1, 2])
    with pytest.raises(ValueError, match=r"'true_counts' must be a 1-D array of length 7"):
        m.sample_aggregate([1, 2, 3])
