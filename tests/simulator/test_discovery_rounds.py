"""Rounds across days (docs/math.md §10.4): the online holders' law, the schedule of passes, and
agreement with a single run of the protocol."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.mechanisms.discovery.triehh import TrieHH
from ldpsim.simulator.discovery_rounds import interactive_passes, online_holders
from tests.stats import assert_mean, assert_variance

SHARES = np.array([[0.6, 0.3, 0.1], [0.5, 0.3, 0.2]])


def test_online_holders_are_binomial_per_word():
    rng = np.random.default_rng(3)
    draws = np.array([online_holders(SHARES, 2000, 0.4, rng).ravel() for _ in range(3000)])
    p = (SHARES * 0.4).ravel()  # a device is an online holder of w w.p. π·p_online
    assert_mean(draws, 2000 * p, 2000 * p * (1 - p), what="online holders")
    assert_variance(draws, 2000 * p, 2000 * p * (1 - p), what="online holders")


def test_bad_shares_are_rejected():
    with pytest.raises(ValueError, match="shares"):
        online_holders(np.array([[0.5, 0.4]]), 10, 0.5)


@pytest.mark.parametrize("per_day,expected_days", [(2, [1, 3, 5]), (4, [0, 1, 2, 3, 4, 5]), (8, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5])])
def test_passes_follow_the_schedule(per_day, expected_days):
    t = TrieHH(gamma=0.5, theta=5, length=4, alphabet="abc")
    online = np.full((6, 2), 200)
    passes = interactive_passes(t, ["ab", "cab"], online, per_day, rng=1)
    assert [p["day"] for p in passes] == expected_days
    assert all(sorted(p["words"].tolist()) == ["ab", "cab"] for p in passes)


def test_one_pass_is_the_protocols_run():
    """One day, L rounds: the same stream gives the same words and votes as ``TrieHH.run``."""
    t = TrieHH(gamma=0.3, theta=8, length=4, alphabet="abc")
    words, holders = ["ab", "ba", "cab", "c"], np.array([60, 25, 40, 30])
    (p,) = interactive_passes(t, words, holders[None, :], t.rounds, rng=7)
    r = t.run(rng=7, items=words, true_counts=holders)
    assert p["words"].tolist() == r.words.tolist() and p["votes"].tolist() == r.votes.tolist()
