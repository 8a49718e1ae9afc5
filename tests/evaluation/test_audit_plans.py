"""Audit plans of every registry mechanism: exact boundary, the real client's event frequency, weaker
variants flagged FAIL, and the ``--all`` battery over the whole registry (docs/math.md §7.5)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.audit import audit_plan, plan_for, plan_targets, trials_to_detect
from ldpsim.evaluation.audit.planted import buggy_blh
from ldpsim.mechanisms import (BLH, FLH, INTERACTIVE, MECHANISMS, PEM, RAPPOR, SFP, SHE, SUE, THE, DBitFlip, OneBitMean,
                               PersonalizedSDGRR, PersonalizedSDPM, TreeHist)
from ldpsim.scenarios.cli import main
from ldpsim.mechanisms.registry import PARAMETERS
from tests.stats import z_bound

WORDS = dict(length=4, alphabet="abcd")
MECHS = [BLH(1.0, 10), SHE(1.0, 6), SHE(4.0, 3), OneBitMean(1.0, m=10.0), RAPPOR(2.0, num_bits=16, cohorts=8),
         RAPPOR(8.0, num_bits=32, num_hashes=3, cohorts=4, p=0.25, q=0.8),
         PersonalizedSDGRR(1.0, 10, ((0, 1, 2, 3, 4), (0, 1))),
         PersonalizedSDPM(2.0, ((-0.5, 0.5), (-0.25, 0.25)), bins=16),
         SFP(1.0, hash_bits=4, word_k=16, word_m=64, fragment_k=16, fragment_m=64, **WORDS),
         PEM(2.0, start=1, pool=64, g=5, **WORDS), TreeHist(1.0, k=16, m=64, **WORDS),
         FLH(1.0, 6, pool_size=64), SUE(1.0, 6), THE(2.0, 6), DBitFlip(1.0, 6, d=2)]
CASES = [(m, t) for m in MECHS for t in plan_targets(m)]


def _ids(case):
    mech, target = case
    return f"{mech.name}-{mech.epsilon:g}" + (f"-{target}" if target else "")


def _values(value, n):
    return np.array([value] * n, dtype=object) if isinstance(value, str) else np.full(n, value)


def _reports(mech, plan, value, n, rng):
    return (plan.client or mech.perturb)(_values(value, n), rng)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_plans_sit_on_the_boundary_of_what_each_mechanism_claims(case):
    """ln(P[S|x]/P[S|x′]) equals the claim: ε, or the exact per-report loss where the mechanism states a
    smaller one (THE), RAPPOR's ε₁ for one report and ε_∞ for its permanent response."""
    mech, target = case
    plan = plan_for(mech, target)
    expected = {"report": getattr(mech, "epsilon_report", None)}.get(target) or mech.epsilon
    assert plan.claim == pytest.approx(expected, rel=1e-12)
    boundary = mech.epsilon_report if isinstance(mech, THE) else plan.claim
    assert math.log(plan.p_x / plan.p_x_prime) == pytest.approx(boundary, rel=1e-9)
    if hasattr(mech, "privacy_parts"):  # discovery: the claim is the composed total ε of the whole report
        assert plan.claim == pytest.approx(sum(mech.privacy_parts().values()), rel=1e-12)
        assert plan.claim == pytest.approx(mech.epsilon, rel=1e-12)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_real_clients_hit_the_event_as_often_as_the_exact_probabilities_say(case):
    """Binomial z on 10⁵ real reports per input, α = 1e-3 family-wise over the 2·len(CASES) counts."""
    mech, target = case
    plan = plan_for(mech, target)
    n, rng = 100_000, np.random.default_rng(21)
    bound = z_bound(1e-3, 2 * len(CASES))
    for value, p in ((plan.x, plan.p_x), (plan.x_prime, plan.p_x_prime)):
        k = np.count_nonzero(plan.event(_reports(mech, plan, value, n, rng)))
        assert abs(k - n * p) <= bound * math.sqrt(n * p * (1 - p)), (value, k, n * p)


@pytest.mark.parametrize("mech", [m for m in MECHS if hasattr(m, "log_likelihood")], ids=lambda m: m.name)
def test_every_report_in_the_event_has_the_claimed_ratio(mech):
    """Pointwise: for each real report in S (from x), log P[r|x] − log P[r|x′] = the claim, from the
    mechanism's own log-likelihood (SHE: Laplace densities; discovery: all parts of the report; THE: its
    exact per-report loss)."""
    plan = plan_for(mech)
    r = mech.perturb(_values(plan.x, 20_000), np.random.default_rng(3))
    hit = plan.event(r)
    assert hit.sum() > 100
    ratio = mech.log_likelihood(r, _values(plan.x, hit.size)) - mech.log_likelihood(r, _values(plan.x_prime, hit.size))
    boundary = mech.epsilon_report if isinstance(mech, THE) else plan.claim
    assert np.allclose(ratio[hit], boundary, rtol=0, atol=1e-9)


def test_she_event_probabilities_from_the_laplace_cdf():
    mech = SHE(1.5, 4)
    plan, b = plan_for(mech), mech.scale
    lap = stats.laplace
    assert plan.p_x == pytest.approx(lap.sf(1, loc=1, scale=b) * lap.cdf(0, loc=0, scale=b), rel=1e-12)
    assert plan.p_x_prime == pytest.approx(lap.sf(1, loc=0, scale=b) * lap.cdf(0, loc=1, scale=b), rel=1e-12)


@pytest.mark.parametrize("target", ["report", "permanent"])
def test_rappor_event_probabilities_from_its_report_distribution(target):
    """Sum of the enumerated report law over the event's reports (k = 8 bits). The permanent response B′
    is RAPPOR's report with the instantaneous step switched off (p = 0, q = 1)."""
    params = dict(epsilon=3.0, num_bits=8, num_hashes=2, cohorts=4)
    mech = RAPPOR(**params)
    law = mech if target == "report" else RAPPOR(**params, p=0.0, q=1.0)
    plan = plan_for(mech, target)
    S = plan.event(law.all_reports())
    P = law.report_distribution([plan.x, plan.x_prime])
    assert 0 < S.sum() < S.size
    assert (plan.p_x, plan.p_x_prime) == pytest.approx((P[0, S].sum(), P[1, S].sum()), rel=1e-12)


def _weaker(mech):
    """The same mechanism built at 1.5·ε: every flip probability too small for the claim."""
    return dataclasses.replace(mech, epsilon=1.5 * mech.epsilon)


@pytest.mark.parametrize("case", [c for c in CASES if not isinstance(c[0], THE)], ids=_ids)
def test_weaker_variants_fail_at_the_stated_number_of_trials(case):
    """A client whose true ε is 1.5× what it claims, audited on the claimed mechanism's plan (the same
    event), FAILS at N = 9 × the median detection point n₀ (expected counts, 95 %); the correct client
    PASSES at that N.

    Why 9: at n₀ the expected log-ratio exceeds the claim by about the bound's own margin, z = 1.96
    standard errors; at 9·n₀ the errors shrink by 3, so a miss needs a deviation of 1.96·(3 − 1) ≈ 3.9
    standard errors (probability ≈ 5e-5 per case). The correct client is audited at confidence
    1 − 1e-4, so its Clopper–Pearson bounds FAIL it with probability ≤ 1e-4 per case.
    """
    mech, target = case
    plan, weak = plan_for(mech, target), plan_for(_weaker(mech), target)
    client = weak.client or _weaker(mech).perturb
    sample = client(_values(plan.x, 2000), np.random.default_rng(1))
    assert (weak.x, weak.x_prime) == (plan.x, plan.x_prime) and np.array_equal(weak.event(sample), plan.event(sample))
    n = 9 * trials_to_detect(weak.p_x, weak.p_x_prime, plan.claim)  # weak.p: the same event's law under the weak client
    assert n < 400_000
    bad = audit_plan(plan, n, 5, "sample", 0.95, "weaker", client)
    assert bad.verdict == "FAIL" and bad.epsilon_lower_bound > plan.claim
    good = audit_plan(plan, n, 5, "sample", 1 - 1e-4, "correct", plan.client or mech.perturb)
    assert good.passed


def test_planted_blh_is_flagged_at_20000_trials():
    """buggy_blh (flip probability 10 % too small: true ε 1.141 at a claimed 1) FAILS on BLH's own plan
    at 2·10⁴ trials per input (its median detection point is 3 152)."""
    plan = plan_for(BLH(1.0, 10))
    e = math.e
    flip = 0.9 / (e + 1)
    assert math.log((1 - flip) / flip) == pytest.approx(1.1415, abs=1e-4)
    assert trials_to_detect((1 - flip) / 2, flip / 2, 1.0) == pytest.approx(3152, rel=0.02)
    bad = audit_plan(plan, 20_000, 7, "sample", 0.95, "buggy BLH", buggy_blh(1.0, 10))
    assert bad.verdict == "FAIL" and bad.epsilon_lower_bound > 1.0


def test_targets_and_bad_targets():
    mech = RAPPOR(1.0, num_bits=16, cohorts=8)
    assert plan_targets(mech) == ("report", "permanent") and plan_for(mech).target == "report"
    assert plan_targets(PersonalizedSDGRR(1.0, 4, ((0,), (0, 1)))) == ("group0", "group1")
    assert plan_targets(BLH(1.0, 4)) == ("",)
    with pytest.raises(ValueError, match="'target'.*'report', 'permanent'.*'group3'"):
        plan_for(mech, "group3")
    with pytest.raises(ValueError, match="No audit plan"):
        plan_for(object())


def test_the_battery_covers_the_whole_registry(capsys):
    assert set(PARAMETERS) == set(MECHANISMS) | set(INTERACTIVE)
    assert main(["audit", "--all", "--mode", "declared", "--trials", "1e6", "-q"]) == 0
    out = capsys.readouterr().out
    # + RAPPOR ε_∞, 2 × 2 groups − 2; TrieHH and TrieHH++ two targets each, LDPTrie, Gboard, PrefixTree one
    assert out.count("PASS") == 5 * (len(MECHANISMS) + 3 + 7) and "FAIL" not in out
    assert main(["audit", "--mechanism", "rappor", "--target", "permanent", "--epsilon", "2", "--mode", "sample",
                 "--trials", "2e4", "-q"]) == 0
    assert "[permanent]" in capsys.readouterr().out
    assert main(["audit", "--mechanism", "rappor", "--target", "nope", "-q"]) == 2
    assert main(["audit", "--all", "--target", "report", "-q"]) == 2


@pytest.mark.slow
def test_the_battery_passes_on_the_real_clients(capsys):
    """``--all --mode sample``: the 170 audits run every real client (RAPPOR's permanent response, each
    personalized group, one round of each interactive protocol) and PASS at family-wise 95 %."""
    assert main(["audit", "--all", "--mode", "sample", "--trials", "3e4", "-q"]) == 0  # 2e4 cannot show ε > 8
    out = capsys.readouterr().out
    assert out.count("PASS") == 5 * (len(MECHANISMS) + 3 + 7)
