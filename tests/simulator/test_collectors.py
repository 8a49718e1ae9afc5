"""The trust models' collectors over one simulated day (simulator/collectors.py) and the trust scenario file."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ldpsim.evaluation.privacy.trust_models import MODELS
from ldpsim.scenarios.studies.trust.trust_scenario import run_trust_scenario, write_trust_results
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum
from ldpsim.mechanisms.aggregation.two_server import TwoServer
from ldpsim.runtime.errors import InputError
from ldpsim.simulator.collectors import CollectorSetup, simulate_collection
from tests.stats import assert_variance

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "trust_models.toml"
ITEMS = np.random.default_rng(0).integers(0, 20, 6000)


def test_secagg_cohorts_respect_size_and_quorum_and_carry_their_noise():
    protocol = SecureSum(IntegerNoise("skellam", 40.0), min_cohort=500, min_arrival=0.8)
    errors, outcomes = [], set()
    for seed in range(30):
        got = simulate_collection(protocol, ITEMS, 20, CollectorSetup(loss=0.17), rng=seed)
        cohorts = pd.DataFrame([r for r in got.records if r["event"] == "cohort"])
        assert (cohorts["size"] >= 500).all()
        assert (cohorts["published"] == (cohorts["arrived"] >= np.ceil(0.8 * cohorts["size"]))).all()
        assert got.counters["counted"] == cohorts.loc[cohorts["published"], "arrived"].sum()
        outcomes |= set(cohorts["published"])
        published = cohorts[cohorts["published"]]
        var = float(sum(2 * 40.0 / protocol.quorum(int(s)) * a for s, a in zip(published["size"], published["arrived"])))
        errors.append((got.estimate - got.counted) / np.sqrt(var))
    assert outcomes == {True, False}                     # some cohorts reach the quorum, some abort
    assert_variance(np.array(errors), 0.0, 1.0, what="secagg collector noise")   # χ² with 30 days per item


def test_two_server_helper_crash_delays_jobs_but_loses_nothing():
    protocol = TwoServer(IntegerNoise("polya", 1.0), noise_by="leader")
    calm = simulate_collection(protocol, ITEMS, 20, CollectorSetup(invalid_share=0.02), rng=4)
    crash = simulate_collection(protocol, ITEMS, 20, CollectorSetup(invalid_share=0.02, crash=("helper", 23.0, 2.0)),
                                rng=4)
    assert crash.counters["counted"] == calm.counters["counted"]
    assert any(r["event"] == "job waits (collector down)" for r in crash.records)
    assert 0 < crash.counters["rejected"] < 0.04 * ITEMS.size


def test_leader_crash_turns_devices_away_until_it_returns():
    protocol = TwoServer(IntegerNoise("polya", 1.0), noise_by="leader")
    calm = simulate_collection(protocol, ITEMS, 20, CollectorSetup(loss=0.0), rng=5)
    crash = simulate_collection(protocol, ITEMS, 20, CollectorSetup(loss=0.0, crash=("leader", 22.0, 5.0)), rng=5)
    assert calm.counters["counted"] == ITEMS.size
    assert crash.counters["counted"] < calm.counters["counted"]


def test_bad_settings_are_refused():
    with pytest.raises(InputError, match="'crash'"):
        CollectorSetup(crash=("shuffler", 1.0, 1.0))
    with pytest.raises(InputError, match="'protocol'"):
        simulate_collection(3, ITEMS, 20)


@pytest.mark.slow
def test_the_shipped_trust_scenario_runs_every_model(tmp_path):
    run = run_trust_scenario(SCENARIO)
    t = run.table.set_index("use_case")
    assert set(t["aggregation"]) == set(MODELS)
    assert (t["epsilon_device"] <= 2.0 + 1e-9).all()             # every row at the stated ε, sampling too
    assert (t["epsilon_target"] == 2.0).all()
    assert t.loc["prio", "rejected"] > 0
    assert t.loc["prio", "rmse"] < t.loc["shuffled", "rmse"] < t.loc["local", "rmse"]
    out = write_trust_results(tmp_path / "r", run)
    assert (out / "trust.csv").is_file()
    with pytest.raises(InputError, match="--force"):
        write_trust_results(tmp_path / "r", run)
    write_trust_results(tmp_path / "r", run, force=True)


def test_scenario_keys_are_checked(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[trust]\n[trust.use_case.x]\naggregation = "mpc"\n')
    with pytest.raises(ScenarioError, match="aggregation"):
        run_trust_scenario(bad)
    bad.write_text('[trust]\n[trust.use_case.x]\naggregation = "ldp"\nnoize = "skellam"\n')
    with pytest.raises(ScenarioError, match="noize"):
        run_trust_scenario(bad)
    bad.write_text('[trust]\n[trust.use_case.x]\naggregation = "ldp"\nmin_cohort = 10\n')
    with pytest.raises(ScenarioError, match="not used by aggregation = 'ldp'"):
        run_trust_scenario(bad)


def test_command_line(tmp_path, capsys):
    from ldpsim.scenarios.cli import main
    small = tmp_path / "small.toml"
    small.write_text('[trust]\ndevices = 3000\ndays = 5\n[trust.workload]\ndomain_size = 20\n'
                     '[trust.use_case.a]\naggregation = "two_server"\nepsilon_device = 4.0\n')
    assert main(["trust", str(small), "--out", str(tmp_path / "out")]) == 0
    assert "two_server" in capsys.readouterr().out
    assert main(["trust", str(small), "--out", str(tmp_path / "out")]) == 2
    assert "--force" in capsys.readouterr().err


@pytest.mark.slow  # calibration and discovery at 7 models
def test_compare_command_runs_the_trust_models(tmp_path, capsys):
    from ldpsim.scenarios.cli import main
    assert main(["compare", "--trust", "--devices", "3000", "--days", "5", "--epsilon-device", "4",
                 "--out", str(tmp_path / "t")]) == 0
    out = capsys.readouterr().out
    assert "two_server" in out and "shuffle" in out
    assert (tmp_path / "t" / "plots" / "trust_models.png").is_file()
    assert main(["compare", "--trust", "--epsilon-report", "1", "--out", str(tmp_path / "u")]) == 2
