"""A deployment's use case under a trust model (aggregation = ...): scenario keys, estimates against their exact
theory, guarantees in the summary and report page, dry run, workers (evaluation/deployment/trust_estimates.py)."""

import numpy as np
import pandas as pd
import pytest

from ldpsim.scenarios.studies.deployment.study import plan_deployment, run_deployment
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from tests.fleets import TINY
from tests.stats import assert_variance

SECAGG = """[use_case.emoji]
aggregation = "secagg"
epsilon_device = 3.0
noise = "skellam"
min_cohort = 100
"""
TWO_SERVER = """[use_case.emoji]
aggregation = "two_server"
epsilon_device = 3.0
noise = "discrete_gaussian"
noise_by = "both"

[collectors]
invalid_share = 0.02
crash = { collector = "helper", hour = 47.0, hours = 14.0 }
"""


def scenario(tmp_path, emoji: str, devices: int = 1500, days: int = 4):
    """TINY with its [use_case.emoji] table replaced by ``emoji`` (and more devices and days)."""
    head, rest = TINY.split("[use_case.emoji]")
    rest = rest[rest.index("[use_case.typing_speed]"):]
    path = tmp_path / "trust.toml"
    path.write_text((head + emoji + "\n" + rest).replace("devices = 150", f"devices = {devices}")
                    .replace("days = 2", f"days = {days}"))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("emoji", [SECAGG, TWO_SERVER], ids=["secagg", "two_server"])
def test_daily_estimates_match_their_exact_theory_and_the_guarantee_is_stated(tmp_path, emoji):
    study = run_deployment(scenario(tmp_path, emoji), out=tmp_path / "run")
    daily, s = study.tables["daily"], study.summary
    assert daily["day"].nunique() >= 4
    # (estimate − target)/sd over every night and item, i.i.d. N(0, 1) when the released noise is the theory's
    # (normal to well within the test's power at these noise scales); one χ² at false-alarm 1e-4
    z = ((daily["estimate"] - daily["true_donated"]) / daily["sd"]).to_numpy()[:, None]
    assert_variance(z, 0.0, 1.0, what="daily release error ÷ theory")
    assert (daily["bias"] == 0).all()
    g = study.tables["trust"].set_index("scope")
    assert g.loc["run", "epsilon"] <= 3.0 and g.loc["run", "delta"] == 1e-9
    assert g.loc["report", "epsilon"] <= g.loc["day", "epsilon"] <= g.loc["run", "epsilon"]
    assert s["trust_epsilon_misbehaving"] == float("inf") and "collude" in s["trust_if_misbehaving"]
    assert s["trust_counted"] == int(study.tables["pooled"]["reports"].iloc[0])
    text = (study.out / "summary.txt").read_text()
    assert f"{s['aggregation']}: the device's guarantee" in text and "one device over the run (4 days)" in text
    assert f"Trust model ({s['aggregation']})" in (study.out / "report.html").read_text()
    assert (study.out / "trust_guarantees.csv").is_file()
    assert set(pd.read_csv(study.out / "collectors.csv")["event"]) >= ({"cohort"} if "secagg" in emoji else {"job"})
    if "two_server" in emoji:
        assert s["trust_rejected"] > 0 and s["trust_collector_events"] > 0


def test_the_ldp_default_is_unchanged(tmp_path):
    cfg, _ = load_deployment(scenario(tmp_path, '[use_case.emoji]\nmechanism = "grr"\nepsilon = 4.0\n'))
    assert cfg.use_case("event").aggregation == "ldp" and cfg.collectors == ()
    cfg, _ = load_deployment(scenario(tmp_path, '[use_case.emoji]\naggregation = "shuffle"\nmechanism = "grr"\n'
                                                'epsilon = 4.0\n'))
    assert cfg.use_case("event").aggregation == "shuffle" and not cfg.use_case("event").collected


@pytest.mark.parametrize("emoji, key, words", [
    ('aggregation = "mpc"', "use_case.emoji.aggregation", "must be one of ldp, shuffle, secagg"),
    ('aggregation = "secagg"\nnoise = "gaussian"', "use_case.emoji.noise", "skellam"),
    ('aggregation = "secagg"\nmin_cohort = -5', "use_case.emoji.min_cohort", "must be > 0"),
    ('aggregation = "secagg"\nmin_arrival = 1.5', "use_case.emoji.min_arrival", "(0, 1]"),
    ('aggregation = "secagg"\nmechanism = "grr"', "use_case.emoji", "mechanism"),
    ('aggregation = "secagg"\nnoise_by = "leader"', "use_case.emoji.noise_by", "not used by aggregation = 'secagg'"),
    ('aggregation = "two_server"\nnoise_by = "all"', "use_case.emoji.noise_by", "leader, both"),
    ('aggregation = "secagg"\ndelta = 2.0', "use_case.emoji.delta", "(0, 0.001]"),
    ('aggregation = "secagg"\ndelta = 0.5', "use_case.emoji.delta", "(0, 0.001]"),
    ('aggregation = "sample_threshold"\nrate = 0.2\nthreshold = 5', "use_case.emoji", "no finite ε per device-day"),
    ('aggregation = "secagg"\n[collectors]\ncrash = { collector = "shuffler" }', "collectors.crash.collector",
     "leader, helper"),
    ('aggregation = "secagg"\n[collectors]\nround_z = 3', "collectors.round_z", "round_s"),
])
def test_bad_trust_keys_are_refused_naming_key_allowed_and_value(tmp_path, emoji, key, words):
    with pytest.raises(ScenarioError) as err:
        load_deployment(scenario(tmp_path, f"[use_case.emoji]\n{emoji}\n"))
    assert key in str(err.value) and words in str(err.value)


def test_a_reading_cannot_be_collected(tmp_path):
    path = scenario(tmp_path, '[use_case.emoji]\nmechanism = "grr"\nepsilon = 4.0\n')
    path.write_text(path.read_text().replace('mechanism = "sdpm"', 'aggregation = "secagg"\nmechanism = "sdpm"'))
    with pytest.raises(ScenarioError, match=r"use_case.typing_speed.aggregation.*\[use_case.emoji\]"):
        load_deployment(path)


@pytest.mark.slow
def test_dry_run_plans_a_trust_deployment(tmp_path, capsys):
    from ldpsim.scenarios.cli import main
    plan = plan_deployment(scenario(tmp_path, SECAGG), out=tmp_path / "p")
    assert plan.config.use_case("event").collected
    assert main(["run", str(scenario(tmp_path, SECAGG)), "--dry-run", "--out", str(tmp_path / "p")]) == 0
    assert "dry run" in capsys.readouterr().out
    assert not (tmp_path / "p").exists()


@pytest.mark.slow
def test_two_workers_reproduce_the_serial_run(tmp_path):
    path = scenario(tmp_path, TWO_SERVER, devices=1500, days=3)
    serial = run_deployment(path, out=tmp_path / "one", workers=1)
    parallel = run_deployment(path, out=tmp_path / "two", workers=2)
    pd.testing.assert_frame_equal(serial.tables["daily"], parallel.tables["daily"])
    assert serial.summary["trust_counted"] == parallel.summary["trust_counted"]


@pytest.mark.slow
def test_the_shipped_trust_deployment_runs(tmp_path, capsys):
    from ldpsim.scenarios.cli import main
    assert main(["run", "keyboard_trust", "--devices", "2000", "--days", "3", "--out", str(tmp_path / "k")]) == 0
    out = capsys.readouterr().out
    assert "secagg: the device's guarantee" in out and "the secure-aggregation protocol" in out


@pytest.mark.parametrize("emoji", [
    pytest.param('aggregation = "threshold"\nepsilon_device = 3.0\nnoise = "discrete_gaussian"', id="threshold",
                 marks=pytest.mark.slow),
    pytest.param('aggregation = "sample_threshold"\nrate = 0.1\nthreshold = 20', id="sample_threshold"),
    pytest.param('aggregation = "tee"\nepsilon_device = 3.0\ntee_noise = "laplace"', id="tee", marks=pytest.mark.slow),
])
def test_every_collected_model_runs_over_the_nights_with_its_theory(tmp_path, emoji):
    from ldpsim.evaluation.deployment.trust_estimates import collectors_of, trust_daily, trust_pooled
    from ldpsim.simulator.deployment import run
    cfg, _ = load_deployment(scenario(tmp_path, f"[use_case.emoji]\n{emoji}\n", devices=800, days=3))
    result = run(cfg, tmp_path / "run", collectors=collectors_of(cfg))
    daily, pooled = trust_daily(cfg, result), trust_pooled(cfg, result)
    assert daily["day"].nunique() >= 3 and np.isfinite(daily["sd"]).all() and (daily["sd"] >= 0).all()
    assert int(pooled["reports"].iloc[0]) == result.collections["emoji"].counters["counted"] > 0
    thresholded = "threshold" in emoji or "tee" in emoji
    assert (pooled["bias"] != 0).any() == thresholded     # suppression below τ biases small counts only
