"""The black-box ε auditor: bounds, plans at the exact privacy boundary, false-FAIL rate, planted bug, CLI."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.audit import (audit_client, audit_mechanism, audit_reports, clopper_pearson,
                                     default_support, epsilon_lower_bound, plan_for, trials_to_detect)
from ldpsim.evaluation.audit.planted import buggy_grr, true_epsilon
from ldpsim.mechanisms import CMS, GRR, HCMS, OLH, OUE, PM, RR, SDGRR, SDPM, URR
from ldpsim.scenarios.cli import main
from tests.stats import z_bound

MECHS = [GRR(1.0, 10), GRR(4.0, 3), RR(2.0), URR(1.0, 6, (1, 4)), SDGRR(1.0, 6, (0, 2, 5)), OUE(1.0, 10),
         OUE(4.0, 20), OLH(1.0, 10), OLH(2.0, 8, g=5), CMS(1.0, 16, 64), CMS(4.0, 4, 8), HCMS(2.0, 16, 64),
         PM(1.0), SDPM(2.0)]


def test_clopper_pearson_is_scipys_exact_interval():
    for k, n in ((0, 50), (7, 50), (50, 50), (1234, 100_000)):
        lo, hi = clopper_pearson(k, n, 0.025)  # one-sided 2.5 % each = the two-sided 95 % interval
        ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        assert float(lo) == pytest.approx(ci.low, abs=1e-12) and float(hi) == pytest.approx(ci.high, abs=1e-12)


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: repr(m)[:40])
def test_plans_sit_on_the_exact_privacy_boundary(mech):
    plan = plan_for(mech)
    assert math.log(plan.p_x / plan.p_x_prime) == pytest.approx(mech.epsilon, rel=1e-12)
    if hasattr(mech, "transition_matrix"):
        T = mech.transition_matrix()
        y = int(plan.description.split("== ")[1])
        assert (plan.p_x, plan.p_x_prime) == (T[plan.x, y], T[plan.x_prime, y])


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: repr(m)[:40])
def test_sampled_event_counts_match_the_exact_probabilities(mech):
    """The event test on real client reports counts what the plan's probabilities predict (z, α = 1e-4
    over the 2 × 14 counts): checks the events and each client against its own claimed law."""
    n = 100_000
    plan = plan_for(mech)
    rng = np.random.default_rng(11)
    for value, p in ((plan.x, plan.p_x), (plan.x_prime, plan.p_x_prime)):
        k = np.count_nonzero(plan.event(mech.perturb(np.full(n, value), rng)))
        assert abs(k - n * p) <= z_bound(1e-4, 2 * len(MECHS)) * math.sqrt(n * p * (1 - p)) + 1, (value, k, n * p)


def test_correct_mechanisms_fail_at_most_alpha_of_the_time():
    """1000 exact-mode audits of a correct GRR at 90 % confidence: FAILs ≤ 10 % (binomial, α = 1e-4)."""
    rng = np.random.default_rng(5)
    fails = sum(audit_mechanism(GRR(1.0, 4), 2000, rng, "declared", 0.9).verdict == "FAIL" for _ in range(1000))
    assert fails <= stats.binom.isf(1e-4, 1000, 0.10)
    assert fails > 0  # Clopper–Pearson is conservative, not vacuous: some audits come close to the claim


def test_exact_and_sample_modes_agree_and_are_tight():
    for mode in ("declared", "sample"):
        r = audit_mechanism(OUE(2.0, 10), 400_000, rng=3, mode=mode)
        assert r.passed and 1.9 < r.epsilon_lower_bound <= 2.0 and r.epsilon_event == pytest.approx(2.0)


def test_planted_bug_is_flagged_and_the_correct_client_passes():
    assert true_epsilon(1.0, 10) == pytest.approx(1.3914, abs=1e-4)
    bad = audit_client(buggy_grr(1.0, 10), 1.0, 20_000, rng=7)
    assert not bad.passed and bad.verdict == "FAIL" and bad.epsilon_lower_bound > 1.0
    good = audit_client(GRR(1.0, 10).perturb, 1.0, 20_000, rng=7)
    assert good.passed and good.epsilon_lower_bound > 0.8


def test_tabulated_trials_detect_about_half_the_time():
    """trials_to_detect is the median detection point: at that N about half of the audits FAIL."""
    e = math.exp(1.0)
    p, q = 1 - 0.9 * (1 - e / (e + 9)), 0.9 / (e + 9)
    n = trials_to_detect(p, q, 1.0)
    rng = np.random.default_rng(2)
    kx, kxp = rng.binomial(n, p, 400), rng.binomial(n, q, 400)
    detected = np.mean(epsilon_lower_bound(kx, n, kxp, n, 0.05) > 1.0)
    assert 0.3 < detected < 0.7
    assert np.mean(epsilon_lower_bound(rng.binomial(4 * n, p, 400), 4 * n, rng.binomial(4 * n, q, 400),
                                       4 * n, 0.05) > 1.0) > 0.95
    assert trials_to_detect(0.5, 0.5 / math.e, 1.0) > 10**13  # not detectable: no excess


def test_external_reports_default_support_and_files(tmp_path):
    rows = np.array([[1, 0, 0], [0, 1, 1]], dtype=np.uint8)
    assert default_support(rows, 1).tolist() == [False, True]
    with pytest.raises(TypeError, match="support"):
        default_support((np.zeros(2), np.zeros(2)), 0)
    m = GRR(2.0, 5)
    rng = np.random.default_rng(4)
    rx, rxp = m.perturb(np.zeros(50_000, int), rng), m.perturb(np.ones(50_000, int), rng)
    r = audit_reports(rx, rxp, 2.0)
    assert r.passed and 1.8 < r.epsilon_lower_bound <= 2.0 and r.event.startswith("supports")
    np.savez(tmp_path / "r.npz", reports_x=rx, reports_x_prime=rxp)
    assert main(["audit", "--reports", str(tmp_path / "r.npz"), "--epsilon", "2", "-q"]) == 0
    assert main(["audit", "--reports", str(tmp_path / "r.npz"), "--epsilon", "1", "-q"]) == 1


def test_cli(tmp_path, capsys):
    assert main(["audit", "--mechanism", "grr", "--param", "domain_size=4", "--epsilon", "2",
                 "--trials", "1e5", "--out", str(tmp_path), "-q"]) == 0
    assert "PASS" in capsys.readouterr().out and (tmp_path / "audit.csv").exists()
    assert main(["audit", "--client", "ldpsim.evaluation.audit.planted:buggy_grr", "--client-arg", "epsilon=1",
                 "--client-arg", "domain_size=10", "--epsilon", "1", "--domain-size", "10",
                 "--trials", "20000", "-q"]) == 1
    assert "FAIL" in capsys.readouterr().out
    assert main(["audit", "--detection-table", "--epsilons", "1"]) == 0
    assert "planted bug" in capsys.readouterr().out
    assert main(["audit", "--client", "no_such_module:f", "--epsilon", "1", "--domain-size", "3"]) == 2
    assert main(["audit", "--client", "ldpsim.evaluation.audit.planted:buggy_grr", "--epsilon", "1"]) == 2
    assert "domain_size" in capsys.readouterr().err


@pytest.mark.slow
def test_pure_ldp_clients_pass_in_the_peers_venv():
    """pure-ldp's clients, audited black-box in the benchmark's peers venv (skipped when it is absent)."""
    from ldpsim.scenarios.studies.audit.peers_audit import audit_pure_ldp
    from ldpsim.scenarios.studies.bench.peers import default_venv, venv_ok
    if not venv_ok(default_venv()):
        pytest.skip("no peers venv (ldpsim bench --peers creates it)")
    results = audit_pure_ldp(epsilons=(2.0,), trials=20_000, log=lambda _: None)
    assert len(results) == 5 and all(r.passed for r in results)
    assert all(r.epsilon_lower_bound > 1.5 for r in results)  # the events see the clients' real ε


def test_peers_audit_script_imports_no_ldpsim():
    from ldpsim.scenarios.studies.audit.peers_audit import SCRIPT
    imports = [line for line in SCRIPT.read_text().splitlines() if line.strip().startswith(("import ", "from "))]
    assert imports and not any("ldpsim" in line for line in imports)


@pytest.mark.parametrize("name", ["hr", "sue", "the", "dbitflip"])
def test_generic_plans_sit_on_each_oracles_report_boundary(name):
    """Oracles without a specific plan: the single output of largest ratio (transition matrix or
    enumerated reports) has ratio e^{ε_report}, and the real client's reports hit it as often as the
    exact probabilities say (z, α = 1e-4)."""
    from ldpsim.mechanisms import make
    mech = make(name, epsilon=2.0, domain_size=6)
    plan = plan_for(mech)
    eps = getattr(mech, "epsilon_report", mech.epsilon)
    assert math.log(plan.p_x / plan.p_x_prime) == pytest.approx(eps, rel=1e-9)
    rng = np.random.default_rng(8)
    n = 100_000
    for value, p in ((plan.x, plan.p_x), (plan.x_prime, plan.p_x_prime)):
        k = np.count_nonzero(plan.event(mech.perturb(np.full(n, value), rng)))
        assert abs(k - n * p) <= z_bound(1e-4, 8) * math.sqrt(n * p * (1 - p)) + 1
