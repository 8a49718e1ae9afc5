"""PrefixTree (docs/math.md §10.7): adaptive segments within the cap, OUE's exact moments of a round on
both paths and their agreement, the adaptive threshold's false positives, the privacy of a round at its
boundary (local) and of the aggregate, the deny list across runs, and words in any script.

Statistical assertions use tests/stats.py: family-wise false-alarm rate 1e-4 each (Bonferroni over
entries), fixed seeds."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms.discovery.prefix_tree import PrefixTree
from ldpsim.mechanisms.discovery.words import WordCodec
from ldpsim.runtime.errors import InputError
from ldpsim.simulator.discovery_rounds import interactive_passes
from tests.stats import assert_mean, assert_same_distribution, assert_variance, assert_z, z_bound

WORDS = ["ab", "ba", "b", "cab", "abc"]
HOLDERS = np.array([300, 200, 100, 50, 30])


def _setup(**kw):
    t = PrefixTree(**{"epsilon": 2.0, "length": 4, "alphabet": "abc", "rounds": 3, "max_candidates": 20,
                      "survivors": 4, **kw})
    rows, _ = t.codec.symbols(WORDS)
    return t, rows


def test_the_segment_is_the_longest_that_fits_the_cap():
    t, rows = _setup()
    # root: 3 + 9 = 12 two-symbol extensions fit 20, 3 + 9 + 27 = 39 three-symbol ones do not
    assert [t.extensions(0, s) for s in (1, 2, 3)] == [3, 12, 39] and t.segment(1, 0) == 2
    candidates, m = t.candidates(t.root())
    assert m == 2 and candidates.size == 12 and np.all(np.diff(candidates) > 0)
    assert sorted(t.decode_found(candidates, m).tolist()) == sorted(
        ["a", "b", "c"] + [x + y for x in "abc" for y in "abc"])
    # after "ab" (depth 2): 1 + 3 + 9 = 13 fit for one prefix, so the last two symbols come at once
    trie = t.codec.word_codes(["ab"])[0]
    assert t.depth(trie) == 2 and t.segment(1, 2) == 2
    # a cap met exactly still fits
    assert _setup(max_candidates=39)[0].segment(1, 0) == 3 and _setup(max_candidates=38)[0].segment(1, 0) == 2
    # for every trie size and depth: the chosen s fits, s + 1 does not (or s reaches L)
    for size in (1, 2, 4):
        for depth in (1, 2, 3):
            s = t.segment(size, depth)
            assert size * t.extensions(depth, s) <= t.max_candidates
            assert depth + s == t.length or size * t.extensions(depth, s + 1) > t.max_candidates


def test_a_generous_cap_finds_whole_words_in_one_round():
    t = PrefixTree(epsilon=6.0, length=3, alphabet="ab", rounds=3, max_candidates=14, survivors=4)
    assert t.segment(1, 0) == 3  # 2 + 4 + 8 candidates: every word at once
    r = t.run(items=["ab", "bba", "a"], true_counts=[3000, 2000, 1500], rng=3)
    assert sorted(r.words.tolist()) == ["a", "ab", "bba"] and r.trie_sizes.tolist() == [0, 0, 0]


def test_categories_map_devices_to_their_candidate_or_none():
    t, rows = _setup()
    trie = np.sort(t.codec.word_codes(["ab", "ba"])[0])  # live prefixes "ab", "ba" (depth 2)
    candidates, m, cat = t.categories(rows, trie)
    assert m == 3 and candidates.size == 8  # 2 × 13 two-symbol extensions exceed the cap: one symbol, 2 × 4
    names = t.decode_found(candidates, m).tolist()
    assert [names[c] if c < candidates.size else None for c in cat] == ["ab", "ba", None, None, "abc"]


def _moments(t, rows, trie):
    candidates, _, cat = t.categories(rows, trie)
    oue = t.oracle(candidates.size)
    n_j = np.bincount(cat, weights=HOLDERS, minlength=candidates.size + 1)
    return oue, n_j, HOLDERS.sum()


@pytest.mark.parametrize("path", [pytest.param("device", marks=pytest.mark.slow), "direct"])
def test_a_rounds_counts_and_estimates_have_oues_exact_moments(path):
    t, rows = _setup()
    trie = np.sort(t.codec.word_codes(["ab", "ba"])[0])  # "b" and "cab" answer "none"
    oue, n_j, n = _moments(t, rows, trie)
    assert n_j[-1] == 150
    devices = np.repeat(rows, HOLDERS, axis=0)
    rng = np.random.default_rng(5)
    counts, est = [], []
    for _ in range(2000):
        if path == "device":
            _, _, agg = t.device_aggregate(devices, trie, rng)
        else:
            _, _, agg = t.direct_aggregate(rows, HOLDERS, trie, rng)
        counts.append(agg.data)
        est.append(oue.estimate(agg))
    p, q = oue.p, oue.q
    mean = n_j * p + (n - n_j) * q
    var = n_j * p * (1 - p) + (n - n_j) * q * (1 - q)
    assert_mean(np.array(counts), mean, var, what=f"{path} column sums")
    assert_variance(np.array(counts), mean, var, what=f"{path} column sums")
    # the estimator (c − nq)/(p − q): unbiased, variance [N p(1−p) + (n−N) q(1−q)]/(p − q)²
    assert_mean(np.array(est), n_j, var / (p - q) ** 2, what=f"{path} estimates")
    assert_variance(np.array(est), n_j, var / (p - q) ** 2, what=f"{path} estimates")


@pytest.mark.slow  # ~5 s: 6000 rounds, half of them per device
def test_direct_and_per_device_rounds_agree_in_distribution():
    t, rows = _setup(epsilon=0.8)
    trie = np.sort(t.codec.word_codes(["ab", "ba"])[0])
    devices = np.repeat(rows, HOLDERS, axis=0)
    rng = np.random.default_rng(8)
    cands = t.candidates(trie)[0]

    def survivors(codes):
        return np.isin(cands, codes[0])

    dev = [t.device_aggregate(devices, trie, rng)[2].data for _ in range(1500)]
    dirc = [t.direct_aggregate(rows, HOLDERS, trie, rng)[2].data for _ in range(1500)]
    assert_same_distribution(np.array(dev), np.array(dirc), what="column sums")
    # which candidates pass the threshold (the published tally)
    dev_s = [survivors(t.device_votes(devices, trie, 2, rng)[0]) for _ in range(1500)]
    dir_s = [survivors(t.sample_votes(rows, HOLDERS, trie, 2, rng)[0]) for _ in range(1500)]
    share = np.mean(dir_s, axis=0)
    assert ((share > 0.05) & (share < 0.95)).any()  # the check has power: some candidate is neither sure nor lost
    # a Bernoulli law is its mean: two-proportion z per candidate (pooled sd), Bonferroni over candidates
    pooled = (np.mean(dev_s, axis=0) + share) / 2
    sd = np.sqrt(np.maximum(pooled * (1 - pooled), 1e-12) * 2 / 1500)
    assert_z(np.mean(dev_s, axis=0), share, sd, what="survival probability")


def test_the_threshold_bounds_the_expected_false_positives_of_a_round():
    t, rows = _setup(epsilon=1.0, false_discoveries=1.5)  # 0.5 a round over its 3 rounds
    q = t.oracle(1).q
    for n, k in [(650, 12), (650, 26), (10_000, 12), (10 ** 6, 60_000)]:
        thr = t.threshold_count(n, k)
        # the smallest count whose expected number of empty candidates passing is within the target
        assert k * stats.binom.sf(thr - 1, n, q) <= 0.5 < k * stats.binom.sf(thr - 2, n, q)
    assert t.threshold_count(650, 26) >= t.threshold_count(650, 12)  # more candidates, higher bar


@pytest.mark.slow  # ~1.5 s: 4000 rounds
def test_empty_candidates_pass_as_often_as_the_threshold_allows():
    t, rows = _setup(epsilon=1.0, false_discoveries=1.5)  # 0.5 a round over its 3 rounds
    q = t.oracle(1).q
    trie = t.root()
    candidates, _, cat = t.categories(rows, trie)
    empty = np.bincount(cat, weights=HOLDERS, minlength=candidates.size + 1)[:-1] == 0
    thr, n, reps = t.threshold_count(HOLDERS.sum(), candidates.size), HOLDERS.sum(), 4000
    pi = stats.binom.sf(thr - 1, n, q)
    rng = np.random.default_rng(11)
    passed = sum(int((t.direct_aggregate(rows, HOLDERS, trie, rng)[2].data[:-1][empty] >= thr).sum())
                 for _ in range(reps))
    expected = reps * empty.sum() * pi
    assert expected <= reps * 0.5
    assert abs(passed - expected) <= z_bound() * math.sqrt(reps * empty.sum() * pi * (1 - pi))


def test_a_round_is_epsilon_ldp_at_its_boundary():
    t, rows = _setup()
    candidates, _, _ = t.categories(rows, t.root())
    oue = t.oracle(candidates.size)  # 13 values: 12 candidates and "none"
    probs = oue.report_distribution()  # P[report | value], every report enumerated, from OUE's own p, q
    ratio = np.log(probs[:, None, :] / probs[None, :, :]).max()
    assert ratio == pytest.approx(2.0, rel=1e-12)  # attained: the largest ratio is e^ε exactly
    assert np.log(probs[-1] / probs[0]).max() == pytest.approx(2.0, rel=1e-12)  # "none" against a word
    assert t.privacy_parts()["round"] == pytest.approx(2.0, rel=1e-12)
    assert t.privacy() == {"epsilon": 6.0, "delta": 0.0, "epsilon_round": 2.0, "delta_round": 0.0, "rounds": 3}


def test_the_deny_list_excludes_found_words_in_later_runs():
    t, rows = _setup(survivors=1, max_candidates=20)
    items, counts = ["b", "ab", "ba"], np.array([5000, 4000, 3000])
    results = t.runs_with_deny_list(items, np.tile(counts, (3, 1)), rng=2)
    found = [r.words.tolist() for r in results]
    assert found == [["b"], ["ab"], ["ba"]]  # one word a run (survivors = 1), a new one each time
    again = [t.run(items=items, true_counts=counts, rng=s).words.tolist() for s in range(3)]
    assert again == [["b"]] * 3  # without the list every run finds the same word
    denied = PrefixTree(**{**_kw(t), "deny": ("b",)})
    rows, _ = denied.codec.symbols(items)
    _, _, cat = denied.categories(rows, denied.root())
    assert cat[0] == denied.candidates(denied.root())[0].size  # a denied word's device reports "none"


def _kw(t):
    return {k: getattr(t, k) for k in ("epsilon", "length", "alphabet", "rounds", "max_candidates", "survivors")}


@pytest.mark.parametrize("path", [pytest.param("device", marks=pytest.mark.slow), "direct"])
def test_words_in_any_script_are_found(path):
    words = ["gr8", "绝绝子", "👨‍👩‍👧", "don't", "rizz"]
    codec = WordCodec.for_words(words)
    t = PrefixTree(epsilon=3.0, length=codec.length, alphabet=codec.alphabet, rounds=3)
    holders = np.array([3000, 2500, 2000, 1500, 1000])
    if path == "device":
        r = t.run(np.repeat(np.array(words, dtype=object), holders), rng=4)
    else:
        r = t.run(items=words, true_counts=holders, rng=4)
    assert sorted(r.words.tolist()) == sorted(words)


def test_passes_over_days_publish_words():
    words = ["gr8", "绝绝子", "👨‍👩‍👧"]
    codec = WordCodec.for_words(words)
    t = PrefixTree(epsilon=3.0, length=codec.length, alphabet=codec.alphabet, rounds=2)
    passes = interactive_passes(t, words, np.array([[3000, 2000, 1000]] * 2), rounds_per_day=2, rng=1)
    assert [p["day"] for p in passes] == [0, 1] and all(sorted(p["words"]) == sorted(words) for p in passes)


def test_bad_parameters_name_themselves():
    with pytest.raises(InputError, match="max_candidates"):
        PrefixTree(epsilon=1.0, length=3, alphabet="ab", rounds=2, survivors=8, max_candidates=20)  # 8 × 3 > 20
    with pytest.raises(InputError, match="gamma"):
        PrefixTree(epsilon=1.0, gamma=0.5)
    with pytest.raises(InputError, match="rounds"):
        PrefixTree(epsilon=1.0, length=3, alphabet="ab", rounds=4, max_candidates=64, survivors=4)


PROFILE_WORDS = ["ab", "ba", "b", "cab"]
PROFILES = np.array([[3, 1, 0, 0], [0, 0, 2, 2], [1, 0, 0, 0], [0, 0, 0, 5]])  # how often each profile typed each


def test_data_selection_among_several_words():
    t, _ = _setup()
    rows, _ = t.codec.symbols(PROFILE_WORDS)
    trie = np.sort(t.codec.word_codes(["ab", "ba"])[0])  # "b" and "cab" are not eligible
    candidates, m, probs = t.choice_probabilities(rows, PROFILES, trie)
    names = t.decode_found(candidates, m).tolist() + ["none"]
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert {names[j]: p for j, p in enumerate(probs[0]) if p} == {"ab": 0.75, "ba": 0.25}  # ∝ typed, eligible
    assert names[int(np.argmax(probs[1]))] == "none" and probs[1].max() == 1.0  # nothing eligible
    top = replace(t, selection="top").choice_probabilities(rows, PROFILES, trie)[2]
    assert names[int(np.argmax(top[0]))] == "ab" and top[0].max() == 1.0
    # a denied word: the device reports its other word (the deny list and data selection together)
    denied = replace(t, deny=("ab",)).choice_probabilities(rows, PROFILES, trie)[2]
    assert {names[j]: p for j, p in enumerate(denied[0]) if p} == {"ba": 1.0}
    assert names[int(np.argmax(denied[2]))] == "none"  # its only word is denied


@pytest.mark.parametrize("path", [pytest.param("device", marks=pytest.mark.slow), "direct"])
def test_a_round_over_devices_with_several_words_has_its_exact_moments(path):
    # ε = 8 and even splits: the device's own choice carries most of a column's variance, so a sampler that
    # skipped it (expected category counts instead of multinomial draws) would be seen
    t, _ = _setup(epsilon=8.0)
    rows, _ = t.codec.symbols(PROFILE_WORDS)
    trie = np.sort(t.codec.word_codes(["ab", "ba"])[0])
    holdings = np.array([[2, 2, 0, 0], [0, 0, 2, 2], [1, 0, 0, 0], [0, 3, 0, 5]])
    devices = np.array([600, 200, 100, 100])
    candidates, _, probs = t.choice_probabilities(rows, holdings, trie)
    oue = t.oracle(candidates.size)
    # each device's bit j is 1 w.p. r = π_j p + (1 − π_j) q, independently over devices
    r = probs * oue.p + (1 - probs) * oue.q
    mean, var = devices @ r, devices @ (r * (1 - r))
    profile = np.repeat(np.arange(len(devices)), devices)
    rng = np.random.default_rng(6)
    draws = []
    for _ in range(1200):
        if path == "device":
            agg = t.profile_device_aggregate(rows, holdings, profile, trie, rng)[2]
        else:
            agg = t.profile_aggregate(rows, holdings, devices, trie, rng)[2]
        draws.append(agg.data)
    assert_mean(np.array(draws), mean, var, what=f"{path} column sums")
    assert_variance(np.array(draws), mean, var, what=f"{path} column sums")


@pytest.mark.parametrize("per_device", [False, True])
def test_with_several_words_a_denied_words_devices_find_their_other_word(per_device):
    t = PrefixTree(epsilon=5.0, length=4, alphabet="abc", rounds=3, max_candidates=20, survivors=4)
    holdings, devices = np.array([[5, 1, 0], [0, 0, 1]]), np.array([3000, 800])  # "ab" typed most, then "ba"
    kw = {"holdings": np.repeat(holdings, devices, axis=0)} if per_device else {"holdings": holdings,
                                                                                "devices": devices}
    words = replace(t, deny=("ab",)).run_profiles(["ab", "ba", "cab"], rng=3, per_device=per_device, **kw).words
    assert "ab" not in words.tolist() and "ba" in words.tolist()
