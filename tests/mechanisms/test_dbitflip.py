"""dBitFlip beyond the contract suite: memoization, the d = 1 privacy loss, the exact joint direct
sampler, the subset sampler, wire-form validation."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from ldpsim.mechanisms import DBitFlip, make
from ldpsim.mechanisms.memo import device_keys, sample_subsets
from tests.stats import assert_chisquare_gof, assert_mean, assert_same_distribution, assert_variance, assert_z

COUNTS = np.array([300, 200, 100, 50, 30, 20])


def test_registry_and_epsilon_report():
    assert isinstance(make("dbitflip", epsilon=1.0, domain_size=4), DBitFlip)
    assert DBitFlip(epsilon=1.0, domain_size=6).epsilon_report == 0.5
    assert DBitFlip(epsilon=1.0, domain_size=6, d=2).epsilon_report == 1.0


@pytest.mark.parametrize("d", [1, 2, 4])
def test_subset_sampler_is_uniform(d):
    """Floyd's algorithm: every d-subset of 6 buckets equally likely (chi-square, α = 1e-4)."""
    rng = np.random.default_rng(d)
    subsets = sample_subsets(150_000, 6, d, lambda step: rng.random(150_000))
    assert np.all(np.diff(subsets, axis=1) > 0)
    index = {s: i for i, s in enumerate(combinations(range(6), d))}
    obs = np.bincount([index[tuple(r)] for r in subsets.tolist()], minlength=len(index))
    assert_chisquare_gof(obs, np.full(len(index), 1 / len(index)), what=f"{d}-subsets")


def test_direct_sampler_every_user_samples_exactly_d_buckets():
    m = DBitFlip(epsilon=1.0, domain_size=9, d=3)
    agg = m.sample_aggregate(np.arange(9) * 7, rng=0)
    assert agg.data[0].sum() == 3 * agg.n
    assert np.all(agg.data[1] <= agg.data[0])


def test_direct_sampler_joint_law_of_sampling_counts():
    """The pair (m_0, m_1) — users who sampled bucket 0, bucket 1 — has the per-user law's covariance:
    compare 2,000 direct draws with 2,000 per-user aggregates (z and KS per column)."""
    m = DBitFlip(epsilon=1.0, domain_size=5, d=2)
    counts = np.array([40, 0, 30, 20, 10])
    values = np.repeat(np.arange(5), counts)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(9).spawn(4000)]
    direct = np.array([m.sample_aggregate(counts, r).data.ravel() for r in rngs[:2000]])
    users = np.array([m.aggregate(m.perturb(values, r)).data.ravel() for r in rngs[2000:]])
    assert_same_distribution(direct, users, what="dBitFlip aggregates")
    prod = lambda a: (a[:, 0] * a[:, 1])[:, None]  # noqa: E731 — a joint moment
    assert_same_distribution(prod(direct), prod(users), what="m_0·m_1")


def test_memoized_report_is_deterministic_and_hides_unsampled_changes():
    m = DBitFlip(epsilon=1.0, domain_size=50, d=2)
    keys = device_keys(500, np.random.default_rng(0))
    x = np.full(500, 7)
    a = m.perturb_memoized(x, keys)
    b = m.perturb_memoized(x, keys)
    np.testing.assert_array_equal(a.buckets, b.buckets)
    np.testing.assert_array_equal(a.bits, b.bits)
    # a device whose value moves between two buckets it did not sample reports exactly the same thing
    for u in range(500):
        free = sorted(set(range(50)) - set(a.buckets[u].tolist()))[:2]
        r1 = m.perturb_memoized([free[0]], keys[u:u + 1])
        r2 = m.perturb_memoized([free[1]], keys[u:u + 1])
        np.testing.assert_array_equal(r1.bits, r2.bits)
        np.testing.assert_array_equal(r1.buckets, a.buckets[u:u + 1])


def test_memoized_path_estimator_matches_theory():
    """Fresh keys per repetition: the memoized report has the one-time law (mean and variance, α = 1e-4)."""
    m = DBitFlip(epsilon=2.0, domain_size=6, d=2)
    values = np.repeat(np.arange(6), COUNTS)
    keys = [device_keys(values.size, np.random.default_rng(s)) for s in range(400)]
    est = np.array([m.estimate(m.aggregate(m.perturb_memoized(values, k))) for k in keys])
    var = m.variance(COUNTS)
    assert_mean(est, COUNTS, var, what="memoized dBitFlip mean")
    assert_variance(est, COUNTS, var, what="memoized dBitFlip variance")


def test_variance_closed_form_matches_enumeration():
    """Var from the report distribution (exact enumeration of one user's estimate) equals the closed form."""
    m = DBitFlip(epsilon=1.5, domain_size=5, d=3)
    buckets, bits = m.all_reports()
    P = m.report_distribution()
    t = math.exp(m.epsilon / 2)
    # contribution of one report to ĉ_j: (k/d)·[j ∈ buckets]·(b(t+1) − 1)/(t − 1)
    contrib = np.zeros((len(bits), 5))
    rows = np.repeat(np.arange(len(bits)), 3)
    contrib[rows, buckets.ravel()] = 5 / 3 * (bits.ravel() * (t + 1) - 1) / (t - 1)
    mean = P @ contrib
    np.testing.assert_allclose(mean, np.eye(5), atol=1e-12)  # unbiased per user
    var_user = P @ contrib ** 2 - mean ** 2
    counts = np.array([3, 0, 5, 1, 2])
    np.testing.assert_allclose(counts @ var_user, m.variance(counts), rtol=1e-12)


def test_decode_rejects_unsorted_buckets_and_padding():
    m = DBitFlip(epsilon=1.0, domain_size=300, d=2)
    r = m.perturb([1, 2, 3], rng=0)
    raw = bytearray(m.encode(r))
    raw[0:4] = bytes([5, 0, 5, 0])  # report 0: buckets 5 and 5
    with pytest.raises(ValueError, match="distinct and sorted"):
        m.decode(bytes(raw))
    raw = bytearray(m.encode(r))
    raw[4] |= 0x01  # a padding bit after the two report bits
    with pytest.raises(ValueError, match="padding"):
        m.decode(bytes(raw))


@pytest.mark.parametrize("bad", [0, 7])
def test_bad_d(bad):
    with pytest.raises(ValueError, match="'d' parameter"):
        DBitFlip(epsilon=1.0, domain_size=6, d=bad)


def test_memo_class_decides_the_memoized_report():
    """Same device: equal memo class ⇔ identical report (over every pair of buckets, 300 devices)."""
    m = DBitFlip(epsilon=1.0, domain_size=12, d=3)
    keys = device_keys(300, np.random.default_rng(4))
    classes = np.stack([m.memo_class(np.full(300, v), keys) for v in range(12)])          # (12, 300)
    reports = [m.perturb_memoized(np.full(300, v), keys) for v in range(12)]
    assert np.all((classes == 3).sum(axis=0) == 9)  # the 9 unsampled buckets share class d
    for a in range(12):
        for b in range(a + 1, 12):
            same = np.all(reports[a].bits == reports[b].bits, axis=1)
            # equal class ⇒ equal report; different classes may still coincide by chance (same bits)
            assert np.all(same[classes[a] == classes[b]])


# output perturbation γ (docs/math.md §7.3) -------------------------------------------------------
@pytest.mark.parametrize("bad", [-0.01, 0.5, 0.7, float("nan")])
def test_bad_gamma(bad):
    with pytest.raises(ValueError, match=r"'gamma' parameter of DBitFlip must be a float in the range \[0, 0.5\)"):
        DBitFlip(epsilon=1.0, domain_size=6, gamma=bad)
    with pytest.raises(TypeError, match="'gamma'"):
        DBitFlip(epsilon=1.0, domain_size=6, gamma="0.1")


@pytest.mark.parametrize("d", [1, 2, 3])
def test_gamma_privacy_boundary_from_report_distribution(d):
    """With γ the largest ratio of report probabilities is exactly e^{ε_report}, and ε_report equals
    min(d, 2)·ln(((1−γ)t + γ)/(γt + 1 − γ)), t = e^{ε/2} — below ε (the charged cost)."""
    m = DBitFlip(epsilon=2.0, domain_size=5, d=d, gamma=0.1)
    P = m.report_distribution()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    ratio = (P[:, None, :] / P[None, :, :]).max()
    t = math.exp(1.0)
    closed = min(d, 2) * math.log((0.9 * t + 0.1) / (0.1 * t + 0.9))
    assert math.isclose(m.epsilon_report, closed, rel_tol=1e-12)
    assert math.isclose(ratio, math.exp(closed), rel_tol=1e-12)
    assert m.epsilon_report < min(d, 2) * m.epsilon / 2


def test_gamma_variance_closed_form_matches_enumeration():
    """The γ estimator (k/d)(c − b_γ m)/(a_γ − b_γ) is unbiased per user and its variance is the
    closed form, by exact enumeration of one user's contribution under the report distribution."""
    m = DBitFlip(epsilon=1.5, domain_size=5, d=3, gamma=0.2)
    buckets, bits = m.all_reports()
    P = m.report_distribution()
    t = math.exp(0.75)
    a, b = 0.2 + 0.6 * t / (t + 1), 0.2 + 0.6 / (t + 1)   # γ + (1 − 2γ)·(t/(t+1), 1/(t+1))
    contrib = np.zeros((len(bits), 5))
    contrib[np.repeat(np.arange(len(bits)), 3), buckets.ravel()] = 5 / 3 * (bits.ravel() - b) / (a - b)
    mean = P @ contrib
    np.testing.assert_allclose(mean, np.eye(5), atol=1e-12)
    counts = np.array([3, 0, 5, 1, 2])
    np.testing.assert_allclose(counts @ (P @ contrib ** 2 - mean ** 2), m.variance(counts), rtol=1e-12)


def test_gamma_memoized_reports_have_the_report_law():
    """Fresh device keys, γ = 0.2: the memoized-then-flipped reports of one input match the exact
    report distribution (chi-square over all reports, α = 1e-3)."""
    m = DBitFlip(epsilon=2.0, domain_size=5, d=2, gamma=0.2)
    P = m.report_distribution()
    buckets, bits = m.all_reports()
    index = {(tuple(bk), tuple(bt)): i for i, (bk, bt) in enumerate(zip(buckets.tolist(), bits.tolist()))}
    n = 100_000
    r = m.perturb_memoized(np.full(n, 1), device_keys(n, np.random.default_rng(8)), rng=np.random.default_rng(9))
    obs = np.bincount([index[(tuple(bk), tuple(bt))] for bk, bt in zip(r.buckets.tolist(), r.bits.tolist())],
                      minlength=P.shape[1])
    assert_chisquare_gof(obs, P[1], alpha=1e-3, what="memoized dBitFlip with γ")


def test_gamma_memoized_estimator_matches_theory():
    """Fresh keys and daily flips per repetition: mean and variance of the estimate = closed form (α = 1e-4)."""
    m = DBitFlip(epsilon=2.0, domain_size=6, d=2, gamma=0.15)
    values = np.repeat(np.arange(6), COUNTS)
    est = []
    for s in range(400):
        rng = np.random.default_rng(s)
        est.append(m.estimate(m.aggregate(m.perturb_memoized(values, device_keys(values.size, rng), rng))))
    var = m.variance(COUNTS)
    assert_mean(np.array(est), COUNTS, var, what="memoized dBitFlip γ mean")
    assert_variance(np.array(est), COUNTS, var, what="memoized dBitFlip γ variance")


@pytest.mark.parametrize("gamma", [0.0, 0.1])
def test_gamma_report_changes_on_a_day_without_value_change(gamma):
    """Linking: two days, same devices and values, fresh flips. Each sent bit differs between the days
    w.p. 2γ(1 − γ) (0 without output perturbation): binomial z-test, α = 1e-3; the buckets never change."""
    m = DBitFlip(epsilon=2.0, domain_size=20, d=3, gamma=gamma)
    n = 50_000
    keys = device_keys(n, np.random.default_rng(1))
    x = np.random.default_rng(2).integers(0, 20, n)
    day1 = m.perturb_memoized(x, keys, rng=np.random.default_rng(3))
    day2 = m.perturb_memoized(x, keys, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(day1.buckets, day2.buckets)
    changed = (day1.bits != day2.bits).mean()
    share = 2 * gamma * (1 - gamma)
    if gamma == 0:
        assert changed == 0
    else:
        assert_z(changed, share, math.sqrt(share * (1 - share) / (n * 3)), alpha=1e-3, what="changed-bit share")
