"""THRESH (docs/math.md §12.7) against its closed forms and its privacy from its own probabilities.

* Epoch 0's collection: mean n·π̄ and variance n·μ(1 − μ)/(p − q)² (z tests of mean and variance).
* The refresh at epoch 1 when the share does not change: the count of refreshing runs is exactly
  Bin(runs, P[refresh]) (exact binomial test), with nobody using the item (the vote level) and with a
  constant share (the yes-votes of devices whose local count moved by chance).
* The guarantee: the worst transcript ratio, enumerated over every history of one device on a small
  run from the mechanism's own report probabilities, equals (k + 1)·ε_estimate + 2·m·ε_vote.

Each statistical test holds a false-alarm rate of ALPHA = 10⁻⁴ (Bonferroni over its checks).
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.trends.designs import rr_pair
from ldpsim.evaluation.trends.thresh_design import local_count_law, thresh_design, thresh_epsilon
from ldpsim.evaluation.trends.detection import Detector
from ldpsim.evaluation.workloads.trends import changing_favourites
from ldpsim.runtime.errors import InputError

ALPHA = 1e-4
N, RUNS = 200_000, 4000


def test_local_count_law_is_poisson_binomial():
    law = local_count_law([0.1, 0.5, 0.9, 0.2, 0.2, 0.2], 3)
    assert law[0] == pytest.approx([0.9 * 0.5 * 0.1, 0.1 * 0.5 * 0.1 + 0.9 * 0.5 * 0.1 + 0.9 * 0.5 * 0.9,
                                    0.1 * 0.5 * 0.1 + 0.1 * 0.5 * 0.9 + 0.9 * 0.5 * 0.9, 0.1 * 0.5 * 0.9])
    assert law[1] == pytest.approx(stats.binom.pmf(range(4), 3, 0.2))


def test_first_collection_has_its_closed_form_mean_and_variance():
    """Day 0 shows epoch 0's collection: z tests of its mean and variance over 4000 runs."""
    d = thresh_design(2.0, 30, epoch=6)
    shares = np.linspace(0.02, 0.08, 30)
    x = d.release(shares, N, RUNS, np.random.default_rng(3))[:, 0]
    mean, var = d.collection_moments(shares[:6].mean(), N)
    z = stats.norm.isf(ALPHA / 4)
    assert abs(x.mean() - mean) < z * math.sqrt(var / RUNS)
    s2 = x.var()
    se = math.sqrt((((x - x.mean()) ** 4).mean() - s2 ** 2) / RUNS)
    assert abs(s2 - var) < z * se


@pytest.mark.parametrize("share, levels", [(0.0, 1), (0.002, 1), (0.01, 1), (0.05, 2)])
def test_refresh_at_epoch_one_without_a_change_has_its_exact_probability(share, levels):
    """Runs that collect again at epoch 1 ~ Bin(runs, P[refresh]); a refresh changes what day 11 shows.
    With B = 2 levels only a move of ≥ 2·gap may vote at epoch 1."""
    d = thresh_design(2.0, 12, epoch=6, vote_level=0.05, levels=levels)
    x, collected = d.run(np.full(12, share), N, RUNS, np.random.default_rng(11))
    refreshed = int(collected[:, 1].sum())
    assert np.all(x[~collected[:, 1], 11] == x[~collected[:, 1], 5])
    p = d.refresh_probability(share, N)
    assert (p <= 0.05) if share == 0 else (p > 0.05)
    assert 0 < refreshed < RUNS or p < 0.01 or p > 0.99
    assert stats.binomtest(refreshed, RUNS, p).pvalue > ALPHA


def _transcript_law(d, history, outputs):
    """P[the device's reports = outputs │ its daily bits, the server's refresh decisions], enumerated.

    ``history``: bits (T,); ``outputs``: per epoch (vote, bit sent or None) with the server's decisions
    implied by which epochs carry a collected report. The sent bit of a collection is RR of one of the
    epoch's days drawn uniformly.
    """
    pv, qv = rr_pair(d.epsilon_vote)
    pe, qe = rr_pair(d.epsilon_estimate)
    counts = np.asarray(history).reshape(-1, d.epoch).sum(axis=1)
    prob, used, last = 1.0, 0, counts[0]
    for j, (vote, sent) in enumerate(outputs):
        if j > 0 and vote is not None:
            yes = bool(d.vote_allowed(j, abs(counts[j] - last))) and used < d.votes
            p1 = pv if yes else qv
            prob *= p1 if vote else 1 - p1
            used += yes
        if sent is not None:
            share = counts[j] / d.epoch
            p1 = share * pe + (1 - share) * qe
            prob *= p1 if sent else 1 - p1
            last = counts[j]
    return prob


def test_worst_transcript_ratio_is_the_stated_epsilon():
    """Every pair of histories of one device over 5 epochs of 1 day (k = 1, m = 2) and every transcript
    the server can see (no votes once both collections are spent): max ln ratio ≤ (k + 1)ε_e + 2mε_v,
    and equal to it — e.g. 1,0,0,0,0 against 0,0,0,1,1 with the second collection on epoch 4."""
    d = thresh_design(1.0, 5, changes=1, epoch=1)
    histories = list(itertools.product([0, 1], repeat=5))
    worst = 0.0
    for second in (None, 1, 2, 3, 4):                      # the epoch of the second collection, if any
        for votes in itertools.product([0, 1], repeat=4):
            for bits in itertools.product([0, 1], repeat=2 if second else 1):
                outputs = [(None, bits[0])] + [
                    (None if second and j > second else votes[j - 1], bits[1] if j == second else None)
                    for j in (1, 2, 3, 4)]
                law = np.array([_transcript_law(d, h, outputs) for h in histories])
                worst = max(worst, math.log(law.max() / law.min()))
    stated = thresh_epsilon(d.changes, d.epsilon_estimate, d.epsilon_vote, d.votes)
    assert stated == pytest.approx(1.0) == pytest.approx(d.guarantee.epsilon)
    assert worst == pytest.approx(stated, abs=1e-12)


def test_dyadic_schedule_lets_larger_moves_vote_on_more_epochs():
    """B = 3 levels, gap 1: a move of 1 votes on epochs divisible by 4, of 2 on even epochs, of ≥ 3 on every
    epoch; B = 1 is every epoch at a move ≥ gap. The guarantee does not depend on the schedule."""
    d = thresh_design(2.0, 96, epoch=6, levels=3)
    allowed = np.array([[bool(d.vote_allowed(j, m)) for j in range(1, 9)] for m in range(5)])
    assert allowed.tolist() == [[False] * 8,
                                [False, False, False, True, False, False, False, True],
                                [False, True, False, True, False, True, False, True],
                                [True] * 8, [True] * 8]
    one = thresh_design(2.0, 96, epoch=6, gap=2)
    assert [bool(one.vote_allowed(3, m)) for m in range(4)] == [False, False, True, True]
    assert d.name == "THRESH (k = 3, 3 levels)" and d.guarantee.epsilon == one.guarantee.epsilon
    with pytest.raises(InputError, match="levels"):
        thresh_design(2.0, 90, epoch=6, gap=2, levels=4)


def test_worst_transcript_ratio_of_a_dyadic_schedule_is_within_the_stated_epsilon():
    """Every history of one device over 2 epochs of 2 days (B = 2, k = 1) and every transcript: max ln ratio ≤ ε."""
    d = thresh_design(1.0, 4, changes=1, epoch=2, levels=2)
    histories = list(itertools.product([0, 1], repeat=4))
    worst = 0.0
    for second in (None, 1):
        for votes in itertools.product([0, 1], repeat=1):
            for bits in itertools.product([0, 1], repeat=2 if second else 1):
                outputs = [(None, bits[0]), (votes[0], bits[1] if second == 1 else None)]
                law = np.array([_transcript_law(d, h, outputs) for h in histories])
                worst = max(worst, math.log(law.max() / law.min()))
    assert 0 < worst <= d.guarantee.epsilon + 1e-12


def test_epsilon_grows_with_the_changes_not_the_days():
    a, b = thresh_design(2.0, 90, changes=3), thresh_design(2.0, 360, changes=3)
    assert a.epsilon_estimate == b.epsilon_estimate and a.epsilon_vote == b.epsilon_vote
    assert thresh_epsilon(7, a.epsilon_estimate, a.epsilon_vote, 8) == pytest.approx(4.0)


@pytest.mark.slow
def test_null_thresholds_bound_the_false_alarms():
    """An unused item over 20,000 runs: alarms on each of days 5, 17, 29 ≤ the bound (one-sided exact test)."""
    d = thresh_design(2.0, 30, epoch=6, vote_level=0.05)
    detector = Detector(window=7, items=1, rate=3.0)
    x = d.release(np.zeros(30), N, 20_000, np.random.default_rng(5))
    alarms = detector.alarms(x, detector.thresholds(d, N, 30))
    bound = detector.null_alarm_probability(d, N, 30)
    assert np.all(bound <= detector.level * (1 + 1e-12))
    for day in (5, 17, 29):
        assert stats.binomtest(int(alarms[:, day].sum()), 20_000, bound[day], alternative="greater").pvalue > ALPHA / 4
    _, var = d.window_moments(np.zeros(30), N, 1)         # one day's release: z test of its variance
    s2, r = (x[:, 29] ** 2).mean(), x.shape[0]
    se = math.sqrt(((x[:, 29] ** 4).mean() - s2 ** 2) / r)
    assert abs(s2 - var[29]) < stats.norm.isf(ALPHA / 8) * se
    assert np.isnan(d.window_moments(np.zeros(30), N, 7)[1]).all() and np.isnan(d.window_moments(np.ones(30), N, 1)[0]).all()


@pytest.mark.parametrize("kwargs, name", [({"epoch": 7}, "epoch"), ({"gap": 0}, "gap"), ({"changes": -1}, "changes"),
                                          ({"vote_level": 1.5}, "vote_level"), ({"votes": 0}, "votes")])
def test_bad_parameters_are_refused(kwargs, name):
    with pytest.raises(InputError, match=name):
        thresh_design(2.0, 90, **kwargs)


@pytest.mark.parametrize("shares", [np.zeros(12), np.full(30, 1.5)])
def test_bad_shares_are_refused(shares):
    with pytest.raises(InputError, match="shares"):
        thresh_design(2.0, 30).run(shares, 1000, 2, 0)


@pytest.mark.slow
@pytest.mark.parametrize("kwargs, shares", [
    (dict(epsilon=2.0, days=24, changes=2), np.repeat([0.02, 0.06, 0.03, 0.06], 6)),   # votes after a refresh
    (dict(epsilon=0.2, days=30, changes=1, votes=1), np.full(30, 0.1)),               # the yes-vote cap binds
    (dict(epsilon=2.0, days=48, changes=2, levels=3), np.repeat([0.02, 0.02, 0.08, 0.08, 0.3, 0.3, 0.3, 0.1], 6)),
])
def test_aggregate_law_matches_the_device_by_device_protocol(kwargs, shares):
    """1500 runs each of ``run`` and of ``simulate_devices`` on fresh independent daily bits (n = 3000,
    6-day epochs; the collection cap binds in both cases): the pattern of collecting epochs (χ² test of
    homogeneity) and the last day's release (two-sample Kolmogorov–Smirnov) agree, at ALPHA / 4 each."""
    d = thresh_design(epoch=6, vote_level=0.05, **kwargs)
    n, runs, days = 3000, 1500, kwargs["days"]
    agg, agg_col = d.run(shares, n, runs, np.random.default_rng(21))
    gen = np.random.default_rng(22)
    dev = [d.simulate_devices(gen.random((n, days)) < shares, gen) for _ in range(runs)]
    dev_daily = np.concatenate([x for x, _ in dev])
    dev_col = np.concatenate([c for _, c in dev])
    weights = 2 ** np.arange(agg_col.shape[1] - 2, -1, -1)
    pattern = lambda col: np.bincount(col[:, 1:] @ weights, minlength=2 * weights[0])
    table = np.array([pattern(agg_col), pattern(dev_col)])
    small = table.sum(axis=0) < 20                          # pooled, so every expected count is ≥ 5
    table = np.column_stack([table[:, ~small], table[:, small].sum(axis=1)])
    table = table[:, table.sum(axis=0) > 0]
    assert table.shape[1] >= 2 and stats.chi2_contingency(table).pvalue > ALPHA / 4, table
    assert stats.ks_2samp(agg[:, -1], dev_daily[:, -1]).pvalue > ALPHA / 4


def test_devices_with_favourites_that_never_change_never_refresh_by_vote():
    """Bits constant over the run (changing_favourites with k = 0): no local count moves, so no device
    votes yes, and a refresh happens only at the vote level (here 0: never)."""
    d = thresh_design(2.0, 30, epoch=6, vote_level=1e-12)
    fav = changing_favourites(20_000, 30, [0.3, 0.7], 0, np.random.default_rng(4))
    x, collected = d.simulate_devices(fav == 0, np.random.default_rng(5))
    assert collected.tolist() == [[True, False, False, False, False]] and np.all(x == x[0, 0])
    with pytest.raises(InputError, match="bits"):
        d.simulate_devices(np.zeros((10, 29)), 0)


@pytest.mark.slow
@pytest.mark.parametrize("levels", [1, 2])
def test_alarm_bound_holds_for_a_rising_item(levels):
    """2000 runs of a word rising to 5.45 % of 10⁷ devices: on every day, the runs alarmed by then are at
    most Bin(2000, bound) (one-sided exact tests at ALPHA / 90 each), and the bound is not vacuous: it
    stays below ½ until 12 days after emergence."""
    from ldpsim.evaluation.workloads.trends import TrendShape

    shape = TrendShape("w", 0.0545, emergence=52.0, growth=0.2, fade=0.036)
    pi, n = shape.shares(90), 10_000_000
    d = thresh_design(2.0, 90, levels=levels)
    detector = Detector(window=7, items=1, rate=0.05)
    _, daily = d.sample(pi, n, 2000, np.random.default_rng(31))
    alarms = detector.alarms(daily, detector.thresholds(d, n, 90))
    first = np.where(alarms.any(axis=1), alarms.argmax(axis=1), 90)
    bound = d.alarm_bound(pi, n, detector.tested, detector.rate)
    assert np.all(np.diff(bound) >= 0) and bound[-1] == 1.0 and bound[52 + 12] < 0.5
    for day in np.flatnonzero(bound < 1):
        hits = int((first <= day).sum())
        assert stats.binomtest(hits, 2000, bound[day], alternative="greater").pvalue > ALPHA / 90, (day, hits, bound[day])
