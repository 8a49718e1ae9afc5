"""The whole-run audit refuses, before its first run, what it cannot finish (docs/math.md §11.8): runs given beyond
the cap, default runs a planted bug needs beyond the cap, claims no feasible count can reach, runs too long to
plan. Every test replaces the run itself by a function that fails: a refusal must come before any run."""

from __future__ import annotations

import math

import pytest

from ldpsim.evaluation.audit.bounds import trials_to_detect
from ldpsim.evaluation.audit.run_audit import MAX_ROUNDS, MAX_RUNS
from ldpsim.evaluation.cost import MAX_STUDY_SECONDS, CostError
from ldpsim.scenarios.studies.audit import gate, run_cost


@pytest.fixture
def no_run(monkeypatch):
    """The run audit's runs replaced: reaching them is a failure (the refusal must come first)."""
    def started(plan, trials, rng, confidence):
        raise AssertionError(f"{plan.design}: {trials:,} runs started")
    monkeypatch.setattr(gate, "audit_run", started)


def test_cap_is_the_study_limit_over_the_measured_cost():
    """max_runs = ⌊MAX_STUDY_SECONDS / (2·n·s)⌋, at most MAX_RUNS; the estimate at the cap is within the limit
    and one run more is beyond it."""
    plan = gate.plan_run("tee")
    cap = run_cost.max_runs("tee", plan.rounds)
    assert cap == math.floor(MAX_STUDY_SECONDS / (2 * plan.rounds * run_cost.SECONDS_PER_RUN_ROUND["tee"]))
    assert run_cost.seconds("tee", plan.rounds, cap) <= MAX_STUDY_SECONDS \
        < run_cost.seconds("tee", plan.rounds, cap + 1)
    run_cost.check_runs(plan, cap)
    with pytest.raises(CostError, match=f"trials = {cap + 1:,}.*at most trials = {cap:,}"):
        run_cost.check_runs(plan, cap + 1)
    assert run_cost.max_runs("grr", 6) == MAX_RUNS     # the cheapest clients: the runs cap binds first
    assert set(run_cost.SECONDS_PER_RUN_ROUND) == set(gate.rd.ALL_DESIGNS)


def test_runs_given_beyond_the_cap_are_refused_before_any_run(no_run):
    """6·10⁷ runs of the enclave over 30 nights: ~5 000 CPU-s, beyond the hour (it was started: 3.6·10⁹ reports
    are under the per-round audit's 4·10⁹)."""
    with pytest.raises(CostError, match=r"trials = 60,000,000 runs per world of tee.*--trials"):
        gate.audit_whole_run(["tee"], trials=60_000_000)
    with pytest.raises(CostError, match=r"trials = 60,000,000"):
        gate.audit_whole_run(["tee"], bug="bound-l0", trials=60_000_000)


def test_default_runs_beyond_the_cap_are_refused_naming_the_bug(monkeypatch, no_run):
    """With a cap below the 8 704 runs the enclave's bound-l0 needs, the default audit is refused before any run,
    naming the bug, the runs it needs and the cap."""
    cap = run_cost.max_runs("tee", 30)
    monkeypatch.setattr(run_cost, "MAX_STUDY_SECONDS", MAX_STUDY_SECONDS * 8000 / cap)
    with pytest.raises(CostError, match=r"planted 'bound-l0' needs 8,704 runs per world.*more than the 8,000 runs"):
        gate.audit_whole_run(["tee"])
    with pytest.raises(CostError, match=r"'bound-l0' needs 8,704"):
        gate.audit_whole_run(["tee"], bug="bound-l0")


def test_designs_that_fit_one_by_one_but_not_together_are_refused(monkeypatch, no_run):
    """PEM's 484 and TreeHist's 452 default runs each fit a cap of 1.5 ms of estimated CPU; together they do not."""
    monkeypatch.setattr(run_cost, "MAX_STUDY_SECONDS", 1.5e-3)
    plans = [gate.plan_run(d) for d in ("pem", "treehist")]
    assert all(run_cost.seconds(p.design, p.rounds, t) <= 1.5e-3 for p, t in zip(plans, (484, 452)))
    with pytest.raises(CostError, match=r"the 2 designs need about .* together.*--design"):
        gate.audit_whole_run(["pem", "treehist"])


def test_a_bug_beyond_any_feasible_count_is_refused_before_any_run(no_run):
    """The enclave's partition selection over one night at δ = 10⁻⁹: bound-l0 needs ~1.2·10¹¹ runs per world;
    the search stopped at 10⁹ + 1, which one round's 2·10⁹ reports let through (a 10⁹-run audit)."""
    with pytest.raises(CostError, match=r"'bound-l0' needs 115,964,116,992 runs per world.*--trials"):
        gate.audit_whole_run(["tee_selection"], days=1, delta=1e-9)


@pytest.mark.slow
def test_a_bug_no_count_detects_is_refused_with_its_event_ratio(no_run):
    """Two servers over one round at δ = 10⁻⁹: not even 10¹² runs detect the uncharged round."""
    with pytest.raises(CostError, match=r"needs more than 1e\+12 runs per world to FAIL its claim"):
        gate.audit_whole_run(["two_server"], days=1, rounds_per_day=1, delta=1e-9)


def test_claims_out_of_reach_and_long_runs_are_refused_before_planning():
    """A claim no 10⁹ runs can show at any confidence (30 GRR days × 2 rounds: 30) is refused before its event
    is searched; a run beyond MAX_ROUNDS rounds before its law is built (the shuffle's convolution)."""
    with pytest.raises(CostError, match=r"claim 30 over 60 rounds is beyond"):
        gate.plan_run("grr", days=30)
    with pytest.raises(CostError, match=rf"4 × 300 = 1,200 rounds, more than the {MAX_ROUNDS:,}"):
        gate.audit_whole_run(["shuffle"], days=4, rounds_per_day=300)


def test_trials_to_detect_takes_an_underflowed_tail():
    """P[S|x′] = 0 (a binomial tail below the smallest float): an unbounded ratio, detected by the same count as
    a tail of 10⁻³⁰⁰ (the expected count of x′ rounds to 0 either way)."""
    assert trials_to_detect(0.5, 0.0, 3.0) == trials_to_detect(0.5, 1e-300, 3.0) < 1000


def test_cli_refuses_with_exit_2(capsys, no_run):
    from ldpsim.scenarios.cli import main
    assert main(["audit", "--run", "--design", "tee", "--trials", "6e7"]) == 2
    err = capsys.readouterr().err
    assert "trials = 60,000,000" in err and "Traceback" not in err
    assert main(["audit", "--run", "--design", "tee_selection", "--days", "1", "--delta", "1e-9"]) == 2
    assert "--trials" in capsys.readouterr().err


def test_no_design_left_to_audit_is_refused_not_passed(capsys):
    """A planted bug no given design carries, or no design at all, audits nothing: refused (exit 2), never a PASS."""
    from ldpsim.runtime.errors import InputError
    from ldpsim.scenarios.cli import main
    with pytest.raises(InputError, match=r"none carries the planted 'clear-round' \(designs that do: grr,"):
        gate.audit_whole_run(["oue"], bug="clear-round")
    with pytest.raises(InputError, match=r"'designs' is \[\]"):
        gate.audit_whole_run([])
    assert main(["audit", "--run", "--design", "oue", "--planted", "clear-round"]) == 2
    assert "none carries" in capsys.readouterr().err


def test_a_triehh_run_no_threshold_can_protect_names_its_length():
    """Over 365 days × 2 rounds no θ < 10⁴ reaches (2, 10⁻³): an InputError naming days × rounds_per_day."""
    from ldpsim.runtime.errors import InputError
    with pytest.raises(InputError, match=r"days × rounds_per_day = 365 × 2 rounds: TrieHH: no threshold"):
        gate.plan_run("triehh", days=365)


def test_default_runs_reach_the_claim_or_are_refused(no_run):
    """PEM over 30 runs: its planted bug (claim 10) FAILS at 4 980 736 runs, but the honest claim 30 is beyond
    every bound the 61 855 670 runs that fit can show: that audit is refused before any run, the planted one
    starts. Over 10 runs the honest claim 10 needs more runs than the bug: the default rises to them."""
    from ldpsim.evaluation.audit.bounds import largest_lower_bound
    with pytest.raises(CostError, match=r"no audit of at most 61,855,670 runs per world .* claim 30 over 30 day"):
        gate.audit_whole_run(["pem"], days=30)
    with pytest.raises(AssertionError, match="4,980,736 runs started"):
        gate.audit_whole_run(["pem"], bug="claimed-per-group", days=30)
    plan, bug_runs = gate.plan_run("pem", days=10), gate.run_trials("pem", days=10)
    runs = run_cost.refutable_runs(plan, 0.95, bug_runs)
    assert largest_lower_bound(bug_runs, bug_runs, 0.05) <= 10 < largest_lower_bound(runs, runs, 0.05)
    assert largest_lower_bound(runs * 0.98, runs * 0.98, 0.05) <= 10      # the fewest, to 1 %
