"""The whole-run audit of the local discovery protocols PEM, TreeHist, SFP and the prefix tree (docs/math.md §11.8): the
event's exact law against the protocol's own client, the claim from the protocol's own accounting, the honest
protocol PASSES and its planted accounting bug FAILS at the default runs (fixed seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.audit.run_audit import audit_run, event_epsilon, run_hits
from ldpsim.mechanisms import make
from ldpsim.mechanisms.discovery.run_budget import run_rounds
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.audit.gate import plan_run, run_trials
from ldpsim.scenarios.studies.audit.run_designs import design_bugs, design_plan

DISCOVERY = ("pem", "treehist", "sfp", "prefix_tree")


@pytest.mark.parametrize("design", DISCOVERY)
def test_sampled_runs_follow_the_exact_law(design):
    """The protocol's own client, 20 000 runs per world, lands in S as often as the exact P[S|A], P[S|B]
    say: within the two-sided 1 − 10⁻⁴ binomial interval, honest and planted, two run lengths."""
    trials = 20_000
    for sizes in ({}, {"rounds_per_day": 2} if design == "prefix_tree" else {"days": 2}):
        for bug in (None,) + design_bugs(design):
            plan = design_plan(design, bug, **sizes)
            for value, p in ((plan.x, plan.p_a), (plan.x_prime, plan.p_b)):
                lo, hi = stats.binom.interval(1 - 1e-4, trials, p)
                assert lo <= run_hits(plan, value, trials, np.random.default_rng(3)) <= hi, (sizes, bug, value)


@pytest.mark.parametrize("design", ("treehist", "sfp"))
def test_sketch_law_counts_the_rows_where_the_words_collide(design):
    """With 2 columns a row hashes "ab" and "ba" together about half the time, so the factor (1 − γ) of
    P[S|x] = (1 − γ)(1 − f)², P[S|x′] = (1 − γ)f² (per sketch) is far from 1: the protocol's own client,
    20 000 runs per world, lands within the two-sided 1 − 10⁻⁴ binomial interval of the plan's law, and
    outside it of the law without collisions ((1 − f)², f² per sketch)."""
    trials = 20_000
    plan = design_plan(design, m=2)
    mech = make("treehist", epsilon=1.0, length=3, alphabet="ab", k=16, m=2) if design == "treehist" else \
        make("sfp", epsilon=2.0, length=4, alphabet="ab", hash_bits=4, word_k=16, word_m=2, fragment_k=16, fragment_m=2)
    flips = [mech.cms.flip] if design == "treehist" else [mech.word_cms.flip, mech.fragment_cms.flip]
    apart = (math.prod((1 - f) ** 2 for f in flips), math.prod(f ** 2 for f in flips))
    for value, p, p_apart in ((plan.x, plan.p_a, apart[0]), (plan.x_prime, plan.p_b, apart[1])):
        lo, hi = stats.binom.interval(1 - 1e-4, trials, p)
        hits = run_hits(plan, value, trials, np.random.default_rng(4))
        assert lo <= hits <= hi and not lo <= trials * p_apart <= hi, (value, hits, trials * p_apart)


def test_pem_law_is_the_hash_split_times_p_and_q():
    """P[S | x] = p·P[H_s(x) ≠ H_s(x′)], P[S | x′] = q·P[…] (s uniform over the pool, group uniform), by
    evaluating every hash of the pool on every group's prefixes; the ratio is p/q = e^ε exactly."""
    pem = make("pem", epsilon=1.0, length=3, alphabet="ab", start=1, pool=64)
    rows = pem.codec.symbols(["ab", "ba"])[0]
    split = np.mean([[pem.hash_codes(s, pem.codec.prefix_codes(rows, m)[0]) != pem.hash_codes(
        s, pem.codec.prefix_codes(rows, m)[1]) for s in range(pem.pool)] for m in range(1, pem.groups + 1)])
    plan = design_plan("pem")
    assert 0.5 < split < 1 and plan.at_least == 1
    assert plan.p_one == pytest.approx((pem.p * split, pem.q * split), rel=1e-12)
    assert (plan.p_a, plan.p_b) == pytest.approx((pem.p * split, pem.q * split), rel=1e-12)
    assert plan.p_a / plan.p_b == pytest.approx(math.exp(1.0), rel=1e-12)


def test_claims_are_the_protocols_own_accounting():
    """PEM, TreeHist: Σ privacy_parts per run (one report per device), D runs composed; planted: that over the
    G groups (levels). SFP: word + fragment parts; planted: the word part only.
    Prefix tree: its run accountant's ε per device over the rounds; planted: one round fewer."""
    pem = make("pem", epsilon=1.0, length=3, alphabet="ab", start=1, pool=64)
    assert design_plan("pem").claim == pytest.approx(sum(pem.privacy_parts().values()))
    assert design_plan("pem", days=2).claim == pytest.approx(2 * sum(pem.privacy_parts().values()))
    assert design_plan("pem", "claimed-per-group").claim == pytest.approx(1.0 / pem.groups)
    treehist = make("treehist", epsilon=1.0, length=3, alphabet="ab", k=16, m=64)
    assert design_plan("treehist").claim == pytest.approx(sum(treehist.privacy_parts().values()))
    assert design_plan("treehist", "claimed-per-group").claim == pytest.approx(1.0 / treehist.levels)
    sfp = make("sfp", epsilon=2.0, length=4, alphabet="ab", hash_bits=4, word_k=16, word_m=64, fragment_k=16,
               fragment_m=64)
    parts = sfp.privacy_parts()
    assert design_plan("sfp").claim == pytest.approx(parts["word"] + parts["fragment"]) and parts["fragment"] > 0
    assert design_plan("sfp", "fragment-uncharged").claim == pytest.approx(parts["word"])
    run = run_rounds("prefix_tree", epsilon=3.0, n_days=1, rounds_per_day=3, length=3, alphabet="ab")
    assert design_plan("prefix_tree").claim == pytest.approx(run.epsilon) and run.epsilon == pytest.approx(3.0)
    assert design_plan("prefix_tree", "uncharged-round").claim == pytest.approx(2.0)


#: the run audit's protocol parameters, as a deployment's use case takes them
USE_CASES = {"pem": (("epsilon", 1.0), ("length", 3), ("alphabet", "ab"), ("start", 1), ("pool", 64)),
             "treehist": (("epsilon", 1.0), ("length", 3), ("alphabet", "ab"), ("k", 16), ("m", 64)),
             "sfp": (("epsilon", 2.0), ("length", 4), ("alphabet", "ab"), ("hash_bits", 4), ("word_k", 16),
                     ("word_m", 64), ("fragment_k", 16), ("fragment_m", 64)),
             "prefix_tree": (("epsilon", 3.0), ("length", 3), ("alphabet", "ab"))}


@pytest.mark.parametrize("design", DISCOVERY)
def test_claim_is_the_deployment_accountants(design):
    """The run audit's claim over D = 1 and 2 days is the ε per person over the run that the one accountant
    (device_spend, the number a run summary prints) gives a deployment of the protocol with a run a day:
    PEM, TreeHist and SFP compose their one report a day (1, 2; 2, 4), the prefix tree spends its ε over all
    its rounds (3 both)."""
    from ldpsim.evaluation.privacy.accountant import device_spend
    from ldpsim.simulator.config import DeploymentConfig, UseCase
    for days in (1, 2):
        uc = UseCase("words", "word", design, USE_CASES[design])
        cfg = DeploymentConfig(items=("x", "y"), item_weights=(1, 1), use_cases=(uc,), n_days=days,
                               words=("ab", "ba"), word_weights=(1, 1))
        spend = device_spend(cfg).total(uc.guarantee.label, "epsilon_person")
        assert design_plan(design, days=days).claim == pytest.approx(spend, rel=1e-9), days


@pytest.mark.parametrize("design", DISCOVERY)
def test_honest_event_never_exceeds_the_claim_and_the_bug_does(design):
    """Exact law: ln(P[S|A]/P[S|B]) ≤ claim for the honest protocol (equal: the likelihood-ratio region at its
    boundary), and above the planted accountant's claim (else no audit could FAIL it)."""
    honest = plan_run(design)
    assert event_epsilon(honest) <= honest.claim + 1e-9
    assert event_epsilon(honest) == pytest.approx(honest.claim, rel=1e-9)
    for bug in design_bugs(design):
        planted = plan_run(design, bug)
        assert event_epsilon(planted) > planted.claim, bug


@pytest.mark.parametrize("design", DISCOVERY)
def test_protocols_pass_and_planted_bugs_fail(design):
    trials = run_trials(design)
    assert trials < 10**4
    assert audit_run(plan_run(design), trials, 0).verdict == "PASS"
    for bug in design_bugs(design):
        assert audit_run(plan_run(design, bug), trials, 0).verdict == "FAIL", bug


def test_bad_sizes_are_named():
    with pytest.raises(InputError, match="rounds_per_day"):
        design_plan("pem", rounds_per_day=2)
    with pytest.raises(InputError, match="rounds_per_day"):
        design_plan("prefix_tree", rounds_per_day=1)
    with pytest.raises(InputError, match="'bug'"):
        design_plan("pem", "uncharged-round")
    with pytest.raises(InputError, match="'length'"):
        design_plan("pem", length=1)


def test_cli_audits_them(capsys):
    from ldpsim.scenarios.cli import main
    assert main(["audit", "--run", "--design", "pem"]) == 0
    assert main(["audit", "--run", "--design", "pem", "--planted", "claimed-per-group"]) == 1
    assert main(["audit", "--run", "--design", "prefix_tree", "--planted", "uncharged-round"]) == 1
    assert main(["audit", "--run", "--design", "sfp", "--planted", "fragment-uncharged"]) == 1
    assert main(["audit", "--run", "--design", "treehist", "--planted", "claimed-per-group"]) == 1
    assert main(["audit", "--run", "--design", "nope"]) == 2
    assert "prefix_tree" in capsys.readouterr().err
