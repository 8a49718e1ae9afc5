"""``ldpsim.audit``: a library call with a verdict a gate can trust — the default runs the client, no
evidence never passes, bad input and refused costs exit 2, and the repeated reports of one device are
audited jointly (docs/math.md §11)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from scipy import stats

import ldpsim
from ldpsim.evaluation.audit.auditor import audit_plan
from ldpsim.evaluation.audit.bounds import largest_lower_bound, trials_for_power
from ldpsim.evaluation.audit.planted import buggy_grr, redrawing_client
from ldpsim.evaluation.audit.repeated import repeated_plan
from ldpsim.evaluation.cost import CostError
from ldpsim.mechanisms import CMS, GRR, OUE, RAPPOR, DBitFlip, OneBitMean
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.cli import main
from tests.stats import z_bound


@dataclass(frozen=True)
class BuggyClientGRR(GRR):
    """A GRR whose declared probabilities are right and whose client flips 10 % too rarely."""

    def perturb(self, values, rng=None):
        return buggy_grr(self.epsilon, self.domain_size)(values, np.random.default_rng(rng))


def test_the_default_runs_the_client_and_declared_mode_says_it_did_not():
    """The defect: the default checked the declared probabilities and said PASS for a broken client."""
    mech = BuggyClientGRR(1.0, 10)
    sampled = ldpsim.audit(mech, trials=20_000, seed=7)
    assert sampled.mode == "sample" and sampled.verdict == "FAIL" and sampled.exit_code == 1
    assert "the client's code ran" in "\n".join(sampled.notes)
    declared = ldpsim.audit(mech, trials=20_000, seed=7, mode="declared")
    assert declared.verdict == "PASS" and "its code did NOT run" in "\n".join(declared.notes)


def test_a_gate_without_evidence_never_passes(tmp_path, capsys):
    """Empty reports: invalid input (exit 2), not PASS with ε_lb = −inf; too few trials: INCONCLUSIVE (exit 1)."""
    empty = tmp_path / "empty.npz"
    np.savez(empty, reports_x=np.zeros(0, int), reports_x_prime=np.zeros(0, int))
    assert main(["audit", "--reports", str(empty), "--epsilon", "1", "-q"]) == 2
    assert "reports_x holds 0 reports" in capsys.readouterr().err
    with pytest.raises(InputError, match="0 reports"):
        ldpsim.audit(reports=str(empty), epsilon=1.0)
    few = ldpsim.audit("grr", trials=5)
    assert few.verdict == "INCONCLUSIVE" and few.exit_code == 1
    assert main(["audit", "--mechanism", "grr", "--trials", "5"]) == 1
    out = capsys.readouterr().out
    assert "INCONCLUSIVE" in out and "at least 12 trials per input" in out
    rng = np.random.default_rng(1)
    r = GRR(1.0, 10).perturb(np.zeros(3, int), rng), GRR(1.0, 10).perturb(np.ones(3, int), rng)
    assert ldpsim.audit(reports=r, epsilon=1.0).verdict == "INCONCLUSIVE"  # 3 reports cannot show ε > 1


def test_the_largest_bound_is_the_most_extreme_outcome():
    """No outcome of N trials gives a bound above largest_lower_bound, and trials_for_power is the first N
    whose largest bound exceeds the claim."""
    from ldpsim.evaluation.audit.bounds import epsilon_lower_bound
    n = 40
    k = np.arange(n + 1)
    every = epsilon_lower_bound(k[:, None], n, k[None, :], n, 0.05)
    assert np.max(every) == pytest.approx(largest_lower_bound(n, n, 0.05))
    for eps in (0.5, 1.0, 4.0):
        need = trials_for_power(eps)
        assert largest_lower_bound(need, need, 0.05) > eps >= largest_lower_bound(need - 1, need - 1, 0.05)


@pytest.mark.parametrize("argv, message", [
    (["--mechanism", "grr", "--trials", "inf"], "finite whole number"),
    (["--mechanism", "grr", "--trials", "1e20"], "'trials' parameter of audit"),
    (["--all", "--epsilons", "1e9"], "must be an ε in"),
    (["--detection-table", "--epsilons", "-1"], "must be an ε in"),
    (["--detection-table", "--epsilons", "1e9"], "must be an ε in"),
    (["--mechanism", "grr", "--epsilon", "nan"], "must be an ε in"),
    (["--mechanism", "grr", "--trials", "1e12"], "at most trials = 2,000,000,000 fit"),
    (["--mechanism", "oue", "--mode", "repeated", "--trials", "1e9"], "at most trials = 285,714,285 fit"),
    (["--mechanism", "cms", "--param", "width=3"], "CMS has no parameter 'width'; its parameters are epsilon, k, m"),
    (["--mechanism", "cms", "--param", "eps=3"], "did you mean 'epsilon'?"),
    (["--mechanism", "grr", "--days", "3"], "'days' parameter of audit goes with mode='repeated'"),
    (["--reports", "x.npz", "--epsilon", "1", "--mode", "declared"], "'mode' parameter does not apply"),
    (["--client", "ldpsim.evaluation.audit.planted:buggy_grr", "--epsilon", "1", "--domain-size", "4",
      "--mode", "declared"], "a client can only be sampled"),
])
def test_bad_input_and_refused_costs_exit_2_with_a_message(argv, message, capsys):
    assert main(["audit", *argv]) == 2
    assert message in capsys.readouterr().err


def test_make_names_the_parameter_and_suggests_the_closest():
    with pytest.raises(InputError, match=r"CMS has no parameter 'eps' \(did you mean 'epsilon'\?\); its "
                                         r"parameters are epsilon, k, m, seed"):
        ldpsim.make("cms", eps=1)
    with pytest.raises(InputError, match="CMS needs the parameter.s. k, m"):
        ldpsim.make("cms", epsilon=1)
    with pytest.raises(InputError, match="did you mean 'cms'"):
        ldpsim.make("cmss", epsilon=1)
    with pytest.raises(CostError, match="at most trials"):
        ldpsim.audit("grr", trials=10**12)


def test_notebook_and_command_line_print_the_same(capsys):
    report = ldpsim.audit("oue", trials=50_000, seed=4)
    assert main(["audit", "--mechanism", "oue", "--trials", "5e4", "--seed", "4"]) == 0
    printed = capsys.readouterr().out.splitlines()
    # the same table and notes (the timing inside the note aside)
    n = len(report.table_lines())
    assert printed[:n] == report.table_lines()
    assert printed[n].split(" in ")[0] == report.notes[0].split(" in ")[0]
    assert printed[n].split(" s, ")[1] == report.notes[0].split(" s, ")[1]
    table = report.table
    assert list(table["verdict"]) == ["PASS"] and table["trials"].iloc[0] == 50_000


def test_help_says_a_client_runs_as_python_c(capsys):
    assert main(["audit", "--help"]) == 0
    assert "python -c" in " ".join(capsys.readouterr().out.split())


def test_to_folder_owns_its_folder(tmp_path, capsys):
    out = tmp_path / "audit"
    ldpsim.audit("grr", trials=10_000).to_folder(out)
    assert (out / "audit.csv").is_file() and '"verdict": "PASS"' in (out / "audit.json").read_text()
    ldpsim.audit("grr", trials=10_000).to_folder(out)  # the same audit again: its own results, replaced
    other = ldpsim.audit("oue", trials=10_000)
    from ldpsim.runtime.runfolder import RunFolderError
    with pytest.raises(RunFolderError, match="--force"):
        other.to_folder(out)
    other.to_folder(out, force=True)
    assert "OUE" in (out / "audit.csv").read_text()


MEMO = [GRR(1.0, 10), OUE(1.0, 10), CMS(1.0, 16, 64), DBitFlip(1.0, 6, d=2), OneBitMean(1.0, m=10.0),
        RAPPOR(4.0, num_bits=16, num_hashes=2, cohorts=8, p=0.25, q=0.75)]


@pytest.mark.parametrize("mech", MEMO, ids=lambda m: m.name)
def test_repeated_counts_match_the_joint_probabilities(mech):
    """The devices of the memoizing client hit S_T as often as the closed form says (RAPPOR: the mixture
    over permanent bits of docs/math.md §11.2); z at α = 1e-4 over the 2 × 6 counts."""
    plan = repeated_plan(mech, 7)
    n = 20_000
    res = audit_plan(plan, n, 11, days=7)
    for k, p in ((res.count_x, plan.p_x), (res.count_x_prime, plan.p_x_prime)):
        assert abs(k - n * p) <= z_bound(1e-4, 12) * math.sqrt(n * p * (1 - p)) + 1, (k, n * p)


@pytest.mark.parametrize("mech", MEMO, ids=lambda m: m.name)
def test_memoizing_clients_pass_and_redrawing_clients_fail(mech):
    """Correct memoization PASSes against ε_∞; the same client with its key forgotten (its memoized response
    redrawn on every report) FAILs at twice the median detection point the audit states."""
    report = ldpsim.audit(mech, mode="repeated", days=7, trials=30_000, seed=3)
    assert report.verdict == "PASS" and report.results[0].epsilon_claimed == mech.epsilon
    need = int(report.notes[0].split("audits of ")[1].split(" devices")[0].replace(",", ""))
    plan = repeated_plan(mech, 7)
    bad = audit_plan(plan, 2 * need, 5, days=7, perturb=redrawing_client(mech))
    assert bad.verdict == "FAIL" and bad.epsilon_lower_bound > mech.epsilon


def test_repeated_audit_of_an_external_client(capsys):
    base = ["audit", "--client-arg", "epsilon=1", "--client-arg", "domain_size=10", "--epsilon", "1",
            "--domain-size", "10", "--mode", "repeated", "--trials", "20000", "-q"]
    assert main([*base, "--client", "ldpsim.evaluation.audit.planted:memoized_grr"]) == 0
    assert main([*base, "--client", "ldpsim.evaluation.audit.planted:redrawing_grr"]) == 1
    out = capsys.readouterr().out
    assert "PASS" in out and "FAIL" in out and "of 7 reports" in out


@pytest.mark.slow
def test_repeated_audit_false_fail_rate():
    """50 repeated audits of the correct memoized GRR at 80 % confidence: FAILs ≤ 20 % (binomial, α = 1e-4)."""
    fails = sum(ldpsim.audit(GRR(2.0, 4), mode="repeated", days=3, trials=2000, seed=s, confidence=0.8).verdict
                == "FAIL" for s in range(50))
    assert fails <= stats.binom.isf(1e-4, 50, 0.2)
