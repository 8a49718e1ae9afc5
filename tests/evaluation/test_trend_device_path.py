"""The trend designs run device by device against their exact aggregate laws (docs/math.md §12.5, §12.12).

* Rising word (independent daily use): every design's daily estimates and its whole-run window sum have
  the mean and variance of ``window_moments`` — the whole-run window sees the covariance between days
  (memoization's), a single day the per-day law.
* Changing favourites: a device's days are dependent, but each day's bit is still Bernoulli(share), so
  every single day's estimate has ``window_moments``' one-day law at the constant share.
* Blocks: serial and Dask give the same numbers; the block sums are the fleet's.
* THRESH in rounds over blocks: serial = Dask; epoch 0's collection and every release of an unused item
  have their closed-form laws (docs/math.md §12.7).

Each statistical test holds a family-wise false-alarm rate ALPHA = 10⁻⁴ (Bonferroni over its four checks:
mean and variance of two windows; variance by Σ(x − μ)²/σ² ~ χ²_R, the window sums being sums over
4 000 independent devices, normal to well within the test's resolution).
"""

import numpy as np
import pytest

from ldpsim.evaluation.trends.device_path import (DailyUse, FavouriteUse, block_aggregates, has_device_path,
                                                  release)
from ldpsim.evaluation.trends.lineup import standard_designs
from ldpsim.evaluation.trends.thresh_design import thresh_design
from ldpsim.evaluation.workloads.trends import TrendShape
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.trends.device_fleet import simulate_fleet, simulate_thresh_fleet
from tests.stats import assert_mean, assert_variance

ALPHA = 1e-4
T, N, R = 12, 4000, 600
SHARES = TrendShape("w", 0.3, emergence=1.0, growth=0.8, fade=0.05).shares(T)
DAYS = np.array([3, 7, 11])
DESIGNS = [d for d in standard_designs(2.0, T) if has_device_path(d)]


def _window_sums(daily, window):
    c = np.concatenate([np.zeros((daily.shape[0], 1)), np.cumsum(daily, axis=1)], axis=1)
    return c[:, DAYS + 1] - c[:, np.maximum(DAYS + 1 - window, 0)]


def _check(design, daily, shares, windows):
    checks = 2 * len(windows)
    for window in windows:
        mean, var = design.window_moments(shares, N, window)
        sums = _window_sums(daily, window)
        assert_mean(sums, mean[DAYS], var[DAYS], ALPHA / checks, f"{design.name}, window {window}: mean")
        assert_variance(sums, mean[DAYS], var[DAYS], ALPHA / checks, f"{design.name}, window {window}: variance")


def test_the_line_up_runs_device_by_device_except_thresh():
    names = [d.name for d in standard_designs(2.0, T) if not has_device_path(d)]
    assert names == ["THRESH (k = 3, 2 levels)"] and len(DESIGNS) == 11


@pytest.mark.parametrize("index", range(len(DESIGNS)))
def test_rising_word_device_by_device_has_the_exact_laws_moments(index):
    """600 fleets of 4 000 devices in blocks of 1 500: days 3, 7 and 11 alone and as the end of the 12-day window."""
    design = DESIGNS[index]
    run = simulate_fleet([design], DailyUse(SHARES), N, R, seed=index, block=1500)
    _check(design, run.daily[design.name], SHARES, (1, T))


@pytest.mark.parametrize("index", range(len(DESIGNS)))
def test_changing_favourites_device_by_device_have_each_days_exact_law(index):
    """300 fleets; favourites over 3 items, ≤ 2 changes per device: each day's bit is Bernoulli(0.3) (the new
    favourite's law)."""
    design = DESIGNS[index]
    law = np.array([0.3, 0.5, 0.2])
    run = simulate_fleet([design], FavouriteUse(law, 0, T, 2), N, R // 2, seed=50 + index, block=1500)
    _check(design, run.daily[design.name], np.full(T, 0.3), (1,))


def test_blocks_add_up_to_the_fleet_and_common_histories_are_shared():
    """Every design sees the same histories: the true counts are the block sums of the bits; a block's
    counts do not depend on which designs run (the histories are drawn before the designs privatize)."""
    wl = DailyUse(SHARES)
    c1, _ = block_aggregates(DESIGNS[:1], wl, 3000, 3000, np.random.default_rng(1), batch=3000)
    c2, _ = block_aggregates(DESIGNS[:1], wl, 3000, 3000, np.random.default_rng(1), batch=3000)
    assert np.array_equal(c1, c2) and c1.sum() > 0
    run = simulate_fleet(DESIGNS[:2], wl, 5000, 2, seed=3, block=2000)
    assert run.blocks == 3 and run.counts.shape == (2, T)
    assert np.all(run.counts <= 5000)


@pytest.fixture
def scheduler():
    """The address of two in-process Dask workers (no TCP port but the dashboard's, any free one)."""
    from dask.distributed import LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address="localhost:0") as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow  # starts an in-process Dask cluster
def test_serial_and_dask_give_the_same_numbers(scheduler):
    """Two in-process Dask workers, blocks finishing in any order: bit-for-bit the serial result."""
    wl = DailyUse(SHARES)
    serial = simulate_fleet(DESIGNS, wl, 3000, 2, seed=7, block=700)
    parallel = simulate_fleet(DESIGNS, wl, 3000, 2, seed=7, block=700, scheduler=scheduler)
    assert np.array_equal(serial.counts, parallel.counts)
    for name, daily in serial.daily.items():
        assert np.array_equal(daily, parallel.daily[name]), name


def test_release_decodes_the_summed_messages():
    """Noise-free check of the decoding: a counter's release of R·x is x; RR's of n·q + (p − q)·x is x."""
    x = np.arange(T, dtype=float)
    for design in DESIGNS:
        if hasattr(design, "counter"):
            assert np.allclose(release(design, design.counter.R @ x, N), x)
        elif hasattr(design, "memoized"):
            assert np.allclose(release(design, N * design.q + (design.p - design.q) * x, N), x)


def test_bad_input_is_refused_naming_it():
    thresh = [d for d in standard_designs(2.0, T) if not has_device_path(d)]
    with pytest.raises(InputError, match="THRESH"):
        block_aggregates(thresh, DailyUse(SHARES), 10, 10, np.random.default_rng(0))
    with pytest.raises(InputError, match="shares"):
        DailyUse(np.array([0.5, 1.5]))
    with pytest.raises(InputError, match="max_changes"):
        FavouriteUse(np.array([0.5, 0.5]), 0, T, T)
    with pytest.raises(InputError, match="devices"):
        simulate_fleet(DESIGNS[:1], DailyUse(SHARES), 0)


# ---- THRESH, device by device in rounds over blocks ----------------------------------------------------------
THRESH = thresh_design(2.0, T, changes=2, epoch=3, vote_level=0.05)


@pytest.mark.slow
def test_thresh_serial_and_dask_give_the_same_numbers(scheduler):
    wl = DailyUse(SHARES)
    serial = simulate_thresh_fleet(THRESH, wl, 3000, 2, seed=8, block=700)
    parallel = simulate_thresh_fleet(THRESH, wl, 3000, 2, seed=8, block=700, scheduler=scheduler)
    assert np.array_equal(serial.counts, parallel.counts)
    assert np.array_equal(serial.daily[THRESH.name], parallel.daily[THRESH.name])


@pytest.mark.slow
def test_thresh_first_collection_has_its_exact_law():
    """Epoch 0's collection (shown on days 0 … ℓ − 1) is not selected by any vote: mean n·π̄₀ and variance
    n·μ(1 − μ)/(p − q)² (``collection_moments``), 600 fleets of 4 000 devices in blocks of 1 500; epoch 0's
    shares 0.8, 0.1, 0.1 differ, so only a uniformly drawn day of the epoch gives the mean n·π̄₀."""
    shares = np.concatenate([[0.8, 0.1, 0.1], SHARES[3:]])
    run = simulate_thresh_fleet(THRESH, DailyUse(shares), N, R, seed=9, block=1500)
    first = run.daily[THRESH.name][:, :1]
    mean, var = THRESH.collection_moments(float(shares[:THRESH.epoch].mean()), N)
    assert_mean(first, mean, var, ALPHA / 2, "THRESH epoch 0: mean")
    assert_variance(first, mean, var, ALPHA / 2, "THRESH epoch 0: variance")


@pytest.mark.slow
def test_thresh_releases_of_an_unused_item_have_their_exact_law():
    """Nobody uses the item: every collection, whichever epochs the votes chose, is (Bin(n, q) − n·q)/(p − q)
    (``window_moments`` at π = 0, one day), on days 3, 7 and 11 of 600 fleets."""
    run = simulate_thresh_fleet(THRESH, DailyUse(np.zeros(T)), N, R, seed=10, block=1500)
    mean, var = THRESH.window_moments(np.zeros(T), N, 1)
    days = run.daily[THRESH.name][:, DAYS]
    assert_mean(days, mean[DAYS], var[DAYS], ALPHA / 2, "THRESH unused: mean")
    assert_variance(days, mean[DAYS], var[DAYS], ALPHA / 2, "THRESH unused: variance")
