"""One contract suite for every frequency oracle in ``tests/mechanisms/cases.py``.

(a) bad ε rejected with a message naming it, (b) same seed ⇒ same reports and estimates,
(c) estimator mean/variance = theory (per-user path and direct sampler), (d) exact privacy boundary
from the transition matrix, and the stated guarantee (``mechanism.guarantee``) equal to it, (e)
empirical neighbour test on the client code, (f) direct sampler ≡ per-user path, plus merging and
the wire form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms import GUARANTEE_KINDS, MECHANISMS, DiscreteOracle, Guarantee, make
from tests.mechanisms.cases import CASES
from tests.stats import (assert_chisquare_gof, assert_mean, assert_same_distribution,
                         assert_variance)

CASE_NAMES = sorted(CASES)


@pytest.fixture(params=CASE_NAMES)
def case(request):
    return CASES[request.param]


# (a) ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), -float("inf"), 1e-300, 9.9e-7, 50.001, 710])
def test_bad_epsilon_value(case, bad):
    """Outside the supported range [1e-6, 50] (mechanisms/_validation.py) with the uniform message."""
    with pytest.raises(ValueError, match=r"'epsilon' parameter of \w+ must be a float in the range \[1e-06, 50\]"):
        case.make(epsilon=bad)


@pytest.mark.parametrize("edge", [1e-6, 50.0])
def test_epsilon_range_ends_are_supported(case, edge):
    mech = case.make(epsilon=edge)
    est = mech.estimate(mech.sample_aggregate(case.count_array, rng=1, items=case.items), case.items)
    assert np.all(np.isfinite(est))


@pytest.mark.parametrize("bad", ["1", None, True])
def test_bad_epsilon_type(case, bad):
    with pytest.raises(TypeError, match=r"'epsilon' parameter"):
        case.make(epsilon=bad)


# (b) ------------------------------------------------------------------------------------------
def test_same_seed_same_output(case):
    mech = case.make()
    values = case.population(np.random.default_rng(0))
    r1, r2 = mech.perturb(values, rng=7), mech.perturb(values, rng=7)
    e1 = mech.estimate(mech.aggregate(r1), case.items)
    e2 = mech.estimate(mech.aggregate(r2), case.items)
    np.testing.assert_array_equal(e1, e2)
    s1 = mech.sample_aggregate(case.count_array, rng=3, items=case.items)
    s2 = mech.sample_aggregate(case.count_array, rng=3, items=case.items)
    np.testing.assert_array_equal(s1.data, s2.data)
    assert s1.n == s2.n == case.count_array.sum()


# (c) ------------------------------------------------------------------------------------------
def _repeat_estimates(case, path, repeats, seed):
    mech = case.make()
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(repeats)]
    out = []
    for rng in rngs:
        if path == "direct":
            agg = mech.sample_aggregate(case.count_array, rng, case.items)
        else:
            agg = mech.aggregate(mech.perturb(case.population(rng), rng))
        out.append(mech.estimate(agg, case.items))
    return mech, np.array(out)


@pytest.mark.slow
@pytest.mark.parametrize("path", ["direct", "reports"])
def test_estimator_mean_and_variance_match_theory(case, path):
    repeats = 20_000 if path == "direct" else 400
    mech, est = _repeat_estimates(case, path, repeats, seed=11)
    truth = case.count_array.astype(float)
    mean = truth + mech.bias(case.count_array, case.items)
    var = mech.variance(case.count_array, case.items)
    assert_mean(est, mean, var, what=f"{case.name} {path} mean")
    assert_variance(est, mean, var, what=f"{case.name} {path} variance")


# (d) ------------------------------------------------------------------------------------------
def test_transition_matrix_exact_privacy_boundary(case):
    mech = case.make()
    if not isinstance(mech, DiscreteOracle) or not case.pure_ldp:
        pytest.skip("no finite pure-LDP transition matrix; covered by the mechanism's own tests")
    P = mech.transition_matrix()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(P > 0)
    ratio = (P[:, None, :] / P[None, :, :]).max()
    assert math.isclose(ratio, math.exp(mech.epsilon), rel_tol=1e-12), (ratio, math.exp(mech.epsilon))


def _max_log_ratio(P: np.ndarray, outputs=slice(None)) -> float:
    """ln of the largest P[y|x]/P[y|x'] over all input pairs and the given output columns."""
    P = P[:, outputs]
    return float(np.log((P[:, None, :] / P[None, :, :]).max()))


def test_guarantee_epsilon_report_is_the_exact_boundary(case):
    """ε of one report as the mechanism states it (``guarantee.epsilon_report``) equals the largest
    log-ratio of its own probabilities over the pairs its kind protects: all pairs (ε-LDP; the
    transition matrix or the enumerated report distribution), or every pair on the protected outputs
    (ε-SDLDP: the high outputs, condition (10); ε-ULDP: the sensitive outputs)."""
    mech = case.make()
    g = mech.guarantee
    assert isinstance(g, Guarantee) and g.kind in GUARANTEE_KINDS and g.delta == 0.0
    if isinstance(mech, DiscreteOracle):
        P = mech.transition_matrix()
    elif hasattr(mech, "report_distribution"):
        P = mech.report_distribution(case.items)
    else:
        pytest.skip("huge output space (OUE, OLH, sketches): boundary in the mechanism's own tests")
    protected = {"ldp": slice(None), "sdldp": list(getattr(mech, "high", ())),
                 "uldp": list(getattr(mech, "sensitive", ()))}[g.kind]
    assert math.isclose(_max_log_ratio(P, protected), g.epsilon_report, rel_tol=1e-12)
    if g.epsilon_permanent is not None:  # memoizing mechanisms: ε_∞ is the parameter, ≥ one report
        assert g.epsilon_permanent == mech.epsilon >= g.epsilon_report * (1 - 1e-12)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_registered_mechanism_states_its_guarantee(name):
    """Every mechanism of the registry (also numeric and discovery ones) has a guarantee of a known
    kind whose ε of one report is positive and at most its parameter ε."""
    cls = MECHANISMS[name]
    case = next((c for c in CASES.values() if c.cls is cls), None)
    mech = case.make() if case is not None else make(name, epsilon=1.5, shape="typical")
    g = mech.guarantee
    assert g.kind in GUARANTEE_KINDS
    assert 0 < g.epsilon_report <= mech.epsilon * (1 + 1e-12)
    assert (g.epsilon_permanent is not None) == getattr(cls, "has_permanent_response", False)


def _report_distribution(mech, case):
    if not hasattr(mech, "report_distribution"):
        pytest.skip("no enumerable report distribution")
    return mech.report_distribution(case.items)


def test_report_distribution_exact_privacy_boundary(case):
    """Mechanisms whose reports are enumerable but are not one integer (bit vectors, (bucket, bit)
    tuples, (cohort, bits)): rows sum to one and the largest ratio between two inputs is exactly
    e^{ε_report} — ε itself unless the mechanism states a smaller per-report loss (THE, dBitFlip with
    d = 1, RAPPOR's one-report ε₁), which must then not exceed ε."""
    mech = case.make()
    P = _report_distribution(mech, case)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(P > 0)
    ratio = (P[:, None, :] / P[None, :, :]).max()
    eps = mech.guarantee.epsilon_report
    assert eps <= mech.epsilon * (1 + 1e-12)
    assert math.isclose(ratio, math.exp(eps), rel_tol=1e-12), (ratio, math.exp(eps))


def test_client_reports_match_report_distribution(case):
    """Empirical neighbour test for enumerable reports: the client's whole reports for two inputs,
    identified through the wire form, against the exact rows (chi-square, α = 1e-4 overall)."""
    mech = case.make()
    P = _report_distribution(mech, case)
    index = {bytes(r): i for i, r in enumerate(_chunks(mech, mech.all_reports()))}
    rng = np.random.default_rng(5)
    for x in (0, 1):
        value = case.item_array[x]
        values = np.full(200_000, value, dtype=case.item_array.dtype)
        observed = np.bincount([index[bytes(r)] for r in _chunks(mech, mech.perturb(values, rng))],
                               minlength=P.shape[1])
        assert_chisquare_gof(observed, P[x], alpha=1e-4 / 2, what=f"{case.name} reports for input {x}")


def _chunks(mech, reports):
    payload = mech.encode(reports)
    return np.frombuffer(payload, dtype=np.uint8).reshape(-1, mech.report_bytes)


# (e) ------------------------------------------------------------------------------------------
def test_client_output_matches_transition_rows(case):
    """Sample the client code for two neighbouring inputs; chi-square against the transition rows."""
    mech = case.make()
    if not isinstance(mech, DiscreteOracle):
        pytest.skip("infinite/huge output space; covered by the mechanism's own tests")
    P = mech.transition_matrix()
    rng = np.random.default_rng(5)
    for x in (0, 1):
        y = mech.perturb(np.full(200_000, x), rng)
        assert_chisquare_gof(np.bincount(y, minlength=P.shape[1]), P[x], alpha=1e-4 / 2,
                             what=f"{case.name} outputs for input {x}")


# (f) ------------------------------------------------------------------------------------------
def test_direct_sampler_matches_reports_path(case):
    mech = case.make()
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(21).spawn(600)]
    direct = [mech.sample_aggregate(case.count_array, r, case.items).data.ravel() for r in rngs[:300]]
    users = [mech.aggregate(mech.perturb(case.population(r), r)).data.ravel() for r in rngs[300:]]
    assert_same_distribution(np.array(direct), np.array(users), what=f"{case.name} aggregate")


# theory on a subset of items ----------------------------------------------------------------------
@pytest.mark.parametrize("subset", [[2, 0], [1], [5, 3, 1]])
def test_bias_variance_mse_of_an_item_subset_are_those_items_entries(case, subset):
    """``items`` picks entries of the full-domain theory, in the order given (sketches take their
    items aligned with the counts instead: a token's variance depends on every token's count)."""
    mech = case.make()
    if mech.takes_tokens:
        pytest.skip("sketches: items are aligned with true_counts")
    counts = case.count_array
    subset = [i for i in subset if i < len(counts)]
    for method in ("bias", "variance", "mse"):
        full = np.asarray(getattr(mech, method)(counts), dtype=float)
        part = np.asarray(getattr(mech, method)(counts, items=subset), dtype=float)
        assert part.shape == (len(subset),), (method, part.shape)
        np.testing.assert_allclose(part, full[subset], rtol=1e-12, atol=0, err_msg=method)


# merging and wire form --------------------------------------------------------------------------
def test_aggregates_merge_by_addition(case):
    mech = case.make()
    rng = np.random.default_rng(2)
    reports = mech.perturb(case.population(rng), rng)
    whole = mech.aggregate(reports)
    half = len(case.population(np.random.default_rng(0))) // 2
    parts = _split(reports, half)
    merged = mech.aggregate(parts[0]) + mech.aggregate(parts[1])
    assert merged.n == whole.n
    if whole.data.dtype.kind == "f":  # float sums (SHE): equal up to the order of additions
        np.testing.assert_allclose(merged.data, whole.data, rtol=1e-12, atol=1e-9)
    else:
        np.testing.assert_array_equal(merged.data, whole.data)


def _split(reports, at):
    if isinstance(reports, tuple):  # multi-part reports (NamedTuple of arrays)
        return type(reports)(*(r[:at] for r in reports)), type(reports)(*(r[at:] for r in reports))
    return reports[:at], reports[at:]


def test_wire_form_round_trip(case):
    mech = case.make()
    rng = np.random.default_rng(4)
    reports = mech.perturb(case.population(rng), rng)
    payload = mech.encode(reports)
    n_users = int(case.count_array.sum())
    assert len(payload) == n_users * mech.report_bytes
    back = mech.decode(payload)
    np.testing.assert_array_equal(mech.aggregate(back).data, mech.aggregate(reports).data)
    if mech.report_bytes > 1:
        with pytest.raises(ValueError, match="not a whole number"):
            mech.decode(payload[:-1])
