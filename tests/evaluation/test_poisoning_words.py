"""Fake devices against the discovery protocols: each maximal report adds exactly c to its round's
estimate of the target's piece; the expected estimated count matches the closed form; the fakes
needed per round (from the genuine aggregate's cut-offs) decide whether the made-up word is found."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.poisoning.word_attack import (contribution, expected_count, fakes_per_round, pem_fake_drift,
                                               pem_fakes_needed, round_sizes, rounds, sfp_contributions,
                                               word_mga_reports)
from ldpsim.mechanisms import PEM, SFP, TreeHist
from ldpsim.mechanisms.discovery.pem import PEMReports
from tests.stats import assert_mean

ALPHABET = "abcdefgh"
WORDS = ["abc", "bad", "cafe", "dead", "face", "ab"]
COUNTS = [3000, 2500, 2000, 1500, 1200, 800]
TARGET = "hhgh"  # no genuine user holds it, nor any of its prefixes


def _protocols():
    return [PEM(epsilon=2.0, length=4, alphabet=ALPHABET, start=1, pool=64),
            TreeHist(epsilon=2.0, length=4, alphabet=ALPHABET, k=8, m=64),
            SFP(epsilon=4.0, length=4, alphabet=ALPHABET, hash_bits=2, word_k=8, word_m=64, fragment_k=8,
                fragment_m=64)]


def _pieces(mech, agg, word):
    """The round estimates of ``word``'s pieces (PEM: per group; TreeHist: per level; SFP: word, then
    the fragment token at each position in that position's sketch)."""
    rows = mech.codec.symbols([word])[0]
    if isinstance(mech, PEM):
        codes = mech.group_prefix_codes(rows)[0]
        return np.array([mech.group_estimate(agg, i, codes[i:i + 1])[0][0] for i in range(mech.groups)])
    if isinstance(mech, TreeHist):
        return np.array([mech.cms.estimate(mech.level_aggregate(agg, l), mech.codec.prefix_codes(rows, l + 1))[0]
                         for l in range(mech.levels)])
    code, tokens = mech.word_tokens(rows)
    word_agg, frag_aggs = mech.parts(agg)
    return np.r_[mech.word_cms.estimate(word_agg, code),
                 [mech.fragment_cms.estimate(a, tokens[0, l:l + 1])[0] for l, a in enumerate(frag_aggs)]]


@pytest.mark.parametrize("mech", _protocols(), ids=lambda m: m.name)
def test_each_maximal_report_adds_exactly_c_to_its_rounds_target_piece(mech):
    """Adding the aggregate of 23 fake reports shifts the target's round estimates by exactly m_i·c
    (deterministic: the reports support the piece with no noise), and the rounds get ⌊23/R⌋ or ⌈23/R⌉."""
    genuine = mech.sample_aggregate(COUNTS, 1, WORDS)
    fakes = mech.aggregate(word_mga_reports(mech, TARGET, 23, 2))
    shift = _pieces(mech, genuine + fakes, TARGET) - _pieces(mech, genuine, TARGET)
    m = fakes_per_round(mech, np.arange(23))
    assert m.sum() == 23 and m.max() - m.min() <= 1 and m.size == rounds(mech)
    if isinstance(mech, SFP):
        c_word, c_frag = sfp_contributions(mech)
        expected = np.r_[23 * c_word, m * c_frag]  # the word sketch holds all 23, position l's sketch m_l
    else:
        expected = m * contribution(mech)
    np.testing.assert_allclose(shift, expected, rtol=1e-9)


def _unheld_variance(mech, n: int, per_word: np.ndarray) -> float:
    """Variance, over the randomness *and* the hash family, of the estimated count of a word no one
    holds, from n reports of which per_word hold each genuine word's piece. Given the family: the
    oracle's own noise (PEM n·(1/g)(1 − 1/g)/(p − 1/g)²; CMS (w/(w−1))²·n·((c_ε² − 1)/4 + 1/w), §1.5);
    over families, the collision term Σ n_x'·(γ(x') − 1/γ̄) with γ ~ Binomial(P or k, 1/g or 1/w)/(P or k)
    independent per x': PEM ((p − q)/(p − 1/g))²·Σ n_x'²·(1/g)(1 − 1/g)/P, CMS (w/(w−1))²·Σ n_x'²·(1/w)(1 − 1/w)/k."""
    sq = float(np.sum(np.asarray(per_word, float) ** 2))
    if isinstance(mech, PEM):
        g, d = mech.g, mech.p - 1 / mech.g
        return (n * (1 / g) * (1 - 1 / g) + (mech.p - mech.q) ** 2 * sq * (1 / g) * (1 - 1 / g) / mech.pool) / d ** 2
    cms = mech.cms if isinstance(mech, TreeHist) else mech.word_cms
    w = cms.m
    return (w / (w - 1)) ** 2 * (n * ((cms.c_eps ** 2 - 1) / 4 + 1 / w) + sq * (1 / w) * (1 - 1 / w) / cms.k)


@pytest.mark.parametrize("mech", _protocols(), ids=lambda m: m.name)
def test_expected_count_of_the_made_up_word_matches_the_closed_form(mech):
    """R = 60 repeats, each with a fresh hash family (the closed form averages the collision bias over
    families) and 400 fakes: the target's final estimated count — PEM/TreeHist (N/n_R)·f̂_R(x), SFP the word
    sketch's f̂(x) — has mean :func:`expected_count`; tolerance from the genuine part's variance
    (:func:`_unheld_variance`, the genuine words' counts split evenly over the rounds), α = 1e-4."""
    import dataclasses
    reps, m = 60, 400
    diff, var = [], []
    for r in range(reps):
        mech_r = dataclasses.replace(mech, seed=100 + r)
        agg = mech_r.sample_aggregate(COUNTS, r, WORDS) + mech_r.aggregate(word_mga_reports(mech_r, TARGET, m, r))
        n_round, m_round = round_sizes(mech_r, agg), fakes_per_round(mech_r, np.arange(m))
        if isinstance(mech_r, SFP):
            got, scale, n_gen, split = _pieces(mech_r, agg, TARGET)[0], 1.0, agg.n - m, 1
        else:
            scale = agg.n / n_round[-1]
            got, n_gen, split = _pieces(mech_r, agg, TARGET)[-1] * scale, n_round[-1] - m_round[-1], rounds(mech_r)
        diff.append(got - expected_count(mech_r, agg.n, n_round, m_round))
        var.append(scale ** 2 * _unheld_variance(mech_r, n_gen, np.asarray(COUNTS) / split))
    assert_mean(np.array(diff)[:, None], 0.0, np.mean(var), what=mech.name)


def test_pem_needs_the_cutoff_over_c_fakes_per_group():
    """With 1.5× the needed fakes in every group the made-up word is discovered; with half of the
    largest need (spread evenly) it is not. (Other candidates move by a mean-zero hit term only.)"""
    mech = PEM(epsilon=2.0, length=4, alphabet=ALPHABET, start=1, pool=64)
    genuine = mech.sample_aggregate(COUNTS, 3, WORDS)
    need = pem_fakes_needed(mech, genuine, TARGET, top_k=4)
    assert need["need"].shape == (mech.groups,) and need["need"][-1] > 0  # round 0 keeps all 8 first symbols
    for factor, found in ((1.5, True), (0.5, False)):
        per_group = int(np.ceil(factor * need["need"].max()))
        fakes = mech.aggregate(word_mga_reports(mech, TARGET, per_group * mech.groups, 4))
        words = mech.discover(genuine + fakes, top_k=4).words.tolist()
        assert (TARGET in words) is found, (factor, need, words)


def _group_fakes(mech, per_group: np.ndarray, rng):
    """Maximal reports for TARGET with ``per_group[i]`` of them in group i."""
    reports = word_mga_reports(mech, TARGET, int(per_group.max()) * mech.groups, rng)
    rank = np.arange(reports.group.size) // mech.groups  # the report's place among its group's
    keep = rank < per_group[reports.group]
    return mech.aggregate(PEMReports(*(np.asarray(a)[keep] for a in reports)))


def test_pem_fakes_move_other_candidates_by_their_pool_collisions():
    """m = 300 fakes in PEM's last group, R = 100 draws of their hash indices: the other candidates'
    estimates move by m·(γ_v − 1/g)/(p − 1/g) on average (:func:`pem_fake_drift`; 1[H_s(v) = H_s(x)] is
    Bernoulli(γ_v), so a draw's variance is m·γ_v(1 − γ_v)/(p − 1/g)²; α = 10⁻⁴ over the 8 others), the
    target's by exactly m·c."""
    mech = PEM(epsilon=2.0, length=4, alphabet=ALPHABET, start=1, pool=64)
    genuine = mech.sample_aggregate(COUNTS, 5, WORDS)
    last, m = mech.groups - 1, 300
    codes = mech.group_prefix_codes(mech.codec.symbols(WORDS + ["hhhh", "gggg", TARGET])[0])[:, last]
    per_group = np.r_[np.zeros(last, dtype=np.int64), m]
    base = mech.group_estimate(genuine, last, codes)[0]
    shift = np.array([mech.group_estimate(genuine + _group_fakes(mech, per_group, r), last, codes)[0] - base
                      for r in range(100)])
    drift = pem_fake_drift(mech, codes, int(codes[-1]))
    np.testing.assert_allclose(shift[:, -1], m * contribution(mech), rtol=1e-9)
    assert drift[-1] == pytest.approx(contribution(mech), rel=1e-12)
    h = mech.hash_codes(np.arange(mech.pool)[:, None], codes[None, :])
    gamma = (h[:, :-1] == h[:, -1:]).mean(axis=0)
    assert_mean(shift[:, :-1], m * drift[:-1], m * gamma * (1 - gamma) / (mech.p - 1 / mech.g) ** 2,
                what="fake drift")


def test_pem_last_group_needs_the_fakes_its_count_bar_keeps():
    """top_k = 8 above the 6 genuine words: the last group's top-k cut-off is a noise candidate's, and
    what the word must reach is the false-discovery bar t(n_R + m) of the final test, so m_R* lies above
    the cut-off's own (κ_R − est_R(x_R))/c. The earlier groups well supplied (2·max need + 5 fakes),
    m_R* + δ fakes in the last group get the word listed and m_R* − 1 − δ do not. δ: the fakes' hits on
    the genuine words move their estimated holders, hence the target's collision excess, by
    σ_e = (p − q)/(p − 1/g)·√(Σ_v (γ_v − 1/g)²·m·γ_v(1 − γ_v)) (γ_v the pool's share where v and the
    target collide); δ fakes move the target's margin over the bar by about δ(1 − 1/g) − 1 (the bar
    rises 1/g a report, up to its rounding); δ is the smallest with that ≥ 3.29·σ_e (α = 10⁻³)."""
    mech = PEM(epsilon=2.0, length=4, alphabet=ALPHABET, start=1, pool=64)
    genuine = mech.sample_aggregate(COUNTS, 3, WORDS)
    need = pem_fakes_needed(mech, genuine, TARGET, top_k=8)
    last = need["need"][-1]
    cutoff_only = (need["cutoff"][-1] - need["target_estimate"][-1]) / contribution(mech)
    assert np.isfinite(last) and last > max(cutoff_only, 0) and last == int(last)
    codes = mech.group_prefix_codes(mech.codec.symbols(WORDS + [TARGET])[0])[:, -1]
    h = mech.hash_codes(np.arange(mech.pool)[:, None], codes[None, :])
    gamma = (h[:, :-1] == h[:, -1:]).mean(axis=0)
    spread = np.sum((gamma - 1 / mech.g) ** 2 * last * gamma * (1 - gamma))
    sd = (mech.p - mech.q) / (mech.p - 1 / mech.g) * np.sqrt(spread)
    delta = int(np.ceil((3.29 * sd + 1) / (1 - 1 / mech.g)))
    early = int(np.ceil(2 * need["need"][:-1].max())) + 5
    for m_last, found in ((int(last) + delta, True), (int(last) - 1 - delta, False)):
        per_group = np.r_[np.full(mech.groups - 1, early), m_last]
        words = mech.discover(genuine + _group_fakes(mech, per_group, 4), top_k=8).words.tolist()
        assert (TARGET in words) is found, (m_last, delta, need, words)


def test_bad_protocol_is_refused():
    from ldpsim.mechanisms import GRR
    with pytest.raises(ValueError, match="PEM"):
        word_mga_reports(GRR(epsilon=1.0, domain_size=4), "ab", 3)
