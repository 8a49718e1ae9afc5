"""Sweeps: a pure cell runner, common random numbers, resume without recomputation, serial ≡ Dask."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ldpsim.scenarios.studies.sweep import runner as sweep
from ldpsim.scenarios.studies.scenario.grid import load_scenario
from ldpsim.scenarios.studies.sweep.store import RunStore
from ldpsim.scenarios.cli import main

SMOKE = Path(__file__).parents[3] / "scenarios" / "smoke.toml"
TINY = """
[scenario]
name = "tiny"
seed = 11
repeats = 4
top = 3
store_top = 5

[workload]
name = "harmonic"
n = 3000
domain_size = 12

[[mechanism]]
name = "grr"
epsilon = 2.0

[[mechanism]]
name = "grr"
epsilon = 2.0

[grid]
"workload.name" = ["harmonic", "exponential"]
"""


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(textwrap.dedent(TINY), encoding="utf-8")
    return path


def no_time(frame):
    return frame.drop(columns="elapsed_s")


def test_run_cell_is_pure_and_tidy(tiny):
    scenario = load_scenario(tiny)
    cell = scenario.cells()[0]
    est, summ = sweep.run_cell(cell, scenario.seed)
    est2, summ2 = sweep.run_cell(cell, np.random.SeedSequence(scenario.seed))
    pd.testing.assert_frame_equal(no_time(est), no_time(est2))
    pd.testing.assert_frame_equal(no_time(summ), no_time(summ2))
    assert len(est) == 4 * 5  # repeats × store_top
    assert est.groupby("repeat")["true_rank"].apply(list).tolist() == [[1, 2, 3, 4, 5]] * 4
    # per-item rows for the top 3 plus one aggregate row, per metric
    assert summ.groupby("metric").size().to_dict() == {"expectation_bias": 4, "rank_deviation": 4,
                                                       "variance": 4, "mse": 1}
    for frame in (est, summ):
        assert (frame["cell_id"] == cell.id).all() and (frame["root_seed"] == 11).all()
        assert (frame["epsilon"] == 2.0).all() and (frame["workload"] == "harmonic").all()


def test_common_random_numbers_within_a_workload(tiny):
    scenario = load_scenario(tiny)
    cells = scenario.cells()
    assert [c.workload_index for c in cells] == [0, 0, 1, 1]
    est = [sweep.run_cell(c, scenario.seed)[0]["estimate"].to_numpy() for c in cells]
    np.testing.assert_array_equal(est[0], est[1])  # same workload setting and mechanism: same streams
    assert not np.array_equal(est[0][:5], est[2][:5])


def test_adversary_metric_is_the_papers_reference_value(tiny):
    scenario = load_scenario(tiny)
    cell = dataclasses.replace(scenario.cells()[0], metrics=("adversary_accuracy",))
    summary = sweep.run_cell(cell, scenario.seed)[1]
    e = np.exp(2.0)
    assert summary["mean"].item() == pytest.approx(e / (12 + e - 1))  # GRR: e^ε/(D+e^ε−1), docs/math.md §3


def test_interrupted_sweep_resumes_without_recomputing(tiny, tmp_path, monkeypatch):
    scenario, text = load_scenario(tiny), tiny.read_text()
    out = tmp_path / "run"
    real, calls = sweep.run_cell, []

    def interrupted(cell, seed):
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C during the third cell
        calls.append(cell.id)
        return real(cell, seed)

    monkeypatch.setattr(sweep, "run_cell", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sweep.run_sweep(scenario, text, out, serial=True, progress=False)
    store = RunStore(out)
    assert store.finished() == set(calls)  # finished cells kept, nothing half-written
    mtimes = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}

    calls.clear()
    monkeypatch.setattr(sweep, "run_cell", lambda cell, seed: calls.append(cell.id) or real(cell, seed))
    report = sweep.run_sweep(scenario, text, out, serial=True, progress=False)
    assert (report.n_skipped, report.n_run) == (2, 2) and len(calls) == 2
    assert all(p.stat().st_mtime_ns == t for p, t in mtimes.items())  # finished cells not rewritten
    assert store.finished() == {c.id for c in scenario.cells()}

    fresh = tmp_path / "fresh"
    sweep.run_sweep(scenario, text, fresh, serial=True, progress=False)
    pd.testing.assert_frame_equal(no_time(store.read()), no_time(RunStore(fresh).read()))


def test_cli_refuses_changed_scenario_unless_forced(tiny, tmp_path, capsys):
    out = str(tmp_path / "run")
    assert main(["sweep", str(tiny), "--out", out, "--workers", "1", "-q"]) == 0
    assert main(["sweep", str(tiny), "--out", out, "--workers", "1", "-q", "--resume"]) == 0
    assert "all 4 cells already done" in capsys.readouterr().out
    tiny.write_text(tiny.read_text().replace("repeats = 4", "repeats = 5"))
    assert main(["sweep", str(tiny), "--out", out, "--workers", "1", "-q"]) == 2
    assert "different scenario" in capsys.readouterr().err
    assert main(["sweep", str(tiny), "--out", out, "--workers", "1", "-q", "--force"]) == 0
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2


@pytest.mark.slow  # ~10 s: starts a 2-process LocalCluster
def test_serial_equals_dask_local_cluster(tmp_path):
    scenario, text = load_scenario(SMOKE), SMOKE.read_text()
    serial = sweep.run_sweep(scenario, text, tmp_path / "serial", serial=True, progress=False)
    parallel = sweep.run_sweep(scenario, text, tmp_path / "dask", n_workers=2, progress=False)
    assert parallel.n_workers == 2 and serial.n_run == parallel.n_run == len(scenario.cells())
    for table in ("summary", "estimates"):
        pd.testing.assert_frame_equal(no_time(RunStore(tmp_path / "serial").read(table)),
                                      no_time(RunStore(tmp_path / "dask").read(table)))
