"""The whole-run audit of the amplified, thresholded and confidential designs (docs/math.md §11.8): each event's
exact law against the design's own code, the claim from the design's accountant, the honest design's event
never above its claim, every honest design PASSES and its planted bug FAILS at the default runs (fixed seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.audit.bounds import epsilon_lower_bound
from ldpsim.evaluation.audit.run_audit import audit_run, event_epsilon, run_hits, trials_to_fail
from ldpsim.scenarios.studies.audit.run_designs import ALL_BUGS, ALL_DESIGNS, PLANS, design_bugs, design_plan
from ldpsim.evaluation.privacy.trust_accounting import run_epsilon
from ldpsim.evaluation.privacy.trust_local import Shuffled
from ldpsim.mechanisms.aggregation.tee import calibrate_tee
from ldpsim.mechanisms.deltas import DELTA_AUDIT
from ldpsim.mechanisms.discovery.run_budget import run_rounds
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.audit.gate import audit_whole_run, plan_run, run_trials

#: small variants whose sampling is fast (the law tests)
SMALL = {"shuffle": {}, "tee": dict(days=3, max_keys=2),
         "tee_selection": dict(days=3, max_keys=2), "sample_threshold": {}, "triehh": {}}


def _within(hits: int, trials: int, p: float) -> bool:
    """hits inside the two-sided 1 − 10⁻⁴ binomial interval of Binomial(trials, p)."""
    lo, hi = stats.binom.interval(1 - 1e-4, trials, p)
    return lo <= hits <= hi


@pytest.mark.parametrize("design", ["tee", "tee_selection", "sample_threshold", "triehh",
                                    pytest.param("shuffle", marks=pytest.mark.slow)])
def test_sampled_runs_follow_the_exact_law(design):
    """The design's own code (client, enclave, threshold release), run T times per world, lands in S as often
    as the plan's exact P[S|A], P[S|B] say: within a two-sided 10⁻⁴ binomial interval, honest and planted."""
    trials = 10_000
    for bug in (None,) + design_bugs(design):
        plan = design_plan(design, bug, **SMALL[design])
        for value, p in ((plan.x, plan.p_a), (plan.x_prime, plan.p_b)):
            assert _within(run_hits(plan, value, trials, np.random.default_rng(5)), trials, p), (bug, value)


@pytest.mark.slow
def test_shuffle_law_is_the_binomial_convolution():
    """Σ_days count of x = Bin(D·L, p) + Bin(D·(m − 1)·L, q) under A, Bin(D·m·L, q) under B (scipy sums)."""
    plan = design_plan("shuffle")
    own, others, t = 30, 30 * 299, plan.at_least
    p = math.exp(1.0) / (1 + math.exp(1.0))
    j = np.arange(own + 1)
    assert plan.p_a == pytest.approx(float(np.sum(stats.binom.pmf(j, own, p) * stats.binom.sf(t - j - 1, others, 1 - p))),
                                     rel=1e-9)
    assert plan.p_b == pytest.approx(float(stats.binom.sf(t - 1, own + others, 1 - p)), rel=1e-9)


@pytest.mark.slow
def test_claims_are_the_accountants():
    """shuffle: the trust accountant's central ε (m devices; planted: the m·L reports); tee: the calibrated
    enclave's (ε, δ) per person (planted: the L0 = 1 calibration's); triehh: its run accountant's."""
    for design in ("shuffle", "secagg_local"):
        assert design_plan(design).claim == pytest.approx(run_epsilon(Shuffled(epsilon_report=1.0), 300, 1, DELTA_AUDIT,
                                                                      30, "replace"), rel=1e-9)
        assert design_plan(design, "amplified-by-reports").claim == pytest.approx(
            run_epsilon(Shuffled(epsilon_report=1.0), 9000, 1, DELTA_AUDIT, 30, "replace"), rel=1e-9)
    assert design_plan("tee").claim == pytest.approx(calibrate_tee("gaussian", 2.0, DELTA_AUDIT, 30, 3).epsilon(30, DELTA_AUDIT))
    assert design_plan("tee", "bound-l0").claim == pytest.approx(
        calibrate_tee("gaussian", 2.0, DELTA_AUDIT, 30, 1).epsilon(30, DELTA_AUDIT))
    assert design_plan("tee").claim <= 2.0 and design_plan("tee", "bound-l0").claim <= 2.0
    run = run_rounds("triehh", epsilon=2.0, n_days=2, rounds_per_day=2, delta=DELTA_AUDIT, gamma=0.5, length=2,
                     alphabet="ab")
    assert design_plan("triehh").claim == pytest.approx(run.epsilon) and run.delta <= DELTA_AUDIT


@pytest.mark.parametrize("design", ["tee", "tee_selection", "triehh", "sample_threshold"] + [
    pytest.param(d, marks=pytest.mark.slow) for d in ("shuffle", "secagg_local", "two_server")])
def test_honest_event_never_exceeds_the_claim(design):
    """Exact law: ln((P[S|A] − δ)/P[S|B]) ≤ ε for the honest design (the (ε, δ) hypothesis-test form), and the
    planted bug's event exceeds its claim (else no audit could FAIL it)."""
    honest = plan_run(design)
    assert event_epsilon(honest) <= honest.claim
    for bug in design_bugs(design):
        planted = plan_run(design, bug)
        assert event_epsilon(planted) > planted.claim, bug


def test_sample_threshold_passes_and_its_bug_fails():
    trials = run_trials("sample_threshold")
    assert trials < 10**5
    assert audit_run(plan_run("sample_threshold"), trials, 0).verdict == "PASS"
    assert audit_run(plan_run("sample_threshold", "threshold-before-bounding"), trials, 0).verdict == "FAIL"


@pytest.mark.slow
@pytest.mark.parametrize("design", ["shuffle", "secagg_local", "tee", "tee_selection", "triehh"])
def test_designs_pass_and_planted_bugs_fail(design):
    trials = run_trials(design)
    assert trials < 10**6      # every planted bug is detectable at power ≥ 0.95 by a feasible audit
    assert audit_run(plan_run(design), trials, 0).verdict == "PASS"
    for bug in design_bugs(design):
        assert audit_run(plan_run(design, bug), trials, 0).verdict == "FAIL", bug


@pytest.mark.slow
def test_trials_to_fail_gives_the_stated_power_on_the_new_designs():
    """400 audits with counts drawn from the exact law at trials_to_fail FAIL at least
    0.95 − 3.1·√(0.95·0.05/400) ≈ 0.916 of the time (false alarm ~10⁻³)."""
    rng = np.random.default_rng(11)
    for design in PLANS:
        for bug in design_bugs(design):
            plan = design_plan(design, bug)
            t = trials_to_fail(plan)
            lb = epsilon_lower_bound(rng.binomial(t, plan.p_a, 400), t, rng.binomial(t, plan.p_b, 400), t, 0.05,
                                     plan.delta)
            assert np.mean(lb > plan.claim) >= 0.916, (design, bug)


def test_bad_input_is_named():
    with pytest.raises(InputError, match="'design'.*tee_selection"):
        plan_run("nope")
    with pytest.raises(InputError, match="'design'.*sample_threshold"):
        audit_whole_run(["nope"])
    with pytest.raises(InputError, match="'bug'"):
        design_plan("shuffle", "bound-l0")
    with pytest.raises(InputError, match="'bug'"):
        audit_whole_run(["tee"], bug="nope")
    with pytest.raises(InputError, match="size 'nights'"):
        design_plan("tee", nights=3)
    with pytest.raises(InputError, match="rounds_per_day"):
        design_plan("tee", rounds_per_day=2)


def test_gate_skips_designs_that_cannot_carry_the_bug():
    report = audit_whole_run(["sample_threshold", "tee"], bug="threshold-before-bounding", seed=2)
    assert [r.subject for r in report.results] == ["sample_threshold run (planted: threshold-before-bounding)"]
    assert report.verdict == "FAIL" and any("tee: skipped" in n for n in report.notes)
    assert set(ALL_BUGS) == {b for d in ALL_DESIGNS for b in design_bugs(d)}


def test_cli_names_every_design_and_refuses_an_unknown_one(capsys, monkeypatch):
    from ldpsim.scenarios.cli import main
    monkeypatch.setenv("COLUMNS", "1000")   # no line wrapped at a bug's hyphen
    main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(d in text for d in ALL_DESIGNS) and all(b in text for b in ALL_BUGS)
    assert main(["audit", "--run", "--design", "nope"]) == 2
    assert "tee_selection" in capsys.readouterr().err
    assert main(["audit", "--run", "--design", "sample_threshold", "--planted", "threshold-before-bounding"]) == 1


def test_run_power_reports_the_runs_each_bug_needs():
    from ldpsim.scenarios.studies.audit.run_power import COLUMNS, run_power
    table = run_power(cases=(("sample_threshold", 2, 1, DELTA_AUDIT),))
    assert list(table.columns) == list(COLUMNS) and table.bug.tolist() == ["threshold-before-bounding"]
    assert table.runs_for_power.iloc[0] == run_trials("sample_threshold")
    assert table.event_epsilon.iloc[0] > table.claim.iloc[0]


@pytest.mark.slow
def test_run_power_at_realistic_lengths():
    """The documented rows (docs/math.md §11.8): 30 nights of the enclave at δ = 10⁻⁵ need 91 136 runs for
    bound-l0; one uncharged round among 30 GRR days is beyond 10⁹ (−1)."""
    from ldpsim.scenarios.studies.audit.run_power import run_power
    table = run_power(cases=(("tee", 30, 1, 1e-5), ("grr", 30, 1, DELTA_AUDIT)))
    assert table.runs_for_power.tolist() == [91_136, -1, -1]


def test_cli_run_length_and_delta_reach_the_plan(capsys, monkeypatch):
    from ldpsim.scenarios.cli import main
    monkeypatch.setenv("COLUMNS", "100")  # the run length is in the subject, cut below 100 columns
    assert main(["audit", "--run", "--design", "sample_threshold", "--days", "1", "--delta", "0.0005"]) == 0
    out = capsys.readouterr()
    assert "[1 days × 1 rounds]" in out.out and "δ = 0.0005" in out.out + out.err
    assert main(["audit", "--mechanism", "grr", "--delta", "0.0005"]) == 2
