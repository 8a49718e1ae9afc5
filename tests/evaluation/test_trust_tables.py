"""The trust-model tables a team reads: every row at the stated privacy (or flagged), units and the meaning
of NaN and inf beside the table, and secure aggregation's frequencies over the reports its estimate covers
(docs/math.md §9.6)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ldpsim.evaluation.privacy.trust_accounting import guarantees
from ldpsim.scenarios.studies.trust.trust_compare import ARRIVAL, comparison_model, compare_trust_models
from ldpsim.scenarios.studies.trust.trust_fleet import zipf_fleet
from ldpsim.scenarios.studies.scenario.trust_keys import configured_model
from ldpsim.evaluation.privacy.trust_tables import COLUMNS, EPSILON_SLACK, comparison_lines, scenario_lines
from ldpsim.scenarios.studies.scenario.schema import ScenarioError, load_toml
from ldpsim.scenarios.catalog import resolve


@pytest.mark.slow
def test_every_use_case_of_the_shipped_trust_scenario_is_at_its_stated_epsilon():
    """The shipped table promises ε = 2 per device over 30 days for every row (the sampled row was 32.9)."""
    path = resolve("trust_models")
    t = load_toml(path)["trust"]
    n, days, delta, d = t["devices"], t["days"], t["delta"], t["workload"]["domain_size"]
    stated = {name: table.get("epsilon_device") for name, table in t["use_case"].items()}
    assert set(stated.values()) == {2.0}, stated                # one privacy, stated by every use case
    for name, table in t["use_case"].items():
        model = configured_model(table, name, path, n, days, delta, d)
        run = {g.scope: g for g in guarantees(model, n, days, delta)}["run"]
        assert run.epsilon <= 2.0 * (1 + EPSILON_SLACK), name


@pytest.mark.slow
def test_sample_threshold_calibrates_its_threshold_to_epsilon_device(tmp_path):
    base = {"aggregation": "sample_threshold", "rate": 0.03}
    model = configured_model({**base, "epsilon_device": 2.0}, "uc", tmp_path, 50_000, 30, 1e-9, 2000)
    assert {g.scope: g for g in guarantees(model, 50_000, 30, 1e-9)}["run"].epsilon <= 2.0
    with pytest.raises(ScenarioError, match="lower the rate"):       # sampling alone spends more than ε
        configured_model({**base, "rate": 0.1, "epsilon_device": 2.0}, "uc", tmp_path, 50_000, 30, 1e-9, 2000)
    with pytest.raises(ScenarioError, match="not both"):
        configured_model({**base, "epsilon_device": 2.0, "threshold": 20}, "uc", tmp_path, 50_000, 30, 1e-9, 2000)


class _Run:
    def __init__(self, table):
        self.table, self.settings = table, {"devices": 50_000, "days": 30, "delta": 1e-9}


def _scenario_table():
    return pd.DataFrame({"use_case": ["local", "secagg", "sampled"], "aggregation": ["ldp", "secagg", "sample_threshold"],
                         "epsilon_target": [2.0, 2.0, math.nan], "epsilon_device": [2.0, 1.98, 32.9],
                         "epsilon_day": [0.07, 0.33, 0.83], "rmse": [6630.6, 151.2, 24.7],
                         "counted": [49_920, 45_081, 49_937], "if_misbehaving": [2.0, math.inf, math.inf],
                         "bytes_per_device": [5, 70_046, 4], "epsilon_report": [0.07, 0.33, 0.83],
                         "delta": [0.0, 1e-9, 1e-9], "devices": [50_000] * 3, "rejected": [0, 0, 0]})


@pytest.mark.parametrize("width", [80, 120, 300])
def test_scenario_table_has_a_title_units_flags_and_fits(width):
    lines = scenario_lines(_Run(_scenario_table()), width=width)
    assert lines[0].startswith("Trust models") and "ε = 2 per device over 30 days" in lines[0]
    assert all(len(line) <= width for line in lines[1:]), max(lines[1:], key=len)
    text = "\n".join(lines)
    assert "! sampled: ε per device over the run is 32.9" in text          # the row off the stated privacy
    assert "! local" not in text and "! secagg" not in text
    assert "rmse: root mean squared error" in text and "(reports" in text  # the unit of rmse
    assert "nan in epsilon_target" in text
    if width >= 120:
        assert "inf in if_misbehaving: no guarantee is left" in text


@pytest.mark.slow
def test_every_comparison_column_has_its_unit_stated():
    r = compare_trust_models("zipf", n=20_000, domain_size=50, epsilons=(2.0,), models=("secagg", "threshold"),
                             repeats=3, discovery=False, rng=1)
    assert set(r.table.columns) <= set(COLUMNS) | {"parameter"}
    lines = comparison_lines(r, width=100)
    assert lines[0].startswith("Trust models at equal ε per device over 30 days")
    assert all(len(line) <= 100 for line in lines[1:])
    text = "\n".join(lines)
    for unit in ("min_frequency: smallest frequency", "share of the counted reports", "rmse_frequency_theory"):
        assert unit in text
    wide = "\n".join(comparison_lines(r, width=10_000))
    assert "nan in mse_low: no interval" in wide and "mse_theory: exact mean squared error" in wide
    assert "(reports²)" in wide


@pytest.mark.slow
def test_secure_aggregation_frequencies_are_shares_of_the_reports_that_arrived():
    """The secure-aggregation estimate covers the ≈ ARRIVAL·n reports that arrived: its frequency RMSE is
    over those. Measured: R draws × D items of (estimate − arrived counts)/(arrived reports), whose mean
    square has relative sd √(2/(R·D)) about the theory (normal noise); |ratio − 1| ≤ 4.4 sd: false alarm
    ≈ 1e-5. Dividing by all n instead makes the theory 1/ARRIVAL² = 1.23 times too small (> 8 sd)."""
    n, d, repeats = 20_000, 100, 30
    r = compare_trust_models("zipf", n=n, domain_size=d, epsilons=(2.0,), models=("secagg",), repeats=1,
                             discovery=False, rng=3)
    row = r.table.iloc[0]
    assert row["reports_counted"] == pytest.approx(ARRIVAL * n)
    assert row["rmse_frequency_theory"] == pytest.approx(math.sqrt(row["mse_theory"]) / (ARRIVAL * n), rel=1e-12)
    fleet = zipf_fleet(n, d, 1.1, 30)
    model = comparison_model("secagg", 2.0, fleet, 1e-9)
    rng = np.random.default_rng(5)
    sq = []
    for _ in range(repeats):
        est, arrived = model.secure_sum().release(fleet.counts, rng, arrival_rate=ARRIVAL)
        sq.append(((est - arrived) / arrived.sum()) ** 2)
    ratio = float(np.mean(sq)) / row["rmse_frequency_theory"] ** 2
    assert abs(ratio - 1) <= 4.4 * math.sqrt(2 / (repeats * d)), ratio


SMALL = """[trust]
name = "small"
devices = 3000
days = 30

[trust.workload]
domain_size = 50

[trust.use_case.local]
aggregation = "ldp"
epsilon_device = 2.0

[trust.use_case.sampled]
aggregation = "sample_threshold"
rate = 0.1
threshold = 20
"""


@pytest.mark.slow
def test_trust_command_prints_a_titled_table_that_fits_and_flags_the_uncalibrated_row(tmp_path, monkeypatch, capsys):
    from ldpsim.scenarios.cli import main
    path = tmp_path / "small.toml"
    path.write_text(SMALL, encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "90")
    assert main(["trust", str(path), "--out", str(tmp_path / "out")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Trust models, one simulated day each: 3,000 devices")
    assert all(len(line) <= 90 for line in lines[1:]), max(lines[1:], key=len)
    text = "\n".join(lines)
    assert "! sampled: ε per device over the run is" in text and "! local" not in text
    assert "full table in" in text and "trust.csv" in text
    assert "epsilon_target" in pd.read_csv(tmp_path / "out" / "trust.csv").columns
