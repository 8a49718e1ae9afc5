"""Deployment scenarios: bad values are refused before the run; ``ldpsim run`` end to end on a tiny fleet."""

from __future__ import annotations

import json

import pytest

from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.scenarios.cli import main
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.scenarios.catalog import shipped

from tests.fleets import TINY, write_scenario as _write  # noqa: E402 - shared helpers


def test_default_scenario_loads():
    cfg, meta = load_deployment(shipped()["keyboard"])
    assert meta["name"] == "keyboard" and cfg.n_devices == 20_000 and cfg.n_days == 14
    assert [(u.name, u.mechanism) for u in cfg.use_cases] == [
        ("emoji", "cms"), ("words", "pem"), ("typing_speed", "sdpm"), ("session_length", "pm")]
    assert cfg.trend_item == 39 and cfg.trend_start_day == 7


def test_tiny_scenario_maps_low_range(tmp_path):
    cfg, _ = load_deployment(_write(tmp_path, TINY))
    speed = cfg.use_case("reading")
    assert dict(speed.params)["low"] == pytest.approx((-2 / 3, 0.0))
    assert dict(cfg.use_case("event").params)["domain_size"] == 12


@pytest.mark.parametrize("old, new, key", [
    ("devices = 150", "devices = 0", "deployment.devices"),
    ("[server]", "[server]\nservice_s_per_report = -1.0", "server.service_s_per_report"),
    ("daily_limit = 1", "daily_limit = 0", "use_case.emoji.daily_limit"),
    ("[use_case.emoji]", "[use_case.swipes]\nmechanism = \"grr\"\nepsilon = 1.0\n[use_case.emoji]",
     "use_case.swipes"),
    ("epsilon = 4.0", "epsilon = -4.0", "use_case.emoji.epsilon"),
    ("mechanism = \"grr\"", "mechanism = \"pm\"", "use_case.emoji"),
    ("rank = 9", "rank = 99", "trend.rank"),
    ("[server]", "[server]\ncapasity = 3", "server.capasity"),
    ("[server]", "[channel]\nloss = 1.5\n[server]", "channel.loss"),
])
def test_bad_values_are_refused(tmp_path, old, new, key):
    assert old in TINY
    with pytest.raises(ScenarioError) as err:
        load_deployment(_write(tmp_path, TINY.replace(old, new, 1)))
    assert err.value.key == key


def test_command_line_override_is_checked(tmp_path):
    with pytest.raises(ScenarioError, match="deployment.devices"):
        load_deployment(_write(tmp_path, TINY), devices=-5)


@pytest.mark.slow  # ~5 s: two runs with plots
def test_ldpsim_run_writes_a_run_folder(tmp_path, capsys):
    scenario = _write(tmp_path, TINY)
    out = tmp_path / "run"
    assert main(["run", str(scenario), "--out", str(out), "-q", "--workers", "2", "--figures", "all"]) == 0
    printed = capsys.readouterr().out
    assert "device-days/s" in printed and "adversary" in printed and "None" not in printed
    for name in ("config.json", "daily_estimates.parquet", "daily_estimates.csv", "pooled_estimates.csv",
                 "daily_reports.csv", "readings.csv", "top.csv", "uploads.csv", "summary.json", "summary.txt",
                 "report.md", "report.html", "plots/emoji_top20_pooled.png", "plots/emoji_daily_top5.png",
                 "plots/emoji_trend_rank.png", "plots/budget_by_day.png", "plots/captions.json", "store"):
        assert (out / name).exists(), name
    assert "token" in (out / "daily_estimates.csv").read_text(encoding="utf-8").splitlines()[0]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "# Deployment run" not in page and "<figcaption>Top-20 emoji" in page
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["workers"] == 2 and summary["upload_success"] > 0.9
    # rerunning into the same folder replaces the store instead of appending to it
    assert main(["run", str(scenario), "--out", str(out), "-q"]) == 0
    again = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert again["server_stored"] == summary["server_stored"]


def test_ldpsim_run_reports_bad_scenario(tmp_path, capsys):
    scenario = _write(tmp_path, TINY.replace("days = 2", "days = 0"))
    assert main(["run", str(scenario), "--out", str(tmp_path / "x"), "-q"]) == 2
    assert "deployment.days" in capsys.readouterr().err
