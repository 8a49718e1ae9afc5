"""Partition selection and the TEE aggregator (docs/math.md §9.13): keep probabilities against their closed
forms and by sampling, the (ε, δ) at its exact boundary, noise variances and the released counts' bias
and MSE against theory, contribution bounding."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms.aggregation.partition_selection import (NoisyThreshold, TruncatedGeometric, gaussian_delta,
                                                               gaussian_epsilon, gaussian_sigma, partition_selection,
                                                               per_key_delta)
from ldpsim.mechanisms.aggregation.tee import TeeDesign, bound_contributions, calibrate_tee, noise_epsilon
from ldpsim.runtime.errors import InputError
from tests.stats import assert_mean, assert_variance, assert_z

GRID = [(1.0, 1e-5, 1), (1.0, 1e-5, 2), (0.1, 1e-9, 3), (5.0, 1e-6, 10)]


def _recursion(eps: float, delta: float, n_max: int) -> np.ndarray:
    """π(n) by its definition: the largest value both privacy constraints allow, step by step."""
    pi = [0.0]
    for _ in range(n_max):
        pi.append(min(math.exp(eps) * pi[-1] + delta, 1 - math.exp(-eps) * (1 - pi[-1] - delta), 1.0))
    return np.array(pi)


@pytest.mark.parametrize("eps, delta, l0", GRID)
def test_truncated_geometric_closed_form_is_the_recursion(eps, delta, l0):
    sel = partition_selection("truncated_geometric", eps, delta, l0)
    assert sel.epsilon == pytest.approx(eps / l0) and sel.delta == pytest.approx(1 - (1 - delta) ** (1 / l0))
    n = np.arange(0, 4000)
    np.testing.assert_allclose(sel.keep_probability(n), _recursion(sel.epsilon, sel.delta, n[-1]), rtol=1e-9,
                               atol=1e-15)


@pytest.mark.parametrize("eps, delta, l0", GRID)
def test_truncated_geometric_privacy_at_its_exact_boundary(eps, delta, l0):
    """Neighbours hold n − 1 and n: both hockey-stick divergences of the keep/drop output are ≤ δ₁ for every
    n, and equal δ₁ (to rounding) where the constraint binds — the mechanism spends all of its δ."""
    sel = partition_selection("truncated_geometric", eps, delta, l0)
    pi = sel.keep_probability(np.arange(0, 4000))
    a, b, e = pi[1:], pi[:-1], math.exp(sel.epsilon)
    up = np.maximum(a - e * b, (1 - b) - e * (1 - a))             # n against n − 1, both outputs
    down = np.maximum(b - e * a, (1 - a) - e * (1 - b))
    worst = np.maximum(np.maximum(up, down), 0)
    ulps = 8 * np.finfo(float).eps                                  # differences of probabilities near 1/2 and 1
    assert worst.max() <= sel.delta * (1 + 1e-9) + ulps
    assert worst.max() >= sel.delta * (1 - 1e-9) - ulps


@pytest.mark.parametrize("kind", ["truncated_geometric", "laplace", "gaussian"])
def test_keep_probability_by_sampling(kind):
    """Kept share over 50 000 draws per count = the closed form (binomial z, Bonferroni over counts)."""
    sel = partition_selection(kind, 1.0, 1e-5, 2)
    p_all = sel.keep_probability(np.arange(1, 200))
    counts = np.arange(1, 200)[(p_all > 1e-3) & (p_all < 1 - 1e-3)]
    reps = 50_000
    rng = np.random.default_rng(5)
    tiled = np.tile(counts, (reps, 1))
    kept = sel.select(tiled, rng) if kind == "truncated_geometric" else sel.release(tiled, rng)[0]
    p = sel.keep_probability(counts)
    assert_z(kept.mean(axis=0), p, np.sqrt(p * (1 - p) / reps), what=f"{kind} keep share")


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_noisy_threshold_keep_probability_is_the_noise_tail(noise):
    law = stats.laplace(scale=3.0) if noise == "laplace" else stats.norm(scale=3.0)
    sel = NoisyThreshold(noise, 3.0, 20.0)
    c = np.arange(0, 60)
    np.testing.assert_allclose(sel.keep_probability(c), np.where(c > 0, law.sf(20.0 - c), 0.0), rtol=1e-12, atol=0)


@pytest.mark.parametrize("eps, delta, l0", GRID)
def test_laplace_selection_privacy_at_its_exact_boundary(eps, delta, l0):
    """A person's L0 keys held by nobody else: one of them is released with probability exactly δ; a key
    others hold too: the output densities' largest ratio is exactly e^{ε/L0} per key (e^ε over L0 keys)."""
    sel = partition_selection("laplace", eps, delta, l0)
    p1 = float(sel.keep_probability(1))
    assert 1 - (1 - p1) ** l0 == pytest.approx(delta, rel=1e-9)
    y = sel.threshold + np.linspace(0.0, 50.0, 101)                   # released values, both counts below them
    ratio = stats.laplace(5, sel.scale).pdf(y) / stats.laplace(4, sel.scale).pdf(y)
    assert ratio.max() == pytest.approx(math.exp(eps / l0), rel=1e-9)
    drop = stats.laplace(4, sel.scale).cdf(sel.threshold) / stats.laplace(5, sel.scale).cdf(sel.threshold)
    assert drop <= math.exp(eps / l0) * (1 + 1e-12)


@pytest.mark.parametrize("eps, delta, l0", GRID)
def test_gaussian_selection_privacy_at_its_exact_boundary(eps, delta, l0):
    """σ spends exactly δ/2 at ε for L2 sensitivity √L0 (Balle–Wang, recomputed here by integrating the
    privacy loss), and the threshold the other δ/2 over the L0 new keys."""
    sel = partition_selection("gaussian", eps, delta, l0)
    mu = math.sqrt(l0) / sel.scale                                     # the privacy-loss law is N(μ²/2, μ²)
    loss = stats.norm(mu ** 2 / 2, mu)
    hockey = loss.sf(eps) - math.exp(eps) * stats.norm(-mu ** 2 / 2, mu).sf(eps)
    assert hockey == pytest.approx(delta / 2, rel=1e-7)
    p1 = float(sel.keep_probability(1))
    assert 1 - (1 - p1) ** l0 == pytest.approx(delta / 2, rel=1e-9)


def test_gaussian_calibration_inverts():
    for eps, delta, sens in [(0.5, 1e-9, 1.0), (2.0, 1e-6, 3.0), (8.0, 1e-10, 0.5)]:
        sigma = gaussian_sigma(eps, delta, sens)
        assert gaussian_delta(sigma, eps, sens) <= delta
        assert gaussian_delta(sigma * (1 - 1e-6), eps, sens) > delta
        assert gaussian_epsilon(sigma, delta, sens) == pytest.approx(eps, rel=1e-8)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_noise_variance_closed_form(noise):
    sel = NoisyThreshold(noise, 4.0, 0.0)
    draws = sel.sample_noise((50_000, 1), np.random.default_rng(11))
    var = 2 * 16.0 if noise == "laplace" else 16.0
    assert sel.noise_variance() == var
    assert_mean(draws, 0.0, var, what=f"{noise} noise mean")
    if noise == "gaussian":
        assert_variance(draws, 0.0, var, what="gaussian noise variance")
    else:     # Laplace: the sample variance's sd is √((μ₄ − σ⁴)/R), μ₄ = 24 b⁴
        assert_z(np.mean(draws ** 2), var, math.sqrt((24 * 4.0 ** 4 - var ** 2) / draws.size), what="laplace var")


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_released_counts_bias_and_mse(noise):
    """The released value (0 when suppressed) against its exact bias and MSE, at counts around T."""
    tee = TeeDesign(noise, 5.0, 30.0)
    c = np.array([10, 15, 25, 30, 35, 60])
    bias, mse = tee.moments(c)
    reps = 40_000
    err = tee.release_counts(np.tile(c, (reps, 1)), np.random.default_rng(3)) - c
    var = mse - bias ** 2
    assert_mean(err, bias, var, what=f"{noise} release bias")
    # MSE: the mean of the squared errors, whose variance is E[e⁴] − MSE² (bounded here by 3·E[e²]² + …):
    e4 = np.mean(err ** 4, axis=0)
    assert_z(np.mean(err ** 2, axis=0), mse, np.sqrt(np.maximum(e4 - mse ** 2, 1e-300) / reps), what=f"{noise} MSE")


@pytest.mark.parametrize("noise, l0, replace", [("gaussian", 1, False), ("gaussian", 3, True), ("laplace", 2, False)])
def test_tee_run_guarantee_at_its_boundary(noise, l0, replace):
    """The calibrated run spends its δ: δ/2 on the threshold (R·L0 keys only the person holds; under replace,
    either person's: 2·R·L0) and the noise's δ at ε is δ/2;
    its ε is at most the target and, for Gaussian noise, equal to it."""
    eps, delta, r = 1.0, 1e-9, 30
    tee = calibrate_tee(noise, eps, delta, r, l0, replace=replace)
    changes = r * l0 * (2 if replace else 1)
    assert tee.threshold_delta(r, changes // r) == pytest.approx(delta / 2, rel=1e-9)
    got = tee.epsilon(r, delta, replace=replace)
    assert got <= eps
    if noise == "gaussian":
        assert got == pytest.approx(eps, rel=1e-8)
        assert gaussian_delta(tee.scale, eps, math.sqrt(changes)) == pytest.approx(delta / 2, rel=1e-6)
    else:
        assert got >= eps * 0.99                        # bisection to 0.1 % on the scale
        assert noise_epsilon("laplace", tee.scale, changes, 1, delta / 2) == pytest.approx(got)
    assert tee.epsilon(r, tee.threshold_delta(r)) == math.inf       # all of δ gone to the threshold


def test_bounding_keeps_at_most_l0_keys_uniformly():
    """Persons of 3 distinct keys, L0 = 1: each key kept with probability 1/3 (χ²); counts capped at L∞."""
    n = 30_000
    persons = np.repeat(np.arange(n), 6)
    keys = np.tile([0, 0, 0, 1, 2, 2], n)
    p, k, c = bound_contributions(persons, keys, 1, 2, rng=4)
    assert np.array_equal(np.unique(p), np.arange(n)) and p.size == n
    assert c.max() == 2 and np.all(c[k == 1] == 1)
    from tests.stats import assert_chisquare_gof
    assert_chisquare_gof(np.bincount(k, minlength=3), [1 / 3] * 3, what="kept key")
    p2, k2, _ = bound_contributions(persons, keys, 2, 1, rng=4)
    assert np.bincount(p2).max() == 2


def test_release_from_contributions_counts_bounded_persons():
    tee = TeeDesign("gaussian", 1e-9, 0.5, max_keys=1, max_per_key=1)
    released, counts = tee.release_contributions([0, 0, 1, 2, 2], [3, 3, 3, 3, 4], 5, rng=0)
    assert counts.sum() == 3 and counts[3] >= 2
    np.testing.assert_allclose(released[counts > 0], counts[counts > 0], atol=1e-6)


def test_per_key_delta_composes_back():
    assert 1 - (1 - per_key_delta(1e-9, 7)) ** 7 == pytest.approx(1e-9, rel=1e-9)


@pytest.mark.parametrize("call, name", [
    (lambda: partition_selection("exponential", 1.0, 1e-6), "kind"),
    (lambda: partition_selection("laplace", -1.0, 1e-6), "epsilon"),
    (lambda: partition_selection("laplace", 1.0, 1e-6, 0), "max_partitions"),
    (lambda: partition_selection("truncated_geometric", 1.0, 1e-6, 1, 2), "max_contribution"),
    (lambda: NoisyThreshold("cauchy", 1.0, 1.0), "noise"),
    (lambda: TeeDesign("gaussian", 1.0, 1.0, max_keys=0), "max_keys"),
    (lambda: calibrate_tee("gaussian", 1.0, 1e-9, 0), "releases"),
    (lambda: bound_contributions([0, 1], [1], 1, 1), "persons"),
    (lambda: TruncatedGeometric(1.0, 2.0), "delta"),
])
def test_bad_parameters_are_named(call, name):
    with pytest.raises(InputError, match=name):
        call()
