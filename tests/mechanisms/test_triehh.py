"""TrieHH and TrieHH++ (docs/math.md §10): exact privacy of a threshold round, the direct sampler
against the per-device path, the estimate's moments given release, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms.discovery.sample_threshold import TrieHHPP
from ldpsim.mechanisms.discovery.threshold_privacy import (divergences, paper_delta, paper_parameters, round_delta,
                                                             run_privacy, worst_holders)
from ldpsim.mechanisms.discovery.triehh import TrieHH
from ldpsim.runtime.errors import InputError
from tests.stats import assert_mean, assert_variance, assert_z

PRIVACY_CASES = [(0.3, 0.1, 5), (1.0, 0.5, 10), (0.05, 0.9, 3), (0.02, 0.2, 4), (0.4, 0.05, 15),
                 (0.4, 0.01, 15)]  # the last: δ ~ 1e-20, a lower tail that 1 − sf would lose


def brute_divergences(epsilon, gamma, theta, counts, c):
    """Hockey-stick divergences from the two output laws written out in full (no closed forms)."""
    v = np.arange(c + 2)
    without = np.append(stats.binom.pmf(np.arange(c + 1), c, gamma), 0.0)  # V ~ Bin(c, γ)
    with_ = stats.binom.pmf(v, c + 1, gamma)                                 # V' ~ Bin(c + 1, γ)
    if counts:
        p = np.append(without[v >= theta], without[v < theta].sum())
        q = np.append(with_[v >= theta], with_[v < theta].sum())
    else:
        p = np.array([without[v >= theta].sum(), without[v < theta].sum()])
        q = np.array([with_[v >= theta].sum(), with_[v < theta].sum()])
    e = math.exp(epsilon)
    return np.maximum(q - e * p, 0).sum(), np.maximum(p - e * q, 0).sum()


@pytest.mark.parametrize("counts", [False, True])
@pytest.mark.parametrize("epsilon,gamma,theta", PRIVACY_CASES)
def test_round_divergences_match_the_output_laws(epsilon, gamma, theta, counts):
    holders = np.arange(0, 300)
    add, remove = divergences(epsilon, gamma, theta, counts, holders)
    brute = np.array([brute_divergences(epsilon, gamma, theta, counts, c) for c in holders])
    np.testing.assert_allclose(add, brute[:, 0], rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(remove, brute[:, 1], rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("counts", [False, True])
@pytest.mark.parametrize("epsilon,gamma,theta", PRIVACY_CASES)
def test_round_delta_is_attained_at_the_worst_holders(epsilon, gamma, theta, counts):
    delta = round_delta(epsilon, gamma, theta, counts)
    c = worst_holders(epsilon, gamma, theta, counts)
    assert max(brute_divergences(epsilon, gamma, theta, counts, c)) == pytest.approx(delta, rel=1e-9)
    # no fleet does worse (a wide range of holders, brute force), and a smaller δ fails at c
    wide = max(max(brute_divergences(epsilon, gamma, theta, counts, k)) for k in range(0, 4 * c + 50))
    assert wide <= delta * (1 + 1e-9)
    # δ is at least the chance that the device's own vote completes θ − 1 others: γ^θ at c = θ − 1
    assert delta >= gamma ** theta * (1 - 1e-12)


def test_counts_cost_at_least_the_set_and_composition_is_basic():
    for eps, g, t in PRIVACY_CASES:
        assert round_delta(eps, g, t, counts=True) >= round_delta(eps, g, t) * (1 - 1e-12)
    p = run_privacy(4.0, 0.1, 15, rounds=10)
    assert p["epsilon"] == pytest.approx(4.0) and p["delta"] == pytest.approx(10 * round_delta(0.4, 0.1, 15))


def test_threshold_for_is_the_smallest_threshold():
    t = TrieHH(gamma=0.1, theta=1, length=10)
    theta = t.threshold_for(4.0, 1e-9)
    assert run_privacy(4.0, 0.1, theta, 10)["delta"] <= 1e-9 < run_privacy(4.0, 0.1, theta - 1, 10)["delta"]


WORDS = ["ab", "abc", "ba", "cab", "c"]
HOLDERS = np.array([120, 60, 90, 40, 30])


def _round_two(protocol, path, rng):
    """Round 2's tally with the trie {a, b, c}: per device or direct, as a dense vector per prefix."""
    rows, inv = protocol.codec.symbols(WORDS)
    trie = protocol.codec.prefix_codes(rows, 1)
    if path == "device":
        dev = np.repeat(rows, HOLDERS, axis=0)
        codes, votes = protocol.tally(protocol.vote(dev, trie, 2, rng))
    else:
        codes, votes = protocol.sample_votes(rows, HOLDERS, trie, 2, rng)
    keys = np.unique(protocol.codec.prefix_codes(rows, 2))
    out = np.zeros(keys.size)
    out[np.searchsorted(keys, codes)] = votes
    return out


@pytest.mark.parametrize("path", ["device", "direct"])
def test_round_votes_are_binomial(path):
    t = TrieHH(gamma=0.3, theta=5, length=4, alphabet="abc")
    rng = np.random.default_rng(11)
    draws = np.array([_round_two(t, path, rng) for _ in range(3000)])
    # prefixes ab (120 + 60 holders), ba (90), ca (40), c∅ (30), in code order
    n_p = np.array([180, 90, 30, 40])
    assert_mean(draws, 0.3 * n_p, 0.3 * 0.7 * n_p, what=f"{path} votes")
    assert_variance(draws, 0.3 * n_p, 0.3 * 0.7 * n_p, what=f"{path} vote variance")


@pytest.mark.slow
def test_discovery_probability_agrees_between_paths():
    """A word near the threshold: found in a share of runs that agrees between paths (two-sample z)."""
    t = TrieHH(gamma=0.2, theta=12, length=3, alphabet="abc")
    words, holders = ["ab", "c"], [70, 300]
    values = np.repeat(np.array(words, dtype=object), holders)
    rng = np.random.default_rng(5)
    runs = 1500
    dev = np.mean(["ab" in t.run(values, rng).words for _ in range(runs)])
    direct = np.mean(["ab" in t.run(rng=rng, items=words, true_counts=holders).words for _ in range(runs)])
    # exact: each of the 3 rounds independently needs Bin(70, 0.2) ≥ 12
    exact = stats.binom.sf(11, 70, 0.2) ** 3
    for p in (dev, direct):
        assert_z(p, exact, math.sqrt(exact * (1 - exact) / runs), what="discovery probability")


@pytest.mark.slow
def test_pp_estimate_moments_given_release():
    t = TrieHHPP(gamma=0.3, theta=10, length=3, alphabet="ab")
    rng = np.random.default_rng(8)
    holders = np.array([25, 40, 80])
    runs = [t.run(rng=rng, items=["a", "ab", "b"], true_counts=holders) for _ in range(4000)]
    mean, var = t.conditional_moments(holders)
    assert np.all(t.conditional_bias(holders) > 0)
    for i, w in enumerate(["a", "ab", "b"]):
        est = np.array([r.counts[r.words == w][0] for r in runs if w in r.words])
        assert_mean(est[:, None], mean[i], var[i], what=f"E[N̂ | released] of {w}")


def test_triehh_publishes_no_counts_and_finds_nothing_below_threshold():
    t = TrieHH(gamma=1.0, theta=50, length=3, alphabet="ab")
    r = t.run(rng=1, items=["a", "b"], true_counts=[49, 50])
    assert r.words.tolist() == ["b"] and r.votes.tolist() == [50] and np.isnan(r.counts).all()


@pytest.mark.parametrize("params", [{"gamma": 0.0}, {"gamma": 1.5}, {"gamma": 0.5, "theta": 0}])
def test_bad_parameters_are_rejected(params):
    with pytest.raises(InputError, match="gamma|theta"):
        TrieHH(**params)


def test_run_needs_words():
    with pytest.raises(ValueError, match="values"):
        TrieHH(gamma=0.5).run()


def test_the_papers_closed_form_bounds_the_exact_delta():
    """TrieHH's closed form at the paper's setting (ε = 4, target δ = 2.3e-12, L = 10, as the authors'
    released simulation runs it) picks θ = 15 and γ = (e^{0.4} − 1)/(15e^{0.4}); its δ is an upper
    bound of the exact δ at those parameters, and the exact analysis allows a larger γ at that δ
    (docs/math.md §10.1–10.2)."""
    eps, rounds = 4.0, 10
    paper = paper_parameters(eps, 2.3e-12, rounds)
    assert paper["theta"] == 15 and paper["gamma"] == pytest.approx(math.expm1(0.4) / (15 * math.exp(0.4)))
    closed = paper["delta"]
    assert closed == pytest.approx(13 / (12 * math.factorial(15))) == pytest.approx(8.28e-13, rel=1e-3)
    exact = run_privacy(eps, paper["gamma"], 15, rounds)["delta"]
    assert exact == pytest.approx(1.7e-15, rel=0.02)
    assert run_privacy(eps, 0.0347, 15, rounds)["delta"] <= closed < run_privacy(eps, 0.0348, 15, rounds)["delta"]


def test_the_papers_threshold_is_the_smallest_meeting_its_delta_and_condition():
    """θ − 1 misses the target δ (14: 1.25e-11 > 2.3e-12); the corollary's condition θ ≥ e^{ε/L} − 1
    (γ ≤ 1/(θ + 1)) binds at large ε per round."""
    assert paper_delta(14) > 2.3e-12 >= paper_delta(15)
    for eps, delta, rounds in [(4.0, 2.3e-12, 10), (1.0, 1e-6, 4), (60.0, 0.5, 2)]:
        p = paper_parameters(eps, delta, rounds)
        assert p["delta"] <= delta and p["theta"] >= math.expm1(eps / rounds)
        assert p["gamma"] <= 1 / (p["theta"] + 1) * (1 + 1e-12)
        smaller = p["theta"] - 1
        assert smaller < 4 or smaller < math.expm1(eps / rounds) or paper_delta(smaller) > delta
    assert paper_parameters(60.0, 0.5, 2)["theta"] == math.ceil(math.expm1(30.0))
    with pytest.raises(InputError, match="theta"):
        paper_delta(3)


def test_the_numbers_quoted_in_the_docs():
    """docs/math.md §10.2 and the explanation page quote these (θ = 15, ε = 4 over L = 8 rounds)."""
    quoted = {0.05: 6.1e-12, 0.1: 3.1e-8, 0.01: 1.1e-21}
    for gamma, delta in quoted.items():
        assert run_privacy(4.0, gamma, 15, 8)["delta"] == pytest.approx(delta, rel=0.05)


def test_the_registry_builds_the_interactive_protocols():
    from ldpsim.mechanisms.registry import INTERACTIVE, make

    assert isinstance(make("TrieHH_PP", gamma=0.1), TrieHHPP)
    assert sorted(INTERACTIVE) == ["gboard", "ldp_trie", "prefix_tree", "triehh", "triehh_pp"]
    with pytest.raises(ValueError, match="triehh"):
        make("triehhh")


def test_count_release_delta_keeps_the_all_sampled_outcome_at_large_epsilon():
    """With one other holder, γ = 0.9, θ = 2: the device's presence shows the count 2 w.p. γ², which the
    fleet without it never shows, so δ ≥ 0.81 at every ε (1 − t/(c+1) must not round to 1)."""
    for epsilon in (1.0, 40.0, 64.0, 100.0):
        assert round_delta(epsilon, 0.9, 2, counts=True) >= 0.81 - 1e-12
