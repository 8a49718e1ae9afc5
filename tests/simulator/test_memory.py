"""Memory per simulated day stops growing: device state is O(1) in the number of days."""

from __future__ import annotations

import numpy as np

from ldpsim.simulator.ledger import PrivacyLedger
from tests.fleets import tiny_config
from ldpsim.simulator.deployment import run


def test_bundle_table_does_not_grow_with_days(tmp_path):
    # 3× the days, the same fleet: the live bundle table (bookkeeping + report rows) stays the same size
    short = run(tiny_config(n_days=4, loss=0.05, p_online=0.9), tmp_path / "a")
    long = run(tiny_config(n_days=12, loss=0.05, p_online=0.9), tmp_path / "b")
    assert short.peak_state_bytes > 0
    assert long.peak_state_bytes <= 1.3 * short.peak_state_bytes
    # every bundle is still accounted for in the per-day tallies
    made = sum(r["bundles"] for r in long.records["bundles"])
    assert made == sum(r["bundles"] for r in long.records["bundles"] if r["status"] in
                       ("acked", "expired", "gave_up", "pending")) > 0


def test_ledger_state_is_per_device_not_per_day():
    a, b = PrivacyLedger(10, 3, 5.0, 50.0), PrivacyLedger(10, 300, 5.0, 50.0)
    per_device = lambda led: sum(v.nbytes for v in vars(led).values() if isinstance(v, np.ndarray) and v.shape == (10,))
    assert per_device(a) == per_device(b)
    assert all(v.shape != (10, 300) for v in vars(b).values() if isinstance(v, np.ndarray))


def test_ledger_tracks_daily_max_and_day_totals():
    led = PrivacyLedger(2, 3, budget_daily=2.0, budget_total=10.0)
    led.grant(0, 1.0, np.array([2, 1]))
    led.grant(1, 1.0, np.array([1, 0]))
    led.grant(2, 0.5, np.array([1, 3]))
    assert led.daily_max.tolist() == [2.0, 1.5]
    assert led.day_totals.tolist() == [3.0, 1.0, 2.0]
    assert led.spent.tolist() == [3.5, 2.5]


def test_ledger_counts_exhausted_budgets_per_day_like_the_full_matrix():
    """The per-day counts replace the devices × days matrix: the same numbers as
    tests/evaluation/test_deployment_metrics.py::test_budget_by_day_from_the_ledger computes from it."""
    from types import SimpleNamespace

    from ldpsim.evaluation.deployment.budget import budget_by_day
    from ldpsim.simulator.config import UseCase

    led = PrivacyLedger(3, 3, budget_daily=8.0, budget_total=16.0, thresholds=(4.0, 2.0, 1.0))
    for day, spend in enumerate(([7, 7, 0], [7, 0, 0], [2, 7, 0])):
        led.grant(day, 1.0, np.array(spend))
    led.close_day()
    ucs = (UseCase("emoji", "event", "grr", (("epsilon", 4.0), ("domain_size", 8)), 1),
           UseCase("typing_speed", "reading", "pm", (("epsilon", 2.0),), 1, (0.0, 120.0)),
           UseCase("session_length", "reading", "pm", (("epsilon", 1.0),), 1, (0.0, 300.0)))
    cfg = tiny_config(use_cases=ucs, n_days=3, budget_total=16.0, budget_daily=8.0)
    state = {"exhausted": led.exhausted, "full": led.full, "donors": int((led.spent > 0).sum())}
    b = budget_by_day(cfg, SimpleNamespace(ledger_budget=state, aggregates={}))
    assert b.attrs["donating_devices"] == 2
    assert b["exhausted_emoji"].tolist() == [0.0, 0.5, 1.0]
    assert b["exhausted_typing_speed"].tolist() == [0.0, 0.0, 0.5]
    assert b["exhausted_session_length"].tolist() == [0.0, 0.0, 0.5]
    assert b["daily_full"].tolist() == [0.0, 0.0, 0.0]
