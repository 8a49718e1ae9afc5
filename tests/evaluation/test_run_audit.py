"""The audit of a whole run (docs/math.md §11.7): the event's exact law, the claim from the one accountant,
every shipped design PASSES and each planted bug FAILS at the default trials (fixed seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.audit.run_audit import (CLEAR_ROUND_DESIGNS, DESIGNS, audit_run, bug_probabilities, bugs_of,
                                               run_hits, run_mechanism, trials_to_fail)
from ldpsim.evaluation.audit.run_names import ORACLES
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.audit.gate import audit_whole_run, plan_run, run_claim, run_trials

FAST = ("grr", "rr", "sdgrr", "ldp_trie", "gboard")     # GRR-like reports: P[S|A] ≈ 0.06, ~3·10⁴ runs
SLOW = tuple(d for d in ORACLES if d not in FAST)       # P[S|A] ≈ 10⁻³: 2–7·10⁶ runs, a few seconds each


@pytest.mark.slow
def test_claim_is_the_accountants_person_level_epsilon():
    """6 rounds at ε₀ = 0.5: the accountant's ε per person over the run is 6·0.5 = 3 for every design; the
    planted accountant charges 5 rounds."""
    for d in FAST + SLOW:
        # ε of one round: 0.5 for every oracle but THE, whose threshold makes its report's ε smaller
        eps0 = 0.5 if d in ("ldp_trie", "gboard") else run_mechanism(d, 3, 2, 0.5).guarantee.epsilon_report
        assert run_claim(d) == pytest.approx(6 * eps0) and plan_run(d).claim == pytest.approx(6 * eps0)
        assert plan_run(d, bug="uncharged-round").claim == pytest.approx(5 * eps0)
    # central: the trust accountant (dp-accounting PLD of 6, resp. 5, unit changes) at δ = 10⁻³
    from ldpsim.evaluation.privacy.trust_accounting import noise_epsilon
    from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
    z = IntegerNoise("skellam", 2.0)
    assert run_claim("secagg") == pytest.approx(noise_epsilon(z, 1e-3, 6))
    assert plan_run("secagg", bug="uncharged-round").claim == pytest.approx(noise_epsilon(z, 1e-3, 5))


def test_event_law_is_the_binomial_tail_and_reaches_the_claim():
    """GRR(0.5, 2): p = e^.5/(1 + e^.5); k = n = 6 is picked, P[S|A] = p⁶, P[S|B] = (1 − p)⁶, ratio e^{3} = the claim."""
    p = math.exp(0.5) / (1 + math.exp(0.5))
    plan = plan_run("grr")
    assert plan.at_least == 6
    assert plan.p_a == pytest.approx(p ** 6) and plan.p_b == pytest.approx((1 - p) ** 6)
    assert math.log(plan.p_a / plan.p_b) == pytest.approx(plan.claim)


@pytest.mark.parametrize("design", FAST)
def test_run_hits_match_the_exact_law(design):
    """The sampled run count is Binomial(T, P[S|·]): within a two-sided 1e-4 binomial interval."""
    plan, trials = plan_run(design), 40_000
    for value, p in ((plan.x, plan.p_a), (plan.x_prime, plan.p_b)):
        hits = run_hits(plan, value, trials, np.random.default_rng(3))
        lo, hi = stats.binom.interval(1 - 1e-4, trials, p)
        assert lo <= hits <= hi


@pytest.mark.parametrize("design", FAST)
def test_shipped_designs_pass_and_planted_bugs_fail(design):
    trials = run_trials(design)
    assert trials < 10**5      # every planted bug is detectable at ≥ 0.95 power by a feasible audit
    assert audit_run(plan_run(design), trials, 0).verdict == "PASS"
    for bug in bugs_of(design):
        assert audit_run(plan_run(design, bug=bug), trials, 0).verdict == "FAIL", bug


def test_every_oracle_event_reaches_its_claim():
    """Each oracle's n-fold event has ratio ≥ the claim one round short: the planted bug is detectable."""
    for d in ORACLES:
        plan = plan_run(d, bug="uncharged-round")
        assert math.log(plan.p_a / plan.p_b) > plan.claim, d


@pytest.mark.slow
@pytest.mark.parametrize("design", SLOW)
def test_sketch_oracles_pass_and_uncharged_round_fails(design):
    trials = run_trials(design)
    assert trials < 10**7
    assert audit_run(plan_run(design), trials, 0).verdict == "PASS"
    assert audit_run(plan_run(design, bug="uncharged-round"), trials, 0).verdict == "FAIL"


def test_trials_for_power_gives_at_least_the_stated_power():
    """At the chosen trials the FAIL probability of each bug is ≥ 0.95: 400 declared audits (counts drawn
    from the exact law) FAIL at least 0.95 − 3.1·√(0.95·0.05/400) ≈ 0.916 of the time (false alarm ~1e-3)."""
    from ldpsim.evaluation.audit.bounds import epsilon_lower_bound
    rng = np.random.default_rng(7)
    for bug in bugs_of("grr"):
        plan = plan_run("grr", bug=bug)
        t = trials_to_fail(plan)
        p_a, p_b = bug_probabilities(plan)
        lb = epsilon_lower_bound(rng.binomial(t, p_a, 400), t, rng.binomial(t, p_b, 400), t, 0.05)
        assert np.mean(lb > plan.claim) >= 0.916, bug


def test_bad_input_is_named():
    with pytest.raises(InputError, match="'design'"):
        plan_run("nope")
    with pytest.raises(InputError, match="'bug'"):
        plan_run("grr", bug="nope")
    with pytest.raises(InputError, match="clear-round"):
        plan_run("oue", bug="clear-round")
    with pytest.raises(InputError, match="'design'"):
        run_claim("nope")


def test_gate_entry_reports_and_skips():
    report = audit_whole_run(["grr", "oue"], bug="clear-round", seed=1)
    assert report.mode == "run" and report.verdict == "FAIL"
    assert [r.subject for r in report.results] == ["grr run (planted: clear-round)"]
    assert any("oue: skipped" in n for n in report.notes)
    assert set(CLEAR_ROUND_DESIGNS) <= set(DESIGNS)


@pytest.mark.slow
def test_central_event_law_is_the_noise_sum_tail():
    """secagg: Σ releases − background = n + Z^{*n} under A, Z^{*n} under B with Z ~ Skellam(2), Z^{*6} ~ Skellam(12):
    the plan's P[S|A], P[S|B] are its exact tails (scipy's Skellam as an independent check)."""
    plan = plan_run("secagg")
    n, t = plan.rounds, plan.at_least
    law = stats.skellam(12.0, 12.0)
    assert plan.p_a == pytest.approx(law.sf(t - n - 1), rel=1e-9) and plan.p_b == pytest.approx(law.sf(t - 1), rel=1e-9)
    assert plan.delta > 0 and math.log((plan.p_a - plan.delta) / plan.p_b) <= plan.claim


def test_a_design_draws_the_same_runs_alone_or_beside_others():
    """Each design's runs come from its own stream (run_designs.STREAMS): the counts do not depend on the list."""
    from ldpsim.scenarios.studies.audit.run_designs import ALL_DESIGNS, STREAMS
    assert sorted(STREAMS) == sorted(ALL_DESIGNS) and len(set(STREAMS)) == len(STREAMS)
    alone = audit_whole_run(["sdgrr"], trials=2000, seed=4).results[0]
    beside = audit_whole_run(["grr", "rr", "sdgrr"], trials=2000, seed=4).results[2]
    assert (alone.count_x, alone.count_x_prime) == (beside.count_x, beside.count_x_prime)


@pytest.mark.slow
@pytest.mark.parametrize("design", ("secagg", "threshold", "two_server"))
def test_central_designs_pass_and_planted_bugs_fail(design):
    trials = run_trials(design)
    assert trials < 10**7
    assert audit_run(plan_run(design), trials, 0).verdict == "PASS"
    for bug in bugs_of(design):
        assert audit_run(plan_run(design, bug=bug), trials, 0).verdict == "FAIL", bug
