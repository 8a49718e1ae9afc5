"""Audit plans of one round of the interactive protocols: the worst neighbouring fleets sit on the exact
(ε, δ(ε)) boundary, the protocols' own rounds give the plans' probabilities, correct rounds PASS and the
planted bugs FAIL (docs/math.md §10.2, §11.5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.audit import audit_plan, plan_for, plan_targets
from ldpsim.scenarios.studies.audit.gate import audit
from ldpsim.evaluation.audit.planted import (DoubledEpsilonGboardTrie, DoubledEpsilonLDPTrie, DoubledEpsilonPrefixTree,
                                             LowThresholdTrieHH)
from ldpsim.evaluation.audit.plans_interactive import round_one, round_outputs
from ldpsim.mechanisms import GboardTrie, LDPTrie, PrefixTree, TrieHH, TrieHHPP
from ldpsim.mechanisms.discovery.threshold_privacy import round_delta, worst_holders
from tests.stats import assert_z

WORDS = dict(length=6, alphabet="abc")
#: PrefixTree with few candidates: its first round asks about 3-symbol segments (39 candidates + "none")
SEGMENTS = dict(max_candidates=64, survivors=4, **WORDS)


@pytest.mark.parametrize("cls", [TrieHH, TrieHHPP])
@pytest.mark.parametrize("gamma,theta", [(0.5, 4), (0.2, 6), (0.05, 15)])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0])
def test_threshold_plan_sits_on_the_exact_boundary(cls, gamma, theta, epsilon):
    """P[S|x] − e^ε P[S|x′] = δ(ε) of round_delta, at its worst number of other holders."""
    mech = cls(gamma=gamma, theta=theta, **WORDS)
    plan = plan_for(mech, "worst", epsilon)
    delta = round_delta(epsilon, gamma, theta, cls.counts_released)
    c = worst_holders(epsilon, gamma, theta, cls.counts_released)
    assert {plan.x, plan.x_prime} == {c, c + 1}
    assert plan.delta == delta and plan.claim == epsilon
    assert plan.p_x - math.exp(epsilon) * plan.p_x_prime == pytest.approx(delta, rel=1e-9, abs=1e-300)


def test_round_outputs_are_a_law():
    for cls in (TrieHH, TrieHHPP):
        for holders in (0, 3, 9):
            out, p = round_outputs(cls(gamma=0.3, theta=4, **WORDS), holders, 10)
            assert p.sum() == pytest.approx(1.0, rel=1e-12) and out[0] == -1


@pytest.mark.parametrize("cls", [TrieHH, TrieHHPP])
def test_the_protocols_own_round_gives_the_plans_probabilities(cls):
    """The released statistic of the fleet client (every device's own vote, tallied, thresholded) has the
    exact law of round_outputs: each output's frequency within z of its binomial s.d. (family-wise 1e-4)."""
    mech = cls(gamma=0.5, theta=4, **WORDS)
    plan = plan_for(mech, "worst", 0.5)
    n, rng = 40_000, np.random.default_rng(3)
    for holders in (plan.x, plan.x_prime, 2):
        stat = plan.client(np.full(n, holders), rng)
        out, p = round_outputs(mech, holders, holders)
        if not cls.counts_released:
            stat = np.where(stat >= 0, mech.theta, -1)
        observed = np.array([np.count_nonzero(stat == o) for o in out])
        assert observed.sum() == n
        assert_z(observed, n * p, np.sqrt(n * p * (1 - p)) + 1e-12, what=f"{cls.__name__} holders={holders}")


def test_targets_and_claims_of_interactive_rounds():
    assert plan_targets(TrieHH(gamma=0.5, theta=4, **WORDS)) == ("worst", "below-threshold")
    assert plan_targets(LDPTrie(epsilon=1.0, **WORDS)) == ("",)
    plan = plan_for(LDPTrie(epsilon=1.5, **WORDS))
    assert plan.claim == 1.5 and plan.delta == 0 and math.log(plan.p_x / plan.p_x_prime) == pytest.approx(1.5)
    below = plan_for(TrieHHPP(gamma=0.5, theta=4, **WORDS), "below-threshold", 1.0)
    assert (below.x, below.x_prime, below.p_x, below.p_x_prime) == (3, 2, 0.0, 0.0)
    with pytest.raises(ValueError, match="theta >= 2"):
        plan_for(TrieHH(gamma=0.5, theta=1, **WORDS), "below-threshold", 1.0)


@pytest.mark.parametrize("name,target", [("triehh", "worst"), ("triehh", "below-threshold"),
                                         ("triehh_pp", "worst"), ("triehh_pp", "below-threshold"),
                                         ("ldp_trie", None), ("gboard", None), ("prefix_tree", None)])
def test_correct_rounds_pass(name, target):
    """Fixed seed; a correct round FAILs with probability ≤ 0.05 (the bound's confidence)."""
    report = audit(name, epsilon=0.5, target=target, trials=50_000, seed=1)
    assert report.verdict == "PASS", report.lines()
    r = report.results[0]
    if name.startswith("triehh"):  # tight: the worst fleets come close to the claim
        assert any("holders of the device's prefix" in n for n in report.notes)
        if target == "worst":
            assert 0.4 < r.epsilon_lower_bound <= 0.5


def test_planted_bugs_fail():
    """A TrieHH server keeping θ − 1 votes (γ = 0.5, θ = 4): the prefix with 3 holders is released in about
    γ³ = 12.5 % of the fleets, far above δ(1) = γ⁴; LDPTrie whose GRR runs at 2ε shows a bound near 2ε."""
    low = audit(LowThresholdTrieHH(gamma=0.5, theta=4, **WORDS), epsilon=1.0, target="below-threshold",
                trials=20_000, seed=1).results[0]
    assert low.verdict == "FAIL" and low.epsilon_lower_bound > 5 and low.count_x_prime == 0
    assert abs(low.count_x / 20_000 - 0.125) < 4.5 * math.sqrt(0.125 * 0.875 / 20_000)
    double = audit(DoubledEpsilonLDPTrie(epsilon=1.0, **WORDS), trials=20_000, seed=1).results[0]
    assert double.verdict == "FAIL" and double.epsilon_lower_bound > 1.5


def test_the_cost_guard_counts_every_device_of_the_audited_fleets():
    from ldpsim.evaluation.cost import CostError
    with pytest.raises(CostError, match=r"\+ 21 device\(s\) of the audited fleets.*at most trials = 90,909,090 fit"):
        audit("triehh", params={"gamma": 0.05, "theta": 15}, trials=10**8)


@pytest.mark.parametrize("mech", [LDPTrie(epsilon=1.5, **WORDS), GboardTrie(epsilon=1.5, sampler="top", **WORDS),
                                  PrefixTree(epsilon=1.5, **SEGMENTS)], ids=lambda m: type(m).__name__)
def test_local_round_plans_sit_on_the_boundary_of_the_protocols_own_reports(mech):
    """ln(P[S|x]/P[S|x′]) = ε from the round's own randomizer (GRR: p vs q; OUE: p(1 − q) vs q(1 − p)), and
    the protocol's per-device reports (``vote``) hit S with those probabilities (|z| bound, family-wise 1e-4)."""
    plan = plan_for(mech)
    assert plan.claim == 1.5 and plan.delta == 0
    assert math.log(plan.p_x / plan.p_x_prime) == pytest.approx(1.5, rel=1e-12)
    n, rng = 40_000, np.random.default_rng(5)
    hits = [np.count_nonzero(plan.event(plan.client([v] * n, rng))) for v in (plan.x, plan.x_prime)]
    p = np.array([plan.p_x, plan.p_x_prime])
    assert_z(hits, n * p, np.sqrt(n * p * (1 - p)), what=type(mech).__name__)


def test_prefix_tree_round_is_oue_over_its_segments():
    """PrefixTree's categories (no level: the protocol picks the segment) read through the same adapter:
    x and x′ fall on their 3-symbol segments; S = {bit i = 1, bit j = 0} with OUE's p = ½, q = 1/(e^ε + 1)."""
    mech = PrefixTree(epsilon=1.0, **SEGMENTS)
    rows = mech.codec.symbols(["aaaaaa", "bbbbbb"])[0]
    candidates, cat, oracle = round_one(mech, rows)
    assert candidates.size == 39 and mech.decode_found(candidates[cat], 0).tolist() == ["aaa", "bbb"]
    assert (oracle.p, oracle.q) == (0.5, 1 / (math.e + 1))
    plan = plan_for(mech)
    bits = np.zeros((2, candidates.size + 1), dtype=np.uint8)
    bits[:, cat[0]] = 1
    bits[1, cat[1]] = 1
    assert plan.event(np.packbits(bits, axis=1)).tolist() == [True, False]
    assert (plan.p_x, plan.p_x_prime) == (0.5 * (1 - oracle.q), oracle.q * 0.5)


def test_gboard_round_runs_the_device_sampler(monkeypatch):
    """The audited GboardTrie client is its per-device path: the device's sampler picks (trivially: one
    word, eligible) before the GRR report."""
    calls = []
    choose = GboardTrie.choose

    def spy(self, device, counts, eligible, rng=None):
        calls.append(int(np.count_nonzero(eligible)))
        return choose(self, device, counts, eligible, rng)
    monkeypatch.setattr(GboardTrie, "choose", spy)
    plan = plan_for(GboardTrie(epsilon=1.0, **WORDS))
    plan.client([plan.x] * 10, np.random.default_rng(0))
    assert calls == [10]


@pytest.mark.parametrize("correct,planted", [(GboardTrie, DoubledEpsilonGboardTrie),
                                             (PrefixTree, DoubledEpsilonPrefixTree)])
def test_local_rounds_at_twice_epsilon_fail(correct, planted):
    """GboardTrie's GRR and PrefixTree's OUE (q at 2ε, p = ½) run at 2ε while claiming ε = 1: the bound
    lands near 2; the correct protocol passes on the same trials."""
    params = SEGMENTS if correct is PrefixTree else WORDS
    bad = audit(planted(epsilon=1.0, **params), trials=20_000, seed=1).results[0]
    assert bad.verdict == "FAIL" and bad.epsilon_lower_bound > 1.5
    good = audit(correct(epsilon=1.0, **params), trials=20_000, seed=1).results[0]
    assert good.verdict == "PASS" and good.epsilon_lower_bound < 1
