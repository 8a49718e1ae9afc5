"""ε per report, item and person (evaluation/privacy/levels.py, the accountant's epsilon_item, summary.json's
``person``; docs/math.md §8.7): every printed number equals an independent composition on a small grid —
basic composition by hand, and at δ the exact optimal composition of k ε-DP mechanisms (Kairouz, Oh,
Viswanath; ``rr_composition_delta`` with D = 2), which the accountant's PLD may exceed by at most its grid."""

from __future__ import annotations

import math

import pytest

from ldpsim.evaluation.privacy.accountant import device_spend, person_summary
from ldpsim.evaluation.privacy.composition import rr_composition_delta
from ldpsim.evaluation.privacy.levels import levels
from ldpsim.mechanisms.bounding import ContributionBound
from tests.fleets import ITEMS, tiny_config


def optimal_epsilon(eps: float, k: int, delta: float) -> float:
    """The smallest ε with the optimal k-fold composition's δ(ε) ≤ δ (bisection on the exact formula)."""
    low, high = 0.0, k * eps
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if rr_composition_delta(eps, k, mid, 2) > delta else (low, mid)
    return high


@pytest.mark.parametrize("eps, per_day, days, linf", [(0.5, 1, 4, None), (0.5, 3, 4, 1), (1.0, 2, 3, 2),
                                                      (0.25, 4, 5, 2)])
def test_levels_equal_independent_composition(eps, per_day, days, linf):
    g = levels(eps, per_day, days, ContributionBound(l0=per_day, linf=linf, sampler="events"), delta=1e-6)
    r_item = min(per_day, linf or per_day)
    assert (g.reports_item, g.reports_person) == (r_item * days, per_day * days)
    assert g.epsilon_item == pytest.approx(eps * r_item * days) and g.epsilon_person == pytest.approx(eps * per_day * days)
    for k, at in ((g.reports_item, g.epsilon_item_at_delta), (g.reports_person, g.epsilon_person_at_delta)):
        exact = optimal_epsilon(eps, k, 1e-6)
        assert exact - 1e-9 <= at <= exact + k * 1e-3 + 1e-9, (k, at, exact)


def test_an_events_bound_caps_the_reports_a_day():
    g = levels(1.0, 5, 2, ContributionBound(l0=2, sampler="events"))
    assert (g.reports_person, g.epsilon_person) == (4, 4.0)
    assert levels(1.0, 5, 2, ContributionBound(l0=2, linf=1, sampler="top")).reports_item == 2


def test_accountant_item_column_and_summary_person_key():
    """Fresh reports: an item may fill every report (the daily limit samples typed events), so epsilon_item
    is the device's spend; memoized GRR: one value's reports cost ε once; the summary's person key holds
    the three columns of every row."""
    import dataclasses
    from ldpsim.simulator.config import UseCase
    cfg = tiny_config(n_days=4)    # GRR emoji at ε = 2, two reports a day; PM typing speed, one a day
    spend = device_spend(cfg).table.set_index("use_case")
    assert spend.loc["emoji", "epsilon_item"] == pytest.approx(2.0 * 2 * 4)
    assert spend.loc["typing_speed", "epsilon_item"] == pytest.approx(1.0 * 4)
    assert (spend["epsilon_item"] <= spend["epsilon_device"] + 1e-12).all()
    memo = tiny_config(n_days=4, use_cases=(UseCase("emoji", "event", "grr",
                                                    (("epsilon", 1.0), ("domain_size", len(ITEMS))), 1,
                                                    memoize=True),))
    row = device_spend(memo).table.iloc[0]
    assert row["epsilon_item"] == pytest.approx(1.0) and math.isinf(row["epsilon_person"])
    assert row["epsilon_device"] == pytest.approx(4.0)
    person = person_summary(device_spend(cfg))
    assert person["emoji"] == {"epsilon_report": pytest.approx(2.0), "epsilon_item": pytest.approx(16.0),
                               "epsilon_person": pytest.approx(16.0)}
    assert person["total ε-LDP"]["epsilon_person"] == pytest.approx(16.0 + 4.0)
    assert dataclasses.is_dataclass(cfg)


def test_run_summary_prints_the_three_scopes_of_the_accountant():
    from ldpsim.evaluation.report.run_summary import render_text, scopes
    cfg = tiny_config(n_days=4)
    block, = scopes({}, cfg)
    t = block.table.set_index("use case")
    assert list(t.columns) == ["epsilon_report", "epsilon_item", "epsilon_person"]
    assert t.loc["emoji"].tolist() == ["2", "16", "16"] and t.loc["typing speed"].tolist() == ["1", "4", "4"]
    assert t.loc["all, ε-LDP", "epsilon_person"] == "20" and t.loc["all, ε-LDP", "epsilon_report"] == "—"
    assert any("epsilon_item" in line for line in render_text(block))
