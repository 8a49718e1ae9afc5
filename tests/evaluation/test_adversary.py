"""Bayesian adversary on discrete oracles: paper reference values exactly, hand examples, and
empirical attack accuracy against its exact expectation (binomial z-bound, tests/stats.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.adversary.bayes import (accuracy_by_input, bayes_guess, empirical_accuracy, expected_accuracy,
                                  guess_probabilities, high_mask)
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms import GRR
from ldpsim.mechanisms.frequency.sdgrr import SDGRR
from ldpsim.mechanisms.frequency.urr import URR
from tests.stats import assert_chisquare_gof, assert_z


@pytest.mark.parametrize("eps, d", [(0.5, 7), (1.0, 18), (3.0, 4)])
def test_reference_values_of_the_paper(eps, d):
    """Eqs. (17)-(18): high inputs under a uniform prior, GRR = SDGRR = e^ε/(D+e^ε−1), URR e^ε/(|X_S|+e^ε−1)."""
    e = math.exp(eps)
    high = list(range(0, d, 3))
    ref_grr = e / (d + e - 1)
    assert expected_accuracy(GRR(eps, d).transition_matrix()) == pytest.approx(ref_grr, rel=1e-12)
    sd = SDGRR(eps, d, high=high)
    assert expected_accuracy(sd.transition_matrix(), subset=high) == pytest.approx(ref_grr, rel=1e-12)
    urr = URR(eps, d, sensitive=high)
    assert expected_accuracy(urr.transition_matrix(), subset=high) == pytest.approx(e / (len(high) + e - 1),
                                                                                     rel=1e-12)


def test_stronger_adversary_with_the_prior_hand_example():
    # GRR, D = 3, e^ε = 2: p = 2/4, q = 1/4. Prior (0.7, 0.2, 0.1): for every output y the weight of
    # x = 0 wins (y=0: .35/.05/.025, y=1: .175/.10/.025, y=2: .175/.05/.05) → always guess 0 → ACC = 0.7
    P = GRR(math.log(2), 3).transition_matrix()
    prior = [0.7, 0.2, 0.1]
    assert expected_accuracy(P, prior, adversary_prior=prior) == pytest.approx(0.7)
    assert expected_accuracy(P, prior) == pytest.approx(0.5)  # the paper's uniform-prior adversary: p
    np.testing.assert_array_equal(bayes_guess(P, prior, rng=0), [0, 0, 0])
    np.testing.assert_array_equal(bayes_guess(P, rng=0), [0, 1, 2])


def test_ties_are_split_uniformly():
    P = np.array([[0.5, 0.25, 0.25], [0.5, 0.25, 0.25], [0.0, 0.25, 0.75]])
    # output 0: inputs 0, 1 tie → ½ each; output 1: all three tie → ⅓ each; output 2: input 2
    np.testing.assert_allclose(guess_probabilities(P), [[0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3], [0, 0, 1]])
    # input 0: ½·½ + ¼·⅓ = 1/3; input 2: ¼·⅓ + ¾ = 5/6
    np.testing.assert_allclose(accuracy_by_input(P), [1 / 3, 1 / 3, 5 / 6])
    guesses = np.array([bayes_guess(P, rng=s)[1] for s in range(3000)])
    assert_chisquare_gof(np.bincount(guesses, minlength=3), [1 / 3] * 3, what="tie-broken guesses")


def test_class_inference_hand_examples():
    # SDGRR, D = 3, X_H = {0}, e^ε = 2: c1 = 1/2, c2 = 1/4, c3 = 3/4.
    # Output 0: high weight 1/2, low weight 1/4 + 1/4 → tie (½); outputs 1, 2: low.
    # Class accuracy: x=0: ½·½ = 1/4; x=1,2: 3/4 + ¼·½ = 7/8 → uniform mean 2/3.
    sd = SDGRR(math.log(2), 3, high=[0])
    hi = high_mask(sd)
    np.testing.assert_allclose(accuracy_by_input(sd.transition_matrix(), groups=hi), [0.25, 0.875, 0.875])
    assert expected_accuracy(sd.transition_matrix(), groups=hi) == pytest.approx(2 / 3)
    # URR, D = 4, X_S = {0}, e^ε = 4: c1 = 1, c2 = 1/4, c3 = 3/4. Output 0: high 1 vs low 3/4 → high.
    # x=0 always right; x low: right w.p. 3/4 → uniform mean (1 + 3·3/4)/4 = 13/16
    urr = URR(math.log(4), 4, sensitive=[0])
    assert expected_accuracy(urr.transition_matrix(), groups=high_mask(urr)) == pytest.approx(13 / 16)


def test_bad_inputs():
    with pytest.raises(ValueError, match="row-stochastic"):
        expected_accuracy([[0.5, 0.4]])
    with pytest.raises(ValueError, match="'prior' must be 2"):
        guess_probabilities(np.eye(2), prior=[1, 2, 3])
    with pytest.raises(ValueError, match="'subset' selects no input"):
        expected_accuracy(np.eye(2), [1, 0], subset=[1])


@pytest.mark.parametrize("mech", [GRR(1.0, 18), SDGRR(1.0, 18, high=list(range(0, 18, 4))),
                                  URR(1.0, 18, sensitive=list(range(0, 18, 4)))],
                         ids=["grr", "sdgrr", "urr"])
@pytest.mark.parametrize("strong", [False, True], ids=["uniform-prior", "workload-prior"])
def test_empirical_accuracy_matches_expectation(mech, strong):
    """Given the users' values, the hit count is a sum of independent Bernoullis with the exact means
    ``expected_*``; its sd is at most √(acc(1−acc)/n), so a z-bound on that is conservative."""
    w = make_workload("census-education", 100_000)
    rng = np.random.default_rng(8)
    x = w.values(rng)
    y = mech.perturb(x, rng)
    prior = w.frequencies if strong else None
    out = empirical_accuracy(mech, x, y, prior=prior, rng=rng)
    keys = ["overall", "high"] + ([] if isinstance(mech, GRR) else ["class"])
    for key in keys:
        n = out["n"] if key != "high" else out["n_high"]
        e = out["expected_" + key]
        assert_z(out[key], e, math.sqrt(e * (1 - e) / n), alpha=1e-4 / 3, what=f"{mech.name} {key}")
    if isinstance(mech, GRR):
        assert math.isnan(out["class"]) and out["overall"] == out["high"]
        if not strong:
            assert out["expected_overall"] == pytest.approx(math.e / (18 + math.e - 1))


class _TieOracle:
    """A discrete oracle reduced to its transition matrix (the tie example above)."""

    domain_size = 3

    @staticmethod
    def transition_matrix():
        return np.array([[0.5, 0.25, 0.25], [0.5, 0.25, 0.25], [0.0, 0.25, 0.75]])


def test_empirical_ties_broken_per_report():
    """Input 0 reported through the tie example: hit w.p. exactly 1/3 (ties split per report)."""
    rng = np.random.default_rng(12)
    P = _TieOracle.transition_matrix()
    x = np.zeros(60_000, dtype=np.int64)
    y = rng.choice(3, size=x.size, p=P[0])
    out = empirical_accuracy(_TieOracle(), x, y, rng=rng, high=[0, 1])
    assert out["expected_overall"] == pytest.approx(1 / 3)
    assert_z(out["overall"], 1 / 3, math.sqrt(2 / 9 / x.size), alpha=1e-4 / 2, what="tie accuracy")
    # class MAP with X_H = {0, 1}: outputs 0 and 1 → high (1 vs 0 and ½ vs ¼), output 2 → low (¾ vs ½)
    assert out["expected_class"] == pytest.approx(0.75)
    assert_z(out["class"], 0.75, math.sqrt(0.75 * 0.25 / x.size), alpha=1e-4 / 2, what="tie class")
    assert out["class_high"] == out["class"] and math.isnan(out["class_low"])  # every user is high


def test_class_recall_per_true_class():
    """URR hand example above: high users always inferred high; low users right w.p. c3 = 3/4."""
    urr = URR(math.log(4), 4, sensitive=[0])
    rng = np.random.default_rng(6)
    x = rng.integers(0, 4, 40_000)
    out = empirical_accuracy(urr, x, urr.perturb(x, rng), rng=rng)
    assert out["class_high"] == 1.0
    n_low = int((x != 0).sum())
    assert_z(out["class_low"], 0.75, math.sqrt(0.75 * 0.25 / n_low), what="URR low-class recall")


def test_personalized_sdgrr_pools_the_groups():
    """Each group attacked with its own SDGRR; pooled hits vs pooled exact expectation (z-bound)."""
    from ldpsim.evaluation.adversary.bayes import empirical_personalized_accuracy
    from ldpsim.mechanisms import PersonalizedSDGRR

    mech = PersonalizedSDGRR(1.0, 18, partitions=[[0, 1, 2, 3], list(range(9)), list(range(14))])
    w = make_workload("census-education", 60_000)
    rng = np.random.default_rng(9)
    x = w.values(rng)
    groups = rng.choice(3, size=x.size, p=[0.4, 0.3, 0.3])  # the paper's 40/30/30 split
    out = empirical_personalized_accuracy(mech, x, mech.perturb(x, groups, rng), rng=rng)
    # independent expectation: each user's own group's exact per-input accuracy
    per_user = np.empty(x.size)
    high_user = np.empty(x.size, dtype=bool)
    for k, sd in enumerate(mech.groups):
        sel = groups == k
        per_user[sel] = accuracy_by_input(sd.transition_matrix())[x[sel]]
        high_user[sel] = high_mask(sd)[x[sel]]
    for key, e, n in (("overall", per_user.mean(), x.size), ("high", per_user[high_user].mean(), high_user.sum())):
        assert out["expected_" + key] == pytest.approx(e)
        assert_z(out[key], e, math.sqrt(e * (1 - e) / n), alpha=1e-4 / 2, what=f"personalized {key}")
    assert out["n_high"] == high_user.sum()
    # high users of every group are guessed at GRR's rate e^ε/(D+e^ε−1)
    assert out["expected_high"] == pytest.approx(math.e / (18 + math.e - 1))
