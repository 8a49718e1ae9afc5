"""The accountant: one device's spend over a run against closed forms (docs/math.md §8)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpsim.evaluation.privacy.accountant import device_spend, losses, memo_classes, solve_epsilon
from ldpsim.evaluation.privacy.amplification import numerical_epsilon
from ldpsim.evaluation.privacy.composition import rr_composition_delta
from ldpsim.mechanisms import CMS, GRR, RAPPOR, DBitFlip
from ldpsim.simulator.config import DeploymentConfig, UseCase

ITEMS = tuple(f"e{i}" for i in range(10))


def _cfg(*use_cases, days=30, **kw):
    return DeploymentConfig(items=ITEMS, item_weights=(1,) * len(ITEMS), use_cases=use_cases, n_days=days, **kw)


def _grr(eps=1.0, **kw):
    return UseCase("emoji", "event", "grr", (("epsilon", eps), ("domain_size", len(ITEMS))), **kw)


def test_fresh_reports_compose_basic_and_optimal():
    """30 fresh GRR reports at ε = 1: 30 (δ = 0); at δ the optimal composition of 30 ε-DP mechanisms
    (binary RR's exact curve, Kairouz–Oh–Viswanath), within the PLD grid."""
    spend = device_spend(_cfg(_grr()), delta=1e-6)
    row = spend.table.set_index("use_case").loc["emoji"]
    assert row["reports"] == 30 and row["epsilon_device"] == pytest.approx(30.0)
    at = row["epsilon_device_at_delta"]
    assert rr_composition_delta(1.0, 30, at) <= 1e-6 * (1 + 1e-9)
    assert rr_composition_delta(1.0, 30, at - 30 * 1e-3 - 0.01) > 1e-6
    assert spend.total("ε-LDP") == pytest.approx(30.0)


def test_daily_limit_and_caps():
    assert device_spend(_cfg(_grr(daily_limit=3))).total() == pytest.approx(90.0)
    assert device_spend(_cfg(_grr(daily_limit=3), budget_total=50.0)).total() == pytest.approx(50.0)
    assert device_spend(_cfg(_grr(daily_limit=3), budget_daily=2.0)).total() == pytest.approx(60.0)


def test_memoized_reports_cost_once_per_value():
    """A re-sent report reveals nothing new: a device with 10 items spends at most 10 ε over 30 days."""
    cfg = _cfg(_grr(memoize=True))
    assert memo_classes(cfg, cfg.use_cases[0]) == len(ITEMS)
    assert device_spend(cfg).total() == pytest.approx(10.0)
    assert device_spend(_cfg(_grr(memoize=True), days=4)).total() == pytest.approx(4.0)


def _rappor_joint_loss(m, r):
    """ε of r reports of one permanent response, by enumerating every bit pattern of two values whose
    Bloom bits are distinct (h = 1: bit 0 set for x, bit 1 for x')."""
    f, p, q = m.f, m.p, m.q
    prr = {1: (f / 2, 1 - f / 2), 0: (1 - f / 2, f / 2)}  # P(B' = 0), P(B' = 1) given B

    def bit_law(b, pattern):
        return sum(prr[b][bp] * np.prod([(q if bp else p) if s else (1 - q if bp else 1 - p) for s in pattern])
                   for bp in (0, 1))

    worst = 0.0
    for s0 in itertools.product((0, 1), repeat=r):
        for s1 in itertools.product((0, 1), repeat=r):
            px = bit_law(1, s0) * bit_law(0, s1)
            py = bit_law(0, s0) * bit_law(1, s1)
            worst = max(worst, abs(math.log(px / py)))
    return worst


@pytest.mark.parametrize("eps, r", [(4.0, 1), (4.0, 2), (4.0, 4), (1.5, 3), (8.0, 5)])
def test_rappor_memoized_loss_is_exact(eps, r):
    m = RAPPOR(eps, num_bits=8, num_hashes=1, cohorts=1)
    got = m.memoized_loss(r)
    assert got == pytest.approx(_rappor_joint_loss(m, r), rel=1e-12)
    assert got <= min(r * m.epsilon_report, m.epsilon_permanent) * (1 + 1e-12)
    if r == 1:
        assert got == pytest.approx(m.epsilon_report, rel=1e-12)


def test_rappor_memoized_loss_tends_to_epsilon_infinity():
    m = RAPPOR(4.0, num_bits=128, num_hashes=2, cohorts=8)
    loss = [m.memoized_loss(r) for r in (1, 2, 5, 30, 200)]
    assert np.all(np.diff(loss) > 0) and loss[-1] == pytest.approx(4.0, rel=1e-6)


def test_losses_spread_reports_over_memo_classes_the_costliest_way():
    """Exact knapsack against enumeration of every split of R reports over at most C classes."""
    m = RAPPOR(4.0, num_bits=128, num_hashes=2, cohorts=8)
    for reports, classes in ((7, 3), (6, 6), (9, 2)):
        got = losses(m, reports, classes)
        best = max(sum(m.memoized_loss(r) for r in split)
                   for split in itertools.product(range(reports + 1), repeat=classes) if sum(split) <= reports)
        assert sum(e * n for e, n in got.items()) == pytest.approx(best, rel=1e-12)
        assert sum(got.values()) <= classes


def test_rappor_fresh_reports_cost_epsilon_one_not_epsilon_infinity():
    m = RAPPOR(4.0, num_bits=128, num_hashes=2, cohorts=8)
    assert losses(m, 30) == {m.epsilon_report: 30}
    assert m.epsilon_report < 1.0  # ε₁ of RAPPOR's default design at ε_∞ = 4


def test_kinds_are_never_summed_together():
    sd = UseCase("emoji", "event", "sdgrr", (("epsilon", 1.0), ("domain_size", 10), ("high", (0, 1))))
    pm = UseCase("session_length", "reading", "pm", (("epsilon", 2.0),), value_range=(0.0, 300.0))
    spend = device_spend(_cfg(sd, pm, days=5))
    assert spend.total("ε-SDLDP") == pytest.approx(5.0)
    assert spend.total("ε-LDP") == pytest.approx(10.0)
    assert set(spend.table.loc[spend.table["use_case"] == "total", "kind"]) == {"ε-SDLDP", "ε-LDP"}


def test_sampling_policy_charges_one_report_a_device_day():
    pm = UseCase("session_length", "reading", "pm", (("epsilon", 1.0),), value_range=(0.0, 300.0))
    spend = device_spend(_cfg(_grr(1.0), pm, days=10, policy="smp"))
    assert spend.total() == pytest.approx(20.0)  # the whole ε = 2 once a day, not per use case


def test_central_epsilon_after_the_shuffle():
    """One report a day shuffled among n: FMT21 at δ/(2·days) per day, composed over the days at δ."""
    spend = device_spend(_cfg(_grr(2.0), days=3), delta=1e-6, shuffled_among=50_000)
    per_day = numerical_epsilon(2.0, 50_000, 1e-6 / 6, tol=1e-4)
    central = spend.total(column="epsilon_central")
    assert per_day < central < 3 * per_day + 1e-6
    assert central < spend.total()


def test_solve_epsilon_meets_the_budget():
    make = lambda e: CMS(e, k=16, m=64)  # noqa: E731
    eps = solve_epsilon(make, 8.0, 30)
    assert eps == pytest.approx(8.0 / 30, rel=1e-5) and eps <= 8.0 / 30
    rappor = lambda e: RAPPOR(e, num_bits=128, num_hashes=2, cohorts=8)  # noqa: E731
    eps = solve_epsilon(rappor, 8.0, 30)
    assert 30 * rappor(eps).epsilon_report == pytest.approx(8.0, rel=1e-5)
    eps = solve_epsilon(rappor, 8.0, 30, classes=10)
    assert sum(e * n for e, n in losses(rappor(eps), 30, 10).items()) == pytest.approx(8.0, rel=1e-5)
    dbf = lambda e: DBitFlip(e, 10, d=4)  # noqa: E731
    assert solve_epsilon(dbf, 8.0, 30, classes=5) == pytest.approx(8.0 / 5, rel=1e-5)
    assert solve_epsilon(lambda e: GRR(e, 10), 1.5, 30, per="report") == pytest.approx(1.5, rel=1e-5)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="'delta'"):
        device_spend(_cfg(_grr()), delta=2.0)
    with pytest.raises(ValueError, match="'per'"):
        solve_epsilon(lambda e: GRR(e, 10), 1.0, 3, per="day")
    with pytest.raises(ValueError, match="'target'"):
        solve_epsilon(lambda e: GRR(e, 10), 1e-9, 30)


def test_solve_epsilon_stays_where_the_mechanism_exists():
    """PEM's g = e^ε + 1 leaves its range for large ε: the solver counts that as over the budget."""
    from ldpsim.mechanisms import make

    eps = solve_epsilon(lambda e: make("pem", epsilon=e), 100.0, 1, per="report")
    assert 10 < eps < 50
    make("pem", epsilon=eps)
    with pytest.raises(ValueError):
        make("pem", epsilon=eps * 1.01)


def test_spend_summary_is_flat_and_per_kind():
    from ldpsim.evaluation.privacy.accountant import spend_summary

    sd = UseCase("emoji", "event", "sdgrr", (("epsilon", 1.0), ("domain_size", 10), ("high", (0, 1))))
    pm = UseCase("session_length", "reading", "pm", (("epsilon", 2.0),), value_range=(0.0, 300.0))
    s = spend_summary(_cfg(sd, pm, days=5))
    assert s["epsilon_device_sdldp"] == pytest.approx(5.0) and s["epsilon_device_ldp"] == pytest.approx(10.0)
    assert s["epsilon_device_ldp_at_delta"] <= 10.0 and "epsilon_device_uldp" not in s
