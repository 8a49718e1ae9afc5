"""The central ε of a deployment run: per window, per partition, per day and over the run."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from ldpsim.evaluation.privacy.amplification import numerical_epsilon
from ldpsim.evaluation.privacy.shuffle_ledger import central_summary, format_central
from ldpsim.scenarios.cli import main
from ldpsim.simulator.config import UseCase
from tests.fleets import TINY


def _fake_run(flushes, limit=1):
    ucs = (UseCase("emoji", "event", "grr", (("epsilon", 2.0), ("domain_size", 10)), daily_limit=limit),)
    return SimpleNamespace(use_cases=ucs), SimpleNamespace(records={"flushes": flushes})


def test_partitions_take_their_worst_and_their_median_window():
    flushes = [{"t_s": 1.0, "use_case": "emoji", "day": 0, "reports": 20_000},
               {"t_s": 2.0, "use_case": "emoji", "day": 0, "reports": 3},       # a straggler window
               {"t_s": 1.0, "use_case": "emoji", "day": 1, "reports": 50_000}]
    cfg, result = _fake_run(flushes)
    windows, days, s = central_summary(cfg, result, delta=1e-6)
    delta_p = 1e-6 / 4  # two partitions
    assert s["central_delta_per_partition"] == pytest.approx(delta_p)
    assert windows["epsilon_central"].tolist()[0] == pytest.approx(numerical_epsilon(2.0, 20_000, delta_p), abs=2e-4)
    assert windows["epsilon_central"].tolist()[1] == 2.0  # 3 reports: nothing to hide among
    day0 = days.set_index("day").loc[0]
    assert day0["epsilon_central_worst"] == pytest.approx(2.0, abs=1e-4)
    assert day0["epsilon_central_median"] < 0.3
    assert s["central_reports_unamplified"] == pytest.approx(3 / 70_003)
    assert s["central_epsilon_device_median"] < s["central_epsilon_device_worst"] <= 4.0
    assert "emoji 2→" in format_central(s)[0]


def test_daily_limit_counts_devices_not_reports():
    cfg, result = _fake_run([{"t_s": 1.0, "use_case": "emoji", "day": 0, "reports": 30_000}], limit=3)
    windows, _, _ = central_summary(cfg, result, delta=1e-6)
    assert windows["n"].tolist() == [10_000] and windows["epsilon_report"].tolist() == [6.0]


@pytest.mark.slow
def test_ldpsim_run_prints_and_writes_the_central_epsilon(tmp_path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text(TINY.replace("devices = 150", "devices = 400"), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", str(scenario), "--out", str(out), "-q", "--figures", "all"]) == 0
    printed = capsys.readouterr().out
    assert "central ε" in printed and "Feldman" in printed
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert 0 < summary["central_epsilon_device_median"] <= summary["local_epsilon_device_all_partitions"]
    for name in ("central_windows.csv", "central_days.csv", "plots/central_epsilon.png"):
        assert (out / name).exists(), name
    assert "central_epsilon" in (out / "report.md").read_text(encoding="utf-8")
