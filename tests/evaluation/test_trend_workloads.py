"""Trend workloads: rising items and changing favourites (docs/math.md §12.5)."""

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.workloads.trends import (WORDS_PER_DAY, TrendShape, changing_favourites, daily_counts,
                                                peak_share, rising_items)
from ldpsim.runtime.errors import InputError

#: family-wise false-alarm rate of each statistical test in this file
ALPHA = 1e-4


def test_shape_reaches_one_percent_of_its_peak_on_the_emergence_day_and_half_at_its_centre():
    s = TrendShape("w", 0.02, emergence=20.0, growth=0.3, fade=0.05)
    pi = s.shares(90)
    assert pi[20] == pytest.approx(0.02 * 0.01, rel=1e-12)
    m = s.centre
    assert m == pytest.approx(20 + math.log(99) / 0.3)
    rising = pi[: int(m)]
    assert np.all(np.diff(rising) > 0)
    assert np.all(np.diff(pi[int(m) + 10:]) < 0)          # the fade wins after the centre


@pytest.mark.slow
def test_peak_comes_from_wordfreq():
    import wordfreq

    f = wordfreq.word_frequency("rizz", "en")
    assert peak_share("rizz") == pytest.approx(1 - math.exp(-WORDS_PER_DAY * f))
    with pytest.raises(InputError, match="zzqqxv"):
        peak_share("zzqqxv")
    for bad in ("sus lol", "a\x00b", ""):
        with pytest.raises(InputError, match="one printable word"):
            peak_share(bad)


@pytest.mark.slow
def test_rising_items_are_seeded_and_in_their_ranges():
    a = rising_items(["sus", "slay"], 90, rng=3)
    assert a == rising_items(["sus", "slay"], 90, rng=3)
    for s in a:
        assert 18 <= s.emergence < 54 and 0.1 <= s.growth < 0.4 and 0 <= s.fade < 0.05
    with pytest.raises(InputError, match="items"):
        rising_items([], 90)


def test_daily_counts_are_binomial():
    """Sum over days and 400 draws of Bin(n, π_t): a z test on the mean and a χ² test on one day's variance."""
    n, reps = 1000, 400
    pi = TrendShape("w", 0.3, 10.0, 0.4).shares(40)
    x = daily_counts(np.broadcast_to(pi, (reps, 40)), n, rng=1)
    total_mean, total_var = reps * n * pi.sum(), reps * n * (pi * (1 - pi)).sum()
    z = (x.sum() - total_mean) / math.sqrt(total_var)
    assert abs(z) < stats.norm.isf(ALPHA / 4)
    day = x[:, 35]
    ratio = day.var(ddof=1) / (n * pi[35] * (1 - pi[35]))
    lo, hi = stats.chi2.ppf([ALPHA / 4, 1 - ALPHA / 4], reps - 1) / (reps - 1)
    assert lo < ratio < hi
    with pytest.raises(InputError, match="shares"):
        daily_counts([1.5], n)


def test_favourites_change_at_most_k_times_and_follow_the_shares():
    shares = np.array([0.5, 0.3, 0.2])
    fav = changing_favourites(20_000, 30, shares, 3, rng=2)
    changes = (np.diff(fav, axis=1) != 0).sum(axis=1)
    assert fav.shape == (20_000, 30) and changes.max() <= 3
    # every device's day-t favourite is one draw of the shares: χ² on day 29
    observed = np.bincount(fav[:, 29], minlength=3)
    chi = stats.chisquare(observed, 20_000 * shares)
    assert chi.pvalue > ALPHA
    # redraw days: 0 … 3 uniformly, so the mean number of redraws is 1.5 and a redraw changes w.p. 1 − Σπ²
    expected_changes = 1.5 * (1 - (shares ** 2).sum())
    assert abs(changes.mean() - expected_changes) < stats.norm.isf(ALPHA / 2) * changes.std() / math.sqrt(20_000)
    with pytest.raises(InputError, match="max_changes"):
        changing_favourites(10, 5, shares, 5)
