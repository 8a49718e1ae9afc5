"""Invented words (docs/math.md §10.10): the count threshold against its binomial law, empty candidates
passing as often as it allows, every protocol's invented words per run within its stated rate on a
held-out set in eight scripts (with the old 3σ rule planted to show the check catches it), the prefix
tree's reach or refusal, and dropped prefixes counted."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms import PEM, SFP, GboardTrie, LDPTrie, PrefixTree, TreeHist, TrieHH, TrieHHPP
from ldpsim.mechanisms.discovery.false_discoveries import count_threshold, expected_false, peel_collisions
from ldpsim.mechanisms.discovery.words import WordCodec
from ldpsim.runtime.errors import InputError
from tests.heldout_words import heldout, invented
from tests.stats import z_bound

#: false-alarm rate of the invented-words checks (one-sided Poisson bound on the total over the seeds)
ALARM = 1e-3
SEEDS = range(8)
EPSILON = 2.9  #: per round, as Gboard's trie and the prefix tree run at 10⁶ devices in the days comparison


class ThreeSigmaLDPTrie(LDPTrie):
    """The planted bug (the rule before): keep a candidate whose estimate clears 3σ₀, whatever the number
    of candidates tested."""

    def read(self, candidates, agg):
        grr = self.oracle(candidates)
        est = grr.estimate(agg)[:-1]
        keep = est >= 3 * math.sqrt(agg.n * grr.q * (1 - grr.q)) / (grr.p - grr.q)
        return candidates[keep], est[keep]


def poisson_bound(mean: float) -> int:
    """The largest total a sum of rare invented words with expectation ≤ ``mean`` reaches with
    probability ≥ ALARM (its count over independent runs is a sum of many rare, weakly dependent
    indicators: Poisson, by the Chen–Stein approximation)."""
    return int(stats.poisson.isf(ALARM, mean))


@pytest.mark.parametrize("n,q0,tested,alpha", [(650, 0.27, 12, 0.5), (10 ** 6, 1.2e-5, 80_000, 0.01),
                                               (10 ** 6, 0.05, 3, 1e-9), (50, 0.5, 10, 20.0), (200, 1e-3, 1, 1e-12)])
def test_the_count_threshold_is_the_smallest_within_the_rate(n, q0, tested, alpha):
    t = count_threshold(n, q0, tested, alpha)
    assert expected_false(n, q0, tested, t) <= alpha
    assert t == 0 or expected_false(n, q0, tested, t - 1) > alpha
    assert expected_false(n, q0, tested, t) == pytest.approx(tested * stats.binom.sf(t - 1, n, q0), rel=1e-12)
    assert count_threshold(n, q0, 2 * tested, alpha) >= t  # more candidates, a higher bar


@pytest.mark.slow  # ~2 s: 3000 rounds
def test_ldp_trie_empty_candidates_pass_as_often_as_its_threshold_allows():
    """The count of a candidate nobody holds is Bin(n, q) exactly: over 3000 round draws the empty
    candidates that pass number 3000·|C₀|·P[Bin(n, q) ≥ t], two-sided (z at α = 10⁻⁴)."""
    t = LDPTrie(epsilon=1.0, length=3, alphabet="abcd", false_discoveries=9.0)  # 3 a round
    words, holders = ["ab", "ba", "c"], np.array([400, 300, 200])
    rows, _ = t.codec.symbols(words)
    trie = np.sort(t.codec.word_codes(["a", "b"])[0] // t.codec.base ** 2)
    candidates, cat = t.categories(rows, trie, 2)
    empty = np.bincount(cat, weights=holders, minlength=candidates.size + 1)[:-1] == 0
    grr, n = t.oracle(candidates), int(holders.sum())
    thr = count_threshold(n, grr.q, candidates.size, t.false_discoveries / t.tests)
    pi, reps = stats.binom.sf(thr - 1, n, grr.q), 3000
    rng = np.random.default_rng(5)
    passed = sum(int(np.isin(t.read(*t.direct_aggregate(rows, holders, trie, 2, rng))[0], candidates[empty]).sum())
                 for _ in range(reps))
    expected = reps * empty.sum() * pi
    assert expected <= reps * 3.0 and pi > 0.01  # within the round's share, and the check has power
    assert abs(passed - expected) <= z_bound() * math.sqrt(reps * empty.sum() * pi * (1 - pi))


@pytest.fixture(scope="module")
def held():
    return heldout()


def _invented_runs(protocol, held) -> list[int]:
    return [invented(protocol.run(items=held.words, true_counts=held.counts, rng=s).words.tolist(), held.words)
            for s in SEEDS]


@pytest.mark.slow  # ~12 s: 8 runs of each trie at 10⁶ devices over a 1 867-symbol alphabet
@pytest.mark.parametrize("make", [
    lambda kw: LDPTrie(epsilon=EPSILON, **kw), lambda kw: GboardTrie(epsilon=EPSILON, **kw),
    lambda kw: PrefixTree(epsilon=EPSILON, **kw), lambda kw: LDPTrie(epsilon=EPSILON, false_discoveries=2.0, **kw),
    lambda kw: PrefixTree(epsilon=EPSILON, false_discoveries=2.0, **kw),
    lambda kw: TrieHH(gamma=0.05, theta=9, **kw), lambda kw: TrieHHPP(gamma=0.05, theta=9, **kw)],
    ids=["ldp_trie", "gboard", "prefix_tree", "ldp_trie-rate2", "prefix_tree-rate2", "triehh", "triehh_pp"])
def test_interactive_protocols_invent_no_more_words_than_they_state(make, held):
    """Held-out words in eight scripts at 10⁶ devices: the invented words over 8 runs stay within the
    Poisson bound of 8 × the stated expectation (false alarm 10⁻³); each result states that expectation."""
    protocol = make({"length": held.codec.length, "alphabet": held.codec.alphabet})
    res = protocol.run(items=held.words, true_counts=held.counts, rng=99)
    assert res.expected_false == getattr(protocol, "false_discoveries", 0.0)  # TrieHH's votes are true prefixes
    total = sum(_invented_runs(protocol, held))
    assert total <= poisson_bound(len(SEEDS) * max(res.expected_false, 1e-9)), total


@pytest.mark.slow  # ~6 s
def test_the_check_catches_the_old_three_sigma_rule(held):
    """Planted: LDPTrie's former rule (3σ₀ whatever the number of candidates) invents about 64 words a run
    here, far beyond any bound the check allows at the default rate."""
    planted = ThreeSigmaLDPTrie(epsilon=EPSILON, length=held.codec.length, alphabet=held.codec.alphabet)
    total = sum(_invented_runs(planted, held))
    assert total > poisson_bound(len(SEEDS) * planted.false_discoveries)
    assert total >= 40 * len(SEEDS)


def _one_shot_invented(protocol, held, **discover) -> tuple[int, float]:
    total, stated = 0, 0.0
    for s in SEEDS[:4]:
        res = protocol.discover(protocol.sample_aggregate(held.counts, rng=s, items=held.words), **discover)
        total += invented(res.words.tolist(), held.words)
        stated += res.expected_false
    return total, stated


@pytest.mark.slow  # ~15 s: PEM and TreeHist on the 1 867-symbol alphabet, SFP on its Latin and emoji scripts
@pytest.mark.parametrize("case", ["pem", "treehist", "sfp"])
def test_one_shot_protocols_state_and_keep_their_invented_words(case, held):
    kw = {"length": held.codec.length, "alphabet": held.codec.alphabet}
    if case == "pem":
        protocol = PEM(epsilon=4.0, start=1, **kw)
    elif case == "treehist":
        protocol = TreeHist(epsilon=4.0, **kw)
    else:  # SFP's fragment query is (2^bits·b²) tokens: the scripts whose alphabet keeps it small
        held = heldout(scripts=("vietnamese", "emoji", "digits"))
        protocol = SFP(epsilon=6.0, length=held.codec.length + held.codec.length % 2, alphabet=held.codec.alphabet)
    total, stated = _one_shot_invented(protocol, held)
    assert 0 < stated <= 4 * 0.05 + 1e-12
    assert total <= poisson_bound(stated), total


def test_the_prefix_tree_reaches_every_length_or_refuses(held):
    """On a 1 867-symbol alphabet: the default (no cap on the alphabet, rounds chosen) reaches words of
    L = 5 symbols even with full tries; 4 rounds would reach 3-symbol words only and are refused, naming
    them; a max_candidates below survivors·b is refused, naming how to lift it."""
    kw = {"epsilon": EPSILON, "length": held.codec.length, "alphabet": held.codec.alphabet}
    tree = PrefixTree(**kw)
    assert tree.max_candidates == 64 * held.codec.base and tree.reach(tree.rounds) == held.codec.length
    assert tree.reach(tree.rounds - 1) < held.codec.length  # the fewest rounds that reach L
    with pytest.raises(InputError, match=r"rounds = 4.*words of 1 to 3 symbols only.*up to 5.*rounds >= 5"):
        PrefixTree(rounds=4, **kw)
    with pytest.raises(InputError, match=r"max_candidates.*survivors·b = 64·1868.*got 65536.*Leave it unset"):
        PrefixTree(max_candidates=1 << 16, **kw)
    # the default alphabet: 7 rounds where 4 used to be the default (reaching 4-symbol words of 8)
    assert PrefixTree(epsilon=1.0).rounds == 7 and PrefixTree(epsilon=1.0).reach(4) == 5


def test_every_length_the_codec_allows_is_found(held):
    """Words of 1 … L symbols, one of each, loud: a run of the chosen rounds finds them all."""
    words = ["ก", "hi", "안녕하", "ありがと", "don't"]
    codec = WordCodec.for_words(words)
    tree = PrefixTree(epsilon=4.0, length=codec.length, alphabet=codec.alphabet)
    res = tree.run(items=words, true_counts=[30_000, 25_000, 20_000, 15_000, 10_000], rng=3)
    assert sorted(res.words.tolist()) == sorted(words) and res.dropped == 0


@pytest.mark.parametrize("make", [lambda: PrefixTree(epsilon=6.0, length=2, alphabet="ab", survivors=1),
                                  lambda: LDPTrie(epsilon=6.0, length=2, alphabet="ab", survivors=1),
                                  lambda: GboardTrie(epsilon=6.0, length=2, alphabet="ab", survivors=1)],
                         ids=["prefix_tree", "ldp_trie", "gboard"])
def test_a_dropped_live_prefix_is_counted(make):
    """Two loud words, one survivor a round: round 1 passes both one-symbol words' prefixes (a∅, b∅ or
    a, b) and keeps one; the other is counted as dropped, not lost silently."""
    protocol = make()
    res = protocol.run(items=["a", "b"], true_counts=[5000, 4000], rng=1)
    assert res.words.tolist() == ["a"] and res.dropped == 1


@pytest.mark.parametrize("case", ["pem", "treehist"])
def test_a_one_shot_protocol_counts_the_live_prefixes_its_cap_drops(case):
    """Two loud words that differ in their first symbol, one survivor a round: the first round's two
    prefixes both clear its false-discovery bar and the cap keeps one; the other is counted as dropped,
    shown in the result's repr; with room for both, nothing is dropped and both words are found. (The
    list of the capped run is not checked for invented words: a dropped word's collisions under the
    fixed hash pool or family are not peeled, which is what ``dropped`` warns of.)"""
    make = {"pem": lambda: PEM(epsilon=6.0, length=2, alphabet="ab", start=1),
            "treehist": lambda: TreeHist(epsilon=6.0, length=2, alphabet="ab")}[case]
    protocol = make()
    agg = protocol.sample_aggregate([50_000, 40_000], rng=1, items=["ab", "ba"])
    res = protocol.discover(agg, top_k=2, survivors=1)
    assert res.words[0] == "ab" and "ba" not in res.words and res.dropped == 1 and "dropped=1" in repr(res)
    full = protocol.discover(agg, top_k=2, survivors=2)
    assert sorted(full.words.tolist()) == ["ab", "ba"] and full.dropped == 0


def test_sfp_counts_the_loud_fragments_its_slot_cap_drops():
    """Four loud two-symbol words over two hash values, one fragment a slot: every word's fragment clears
    the bar and each hash value keeps one, so at least the fragments of the words not found are counted
    as dropped (an empty token that collides with a loud one in a row of the fixed family may clear the
    bar too, and is counted); with room for four a slot, none is."""
    sfp = SFP(epsilon=8.0, length=2, alphabet="ab", hash_bits=1, word_k=8, word_m=64, fragment_k=32)
    words = ["ab", "ba", "aa", "bb"]
    agg = sfp.sample_aggregate([40_000, 35_000, 30_000, 25_000], rng=2, items=words)
    res = sfp.discover(agg, per_slot=1)
    assert set(res.words.tolist()) <= set(words) and res.dropped >= 4 - res.words.size >= 2
    full = sfp.discover(agg, per_slot=4)
    assert sorted(full.words.tolist()) == sorted(words) and full.dropped == 0


@pytest.mark.slow  # ~45 s: four seeds of each at ε = 2, 200 words asked for
@pytest.mark.parametrize("case", ["pem", "treehist"])
def test_one_shot_protocols_asked_for_more_words_than_they_hear_invent_none(case, held):
    """At ε = 2 only a dozen words are loud enough; asked for 200, PEM and TreeHist must not fill the list
    with empty candidates — neither noise (the count threshold) nor words that merely collide with a
    frequent one under the fixed hash pool or family (the collision correction)."""
    kw = {"length": held.codec.length, "alphabet": held.codec.alphabet}
    if case == "pem":
        protocol, discover = PEM(epsilon=2.0, start=1, **kw), {"top_k": 200, "survivors": 60}
    else:
        protocol, discover = TreeHist(epsilon=2.0, **kw), {"top_k": 200}
    total, stated = _one_shot_invented(protocol, held, **discover)
    assert total <= poisson_bound(stated), total


@pytest.mark.slow  # ~12 s: 8 runs at 10⁶ devices over the 253 symbols of 16 words a script
def test_sfp_asked_for_more_words_than_it_hears_invents_no_more_than_it_states():
    """SFP on all eight scripts (16 words each, so that its R·b² fragment query stays small) at 10⁶
    devices, asked for 200 words where ~25 are loud enough: the invented words over 8 seeds stay within
    the Poisson bound of the stated total (false alarm 10⁻³)."""
    held = heldout(per_script=16)
    protocol = SFP(epsilon=6.0, length=held.codec.length + held.codec.length % 2, alphabet=held.codec.alphabet)
    total, stated = 0, 0.0
    for s in SEEDS:
        res = protocol.discover(protocol.sample_aggregate(held.counts, rng=s, items=held.words), top_k=200)
        total += invented(res.words.tolist(), held.words)
        stated += res.expected_false
    assert 0 < stated <= len(SEEDS) * 0.05 + 1e-12
    assert total <= poisson_bound(stated), total


def test_peeling_takes_off_the_collisions_with_the_words_kept_before():
    """Candidate 1 reaches t only through its collisions with candidate 0 (0.1 of a count per holder of
    candidate 0, which holds 100): it is dropped; candidate 2, clear of both, stays; the limit cuts."""
    sums, t = np.array([1000.0, 108.0, 104.0]), 100
    excess = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.0, 0.0]])
    holders = {1000.0: 100.0}

    def kept(limit, ex):
        return peel_collisions(sums, t, lambda j: ex[:j, :j], lambda s: holders.get(s, s / 10), limit).tolist()

    assert kept(3, excess) == [0, 2]
    assert kept(3, np.zeros((3, 3))) == [0, 1, 2] and kept(2, np.zeros((3, 3))) == [0, 1]
    assert peel_collisions(np.zeros(0), t, lambda j: np.zeros((j, j)), float, 5).tolist() == []
