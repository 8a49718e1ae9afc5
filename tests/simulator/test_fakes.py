"""Fake devices as a fleet component: their reports reach the aggregates exactly; the gate's defenses."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.poisoning.deployment_attack import fake_sweep, mga_reports
from ldpsim.evaluation.scenario.deployment_file import load_deployment
from ldpsim.simulator.deployment import run
from ldpsim.simulator.fakes import FakeFleet
from tests.simulator.test_scenario import TINY


@pytest.fixture(scope="module")
def tiny_cfg(tmp_path_factory):
    path = tmp_path_factory.mktemp("fakes") / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    return load_deployment(path)[0]


def test_fake_reports_add_exactly_to_the_daily_aggregates(tiny_cfg, tmp_path):
    base = run(tiny_cfg, tmp_path / "a")
    fleet = FakeFleet(7, 11, mga_reports, start_day=1, reports_per_day=2)
    attacked = run(tiny_cfg, tmp_path / "b", components=(fleet.component,))
    for day in range(tiny_cfg.n_days):
        a, b = base.aggregates[("emoji", day)], attacked.aggregates[("emoji", day)]
        extra = 14 if day >= 1 else 0  # GRR's MGA report is the target itself
        assert b.n == a.n + extra and b.data[11] == a.data[11] + extra
        assert np.array_equal(np.delete(b.data, 11), np.delete(a.data, 11))


def test_gate_refuses_unattested_and_rate_limited_fakes():
    assert FakeFleet(100, 0, mga_reports, attested=0.3).accepted_per_day() == 30
    assert FakeFleet(100, 0, mga_reports, identities=4, rate_limit=5).accepted_per_day() == 20
    assert FakeFleet(100, 0, mga_reports, attested=0.0).accepted_per_day() == 0
    with pytest.raises(ValueError, match="'attested'"):
        FakeFleet(1, 0, mga_reports, attested=1.5)


def test_enough_fakes_put_the_target_into_the_top_10(tiny_cfg):
    table = fake_sweep(tiny_cfg, 10, fakes=(0, 40), epsilons=(4.0,), defenses=("none", "attestation 50%"))
    base = table[table["fakes"] == 0].iloc[0]
    attacked = table[(table["fakes"] == 40) & (table["defense"] == "none")].iloc[0]
    assert attacked["days_in_top"] == tiny_cfg.n_days and attacked["estimated_share"] > base["estimated_share"]
    half = table[table["defense"] == "attestation 50%"].iloc[0]
    assert half["fakes_accepted_per_day"] == 20
    assert base["estimated_share"] < half["estimated_share"] < attacked["estimated_share"]


def test_deployment_share_matches_the_closed_form(tiny_cfg, tmp_path):
    """GRR's MGA reports are deterministic, so the daily estimated share is the genuine estimate plus m·c
    over N: its mean over days matches the closed form within z = 4 sd of the genuine estimates' noise
    (the oracle's theoretical sd given each day's donated counts, ``sd``)."""
    from ldpsim.evaluation.deployment_metrics import daily_estimates
    from ldpsim.evaluation.poisoning.deployment_attack import target_ranks
    fleet = FakeFleet(25, 10, mga_reports)
    result = run(tiny_cfg, tmp_path, components=(fleet.component,))
    got = target_ranks(tiny_cfg, result, 10, 10, fleet.accepted_per_day(), fleet.start_day)
    daily = daily_estimates(tiny_cfg, result)
    var = daily.loc[daily["item"] == 10, "sd"].to_numpy() ** 2
    sd = np.sqrt(var.sum()) / var.size
    assert abs(got["estimated_share"] - got["closed_form_share"]) <= 4 * sd
    assert got["closed_form_share"] > 3 * got["true_share"]
