"""The limits of a deployment scenario and of a run's memory plan, at their boundary: just above is refused
with the key named, just below is accepted. Their measured basis: :mod:`ldpsim.scenarios.studies.bench.cost_calibration`
(docs/explanation/promises.md, "Limits and their basis")."""

from __future__ import annotations

import math
import re

import pytest

from ldpsim.evaluation import cost
from ldpsim.scenarios.studies.scenario import deployment_file as df
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.runtime.errors import InputError
from tests.fleets import TINY, write_scenario

#: (key in TINY's table, the line it replaces or the table it goes into, limit)
LIMITS = [
    ("fleet.speed_mean_wpm", df.WPM_MAX), ("fleet.speed_device_sd_wpm", df.WPM_MAX),
    ("fleet.speed_session_sd_wpm", df.WPM_MAX), ("fleet.activity_sigma", df.SIGMA_MAX),
    ("fleet.session_sigma", df.SIGMA_MAX), ("fleet.session_device_sigma", df.SIGMA_MAX),
    ("channel.latency_sigma", df.SIGMA_MAX), ("use_case.emoji.daily_limit", df.DAILY_LIMIT_MAX),
]


def _with(key: str, value) -> str:
    table, _, name = key.rpartition(".")
    text = TINY if f"[{table}]" in TINY else TINY + f"\n[{table}]\n"
    text = re.sub(rf"(?m)^{name} = .*\n", "", text)
    return text.replace(f"[{table}]\n", f"[{table}]\n{name} = {value!r}\n", 1)


@pytest.mark.parametrize("key, limit", LIMITS, ids=[k for k, _ in LIMITS])
def test_a_fleet_limit_refuses_just_above_and_accepts_just_below(tmp_path, key, limit):
    above = limit + 1 if isinstance(limit, int) else math.nextafter(limit, math.inf)
    if key.endswith("daily_limit"):  # keep ε × daily_limit under its own limit: ε = 0.01
        key_text = _with(key, above).replace("epsilon = 4.0", "epsilon = 0.01", 1)
        below_text = _with(key, limit).replace("epsilon = 4.0", "epsilon = 0.01", 1)
    else:
        key_text, below_text = _with(key, above), _with(key, limit)
    with pytest.raises(InputError, match=re.escape(key)):
        load_deployment(write_scenario(tmp_path, key_text, "above.toml"))
    load_deployment(write_scenario(tmp_path, below_text, "below.toml"))


def test_the_day_epsilon_limit_at_its_boundary(tmp_path):
    eps = df.DAY_EPSILON_MAX / 100  # within a report's ε range; daily_limit 100 reaches the limit exactly
    at = TINY.replace("epsilon = 4.0\ndaily_limit = 1", f"epsilon = {eps!r}\ndaily_limit = 100", 1)
    load_deployment(write_scenario(tmp_path, at, "at.toml"))
    above = at.replace(f"epsilon = {eps!r}", f"epsilon = {math.nextafter(eps, math.inf)!r}", 1)
    with pytest.raises(InputError, match=r"use_case\.emoji\.daily_limit.*× epsilon must be <= 690"):
        load_deployment(write_scenario(tmp_path, above, "above.toml"))


def test_the_day_epsilon_limit_keeps_the_central_epsilon_finite():
    """The measured basis: a shuffled batch of 10⁹ devices at the limit still has a finite central ε (the
    arithmetic breaks at about 699.5 there: cost_calibration.epsilon_break)."""
    from ldpsim.evaluation.privacy.amplification import numerical_epsilon
    assert math.isfinite(numerical_epsilon(df.DAY_EPSILON_MAX, 10**9, 1e-6, tol=1e-2))


def test_the_memory_plan_refuses_just_above_the_budget_and_accepts_just_below(tmp_path, monkeypatch):
    cfg, _ = load_deployment(write_scenario(tmp_path, TINY))
    need = cost.deployment_plan(cfg, 1).memory_bytes
    monkeypatch.setattr(cost, "memory_budget", lambda: need)
    cost.deployment_plan(cfg, 1)
    monkeypatch.setattr(cost, "memory_budget", lambda: need - 1)
    with pytest.raises(cost.CostError, match="devices"):
        cost.deployment_plan(cfg, 1)


@pytest.mark.slow
def test_the_limits_sit_below_where_the_arithmetic_breaks():
    """Rerun the arithmetic half of ``ldpsim bench --calibrate`` (seconds): each limit is below its break and
    each per-item constant covers its measurement with the stated margin."""
    from ldpsim.scenarios.studies.bench.cost_calibration import MARGIN, calibrate
    found = calibrate(memory=False)
    assert df.DAY_EPSILON_MAX < found["epsilon_break"]
    assert df.SIGMA_MAX < found["sigma_break"]
    assert all(found["wpm_finite"].values())
    assert cost.WORKLOAD_BYTES_PER_ITEM >= MARGIN * found["workload_bytes_per_item"] * 0.99


def test_an_observer_matrix_that_cannot_fit_is_refused_before_the_run(tmp_path, monkeypatch):
    cfg, _ = load_deployment(write_scenario(tmp_path, TINY))  # GRR over 12 items, 40 tapped devices
    monkeypatch.setattr(cost, "memory_budget", lambda: 8 * 12 * 12)
    with pytest.raises(cost.CostError, match=r"adversary_devices = 40.*12 × 12 transition matrix of use_case\.emoji"):
        cost._check_observer(cfg, 8 * 12 * 12 - 1, "tiny")
    cost._check_observer(cfg, 8 * 12 * 12, "tiny")
