"""Shuffle amplification (FMT21) and composition: published values, exact lower bounds, exact composition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.privacy.amplification import closed_form_epsilon, numerical_epsilon, shuffle_delta


def test_numerical_bound_matches_the_published_value():
    # Feldman, McMillan, Talwar (FOCS 2021), the implementation accompanying the paper (Appendix E;
    # apple/ml-shuffling-amplification, README): n = 10^5 reports of 4-DP randomizers at δ = 10^-6
    # are (ε, δ)-DP "for eps between 0.1675385583317841 and 0.172790550755978" (their lower and upper
    # numerical bounds, computed on a coarse grid of C). Our upper bound sums every C exactly.
    eps = numerical_epsilon(4.0, 100_000, 1e-6)
    assert 0.1675385583317841 <= eps <= 0.172790550755978


def test_closed_form_matches_the_published_value():
    # Same source: "according to our closed form analysis ... eps is at most 0.5378040242374512". That
    # code evaluates the proof's last step with the factor (1 − e^−ε₀)/(1 + e^−ε₀−ε); Theorem 3.1 as
    # stated (docs/math.md §7.5) replaces it by (e^ε₀ − 1)/(e^ε₀ + 1), 0.7 % smaller here.
    eps = closed_form_epsilon(4.0, 100_000, 1e-6)
    assert eps == pytest.approx(0.5378040242374512, rel=0.01)
    e0, a = math.exp(4.0), 8 * math.sqrt(math.exp(4.0) * math.log(4e6)) / math.sqrt(1e5) + 8 * math.exp(4.0) / 1e5
    assert eps == pytest.approx(math.log1p((e0 - 1) / (e0 + 1) * a), rel=1e-12)


def test_closed_form_returns_eps0_outside_its_range():
    # ε₀ > ln(n / (16 ln(2/δ))): the theorem does not apply
    assert closed_form_epsilon(4.0, 1000, 1e-6) == 4.0
    assert closed_form_epsilon(0.5, 1, 1e-6) == 0.5


def _exact_shuffled_rr_delta(eps, eps0, n):
    """δ(ε) of shuffled binary randomized response, user 1 ∈ {0, 1}, the n−1 others all 0 (exact)."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    base = stats.binom.pmf(np.arange(n), n - 1, 1 - p)
    P, Q = np.zeros(n + 1), np.zeros(n + 1)
    P[:-1] += base * (1 - p)
    P[1:] += base * p
    Q[:-1] += base * p
    Q[1:] += base * (1 - p)
    return max(np.clip(P - math.exp(eps) * Q, 0, None).sum(), np.clip(Q - math.exp(eps) * P, 0, None).sum())


@pytest.mark.parametrize("eps0, n", [(0.5, 1000), (1.0, 1000), (2.0, 10_000), (4.0, 100_000)])
def test_bound_lies_between_an_exact_instance_and_the_closed_form(eps0, n):
    """Upper bounds must hold for every randomizer: exact shuffled RR (one data set) is a lower bound."""
    delta = 1e-6
    eps = numerical_epsilon(eps0, n, delta)
    assert _exact_shuffled_rr_delta(eps, eps0, n) <= delta  # the bound holds for this instance
    assert eps <= closed_form_epsilon(eps0, n, delta) + 1e-9
    # and it is not vacuous: within a factor 2.5 of this instance's exact ε ("nearly optimal", FMT21 §5)
    assert _exact_shuffled_rr_delta(eps / 2.5, eps0, n) > delta


def _exact_pair_delta(eps, eps0, n):
    """D_{e^ε}(P‖Q) of FMT21's pair summed over every outcome (i, c): C ~ Bin(n−1, e^−ε₀), A ~ Bin(C, ½),
    Δ ~ Bern(α); P puts A + Δ at i, Q puts A + 1 − Δ (docs/math.md §7.5), without truncating C."""
    alpha = math.exp(eps0) / (math.exp(eps0) + 1)
    total = 0.0
    for c, w in enumerate(stats.binom.pmf(np.arange(n), n - 1, math.exp(-eps0))):
        b = np.append(stats.binom.pmf(np.arange(c + 1), c, 0.5), 0.0)  # b[i], with b[c + 1] = b[-1] = 0
        i = np.arange(c + 2)
        P = alpha * b[i] + (1 - alpha) * b[i - 1]
        Q = alpha * b[i - 1] + (1 - alpha) * b[i]
        total += w * np.clip(P - math.exp(eps) * Q, 0, None).sum()
    return total


@pytest.mark.parametrize("eps0, n", [(0.5, 2), (0.5, 40), (2.0, 7), (2.0, 120), (6.0, 60)])
def test_shuffle_delta_is_the_pairs_divergence_summed_outcome_by_outcome(eps0, n):
    """The closed sum over c (CDFs at one cutoff, C's far tails added whole) against every outcome summed:
    equal up to the tail mass it adds (≤ 2e-15) and rounding."""
    for eps in np.linspace(0.0, eps0, 9)[:-1]:
        exact = _exact_pair_delta(eps, eps0, n)
        assert exact - 1e-12 <= shuffle_delta(eps, eps0, n) <= exact + 1e-12, (eps, exact)


def test_shuffle_delta_is_monotone_and_vanishes_at_eps0():
    eps = np.linspace(0.01, 1.99, 30)
    d = [shuffle_delta(e, 2.0, 5000) for e in eps]
    assert np.all(np.diff(d) <= 1e-15) and d[0] > 0
    assert shuffle_delta(2.0, 2.0, 5000) == 0.0


def test_more_reports_amplify_more():
    eps = [numerical_epsilon(1.0, n, 1e-6, tol=1e-5) for n in (1_000, 10_000, 100_000)]
    assert eps[0] > eps[1] > eps[2]
    # ε ≈ c/√n for large n: a tenfold n divides ε by about √10
    assert eps[1] / eps[2] == pytest.approx(math.sqrt(10), rel=0.15)


@pytest.mark.parametrize("call, match", [
    (lambda: closed_form_epsilon(-1.0, 10, 1e-6), "'eps0'"),
    (lambda: numerical_epsilon(1.0, 0, 1e-6), "'n'"),
    (lambda: numerical_epsilon(1.0, 10, 1.5), "'delta'"),
])
def test_bad_parameters_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()
