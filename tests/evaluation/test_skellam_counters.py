"""Counters with Skellam noise in the secure sum, and the independent check of their accountant (docs/math.md §12.10–12.11).

* The integer counters are exact factorisations; a coordinate's hockey-stick curve grows with its shift
  (the worst person uses the item every day).
* The FFT bracket of :mod:`ldpsim.evaluation.privacy.skellam_exact` contains the exact ε of one
  coordinate computed from the pmf's hockey-stick divergence (a third computation).
* The accountant's 90-day ε of every Skellam design, on a grid of μ and δ, is at least the exact lower
  bracket and at most the upper bracket plus m·10⁻³ (dp-accounting's pessimistic rounding of each of
  the m coordinates' losses to its 10⁻³ grid: the derived slack).
* The square root's null thresholds (a Chernoff bound) hold their level: over 20,000 unused streams
  the alarms of a day are at most Bin(20,000, bound) (one-sided test).

(The exact means and variances of every day and 7-day window of both designs, and the tree's exact
false-alarm law, are tested with every other design in ``test_trend_designs.py``.) Statistical tests
hold a false-alarm rate of ALPHA = 10⁻⁴ each.
"""

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.privacy.skellam_continual import SKELLAM_GRID, skellam_counter_epsilon
from ldpsim.evaluation.privacy.skellam_exact import exact_skellam_epsilon
from ldpsim.evaluation.trends.detection import Detector
from ldpsim.evaluation.trends.integer_design import skellam_design
from ldpsim.evaluation.trends.skellam_counter_design import integer_counter, skellam_counter_design
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise, hockey_stick
from ldpsim.runtime.errors import InputError

ALPHA = 1e-4


def test_integer_counters_are_exact_factorisations_with_integer_encoders():
    for counter, s in (("binary_tree", 1), ("square_root", 2), ("square_root", 5)):
        f = integer_counter(counter, 40, s)
        assert np.array_equal(f.R, np.round(f.R)) and f.R.min() >= 0
        assert np.allclose(f.L @ f.R, np.tril(np.ones((40, 40))), atol=1e-9)
    assert integer_counter("binary_tree", 40).name == "binary tree"
    with pytest.raises(InputError, match="counter"):
        integer_counter("banded", 40)
    with pytest.raises(InputError, match="counter"):
        skellam_counter_design("fresh_daily", 2.0, 90)
    with pytest.raises(InputError, match="integer"):
        skellam_counter_epsilon(np.full((2, 2), 0.5), 100.0, 1e-9)
    with pytest.raises(InputError, match="shifts"):
        exact_skellam_epsilon([1.5], 100.0, 1e-9)


def test_hockey_stick_grows_with_the_shift():
    """Skellam is log-concave: δ(ε) of one coordinate is nondecreasing in its shift, so u = 1 is the worst person."""
    noise = IntegerNoise("skellam", 40.0)
    for eps in (0.0, 0.2, 1.0, 3.0):
        curve = [hockey_stick(noise, eps, d) for d in range(1, 12)]
        assert np.all(np.diff(curve) >= -1e-15)


@pytest.mark.parametrize("mu, shift, delta", [(50.0, 1, 1e-6), (200.0, 4, 1e-9), (1000.0, 16, 1e-5)])
def test_fft_bracket_contains_the_hockey_stick_epsilon_of_one_coordinate(mu, shift, delta):
    noise = IntegerNoise("skellam", mu)
    lo, hi = 0.0, 20.0
    for _ in range(60):                      # ε where Σ (P(k − d) − e^ε P(k))₊ = δ
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if hockey_stick(noise, mid, shift) > delta else (lo, mid)
    lower, upper = exact_skellam_epsilon([shift], mu, delta, step=1e-4)
    assert lower - 1e-8 <= hi <= upper + 1e-8 and upper - lower <= 1e-4 + 1e-8


def _cases():
    tree = skellam_counter_design("binary_tree", 2.0, 90)
    root = skellam_counter_design("square_root", 2.0, 90)
    daily = skellam_design(2.0, 90)
    return [("fresh daily", np.ones(90, dtype=np.int64), daily.mu),
            ("binary tree", tree.counter.R.sum(axis=1).astype(np.int64), tree.mu),
            ("square root ×2", root.counter.R.sum(axis=1).astype(np.int64), root.mu)]


@pytest.mark.slow
def test_accountant_is_above_the_exact_composition_and_within_its_grid_slack():
    """On the grid (3 designs × μ, 2μ × δ = 10⁻⁹, 10⁻⁶): lower ≤ accountant ≤ upper + m·10⁻³."""
    for name, shifts, mu in _cases():
        m = int(np.count_nonzero(shifts))
        for scale in (1.0, 2.0):
            for delta in (1e-9, 1e-6):
                acc = skellam_counter_epsilon(np.diag(shifts), scale * mu, delta)
                lower, upper = exact_skellam_epsilon(shifts, scale * mu, delta)
                assert lower <= acc <= upper + m * SKELLAM_GRID, (name, scale, delta, lower, acc, upper)


@pytest.mark.slow
def test_chernoff_thresholds_of_the_square_root_hold_their_level():
    design = skellam_counter_design("square_root", 2.0, 30)
    n, days = 200_000, 30
    detector = Detector(window=7, items=1, rate=3.0)            # level 0.1 per item-day
    _, daily = design.sample(np.zeros(days), n, 20_000, np.random.default_rng(11))
    alarms = detector.alarms(daily, detector.thresholds(design, n, days))
    bound = detector.null_alarm_probability(design, n, days)
    assert np.all(bound <= detector.level * (1 + 1e-9))
    for day in (0, 3, 10, 29):
        test = stats.binomtest(int(alarms[:, day].sum()), alarms.shape[0], bound[day], alternative="greater")
        assert test.pvalue > ALPHA / 4, (day, alarms[:, day].mean(), bound[day])
    assert math.isclose(design.sigma ** 2, 2 * design.mu)
