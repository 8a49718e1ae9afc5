"""Figures that scale with the run: ``figures = auto | all | none`` (which runs draw them, and the line saying how
to draw them) and what ``ldpsim plot`` refuses on a folder it cannot draw a deployment run's figures into.
The end-to-end draw (a trial, then ``ldpsim plot``) is in test_trial_figures.py."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from types import SimpleNamespace

import pytest

import ldpsim
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.runfolder import RunFolder, RunFolderError, read_manifest
from ldpsim.scenarios.cli import main
from ldpsim.scenarios.studies.deployment.replot import plot_deployment
from ldpsim.scenarios.studies.deployment.run_figures import AUTO_FIGURES_DEVICE_DAYS, check_figures, choose_figures
from ldpsim.scenarios.studies.deployment.study import LAYOUT
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from tests.fleets import TINY


def _fleet(devices, days):
    return SimpleNamespace(n_devices=devices, n_days=days)


def test_auto_draws_the_default_run_and_not_a_trial():
    """The README's trial (2 000 × 4) skips its figures and says how to draw them; the shipped default
    (20 000 × 14) draws them; the threshold itself draws."""
    trial = choose_figures("auto", _fleet(2000, 4), "runs/keyboard-2000x4d-seed2026")
    assert not trial.draw and trial.reason == f"8,000 device-days < {AUTO_FIGURES_DEVICE_DAYS:,}"
    assert "`ldpsim plot runs/keyboard-2000x4d-seed2026`" in trial.note and trial.reason in trial.note
    assert choose_figures("auto", _fleet(20_000, 14), "x").draw
    assert choose_figures("auto", _fleet(AUTO_FIGURES_DEVICE_DAYS // 4, 4), "x").draw
    assert not choose_figures("auto", _fleet(AUTO_FIGURES_DEVICE_DAYS - 1, 1), "x").draw
    assert choose_figures("all", _fleet(1, 1), "x") == choose_figures("auto", _fleet(20_000, 14), "x")
    none = choose_figures("none", _fleet(20_000, 14), "my runs/a")
    assert not none.draw and none.reason == "figures = none" and "`ldpsim plot 'my runs/a'`" in none.note


@pytest.mark.parametrize("value", ["sometimes", "", "ALL", 1])  # (None: the scenario's choice)
def test_a_bad_figures_choice_is_refused_naming_the_option_the_choices_and_the_value(value, tmp_path):
    with pytest.raises(InputError) as raised:
        check_figures(value)
    assert str(raised.value) == f"figures must be one of auto, all, none; got {value!r}"
    with pytest.raises(InputError, match="figures must be one of"):
        ldpsim.run("keyboard", figures=value, out=tmp_path / "out")  # refused before anything is built
    assert not (tmp_path / "out").exists()


def test_a_bad_figures_choice_is_refused_in_the_scenario_and_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(TINY.replace("[deployment]", '[deployment]\nfigures = "sometimes"', 1), encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        load_deployment(path)
    assert raised.value.key == "deployment.figures" and "auto, all, none" in str(raised.value)
    assert "'sometimes'" in str(raised.value)
    path.write_text(TINY.replace("[deployment]", '[deployment]\nfigures = "none"', 1), encoding="utf-8")
    assert load_deployment(path)[1]["figures"] == "none"
    assert main(["run", str(path), "--figures", "sometimes", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "--figures" in err and "'sometimes'" in err and "'auto', 'all', 'none'" in err


# ---- ldpsim plot on folders it must refuse ----------------------------------------------------------------
def _finished(root, kind_layout=LAYOUT):
    """A finished run folder of ``kind_layout`` holding one file (the manifest lists it)."""
    with RunFolder.open(root, kind_layout, {"fingerprint": "f", "seed": 1}) as folder:
        folder.write_text("summary.txt", "a summary\n")
        folder.finalize()
    return root


def test_plot_refuses_a_folder_that_is_not_a_deployment_run(tmp_path, capsys):
    from ldpsim.runtime.runfolder import Layout
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("mine")
    with pytest.raises(RunFolderError, match="not the folder of a deployment run .*no manifest.json"):
        plot_deployment(plain)
    sweep = _finished(tmp_path / "sweep", Layout("sweep", ("summary.txt",)))
    with pytest.raises(RunFolderError, match="an ldpsim sweep folder"):
        plot_deployment(sweep)
    assert main(["plot", str(sweep), "--replace"]) == 2
    assert "--replace applies to a deployment run's folder" in capsys.readouterr().err
    assert main(["plot", str(plain)]) == 2 and "error:" in capsys.readouterr().err
    assert sorted(p.name for p in plain.iterdir()) == ["notes.txt"]


def test_plot_refuses_a_run_folder_held_by_a_running_run(tmp_path, capsys):
    out = _finished(tmp_path / "run")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock = {"pid": holder.pid, "host": socket.gethostname(), "command": "ldpsim run", "started": "now"}
        (out / ".lock").write_text(json.dumps(lock))
        assert main(["plot", str(out)]) == 2
        assert f"pid {holder.pid}" in capsys.readouterr().err
        assert not (out / "plots").exists() and json.loads((out / ".lock").read_text()) == lock
    finally:
        holder.kill()
        holder.wait()


def test_plot_refuses_a_run_that_did_not_finish_or_a_symbolic_link_for_its_figures(tmp_path, capsys):
    out = _finished(tmp_path / "run")
    manifest = read_manifest(out)
    (out / "manifest.json").write_text(json.dumps({**manifest, "status": "running"}))
    with pytest.raises(RunFolderError, match="incomplete"):
        plot_deployment(out)
    (out / "manifest.json").write_text(json.dumps(manifest))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "plots").symlink_to(elsewhere)
    assert main(["plot", str(out)]) == 2
    assert "symbolic link" in capsys.readouterr().err and list(elsewhere.iterdir()) == []
    (out / "plots").unlink()
    (out / "plots").mkdir()
    (out / "plots" / "budget_by_day.png").symlink_to(elsewhere / "mine.png")
    with pytest.raises(RunFolderError, match="budget_by_day.png is a symbolic link"):
        plot_deployment(out)
    assert list(elsewhere.iterdir()) == [] and not (out / ".lock").exists()
    assert main(["plot", str(out), "--mark", "k=1"]) == 2
    assert "--mark applies to a sweep's folder" in capsys.readouterr().err


def test_a_reading_use_case_keeps_its_empty_key_when_its_tables_are_read_back(tmp_path):
    """A numeric reading use case's key is "": read back from CSV as NaN, grouping by key left its figure out."""
    import pandas as pd

    from ldpsim.scenarios.studies.deployment.replot import read_tables
    cells = pd.DataFrame({"use_case": ["latency", "taps"], "key": ["", "e"], "low": [0.0, 0.0]})
    for name in ("numeric_cells", "numeric_metrics"):
        cells.to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "summary.json").write_text(json.dumps({"donating_devices": 7}))
    tables = read_tables(tmp_path)
    for name in ("numeric_cells", "numeric_metrics"):
        assert list(tables[name].groupby(["use_case", "key"]).groups) == [("latency", ""), ("taps", "e")], name
    assert tables["budget"].attrs["donating_devices"] == 7  # the budget figure's title
