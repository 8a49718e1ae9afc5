"""LDPTrie (docs/math.md §10.5): categories of a round, the per-device and direct aggregates against
GRR's exact moments, the privacy of a round at its boundary, discovery and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms.discovery.ldp_trie import LDPTrie
from tests.stats import assert_mean, assert_variance

WORDS = ["ab", "ba", "b", "cc"]
HOLDERS = np.array([300, 200, 100, 50])


def _setup():
    t = LDPTrie(epsilon=2.0, length=3, alphabet="abc")
    rows, _ = t.codec.symbols(WORDS)
    trie = t.codec.word_codes(["a", "b"])[0] // t.codec.base ** 2  # the 1-prefixes a, b
    return t, rows, np.sort(trie)


def test_categories_map_eligible_devices_to_their_prefix_and_others_to_none():
    t, rows, trie = _setup()
    candidates, cat = t.categories(rows, trie, 2)
    assert candidates.size == 8  # a∅ aa ab ac, b∅ ba bb bc
    names = t.codec.decode(candidates, 2).tolist()
    assert [names[c] if c < candidates.size else None for c in cat] == ["ab", "ba", "b", None]


def test_an_empty_trie_has_no_candidates_and_every_device_is_none():
    t, rows, _ = _setup()
    candidates, cat = t.categories(rows, np.array([], dtype=np.int64), 2)
    assert candidates.size == 0 and cat.tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("path", ["device", "direct"])
def test_round_aggregate_has_grrs_moments(path):
    t, rows, trie = _setup()
    candidates, cat = t.categories(rows, trie, 2)
    grr = t.oracle(candidates)
    per_cat = np.bincount(cat, weights=HOLDERS, minlength=candidates.size + 1)
    devices = np.repeat(rows, HOLDERS, axis=0)
    rng = np.random.default_rng(4)
    draws = []
    for _ in range(2000):
        if path == "device":
            _, agg = t.device_aggregate(devices, trie, 2, rng)
        else:
            _, agg = t.direct_aggregate(rows, HOLDERS, trie, 2, rng)
        draws.append(agg.data)
    n, p, q = HOLDERS.sum(), grr.p, grr.q
    mean = per_cat * p + (n - per_cat) * q
    var = per_cat * p * (1 - p) + (n - per_cat) * q * (1 - q)
    assert_mean(np.array(draws), mean, var, what=f"{path} output counts")
    assert_variance(np.array(draws), mean, var, what=f"{path} output counts")


def test_a_round_is_epsilon_ldp_at_its_boundary():
    t, rows, trie = _setup()
    candidates, _ = t.categories(rows, trie, 2)
    grr = t.oracle(candidates)
    assert math.log(grr.p / grr.q) == pytest.approx(2.0, rel=1e-12)  # the largest ratio, attained
    assert t.privacy_parts()["round"] == pytest.approx(2.0, rel=1e-12)
    assert t.privacy(rounds=5) == {"epsilon": 10.0, "delta": 0.0, "epsilon_round": 2.0, "delta_round": 0.0,
                                   "rounds": 5}


@pytest.mark.parametrize("path", ["device", "direct"])
def test_loud_words_are_found(path):
    t = LDPTrie(epsilon=5.0, length=3, alphabet="abc")
    rng = np.random.default_rng(1)
    if path == "device":
        r = t.run(np.repeat(np.array(WORDS, dtype=object), HOLDERS * 10), rng)
    else:
        r = t.run(rng=rng, items=WORDS, true_counts=HOLDERS * 10)
    assert {"ab", "ba", "b"} <= set(r.words.tolist())
    est = dict(zip(r.words.tolist(), r.counts.tolist()))
    # GRR's sd of a count (docs/math.md §1.2) with the most candidates round 3 can have (3 prefixes × 4 + none)
    q = 1 / (math.exp(5.0) + 12)
    p = math.exp(5.0) * q
    n = HOLDERS.sum() * 10
    sd = math.sqrt(n * q * (1 - q) / (p - q) ** 2 + 3000 * (1 - p - q) / (p - q))
    assert abs(est["ab"] - 3000) < 4.5 * sd


@pytest.mark.parametrize("path", ["device", "direct"])
def test_a_trie_that_dies_ends_the_pass_quietly(path):
    t = LDPTrie(epsilon=0.1, length=3, alphabet="ab")
    if path == "device":
        r = t.run(np.array(["ab"] * 20, dtype=object), rng=1)
    else:
        r = t.run(rng=1, items=["ab"], true_counts=[20])
    assert r.words.size == 0 and r.trie_sizes[-1] == 0


def test_every_device_answers_every_round():
    with pytest.raises(ValueError, match="gamma"):
        LDPTrie(epsilon=1.0, gamma=0.5)
