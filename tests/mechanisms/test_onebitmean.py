"""1BitMean: the contract a mean mechanism has (validation, reproducibility, mean and variance against
theory on three paths, privacy at its boundary, merging, wire form) plus α-point rounding and memoization."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms import OneBitMean, make
from ldpsim.mechanisms.memo import device_keys
from tests.stats import assert_mean, assert_same_distribution, assert_variance, assert_z

M = 100.0
VALUES = np.random.default_rng(0).choice([0.0, 3.0, 17.5, 50.0, 99.0, 100.0], size=2000)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match=r"'epsilon' parameter of OneBitMean must be a float in the range \[1e-06, 50\]"):
        OneBitMean(epsilon=bad)


def test_bad_values_and_parameters():
    mech = make("onebitmean", epsilon=1.0, m=M)
    with pytest.raises(ValueError, match=r"in \[0, 100\]"):
        mech.perturb([101.0])
    with pytest.raises(ValueError, match="'m'"):
        OneBitMean(epsilon=1.0, m=0.0)
    with pytest.raises(ValueError, match="'granularity'"):
        OneBitMean(epsilon=1.0, granularity=0)


def test_same_seed_same_output():
    mech = OneBitMean(epsilon=1.0, m=M)
    np.testing.assert_array_equal(mech.perturb(VALUES, 3), mech.perturb(VALUES, 3))
    assert mech.sample_aggregate(VALUES, 3).data[0] == mech.sample_aggregate(VALUES, 3).data[0]


def test_exact_privacy_boundary():
    """Over the whole input range the largest ratio of output probabilities is exactly e^ε (x = 0 vs m)."""
    mech = OneBitMean(epsilon=1.3, m=M)
    P = mech.transition_matrix(np.linspace(0, M, 101))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert math.isclose((P[:, None] / P[None]).max(), math.exp(1.3), rel_tol=1e-12)


def _estimates(mech, path: str, repeats: int) -> np.ndarray:
    """``repeats`` mean estimates of VALUES through one path (seeds 0..repeats−1), shape (repeats, 1)."""
    est = []
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        if path == "direct":
            agg = mech.sample_aggregate(VALUES, rng)
        elif path == "memoized":
            agg = mech.aggregate(mech.perturb_memoized(VALUES, device_keys(VALUES.size, rng), rng))
        else:
            agg = mech.aggregate(mech.perturb(VALUES, rng))
        est.append(mech.estimate_mean(agg))
    return np.array(est)[:, None]


@pytest.mark.parametrize("path", ["reports", pytest.param("direct", marks=pytest.mark.slow), "memoized"])
def test_mean_and_variance_match_theory(path):
    mech = OneBitMean(epsilon=1.0, m=M, granularity=8)
    est = _estimates(mech, path, 2000 if path != "direct" else 20_000)
    var = mech.mean_variance(VALUES)
    assert_mean(est, VALUES.mean(), var, what=f"1BitMean {path} mean")
    assert_variance(est, VALUES.mean(), var, what=f"1BitMean {path} variance")


def test_direct_sampler_matches_reports_path():
    mech = OneBitMean(epsilon=0.5, m=M)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(4).spawn(1200)]
    direct = [mech.sample_aggregate(VALUES, r).data for r in rngs[:600]]
    users = [mech.aggregate(mech.perturb(VALUES, r)).data for r in rngs[600:]]
    assert_same_distribution(np.array(direct), np.array(users), what="1BitMean ones")


def test_alpha_point_rounding_is_unbiased_and_memoized():
    mech = OneBitMean(epsilon=1.0, m=M, granularity=10)
    n = 200_000
    keys = device_keys(n, np.random.default_rng(2))
    x = np.full(n, 37.0)  # between levels 3 and 4 (step 10): up with probability 0.7
    level = mech.rounded_levels(x, keys)
    assert set(np.unique(level).tolist()) == {3, 4}
    assert_z((level == 4).mean(), 0.7, math.sqrt(0.21 / n), what="P(round up)")
    # same device, same value → same report; a value that stays on the device's level → same report
    np.testing.assert_array_equal(mech.perturb_memoized(x, keys), mech.perturb_memoized(x, keys))
    stay = level == 4  # these devices round 37 up (α ≥ 0.3); 38 rounds up for them too
    np.testing.assert_array_equal(mech.perturb_memoized(np.full(n, 38.0), keys)[stay],
                                  mech.perturb_memoized(x, keys)[stay])


def test_merge_and_wire_form():
    mech = OneBitMean(epsilon=1.0, m=M)
    bits = mech.perturb(VALUES, 1)
    whole = mech.aggregate(bits)
    merged = mech.aggregate(bits[:700]) + mech.aggregate(bits[700:])
    assert merged.n == whole.n and merged.data[0] == whole.data[0]
    payload = mech.encode(bits)
    assert len(payload) == bits.size * mech.report_bytes
    np.testing.assert_array_equal(mech.decode(payload), bits)
    with pytest.raises(ValueError, match="reports"):
        mech.decode(b"\x00\x02")


def test_levels_are_the_memo_classes():
    """Same device and level ⇒ same bit, for every value that rounds to that level."""
    mech = OneBitMean(epsilon=1.0, m=M, granularity=10)
    keys = device_keys(1000, np.random.default_rng(5))
    xs = np.linspace(0, M, 41)
    levels = np.stack([mech.rounded_levels(np.full(1000, x), keys) for x in xs])
    bits = np.stack([mech.perturb_memoized(np.full(1000, x), keys) for x in xs])
    for i in range(xs.size):
        for j in range(i + 1, xs.size):
            same = levels[i] == levels[j]
            assert np.all(bits[i][same] == bits[j][same])


# output perturbation γ (docs/math.md §7.3) -------------------------------------------------------
@pytest.mark.parametrize("bad", [-0.1, 0.5, float("inf")])
def test_bad_gamma(bad):
    with pytest.raises(ValueError, match=r"'gamma' parameter of OneBitMean must be a float in the range \[0, 0.5\)"):
        OneBitMean(epsilon=1.0, gamma=bad)


def test_gamma_exact_privacy_boundary():
    """Sent-bit law with γ: the largest ratio over the input range is exactly e^{ε_report}, with
    ε_report = ln(((1−γ)e^ε + γ)/(γe^ε + 1 − γ)) < ε."""
    mech = OneBitMean(epsilon=1.3, m=M, gamma=0.1)
    P = mech.transition_matrix(np.linspace(0, M, 101))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    e = math.exp(1.3)
    closed = math.log((0.9 * e + 0.1) / (0.1 * e + 0.9))
    assert math.isclose(mech.epsilon_report, closed, rel_tol=1e-12)
    assert math.isclose((P[:, None] / P[None]).max(), math.exp(closed), rel_tol=1e-12)
    assert closed < mech.epsilon


@pytest.mark.parametrize("path", ["reports", pytest.param("direct", marks=pytest.mark.slow), "memoized"])
def test_gamma_mean_and_variance_match_theory(path):
    """Estimator mean and variance with γ = 0.2 against the closed form (α = 1e-4 each)."""
    mech = OneBitMean(epsilon=1.0, m=M, granularity=8, gamma=0.2)
    est = _estimates(mech, path, 1500 if path != "direct" else 10_000)
    e = math.exp(1.0)
    p = 0.2 + 0.6 * (1 / (e + 1) + VALUES / M * (e - 1) / (e + 1))      # P[sent bit = 1], by hand
    var = (M * (e + 1) / ((e - 1) * 0.6)) ** 2 * (p * (1 - p)).sum() / VALUES.size ** 2
    assert math.isclose(var, mech.mean_variance(VALUES), rel_tol=1e-12)
    assert_mean(est, VALUES.mean(), var, what=f"1BitMean γ {path} mean")
    assert_variance(est, VALUES.mean(), var, what=f"1BitMean γ {path} variance")


def test_gamma_direct_sampler_matches_reports_path():
    mech = OneBitMean(epsilon=0.5, m=M, gamma=0.25)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(6).spawn(1200)]
    direct = [mech.sample_aggregate(VALUES, r).data for r in rngs[:600]]
    users = [mech.aggregate(mech.perturb(VALUES, r)).data for r in rngs[600:]]
    assert_same_distribution(np.array(direct), np.array(users), what="1BitMean γ ones")


@pytest.mark.parametrize("gamma", [0.0, 0.1])
def test_gamma_report_changes_on_a_day_without_value_change(gamma):
    """Linking: same devices and values on two days, fresh flips: the sent bit differs w.p.
    2γ(1 − γ) (0 without output perturbation); binomial z-test, α = 1e-3."""
    mech = OneBitMean(epsilon=1.0, m=M, gamma=gamma)
    n = 100_000
    keys = device_keys(n, np.random.default_rng(1))
    x = np.random.default_rng(2).uniform(0, M, n)
    day1 = mech.perturb_memoized(x, keys, rng=np.random.default_rng(3))
    day2 = mech.perturb_memoized(x, keys, rng=np.random.default_rng(4))
    changed = (day1 != day2).mean()
    share = 2 * gamma * (1 - gamma)
    if gamma == 0:
        assert changed == 0
    else:
        assert_z(changed, share, math.sqrt(share * (1 - share) / n), alpha=1e-3, what="changed-bit share")
