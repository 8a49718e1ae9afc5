"""Sample-and-threshold rounds composed through their privacy-loss distribution (docs/math.md §10.9):
against the joint output law of R rounds written out in full, against dp-accounting's own PLD of one
pair, and against basic composition."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.privacy.threshold_composition import (composed_delta, composed_epsilon, family_pld,
                                                             round_profile, tight_threshold)
from ldpsim.mechanisms.discovery.threshold_privacy import round_delta, run_privacy


def _laws(c, gamma, theta, counts, top):
    """One round's laws without / with the device for c other voters (⊥, then released outputs up to top)."""
    def one(m):
        if not counts:
            return np.array([stats.binom.cdf(theta - 1, m, gamma), stats.binom.sf(theta - 1, m, gamma)])
        return np.concatenate([[stats.binom.cdf(theta - 1, m, gamma)],
                               stats.binom.pmf(np.arange(theta, top + 1), m, gamma)])
    return one(c), one(c + 1)


def _joint(holders, gamma, theta, counts, top):
    """The joint output laws of R rounds, without / with the device, given the other voters per round."""
    P, Pp = np.ones(1), np.ones(1)
    for c in holders:
        a, b = _laws(c, gamma, theta, counts, top)
        P, Pp = np.outer(P, a).ravel(), np.outer(Pp, b).ravel()
    return P, Pp


def _brute(epsilons, holders, gamma, theta, counts, top):
    """Exact hockey-stick divergence (both directions) of R rounds at each ε: the joint law enumerated."""
    P, Pp = _joint(holders, gamma, theta, counts, top)
    e = np.exp(np.asarray(epsilons, dtype=float))[:, None]
    return np.maximum(np.maximum(Pp - e * P, 0).sum(axis=1), np.maximum(P - e * Pp, 0).sum(axis=1))


@pytest.mark.parametrize("counts", [False, True])
@pytest.mark.parametrize("gamma,theta,rounds", [(0.5, 3, 2), (0.3, 4, 3)])
def test_composition_bounds_every_sequence_of_voters_and_beats_basic(counts, gamma, theta, rounds):
    """Valid: at least the exact δ of every sequence of c = 0..9 other voters over R rounds (up to
    dp-accounting's float rounding, 1e-12). Tight: within 25 % of the worst such sequence (the envelope
    over c is one dominating pair, slightly worse than any single sequence), and below basic composition."""
    epsilons = (0.5, 1.5, 3.0)
    worst = np.max([_brute(epsilons, seq, gamma, theta, counts, 10)
                    for seq in itertools.combinations_with_replacement(range(10), rounds)], axis=0)
    for eps, worst in zip(epsilons, worst):
        ours = composed_delta(eps, gamma, theta, rounds, counts)
        assert worst - 1e-12 <= ours <= 1.25 * worst
        assert ours <= rounds * round_delta(eps / rounds, gamma, theta, counts)


def test_one_pair_agrees_with_dp_accounting():
    """For a single number of other voters the family's PLD is the pair's: the same composed δ as
    dp-accounting's PLD of the two output laws (both pessimistic, grid 1e-3), and both at least exact."""
    from dp_accounting.pld.privacy_loss_distribution import from_two_probability_mass_functions

    gamma, theta, c, rounds = 0.3, 4, 5, 3
    P, Pp = _laws(c, gamma, theta, True, c + 1)
    ours = family_pld(P, Pp, discretization=1e-3).self_compose(rounds)
    def log_pmf(p):
        return {i: math.log(v) for i, v in enumerate(p) if v > 0}
    theirs = from_two_probability_mass_functions(log_pmf(P), log_pmf(Pp), value_discretization_interval=1e-3,
                                                 symmetric=False)
    theirs = theirs.self_compose(rounds)
    for eps, exact in zip((0.2, 1.0, 2.5), _brute((0.2, 1.0, 2.5), [c] * rounds, gamma, theta, True, c + 1)):
        a, b = ours.get_delta_for_epsilon(eps), theirs.get_delta_for_epsilon(eps)
        assert exact - 1e-12 <= a and exact - 1e-12 <= b
        assert a == pytest.approx(b, rel=0.02) and a == pytest.approx(exact, rel=0.02)


def test_profile_is_round_delta_at_non_negative_epsilon():
    """The envelope at ε ≥ 0 is the exact per-round δ(ε) of §10.2 (worst c, both directions)."""
    for counts in (False, True):
        eps = np.array([0.0, 0.2, 1.0, 3.0])
        add, remove = round_profile(0.1, 8, counts, eps)
        exact = [round_delta(e, 0.1, 8, counts) for e in eps]
        np.testing.assert_allclose(np.maximum(add, remove), exact, rtol=1e-6, atol=1e-28)


def test_tight_threshold_is_smallest_and_below_basic():
    theta = tight_threshold(0.3, 2.0, 1e-3, 4, False)
    assert composed_delta(2.0, 0.3, theta, 4) <= 1e-3 < composed_delta(2.0, 0.3, theta - 1, 4)
    basic = next(t for t in range(1, 100) if run_privacy(2.0, 0.3, t, 4)["delta"] <= 1e-3)
    assert theta <= basic
    assert composed_epsilon(1e-3, 0.3, theta, 4) <= 2.0 + 1e-2
