"""Trend designs and the rising-item detector against their closed forms (docs/math.md §12.5–12.6).

* Every design's released daily estimates: mean and variance of single days and of 7-day windows against
  ``window_moments`` (z tests, the variance's standard error from the sample's fourth moment).
* The detector's false alarms on an item nobody uses: each day's alarm count over independent streams is
  exactly Bin(streams, P_null(t)) (Gaussian: the level; randomized response: the exact binomial tail).
* Each design's 90-day guarantee against an independent composition on a grid of ε: fresh RR against the
  exact (optimal) composition of binary randomized response; every Gaussian counter against Balle–Wang's
  exact curve of the one Gaussian mechanism at Δ₂ = ‖R·1‖ — for fresh daily collection, the composition
  of 90 unit-sensitivity Gaussians.

Each statistical test holds a family-wise false-alarm rate of ALPHA = 10⁻⁴ (Bonferroni over its checks).
"""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from ldpsim.evaluation.privacy.composition import rr_composition_delta
from ldpsim.evaluation.trends.lineup import standard_designs
from ldpsim.evaluation.trends.designs import RR_GRID, counter_design, rr_design
from ldpsim.evaluation.trends.detection import (Detector, first_alarm, smallest_growth, theory_delay,
                                                theory_tracking_error, tracking_error)
from ldpsim.evaluation.workloads.trends import TrendShape
from ldpsim.mechanisms.continual import COUNTERS
from ldpsim.runtime.errors import InputError

ALPHA = 1e-4
T, N = 30, 200_000
SHARES = TrendShape("w", 0.05, emergence=8.0, growth=0.4, fade=0.02).shares(T)


@pytest.fixture(scope="module")
def designs():
    return standard_designs(2.0, T)


def _z_mean_and_variance(values, mean, var, checks):
    """Two-sided z tests of the sample mean and sample variance of i.i.d. rows at ALPHA / checks each."""
    r = values.shape[0]
    z = stats.norm.isf(ALPHA / (2 * checks))
    assert np.all(np.abs(values.mean(axis=0) - mean) < z * np.sqrt(var / r))
    d = values - values.mean(axis=0)
    s2 = (d ** 2).mean(axis=0)
    se = np.sqrt(np.maximum((d ** 4).mean(axis=0) - s2 ** 2, 0) / r)
    assert np.all(np.abs(s2 - var) < z * se + 1e-9 * var), (s2 / var)


@pytest.mark.slow
@pytest.mark.parametrize("index", [*range(9), 10, 11])
def test_window_estimates_have_their_exact_mean_and_variance(designs, index):
    """Days 5, 15 and 29 alone and as the end of a 7-day window, 4000 releases at n = 2·10⁵."""
    design = designs[index]
    _, daily = design.sample(SHARES, N, 4000, np.random.default_rng(index))
    days = np.array([5, 15, 29])
    c = np.concatenate([np.zeros((daily.shape[0], 1)), np.cumsum(daily, axis=1)], axis=1)
    for window in (1, 7):
        mean, var = design.window_moments(SHARES, N, window)
        sums = c[:, days + 1] - c[:, np.maximum(days + 1 - window, 0)]
        _z_mean_and_variance(sums, mean[days], var[days], checks=2 * 2 * days.size)


@pytest.mark.slow
@pytest.mark.parametrize("index", [*range(9), 10])
def test_false_alarms_of_an_unused_item_are_within_theory(designs, index):
    """Each of days 0, 3, 10 and 29: alarms over 20,000 unused streams ~ Bin(20,000, P_null(t)) exactly."""
    design = designs[index]
    detector = Detector(window=7, items=1, rate=3.0)           # level 0.1 per item-day
    _, daily = design.sample(np.zeros(T), N, 20_000, np.random.default_rng(100 + index))
    alarms = detector.alarms(daily, detector.thresholds(design, N, T))
    p = detector.null_alarm_probability(design, N, T)
    assert np.all(p <= detector.level * (1 + 1e-12))
    for day in (0, 3, 10, 29):
        test = stats.binomtest(int(alarms[:, day].sum()), alarms.shape[0], p[day])
        assert test.pvalue > ALPHA / 4, (day, alarms[:, day].mean(), p[day])


@pytest.mark.slow
def test_tracking_error_and_first_alarm_of_independent_days(designs):
    """Fresh daily collection with a one-day window: days independent, so the first alarm's law is exact,
    P[first alarm on day t] = Π_{s<t}(1 − p_s)·p_t; χ² over the days (and the tracking error's z test)."""
    design = designs[5]                                     # fresh daily, distributed
    shares = TrendShape("w", 2e-4, emergence=8.0, growth=0.4).shares(T)
    detector = Detector(window=1, items=1, rate=0.05)
    counts, daily = design.sample(shares, N, 20_000, np.random.default_rng(7))
    first = first_alarm(detector.alarms(daily, detector.thresholds(design, N, T)))
    p = detector.alarm_probability(design, shares, N)
    law = np.append(p * np.concatenate([[1.0], np.cumprod(1 - p)[:-1]]), np.prod(1 - p))
    observed = np.bincount(np.where(np.isnan(first), T, first).astype(int), minlength=T + 1)
    keep = law * 20_000 >= 5
    expected, got = law[keep] * 20_000, observed[keep]
    if law[~keep].sum() > 0:
        expected, got = np.append(expected, law[~keep].sum() * 20_000), np.append(got, observed[~keep].sum())
    assert stats.chisquare(got, expected).pvalue > ALPHA
    err2 = (daily - counts) ** 2
    var_of_mean = err2.mean(axis=1).var(ddof=1) / err2.shape[0]
    assert abs(tracking_error(daily, counts) ** 2 - theory_tracking_error(design, shares, N) ** 2) \
        < stats.norm.isf(ALPHA / 2) * math.sqrt(var_of_mean)


@pytest.mark.slow
def test_smallest_growth_gives_its_power(designs):
    """The linear ramp at the returned slope has alarm probability ½ exactly on day e + D (Gaussian designs)."""
    detector = Detector(window=7, items=1, rate=0.05)
    for design in designs[2:9]:
        g = smallest_growth(detector, design, N, T, emergence=10, after=12)
        ramp = g * np.maximum(np.arange(T) - 10, 0) / N
        _, var = design.window_moments(np.zeros(T), N, 7)
        thr = detector.thresholds(design, N, T)
        mean = N * np.convolve(ramp, np.ones(7))[:T]
        assert mean[22] == pytest.approx(thr[22]) and var[22] > 0
    with pytest.raises(InputError, match="after"):
        smallest_growth(detector, designs[2], N, T, emergence=10, after=30)


def test_theory_delay_and_first_alarm():
    assert theory_delay([0.1, 0.4, 0.6, 0.9], 0.5) == 1.5
    assert math.isnan(theory_delay([0.1, 0.2], 0.0))
    got = first_alarm([[False, True, True], [False, False, False]])
    assert got[0] == 1 and math.isnan(got[1])


# ----- privacy over the run: the accountant against independent compositions ------------------------------

def _balle_wang_epsilon(sensitivity, sigma, delta):
    """Solve δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε·Φ(−Δ/2σ − εσ/Δ) = δ (Balle & Wang, ICML 2018, Thm 8)."""
    def gap(eps):
        a, b = sensitivity / (2 * sigma), eps * sigma / sensitivity
        return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b) - delta
    return optimize.brentq(gap, 0.0, 200.0, xtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
def test_fresh_rr_run_epsilon_matches_exact_composition(epsilon):
    """The PLD's 90-day ε is valid (exact δ ≤ 10⁻⁹ there) and tight within its grid (δ > 10⁻⁹ 0.02 below)."""
    d = rr_design(False, epsilon, 90)
    assert d.guarantee.epsilon <= epsilon
    assert rr_composition_delta(d.epsilon_report, 90, d.guarantee.epsilon) <= d.guarantee.delta
    assert rr_composition_delta(d.epsilon_report, 90, d.guarantee.epsilon - 0.02) > d.guarantee.delta
    # ε_day is the largest on the PLD's grid: two grid steps more overshoot ε by exact composition
    assert rr_composition_delta(d.epsilon_report + 2 * RR_GRID, 90, epsilon) > d.guarantee.delta


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
@pytest.mark.parametrize("counter", COUNTERS)
def test_counter_run_epsilon_matches_the_exact_gaussian(counter, epsilon):
    """σ calibrated to ε per person over 90 days (Δ₂ = ‖R·1‖): Balle–Wang's exact ε at that σ is ε."""
    d = counter_design(counter, "distributed", epsilon, 90)
    ones = d.counter.R @ np.ones(90)
    exact = _balle_wang_epsilon(float(np.linalg.norm(ones)), d.sigma, 1e-9)
    assert d.guarantee.epsilon <= epsilon + 1e-9
    assert exact == pytest.approx(epsilon, abs=0.02)
    if counter == "fresh_daily":     # 90 unit-sensitivity Gaussians compose to one of sensitivity √90 (GDP)
        assert _balle_wang_epsilon(1.0, d.sigma / math.sqrt(90), 1e-9) == pytest.approx(exact, rel=1e-9)
    local = counter_design(counter, "local", epsilon, 90)
    assert local.sigma == d.sigma and local.noise_variance(1000) == pytest.approx(1000 * d.sigma ** 2)


def test_memoized_rr_states_its_per_value_and_person_level_epsilon():
    d = rr_design(True, 2.0, 90)
    assert d.epsilon_report == 1.0 and d.guarantee.epsilon == 2.0 and d.guarantee.delta == 0.0
    assert d.guarantee.person_epsilon == math.inf and "same repetition pattern" in d.guarantee.meaning


def test_bad_design_parameters_are_refused():
    with pytest.raises(InputError, match="counter"):
        counter_design("banded", "local", 2.0, 90)
    with pytest.raises(InputError, match="placement"):
        counter_design("binary_tree", "shuffled", 2.0, 90)
    with pytest.raises(InputError, match="rate"):
        Detector(rate=0.0)


@pytest.mark.slow
def test_skellam_design_is_calibrated_by_the_accountant():
    """μ makes the 90-day composition ε at δ = 10⁻⁹, and no less (1 % less noise overshoots); one day's
    PLD agrees with the exact hockey-stick divergence of the Skellam pmf (an independent computation)."""
    from ldpsim.evaluation.privacy.trust_accounting import noise_epsilon
    from ldpsim.evaluation.trends.integer_design import skellam_design
    from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise, hockey_stick

    d = skellam_design(2.0, 90)
    noise = IntegerNoise("skellam", d.mu)
    assert d.guarantee.epsilon <= 2.0 and d.guarantee.delta == 1e-9
    assert noise_epsilon(IntegerNoise("skellam", 0.99 * d.mu), 1e-9, 90) > 2.0
    one = noise_epsilon(noise, 1e-9, 1)
    assert hockey_stick(noise, one, 1) <= 1e-9 * (1 + 1e-6)
    assert hockey_stick(noise, one - 0.01, 1) > 1e-9
