"""GboardTrie (docs/math.md §10.5): the device samplers' laws, a round's estimates against their exact
mean and variance on both paths, the two paths' agreement, passes, cohorts, the local boundary, and
words of any script."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie
from ldpsim.mechanisms.discovery.words import WordCodec
from ldpsim.mechanisms.frequency.grr import GRR
from ldpsim.runtime.errors import InputError
from tests.stats import assert_chisquare_gof, assert_mean, assert_same_distribution, assert_variance

# one block of six devices: (device, word, times typed); repeated COPIES times
BLOCK = [(0, "ab", 3), (0, "ba", 1), (1, "ab", 1), (1, "cc", 2), (2, "b", 2), (3, "ba", 1), (3, "b", 1),
         (3, "ab", 1), (4, "cc", 5), (5, "cc", 1), (5, "ab", 2)]
COPIES = 50


def _fleet():
    dev = np.array([d + 6 * k for k in range(COPIES) for d, _, _ in BLOCK])
    words = [w for _ in range(COPIES) for _, w, _ in BLOCK]
    counts = np.array([c for _ in range(COPIES) for _, _, c in BLOCK])
    return dev, words, counts


def _round(sampler, epsilon=1.0):
    """The level-2 round with trie {a, b}: (protocol, rows, entry_row, device, counts, trie, excluded)."""
    t = GboardTrie(epsilon=epsilon, length=3, alphabet="abc", sampler=sampler)
    dev, words, counts = _fleet()
    rows, entry_row = t.codec.symbols(words)
    trie = np.sort(t.codec.word_codes(["a", "b"])[0] // t.codec.base ** 2)
    return t, rows, entry_row, dev, counts, trie, np.zeros(rows.shape[0], dtype=bool)


def _category_law(sampler):
    """Each device's probability of each level-2 prefix (ab, ba, b∅), derived by hand from BLOCK: "cc" is
    not eligible (its 1-prefix c is not in the trie)."""
    if sampler == "random":   # ∝ times typed among eligible words
        block = [[3 / 4, 1 / 4, 0], [1, 0, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3], [0, 0, 0], [1, 0, 0]]
    else:                     # the most typed eligible word; device 3's three-way tie is uniform
        block = [[1, 0, 0], [1, 0, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3], [0, 0, 0], [1, 0, 0]]
    return np.array(block * COPIES)


@pytest.mark.parametrize("sampler", ["random", "top"])
def test_the_sampler_picks_by_its_rule(sampler):
    t = GboardTrie(epsilon=1.0, length=3, alphabet="abc", sampler=sampler)
    counts = np.array([3, 1, 1, 2, 9])
    eligible = np.array([True, True, True, True, False])
    device = np.zeros(5, dtype=np.int64)
    rng = np.random.default_rng(3)
    picks = np.array([np.flatnonzero(t.choose(device, counts, eligible, rng)) for _ in range(4000)])
    assert picks.shape == (4000, 1)             # exactly one choice, never the ineligible word
    expected = {"random": [3 / 7, 1 / 7, 1 / 7, 2 / 7, 0], "top": [1, 0, 0, 0, 0]}[sampler]
    assert_chisquare_gof(np.bincount(picks[:, 0], minlength=5), expected, what=f"{sampler} choice")
    tie = np.array([np.flatnonzero(t.choose(device[:2], [2, 2], [True, True], rng))[0] for _ in range(4000)])
    assert_chisquare_gof(np.bincount(tie, minlength=2), [0.5, 0.5], what=f"{sampler} tie")
    assert not t.choose(device[:2], [2, 2], [False, False], rng).any()   # nothing eligible: "none"


@pytest.mark.parametrize("sampler", ["random", "top"])
@pytest.mark.parametrize("per_device", [False, True])
def test_round_estimates_have_their_exact_mean_and_variance(sampler, per_device):
    """est_c = (C_c − nq)/(p − q). With π_i(c) each device's chance of category c (sampler law) and
    μ_c = Σ_i π_i(c): E est_c = μ_c; Var est_c = [μ_c p(1−p) + (n − μ_c) q(1−q)]/(p−q)² + Σ_i π_i(c)(1−π_i(c))
    (GRR's variance given the choices, plus the choices' variance). Bonferroni α = 1e-4 over the
    candidates (tests/stats.py)."""
    t, rows, entry_row, dev, counts, trie, excluded = _round(sampler)
    rng = np.random.default_rng(11)
    draws = []
    for _ in range(1500):
        cand, cat = t.device_categories(rows, entry_row, dev, counts, trie, 2, excluded, rng)
        agg = t.round_aggregate(cand, cat, per_device, rng)
        draws.append(GRR(t.epsilon, cand.size + 1).estimate(agg)[:-1])
    names = t.codec.decode(cand, 2).tolist()
    law = _category_law(sampler)
    mu = np.zeros(cand.size)
    var_choice = np.zeros(cand.size)
    for j, w in enumerate(["ab", "ba", "b"]):
        mu[names.index(w)] = law[:, j].sum()
        var_choice[names.index(w)] = (law[:, j] * (1 - law[:, j])).sum()
    grr, n = GRR(t.epsilon, cand.size + 1), 6 * COPIES
    var = (mu * grr.p * (1 - grr.p) + (n - mu) * grr.q * (1 - grr.q)) / (grr.p - grr.q) ** 2 + var_choice
    assert_mean(np.array(draws), mu, var, what=f"{sampler} estimates")
    assert_variance(np.array(draws), mu, var, what=f"{sampler} estimates")


def test_the_direct_and_per_device_rounds_agree_in_distribution():
    t, rows, entry_row, dev, counts, trie, excluded = _round("random")
    rng = np.random.default_rng(5)
    out = {True: [], False: []}
    for per_device in (True, False):
        for _ in range(800):
            cand, cat = t.device_categories(rows, entry_row, dev, counts, trie, 2, excluded, rng)
            out[per_device].append(t.round_aggregate(cand, cat, per_device, rng).data)
    assert_same_distribution(np.array(out[True]), np.array(out[False]), what="round aggregate")


def test_a_second_pass_finds_the_words_the_first_one_hid():
    """Every device types "ab" more than "c": TopSampling's first pass sees only "ab"; the second, with
    "ab" excluded on every device, finds "c"."""
    dev = np.repeat(np.arange(2000), 2)
    words, counts = ["ab", "c"] * 2000, [3, 1] * 2000
    one = GboardTrie(epsilon=5.0, length=3, alphabet="abc", sampler="top", passes=1)
    two = GboardTrie(epsilon=5.0, length=3, alphabet="abc", sampler="top", passes=2)
    assert one.run_devices(dev, words, counts, rng=2).words.tolist() == ["ab"]
    assert sorted(two.run_devices(dev, words, counts, rng=2).words.tolist()) == ["ab", "c"]
    assert two.privacy()["epsilon"] == pytest.approx(2 * 3 * 5.0)    # local: passes·L rounds


def test_a_round_below_the_cohort_is_not_published():
    t = GboardTrie(epsilon=5.0, length=3, alphabet="abc", min_cohort=2001)
    r = t.run(rng=1, items=["ab"], true_counts=[2000])
    assert r.words.size == 0 and r.trie_sizes[0] == 0
    assert t.run(rng=1, items=["ab"], true_counts=[2001]).words.tolist() == ["ab"]


def test_a_report_is_epsilon0_ldp_at_its_boundary_whatever_the_sampler():
    """P(report = j | device) = Σ_c π(c) P_GRR(j | c): the largest ratio over two devices is e^ε₀, reached
    by two TopSampling devices on different categories; a RandomSampling mix stays strictly inside."""
    eps0, d = 1.5, 5
    grr = GRR(eps0, d)
    kernel = np.full((d, d), grr.q) + np.eye(d) * (grr.p - grr.q)
    a, b, mix = np.eye(d)[0], np.eye(d)[1], np.array([0.75, 0.25, 0, 0, 0])
    assert math.log((a @ kernel / (b @ kernel)).max()) == pytest.approx(eps0, rel=1e-12)
    assert math.log((mix @ kernel / (b @ kernel)).max()) < eps0
    assert GboardTrie(epsilon=eps0, length=3).privacy_parts()["round"] == pytest.approx(eps0, rel=1e-12)


@pytest.mark.parametrize("per_device", [False, True])
def test_words_of_any_script_are_found(per_device):
    words = ["hello", "gr8", "绝绝子", "👨\u200d👩\u200d👧", "rizz"]
    codec = WordCodec.for_words(words)
    t = GboardTrie(epsilon=6.0, length=codec.length, alphabet=codec.alphabet, passes=1)
    holders = [3000, 2500, 2500, 2500, 2000]
    if per_device:
        r = t.run(np.repeat(np.array(words, dtype=object), holders), rng=4)
    else:
        r = t.run(rng=4, items=words, true_counts=holders)
    assert set(r.words.tolist()) == set(words)


def test_bad_settings_are_refused():
    with pytest.raises(InputError, match="sampler"):
        GboardTrie(epsilon=1.0, sampler="first")
    with pytest.raises(InputError, match="passes"):
        GboardTrie(epsilon=1.0, passes=0)
    with pytest.raises(InputError, match="one entry per device"):
        GboardTrie(epsilon=1.0, length=3, alphabet="ab").run_devices([0, 1], ["a"], rng=1)
