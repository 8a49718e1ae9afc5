"""The whole-run audit of the registry's numeric mechanisms (PM, SDPM, SW, 1BitMean fresh every round), URR and the
personalized SDGRR and SDPM (docs/math.md §11.7): each plan's exact law from the mechanisms' closed forms, the claim
from the one accountant, the simulated client's hits against that law, honest PASS and planted bugs FAIL at the
default runs (fixed seeds)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.audit.plans import plan_for
from ldpsim.evaluation.audit.repeated import joint_k
from ldpsim.evaluation.audit.run_audit import audit_run, bug_probabilities, bugs_of, event_epsilon, run_hits
from ldpsim.evaluation.audit.run_names import CLEAR_ROUND_DESIGNS, NUMERIC
from ldpsim.evaluation.privacy.accountant import device_spend
from ldpsim.evaluation.report.run_summary import scopes
from ldpsim.mechanisms import make
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.audit.gate import plan_run, run_claim, run_trials
from ldpsim.simulator.config import DeploymentConfig, UseCase

NEW = ("urr", "personalized-sdgrr", "pm", "sdpm", "sw", "onebitmean", "personalized-sdpm")
EPS, N = 0.5, 6            # the run audit's defaults: 3 days × 2 reports at ε₀ = 0.5
E = math.exp(EPS)


def _pm() -> tuple:
    """PM (docs/math.md §2.1): density p = (e^ε − e^{ε/2})/(2e^{ε/2} + 2) on x's window, p/e^ε elsewhere in [−C, C],
    C = (e^{ε/2} + 1)/(e^{ε/2} − 1); x = 1's window is [1, C], x = −1's [−C, −1]: P[report ≥ 1] = p(C − 1), (p/e^ε)(C − 1)."""
    h = math.exp(EPS / 2)
    c, p = (h + 1) / (h - 1), (E - h) / (2 * h + 2)
    return p * (c - 1), p / E * (c - 1)


def _sw() -> tuple:
    """SW (docs/math.md §2.5): Li et al.'s b = (εe^ε − e^ε + 1)/(2e^ε(e^ε − 1 − ε)), w = 2b, C = 1 + w, density
    p = e^ε/(2(2b·e^ε + 1)) on [x − w, x + w], p/e^ε elsewhere; S = report ≥ 1 − w: p(C − 1 + w), (p/e^ε)(C − 1 + w)."""
    b = (EPS * E - E + 1) / (2 * E * (E - 1 - EPS))
    w, p = 2 * b, E / (2 * (2 * b * E + 1))
    return p * (1 + w - (1 - w)), p / E * (1 + w - (1 - w))


#: design → (x, x′, P[S | x], P[S | x′]) of one report, from each mechanism's closed form (not from its plan)
ONE_REPORT = {
    # URR over {0, 1}, X_S = {0}: c1 = e^ε/(1 + e^ε − 1) = 1, c2 = e^{−ε}; S = the sensitive output 0
    "urr": (0, 1, 1.0, 1 / E),
    # group 1's SDGRR, high {1} over two values: GRR, S = report 1 (and group 1 in the clear)
    "personalized-sdgrr": (1, 0, E / (1 + E), 1 / (1 + E)),
    "pm": (1.0, -1.0, *_pm()),
    "sdpm": (1.0, -1.0, *_pm()),       # 1 and −1 are both high (low range (−0.5, 0.5)): PM itself
    "sw": (1.0, -1.0, *_sw()),
    # 1BitMean on [0, m]: P[bit = 1 | x] = 1/(e^ε + 1) + (x/m)(e^ε − 1)/(e^ε + 1), x = m and 0
    "onebitmean": (10.0, 0.0, E / (E + 1), 1 / (E + 1)),
    "personalized-sdpm": (1.0, -1.0, *_pm()),   # group 1's SDPM, low range (−0.25, 0.25): 1, −1 high
}


def test_the_new_designs_are_the_registrys_remaining_ones():
    assert set(NEW) == set(NUMERIC) | {"urr", "personalized-sdgrr"}


@pytest.mark.parametrize("design", NEW)
def test_plan_is_the_binomial_tail_of_the_closed_form(design):
    """x, x′ and p, p′ are the closed form's; k is joint_k's from them and the claim one round short (fixed before
    any trial): k = n = 6, so P[S|A] = p⁶, P[S|B] = p′⁶ and their ratio e^{6ε₀} is exactly the claim."""
    x, xp, p, pp = ONE_REPORT[design]
    plan = plan_run(design)
    assert (plan.x, plan.x_prime) == (x, xp) and type(plan.x) is type(x)
    assert plan.p_one == pytest.approx((p, pp), rel=1e-12)
    assert plan.at_least == joint_k(p, pp, (N - 1) * EPS, N) == N
    assert plan.p_a == pytest.approx(p ** N, rel=1e-12) and plan.p_b == pytest.approx(pp ** N, rel=1e-12)
    assert event_epsilon(plan) == pytest.approx(plan.claim, rel=1e-12)
    planted = plan_run(design, bug="uncharged-round")
    assert planted.claim == pytest.approx((N - 1) * EPS) and event_epsilon(planted) > planted.claim


def _use_case(design: str) -> UseCase:
    from ldpsim.evaluation.audit.run_audit import oracle_params
    params = tuple(oracle_params(design, EPS).items())
    if design in NUMERIC:
        return UseCase("typing_speed", "reading", design, params, daily_limit=2, value_range=(0.0, 100.0),
                       em_bins=None if design == "onebitmean" else 16)
    return UseCase("emoji", "event", design, params, daily_limit=2)


@pytest.mark.parametrize("design", [d for d in NEW if d != "personalized-sdpm"])
def test_claim_is_what_the_run_summary_prints(design):
    """ε per person over the run of a deployment of the use case (a reading of typing speed for the numeric
    mechanisms; 3 days × 2 reports): the accountant's total and the run summary's "ε per report, item and person"
    line both say 6·0.5 = 3, and so does the run audit."""
    uc = _use_case(design)
    cfg = DeploymentConfig(items=("x", "y"), item_weights=(1, 1), use_cases=(uc,), n_days=3)
    spend = device_spend(cfg).total(uc.guarantee.label, "epsilon_person")
    table = scopes({}, cfg)[0].table.set_index("use case")
    assert run_claim(design) == pytest.approx(spend, rel=1e-12) == pytest.approx(N * EPS)
    assert table.loc[f"all, {uc.guarantee.label}", "epsilon_person"] == f"{run_claim(design):.3g}"


def test_personalized_sdpm_claim_composes_its_reports():
    """No deployment carries the personalized SDPM (its client takes each user's group): its claim is the same
    accountant's composition of its n fresh reports at the ε each group is promised, n·ε₀."""
    with pytest.raises(ValueError, match="'mechanism' parameter"):
        _use_case("personalized-sdpm")
    assert run_claim("personalized-sdpm") == pytest.approx(N * EPS)
    assert run_claim("personalized-sdpm", days=4, rounds_per_day=3) == pytest.approx(12 * EPS)


@pytest.mark.parametrize("design", ("personalized-sdgrr", "personalized-sdpm"))
def test_every_group_is_promised_the_epsilon_the_accountant_charges(design):
    """The accountant charges one ε a report whatever the group (the mechanism's guarantee); each group's own plan
    reaches exactly that ε on a pair its partition protects, so the claim n·ε is the canary's own group's and the
    worst group's alike."""
    from ldpsim.evaluation.audit.run_audit import oracle_params
    for params in (oracle_params(design, EPS), {"epsilon": EPS, **({"ranges": ((-0.5, 0.5), (-0.25, 0.25), (0.0, 0.5))}
                                                                    if design == "personalized-sdpm" else
                                                                    {"domain_size": 4, "partitions": ((0,), (1, 2))})}):
        mech = make(design, **params)
        for g in range(mech.n_groups):
            plan = plan_for(mech, f"group{g}")
            assert math.log(plan.p_x / plan.p_x_prime) == pytest.approx(mech.guarantee.epsilon_report, rel=1e-12)


@pytest.mark.parametrize("design", NEW)
def test_client_hits_follow_the_exact_law(design):
    """The simulated client over 3 days × 2 reports: for every k = 1…6, the runs with at least k reports in S
    are Binomial(T, P[Bin(6, p) ≥ k]) in both worlds (p, p′ the closed form's), and the planted clear round's
    law (one round in S surely under A, never under B) at k = 6. 20 000 runs, two-sided 1 − 10⁻⁵ intervals:
    14 checks a design, ≤ 1.4·10⁻⁴ false alarm a design, ≤ 10⁻³ over the 7."""
    x, xp, p, pp = ONE_REPORT[design]
    honest, trials, rng = plan_run(design), 20_000, np.random.default_rng(11)
    checks = [(replace(honest, at_least=k), value, stats.binom.sf(k - 1, N, q))
              for k in range(1, N + 1) for value, q in ((x, p), (xp, pp))]
    if design in CLEAR_ROUND_DESIGNS:
        planted = plan_run(design, bug="clear-round")
        checks += list(zip((planted, planted), (x, xp), bug_probabilities(planted)))
        assert bug_probabilities(planted) == pytest.approx((p ** (N - 1), 0.0), rel=1e-12)
    for plan, value, prob in checks:
        lo, hi = stats.binom.interval(1 - 1e-5, trials, prob)
        assert lo <= run_hits(plan, value, trials, rng) <= hi, (plan.at_least, plan.bug, value)


@pytest.mark.parametrize("design", NEW)
def test_honest_passes_and_planted_bugs_fail_at_the_default_runs(design):
    """Default runs: the most any planted bug needs to FAIL with probability ≥ 0.95; the clear round applies
    where the event holds the true reading (PM, SDPM, SW: report ≥ 1 − w holds x = 1, not −1), never to 1BitMean
    (its report is a bit, its value is not one)."""
    assert ("clear-round" in bugs_of(design)) is (design != "onebitmean")
    trials = run_trials(design)
    assert trials < 10**5
    assert audit_run(plan_run(design), trials, 0).verdict == "PASS"
    for bug in bugs_of(design):
        assert audit_run(plan_run(design, bug=bug), trials, 0).verdict == "FAIL", bug


def test_a_bug_the_design_cannot_carry_is_named():
    with pytest.raises(InputError, match="clear-round"):
        plan_run("onebitmean", bug="clear-round")
    with pytest.raises(InputError, match="split-noise"):
        plan_run("pm", bug="split-noise")


def test_a_reading_is_reported_as_the_float_it_is():
    """A canary reading 0.5 through PM (never rounded to a category): x = 0.5's window is [ℓ, ℓ + C − 1] with
    ℓ = (C + 1)/4 − (C − 1)/2, so one report lands at ≥ 1 with probability p(ℓ + C − 2) + (p/e^ε)(1 − ℓ) (the
    window's part above 1, the rest of [1, C]); 20 000 runs of 6 reports with at least one there: within the two-sided 1 − 10⁻⁵ binomial interval."""
    h = math.exp(EPS / 2)
    c, p = (h + 1) / (h - 1), (E - h) / (2 * h + 2)
    left = (c + 1) / 4 - (c - 1) / 2
    one = p * (left + c - 2) + p / E * (1 - left)
    lo, hi = stats.binom.interval(1 - 1e-5, 20_000, stats.binom.sf(0, N, one))
    assert lo <= run_hits(replace(plan_run("pm"), at_least=1), 0.5, 20_000, np.random.default_rng(5)) <= hi
