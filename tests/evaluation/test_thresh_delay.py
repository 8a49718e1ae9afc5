"""THRESH's first alarm and daily release over its refresh paths (docs/math.md §12.13) against the protocol.

* One collection only (k = 0): the law is exact and closed-form — the first alarm is on the first
  watched day with probability P[Bin(n, μ₀) ≥ t_c] (checked to 1e-12).
* Every epoch refreshing (vote level 1: the path is fixed, nothing approximated): the first-alarm days of
  3000 simulated runs fit the computed law (χ² goodness of fit).
* Votes deciding (one and two vote levels): the same χ² test, on the law that treats the devices as
  independent given the server's decisions; and z tests of each day's mean release and of the tracking
  error against the law's moments.

Each statistical test holds a false-alarm rate of ALPHA = 10⁻⁴ (Bonferroni over its checks).
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.trends.design_rows import measure_design
from ldpsim.evaluation.trends.designs import rr_pair
from ldpsim.evaluation.trends.detection import Detector, first_alarm
from ldpsim.evaluation.trends.thresh_delay import thresh_law, window_limit
from ldpsim.evaluation.trends.thresh_design import thresh_design
from ldpsim.evaluation.workloads.trends import TrendShape
from ldpsim.runtime.errors import InputError

ALPHA = 1e-4
N, DAYS, RUNS, EMERGENCE = 200_000, 60, 3000, 24.0
SHARES = TrendShape("w", 0.2, emergence=EMERGENCE, growth=0.2, fade=0.03).shares(DAYS)
DETECTOR = Detector()


def _law(design, shares=SHARES, start=int(EMERGENCE)):
    return thresh_law(design, shares, N, DETECTOR.lengths(DAYS), DETECTOR.tested, DETECTOR.rate, start)


def _first_alarms(design, seed):
    counts, daily = design.sample(SHARES, N, RUNS, np.random.default_rng(seed))
    alarms = DETECTOR.alarms(daily, DETECTOR.thresholds(design, N, DAYS))[:, int(EMERGENCE):]
    first = first_alarm(alarms) + int(EMERGENCE)
    return np.where(np.isnan(first), DAYS, first).astype(int), counts, daily


def _chi2_pvalue(observed_days, law):
    """χ² goodness of fit of the first-alarm days (DAYS: none) to the law, bins pooled to expected ≥ 5."""
    observed = np.bincount(observed_days, minlength=DAYS + 1).astype(float)
    expected = np.append(law.first_alarm, 1.0 - law.first_alarm.sum()) * RUNS
    order = np.argsort(expected)                       # pool the smallest bins until each holds ≥ 5
    obs, exp, o, e = [], [], 0.0, 0.0
    for i in order:
        o, e = o + observed[i], e + expected[i]
        if e >= 5:
            obs.append(o), exp.append(e)
            o, e = 0.0, 0.0
    obs[-1], exp[-1] = obs[-1] + o, exp[-1] + e
    return stats.chisquare(obs, np.asarray(exp) * sum(obs) / sum(exp)).pvalue, len(obs)


def test_one_collection_alarms_exactly_when_it_reaches_the_cut():
    """k = 0: only epoch 0 collects; from the first full window on, an alarm ⇔ its ones ≥ t_c."""
    d = thresh_design(2.0, DAYS, changes=0)
    law = _law(d)
    pe, qe = rr_pair(d.epsilon_estimate)
    mu = SHARES[:d.epoch].mean() * pe + (1 - SHARES[:d.epoch].mean()) * qe
    tc = d.estimate_cut(N, DETECTOR.tested, DETECTOR.rate)
    expected = np.zeros(DAYS)
    expected[int(EMERGENCE)] = stats.binom.sf(tc - 1, N, mu)
    assert law.first_alarm == pytest.approx(expected, abs=1e-12) and law.paths == 1
    assert law.day_mean == pytest.approx(np.full(DAYS, N * SHARES[:d.epoch].mean()))
    assert law.day_var == pytest.approx(np.full(DAYS, d.collection_moments(SHARES[:d.epoch].mean(), N)[1]))


def test_fixed_refresh_path_fits_the_simulated_first_alarms():
    """Vote level 1: every epoch refreshes until the k + 1 collections are spent, so the recursion over
    the collections is the whole law (k = 9: epochs 0–9 collect); χ² test over 3000 runs."""
    d = dataclasses.replace(thresh_design(2.0, DAYS, changes=9), vote_level=1.0)
    law = _law(d)
    assert law.paths == 1
    days, _, _ = _first_alarms(d, 7)
    pvalue, bins = _chi2_pvalue(days, law)
    assert bins >= 10 and pvalue > ALPHA


@pytest.mark.parametrize("levels", [1, 2])
def test_voted_refreshes_fit_the_simulated_first_alarms_and_moments(levels):
    """3000 runs of a word rising to 20 % of 200 000 devices: first-alarm days (χ²), the mean release of
    days 20, 35, 50, 59 (z tests), the alarms of days 44, 47, 50 (exact binomial tests) and the tracking
    error (z test over the runs' mean squared errors)."""
    d = thresh_design(2.0, DAYS, levels=levels)
    law = _law(d)
    assert law.unresolved < 1e-9 and law.paths > 10
    days, counts, daily = _first_alarms(d, 11 + levels)
    pvalue, bins = _chi2_pvalue(days, law)
    assert bins >= 6 and pvalue > ALPHA / 9                # nine checks in all
    z = stats.norm.isf(ALPHA / 18)
    for day in (20, 35, 50, 59):
        assert abs(daily[:, day].mean() - law.day_mean[day]) < z * math.sqrt(law.day_var[day] / RUNS), day
    alarms = DETECTOR.alarms(daily, DETECTOR.thresholds(d, N, DAYS))
    for day in (44, 47, 50):
        assert stats.binomtest(int(alarms[:, day].sum()), RUNS, law.alarm[day]).pvalue > ALPHA / 9, day
    mse = ((daily - counts) ** 2).mean(axis=1)
    assert abs(mse.mean() - law.tracking_error(SHARES, N) ** 2) < z * mse.std() / math.sqrt(RUNS)


def test_false_alarms_of_an_unused_item_have_their_exact_probability():
    """π = 0: nobody votes yes, so the refresh paths and the collections are exactly independent and the
    law of each day's alarm is exact. 6000 runs at 5 % vote level and 3 false alarms a month (so that
    alarms are frequent): alarms on days 3, 5, 11, 17, 29 ~ Bin(6000, P[alarm]) (exact binomial tests at
    ALPHA / 5), and every day sits under the union bound of §12.7."""
    d = thresh_design(2.0, 30, epoch=6, vote_level=0.05)
    detector, runs = Detector(window=7, items=1, rate=3.0), 6000
    law = thresh_law(d, np.zeros(30), N, detector.lengths(30), detector.tested, detector.rate, 30)
    assert np.all(law.alarm <= detector.null_alarm_probability(d, N, 30) * (1 + 1e-9))
    x = d.release(np.zeros(30), N, runs, np.random.default_rng(5))
    alarms = detector.alarms(x, detector.thresholds(d, N, 30))
    for day in (3, 5, 11, 17, 29):
        assert stats.binomtest(int(alarms[:, day].sum()), runs, law.alarm[day]).pvalue > ALPHA / 5, day


def test_table_row_fills_the_theory_of_thresh():
    """``measure_design`` gives THRESH its delay, false-alarm and tracking theory from its law (§12.13)."""
    d = thresh_design(2.0, DAYS)
    row, trajectory = measure_design(d, DETECTOR, SHARES, EMERGENCE, N, 50, np.random.default_rng(2), 24, 14)
    law = _law(d)
    assert row["delay_theory"] == law.median_delay(EMERGENCE) and math.isfinite(row["delay_theory"])
    assert row["tracking_theory"] == pytest.approx(law.tracking_error(SHARES, N))
    null = thresh_law(d, np.zeros(DAYS), N, DETECTOR.lengths(DAYS), DETECTOR.tested, DETECTOR.rate, DAYS)
    assert row["false_alarms_theory"] == pytest.approx(null.alarm.mean() * 30)
    assert 0 < row["false_alarms_theory"] <= DETECTOR.rate
    assert np.all(np.isfinite(trajectory["sd"]))


def test_a_window_spanning_three_collections_is_a_stated_limit():
    """A 3-day epoch under a 7-day window: the first alarm is not computed (NaN, with the reason); the daily
    moments still are."""
    d = thresh_design(2.0, DAYS, epoch=3)
    law = thresh_law(d, SHARES, N, Detector(window=7).lengths(DAYS), DETECTOR.tested, DETECTOR.rate, 24)
    assert "more than two" in law.limit and law.limit == window_limit(d, 7)
    assert np.isnan(law.first_alarm).all() and math.isnan(law.median_delay(EMERGENCE))
    assert np.isfinite(law.day_mean).all() and window_limit(d, 4) is None


@pytest.mark.parametrize("change, name", [
    (dict(shares=np.full(DAYS - 1, 0.1)), "shares"), (dict(shares=np.full(DAYS, 1.5)), "shares"),
    (dict(n=0), "n"), (dict(start=DAYS + 1), "start"), (dict(start=-1), "start"), (dict(rate=0.0), "rate"),
    (dict(lengths=np.zeros(DAYS)), "lengths"), (dict(lengths=np.full(DAYS - 1, 7)), "lengths")])
def test_bad_inputs_are_refused_naming_the_parameter(change, name):
    args = dict(shares=SHARES, n=N, lengths=DETECTOR.lengths(DAYS), tested=DETECTOR.tested, rate=DETECTOR.rate,
                start=24) | change
    with pytest.raises(InputError, match=name):
        thresh_law(thresh_design(2.0, DAYS), **args)


@pytest.mark.parametrize("kwargs, epoch_shares", [
    (dict(epsilon=0.2, changes=3, votes=1), [0.1] * 5),             # chance moves spend the one yes-vote
    (dict(epsilon=2.0, changes=2, levels=2), [0.0, 0.02, 0.02, 0.1, 0.1]),   # a step seen by the dyadic schedule
])
def test_each_epoch_collects_with_the_computed_probability(kwargs, epoch_shares):
    """3000 runs of the aggregate law (n = 200 000, 6-day epochs): the runs collecting in each epoch ~
    Bin(3000, P[epoch j collects]) (exact binomial tests at ALPHA / 4 each)."""
    d = thresh_design(days=30, **kwargs)
    pi = np.repeat(epoch_shares, 6)
    law = thresh_law(d, pi, N, DETECTOR.lengths(30), DETECTOR.tested, DETECTOR.rate, 0)
    _, collected = d.run(pi, N, RUNS, np.random.default_rng(17))
    assert law.collects[0] == 1.0 and law.collects[1:].sum() <= d.changes + 1e-9
    for j in range(1, 5):
        assert stats.binomtest(int(collected[:, j].sum()), RUNS, min(law.collects[j], 1.0)).pvalue > ALPHA / 4, j
