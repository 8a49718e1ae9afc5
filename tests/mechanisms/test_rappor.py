"""RAPPOR beyond the contract suite: both privacy bounds from the mechanism's own probabilities, the
memoized permanent response, the regression decoding, parameters and wire form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms import RAPPOR, make
from ldpsim.mechanisms.memo import device_keys
from tests.stats import assert_chisquare_gof, assert_mean, assert_variance, assert_z

ITEMS = ("the", "of", "and", "to", "a", "in")
COUNTS = np.array([300, 200, 100, 50, 30, 20])


def _small(**kw):
    return RAPPOR(**{"epsilon": 4 * math.log(3), "num_bits": 8, "num_hashes": 2, "cohorts": 4, **kw})


def test_registry_and_paper_parameters():
    m = make("rappor", epsilon=4 * math.log(3))
    assert isinstance(m, RAPPOR)
    assert math.isclose(m.f, 0.5) and (m.p, m.q) == (0.5, 0.75)  # the paper's f = 0.5, p = 0.5, q = 0.75
    assert math.isclose(m.epsilon_permanent, m.epsilon)
    back = RAPPOR.from_probabilities(0.5, num_hashes=2)
    assert math.isclose(back.epsilon, 4 * math.log(3)) and math.isclose(back.f, 0.5)


def test_one_report_epsilon_formula():
    """ε₁ = h·ln(q*(1−p*)/(p*(1−q*))) with q*, p* from f, p, q (docs/math.md §7.2)."""
    m = _small()
    f, p, q = m.f, m.p, m.q
    qs, ps = 0.5 * f * (p + q) + (1 - f) * q, 0.5 * f * (p + q) + (1 - f) * p
    assert m.bit_probabilities() == pytest.approx((qs, ps), rel=1e-15)
    assert math.isclose(m.epsilon_report, 2 * math.log(qs * (1 - ps) / (ps * (1 - qs))), rel_tol=1e-12)
    assert m.epsilon_report < m.epsilon


def _permanent_distribution(m: RAPPOR, items) -> np.ndarray:
    """P[v, c·2^k + b′] = (1/C)·Π_i P(B′_i = b′_i | B_c(v)_i) over all 2^k permanent responses."""
    k = m.num_bits
    X = m.bloom_matrix(items).reshape(m.cohorts, k, -1).transpose(2, 0, 1)[:, :, None, :]
    r = ((np.arange(1 << k)[:, None] >> np.arange(k)) & 1)[None, None]
    one = np.where(X == 1, 1 - m.f / 2, m.f / 2)
    return (np.where(r == 1, one, 1 - one).prod(axis=3) / m.cohorts).reshape(len(items), -1)


def test_permanent_response_exact_boundary_is_epsilon_infinity():
    """The permanent response alone: max ratio between two values is exactly e^{ε_∞}, reached by
    a pair whose Bloom bits in some cohort are 2h distinct bits."""
    m = _small()
    P = _permanent_distribution(m, ITEMS)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    X = m.bloom_matrix(ITEMS).reshape(m.cohorts, m.num_bits, -1)
    disjoint = any((X[c, :, a] + X[c, :, b] == 1).sum() == 4
                   for c in range(m.cohorts) for a in range(6) for b in range(6))
    assert disjoint  # the boundary is attainable in this configuration
    assert math.isclose((P[:, None] / P[None]).max(), math.exp(m.epsilon), rel_tol=1e-12)


def test_memoized_permanent_response_is_deterministic_per_device_and_value():
    m = _small(num_bits=16)
    keys = np.array([1, 2, 3], dtype=np.uint64)
    a = m.permanent_response(["the", "of", "the"], keys)
    np.testing.assert_array_equal(a, m.permanent_response(["the", "of", "the"], keys))
    np.testing.assert_array_equal(m.device_cohorts(keys), m.device_cohorts(keys))
    many = m.permanent_response(["the"] * 2000, np.arange(2000, dtype=np.uint64))
    assert len({r.tobytes() for r in many}) > 1000  # different devices, different memos


def test_memoized_permanent_bits_have_the_paper_law():
    """P(B′_i = 1) = f/2 + (1 − f)·B_i over devices (z-test per bit class, α = 1e-4)."""
    m = _small(num_bits=16, cohorts=1)
    n = 200_000
    keys = device_keys(n, np.random.default_rng(3))
    prr = m.permanent_response(["the"] * n, keys)
    bloom = m.bloom_matrix(["the"])[:, 0].astype(bool)
    for is_set in (True, False):
        ones = prr[:, bloom == is_set].mean(axis=0)
        prob = m.f / 2 + (1 - m.f) * is_set
        assert_z(ones, prob, math.sqrt(prob * (1 - prob) / n), what=f"B' bits (B_i={int(is_set)})")


def test_memoized_reports_estimator_matches_theory():
    """Fresh device keys each repetition: the memoized path has the one-time law, so the estimator's
    mean and variance are the theory's (cohorts drawn from keys are uniform)."""
    m = _small()
    vals = np.repeat(np.array(ITEMS, dtype=object), COUNTS)
    est = []
    for seed in range(300):
        rng = np.random.default_rng(seed)
        est.append(m.estimate(m.aggregate(m.perturb_memoized(vals, device_keys(vals.size, rng), rng)), ITEMS))
    est = np.array(est)
    var = m.variance(COUNTS, ITEMS)
    assert_mean(est, COUNTS, var, what="memoized RAPPOR mean")
    assert_variance(est, COUNTS, var, what="memoized RAPPOR variance")


def test_cohort_assignment_from_keys_is_uniform():
    m = _small(cohorts=8)
    c = m.device_cohorts(device_keys(80_000, np.random.default_rng(1)))
    assert_chisquare_gof(np.bincount(c, minlength=8), np.full(8, 1 / 8), what="cohorts")


# decoding --------------------------------------------------------------------------------------
def _population(m, rng, n_true=20, n_false=80, total=300_000):
    cands = [f"word{i}" for i in range(n_true + n_false)]
    counts = np.zeros(len(cands), dtype=np.int64)
    counts[:n_true] = (total / 3 / np.arange(1, n_true + 1) ** 0.5).astype(int)
    return cands, counts


@pytest.mark.slow
def test_decode_finds_frequent_candidates_and_no_absent_ones():
    """Zero-count candidates are significant with probability ≤ α overall (Bonferroni); the largest
    true ones are found; selected estimates sit within 5 standard errors of the truth."""
    m = RAPPOR(epsilon=4 * math.log(3), num_bits=128, num_hashes=2, cohorts=16)
    rng = np.random.default_rng(0)
    cands, counts = _population(m, rng)
    agg = m.sample_aggregate(counts, rng, cands)
    dec = m.decode_candidates(agg, cands, alpha=0.01)
    found = set(dec.found())
    assert not found & set(cands[20:])
    assert set(cands[:5]) <= found
    sel = np.flatnonzero(dec.significant)
    assert np.all(np.abs(dec.counts[sel] - counts[sel]) <= 5 * dec.std_errors[sel])


def test_decode_false_positive_rate_under_the_null():
    """No candidate present at all: over 40 populations, the number with any significant candidate is
    ≤ Binomial(40, α) bound (α = 0.05, so ≤ 8 with probability > 1 − 1e-4)."""
    m = RAPPOR(epsilon=4 * math.log(3), num_bits=64, num_hashes=2, cohorts=8)
    cands = [f"c{i}" for i in range(30)]
    others = [f"other{i}" for i in range(5)]
    hits = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        agg = m.sample_aggregate(np.full(5, 20_000), rng, others)  # all mass on non-candidates
        hits += bool(m.decode_candidates(agg, cands, alpha=0.05).significant.any())
    assert hits <= 8


def test_decode_validates_alpha():
    m = _small()
    agg = m.sample_aggregate(COUNTS, 0, ITEMS)
    with pytest.raises(ValueError, match="'alpha'"):
        m.decode_candidates(agg, ITEMS, alpha=1.5)


# parameters and wire form ----------------------------------------------------------------------
@pytest.mark.parametrize("bad, match", [({"p": 0.8, "q": 0.75}, "'q'"), ({"num_bits": 1}, "'num_bits'"),
                                        ({"num_hashes": 0}, "'num_hashes'"), ({"cohorts": 0}, "'cohorts'")])
def test_bad_parameters(bad, match):
    with pytest.raises(ValueError, match=match):
        _small(**bad)


def test_items_required():
    with pytest.raises(ValueError, match="'items'"):
        _small().variance(COUNTS)


def test_wire_form_rejects_bad_cohorts_and_padding():
    m = _small(num_bits=12, cohorts=3)
    reports = m.perturb(list(ITEMS), rng=0)
    raw = bytearray(m.encode(reports))
    raw[0] = 7  # cohort 7 of 3
    with pytest.raises(ValueError, match="cohorts must be integers"):
        m.decode(bytes(raw))
    raw = bytearray(m.encode(reports))
    raw[m.report_bytes - 1] |= 0x01  # a padding bit after bit 11
    with pytest.raises(ValueError, match="padding"):
        m.decode(bytes(raw))


@pytest.mark.parametrize("path", ["direct", "reports"])
def test_cohort_split_variance_in_a_low_noise_configuration(path):
    """With almost no randomized-response noise (ε_∞ = 20, p = 0.01, q = 0.99) the variance is mostly
    the random split of users into cohorts (the Σ_w f_w (C Σ_c M_c² − (Σ_c M_c)²) term): mean and
    variance against theory (α = 1e-4), so that term is checked on its own."""
    m = _small(epsilon=20.0, p=0.01, q=0.99)
    vals = np.repeat(np.array(ITEMS, dtype=object), COUNTS)
    est = []
    for seed in range(2000 if path == "direct" else 400):
        rng = np.random.default_rng(seed)
        agg = m.sample_aggregate(COUNTS, rng, ITEMS) if path == "direct" else m.aggregate(m.perturb(vals, rng))
        est.append(m.estimate(agg, ITEMS))
    var = m.variance(COUNTS, ITEMS)
    assert_mean(np.array(est), COUNTS, var, what=f"{path} mean")
    assert_variance(np.array(est), COUNTS, var, what=f"{path} variance")


def test_memo_class_is_the_value():
    m = _small(num_bits=16)
    keys = np.array([9, 9, 9], dtype=np.uint64)
    cls = m.memo_class(["the", "of", "the"])
    assert cls[0] == cls[2] != cls[1]
    prr = m.permanent_response(["the", "of", "the"], keys)
    np.testing.assert_array_equal(prr[0], prr[2])


@pytest.mark.slow
def test_decode_standard_errors_are_calibrated():
    """For always-selected frequent candidates, (estimate − truth)/SE over 200 populations × 10 items
    has mean 0 and variance 1 (z on the mean, χ² on the sum of squares; α = 1e-4 each)."""
    from scipy import stats
    m = RAPPOR(epsilon=4 * math.log(3), num_bits=128, num_hashes=2, cohorts=16)
    cands = [f"w{i}" for i in range(60)]
    counts = np.zeros(60, dtype=np.int64)
    counts[:10] = (100_000 / np.arange(1, 11) ** 0.7).astype(int)
    z = []
    for seed in range(200):
        dec = m.decode_candidates(m.sample_aggregate(counts, np.random.default_rng(seed), cands), cands)
        assert dec.selected[:10].all()
        z.append((dec.counts[:10] - counts[:10]) / dec.std_errors[:10])
    z = np.ravel(z)
    assert_z(z.mean(), 0.0, 1 / math.sqrt(z.size), what="mean z")
    ss = float((z ** 2).sum())
    assert stats.chi2.ppf(5e-5, z.size) <= ss <= stats.chi2.isf(5e-5, z.size), ss / z.size
