"""Regression check: shipped baselines pass, a changed random stream passes, a real regression fails.

The statistical tests compare independent runs at α = 0.001 family-wise (Bonferroni over the
compared rows, Welch t limits): a correct implementation fails them with probability ≤ 0.001; the
seeds are fixed, so a pass is reproducible.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ldpsim.scenarios.studies.sweep.runner as sweep
from ldpsim.scenarios.studies.sweep.regression import (compare, format_check, make_baseline, read_baseline,
                                                       write_baseline)
from ldpsim.scenarios.studies.scenario.grid import scenario_from_dict
from ldpsim.scenarios.studies.sweep.store import RunStore
from ldpsim.scenarios.cli import main
from ldpsim.simulator.population import items_for

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
BASELINES = sorted((SCENARIOS / "baselines").glob("*.json"))
ALPHA = 0.001

# Enough repeats and items that a 20% larger mechanism variance moves the MSE (over all D items)
# by ≈ 10 standard errors, while a run is still under a second.
POWER = {"scenario": {"name": "power", "seed": 11, "repeats": 30, "path": "direct", "top": 10},
         "workload": {"name": "harmonic", "n": 50_000, "domain_size": 500},
         "mechanism": [{"name": "grr"}, {"name": "sdgrr", "high_fraction": 0.1}],
         "grid": {"epsilon": [1.0, 4.0]},
         "metrics": {"names": ["expectation_bias", "variance", "mse"]}}


def _run(tmp_path, seed: int, name: str) -> dict:
    scenario = scenario_from_dict({**POWER, "scenario": {**POWER["scenario"], "seed": seed}})
    sweep.run_sweep(scenario, "", tmp_path / name, serial=True, progress=False)
    return make_baseline(scenario, RunStore(tmp_path / name).read("summary"))


@pytest.fixture(scope="module")
def power_baseline(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("baseline"), 11, "run")


def test_shipped_baselines_exist_for_smoke():
    assert SCENARIOS / "baselines" / "smoke.json" in BASELINES


@pytest.mark.parametrize("baseline", BASELINES, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [None, 7], ids=["same-seed", "other-seed"])
def test_shipped_baseline_passes(baseline, seed, capsys):
    args = ["check", str(SCENARIOS / f"{baseline.stem}.toml"), "--baseline", str(baseline), "--alpha", str(ALPHA)]
    code = main(args + ([] if seed is None else ["--seed", str(seed)]))
    out = capsys.readouterr().out
    assert code == 0, (f"{out}\nIf the change is intended (scenario or metrics changed), regenerate: ldpsim check "
                       f"scenarios/{baseline.stem}.toml --baseline scenarios/baselines/{baseline.name} --update-baseline")
    assert "PASS" in out and "Bonferroni" in out


def test_distribution_preserving_change_passes(tmp_path, power_baseline):
    result = compare(power_baseline, _run(tmp_path, 12, "other-seed"), ALPHA)
    assert result.n_compared == 12
    assert result.passed, format_check(result)
    assert (result.table["z"] > 0).all()  # the numbers did change


def test_larger_mechanism_variance_fails(tmp_path, power_baseline, monkeypatch):
    real = sweep.estimate_counts

    def noisier(mech, items, counts, seedseq, path):  # the mechanism's variance × 1.2, unbiased
        est = real(mech, items, counts, seedseq, path=path)
        sd = np.sqrt(0.2 * mech.variance(counts, items_for(mech, items)))
        return est + np.random.default_rng(seedseq.spawn(1)[0]).standard_normal(est.shape) * sd

    monkeypatch.setattr(sweep, "estimate_counts", noisier)
    result = compare(power_baseline, _run(tmp_path, 12, "noisier"), ALPHA)
    t = result.table
    assert not result.passed
    assert set(t.loc[t["verdict"] == "REGRESSION", "metric"]) == {"mse"}
    assert (t.loc[t["label"].str.startswith("grr") & (t["metric"] == "mse"), "verdict"] == "REGRESSION").all()
    assert "FAIL" in format_check(result)


def test_perturbed_baseline_fails(power_baseline):
    moved = json.loads(json.dumps(power_baseline))
    entry = next(e for e in moved["entries"] if e["metric"] == "mse")
    entry["mean"] *= 1.2
    t = compare(moved, power_baseline, ALPHA).table
    assert list(t.loc[t["verdict"] != "ok", "verdict"]) == ["REGRESSION"]
    assert compare(power_baseline, power_baseline, ALPHA).passed


def test_structural_changes_fail(power_baseline):
    fewer = {**power_baseline, "entries": power_baseline["entries"][1:]}
    assert compare(power_baseline, fewer).counts()["missing"] == 1
    assert compare(fewer, power_baseline).counts()["new"] == 1
    renamed = json.loads(json.dumps(power_baseline))
    renamed["entries"][0]["params"]["epsilon"] = 2.0
    counts = compare(power_baseline, renamed).counts()
    assert (counts["missing"], counts["new"], counts["REGRESSION"]) == (1, 1, 0)


def test_deterministic_rows_must_agree():
    def base(mean):
        return {"entries": [{"params": {"mechanism": "grr"}, "metric": "m", "mean": mean, "se": 0.0, "repeats": 10}]}

    assert compare(base(1.0), base(1.0 + 1e-12)).passed
    assert compare(base(1.0), base(1.001)).counts()["REGRESSION"] == 1


def test_baseline_round_trip(tmp_path, power_baseline):
    path = write_baseline(tmp_path / "b" / "power.json", power_baseline)
    assert read_baseline(path) == power_baseline
    assert power_baseline["fingerprint"] and power_baseline["ldpsim_version"]
    assert {"cell_id", "params", "metric", "mean", "se", "repeats"} <= set(power_baseline["entries"][0])


def test_derived_hash_seed_is_not_part_of_the_match():
    raw = {"scenario": {"name": "cms", "seed": 1, "repeats": 2}, "workload": {"name": "harmonic", "n": 100,
           "domain_size": 20}, "mechanism": [{"name": "cms", "epsilon": 2.0, "k": 4, "m": 16}]}
    from ldpsim.scenarios.studies.sweep.regression import cell_params

    a, b = (scenario_from_dict({**raw, "scenario": {**raw["scenario"], "seed": s}}).cells()[0] for s in (1, 2))
    assert a.params["seed"] != b.params["seed"]
    assert cell_params(a, keep_seed=False) == cell_params(b, keep_seed=False)
    assert cell_params(a, keep_seed=True) != cell_params(b, keep_seed=True)


def test_cli_exit_codes(tmp_path, capsys):
    smoke, shipped = str(SCENARIOS / "smoke.toml"), SCENARIOS / "baselines" / "smoke.json"
    assert main(["check", smoke, "--baseline", str(tmp_path / "none.json")]) == 2
    (tmp_path / "bad.json").write_text("{}")
    assert main(["check", smoke, "--baseline", str(tmp_path / "bad.json")]) == 2
    assert main(["check", str(tmp_path / "none.toml"), "--baseline", str(shipped)]) == 2
    assert main(["check", smoke, "--baseline", str(shipped), "--alpha", "2"]) == 2
    moved = read_baseline(shipped)
    moved["entries"] = moved["entries"][:-1]
    write_baseline(tmp_path / "moved.json", moved)
    assert main(["check", smoke, "--baseline", str(tmp_path / "moved.json")]) == 1
    assert "new" in capsys.readouterr().out
    assert main(["check", smoke, "--baseline", str(tmp_path / "fresh.json"), "--update-baseline",
                 "--out", str(tmp_path / "out")]) == 0
    fresh = compare(read_baseline(shipped), read_baseline(tmp_path / "fresh.json"))
    assert fresh.passed and (fresh.table["z"] == 0).all()  # same seed, same code: identical numbers
    assert main(["check", smoke, "--baseline", str(shipped), "--out", str(tmp_path / "out")]) == 2  # not empty
