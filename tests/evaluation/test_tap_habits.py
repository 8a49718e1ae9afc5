"""A device's owner (handedness and tap habit, docs/math.md §5.1) is drawn once for the run from its block's
stream and kept on every night it taps (evaluation/deployment/numeric_runs.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.deployment.numeric_runs import fleet_habits, reporting_nights, run_taps
from ldpsim.evaluation.workloads.key_taps import HABIT_SPREAD, LEFT_SHARE, device_habits, key_taps
from ldpsim.runtime.errors import InputError
from ldpsim.simulator.fleet import stream
from tests.fleets import tiny_config


def _cfg(**kw):
    return tiny_config(**{"n_devices": 3000, "n_days": 3, "opt_in": 0.9, "p_online": 0.8, **kw})


def test_a_device_keeps_its_habit_and_hand_on_every_night():
    """Every device tapping on several nights carries the same habit offset and handedness each time, those
    the fleet drew for it; different devices differ."""
    cfg = _cfg()
    nights = reporting_nights(cfg, np.random.default_rng(stream(cfg.seed, "numeric", 0)))
    device, taps = run_taps(cfg, nights, np.random.default_rng(1))
    left, habit = fleet_habits(cfg)
    assert np.array_equal(taps.habit, habit[device]) and np.array_equal(taps.left_handed, left[device])
    first = np.unique(device, return_index=True)[1]
    again = np.nonzero(np.bincount(device) >= 2)[0]
    assert again.size > 1000  # many devices tap on two or more nights
    for d in range(1, cfg.n_days):  # the same device on night 0 and on night d
        both = np.intersect1d(np.nonzero(nights[0])[0], np.nonzero(nights[d])[0])
        row0 = np.searchsorted(device[: nights[0].sum()], both)
        row_d = nights[:d].sum() + np.searchsorted(device[nights[:d].sum(): nights[: d + 1].sum()], both)
        assert both.size > 500
        assert np.array_equal(taps.habit[row0], taps.habit[row_d])
        assert np.array_equal(taps.left_handed[row0], taps.left_handed[row_d])
    assert np.unique(taps.habit[first], axis=0).shape[0] == first.size


def test_any_shard_draws_the_same_owners():
    """A block's owners come from its own stream: drawn alone, or in another order, they are the same."""
    cfg = _cfg()
    left, habit = fleet_habits(cfg)
    assert left.shape == (3000,) and habit.shape == (3000, 2)
    part_left, part_habit = fleet_habits(cfg, [3, 1])
    b = cfg.block_size
    assert np.array_equal(part_habit, np.concatenate([habit[3 * b: 4 * b], habit[b: 2 * b]]))
    assert np.array_equal(part_left, np.concatenate([left[3 * b: 4 * b], left[b: 2 * b]]))


def test_owners_follow_the_tap_models_law():
    """Left-handed share ~ Binomial(n, 0.1) and each habit axis N(0, 0.12²): the share's z, the axes' mean z
    and the variance ratio's z (sd √(2/(n−1))) each within 4 (false alarm 6e-5 each)."""
    n = 200_000
    left, habit = device_habits(n, np.random.default_rng(3))
    assert abs(left.mean() - LEFT_SHARE) / math.sqrt(LEFT_SHARE * (1 - LEFT_SHARE) / n) < 4
    for axis in range(2):
        assert abs(habit[:, axis].mean()) / (HABIT_SPREAD / math.sqrt(n)) < 4
        assert abs(habit[:, axis].var(ddof=1) / HABIT_SPREAD ** 2 - 1) / math.sqrt(2 / (n - 1)) < 4


def test_key_taps_refuses_habits_of_the_wrong_shape():
    with pytest.raises(InputError, match="habits"):
        key_taps(5, rng=0, habits=(np.zeros(4, bool), np.zeros((4, 2))))
    assert key_taps(50, rng=0).habit.shape == (50, 2)
