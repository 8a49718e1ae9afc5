"""Plots are drawn from stored results only: every expected file exists and is non-empty."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ldpsim.evaluation.report.plots import km_heatmaps
from ldpsim.scenarios.studies.scenario.grid import load_scenario
from ldpsim.scenarios.studies.sweep.runner import run_sweep
from ldpsim.scenarios.cli import main

TINY = """
[scenario]
name = "tiny"
seed = 3
repeats = 3
top = 4

[workload]
name = "harmonic"
n = 2000
domain_size = 10

[[mechanism]]
name = "grr"

[grid]
epsilon = [1.0, 4.0]
"workload.name" = ["harmonic", "even"]

[metrics]
names = ["rank_deviation", "mse", "adversary_accuracy"]
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plots")
    path = tmp / "tiny.toml"
    path.write_text(textwrap.dedent(TINY), encoding="utf-8")
    run_sweep(load_scenario(path), path.read_text(), tmp / "run", serial=True, progress=False)
    return tmp / "run"


@pytest.mark.slow
def test_plot_command_writes_png_and_svg(run_dir, capsys):
    assert main(["plot", str(run_dir)]) == 0
    written = capsys.readouterr().out.split()
    names = {p.rsplit("/", 1)[-1] for p in written}
    for stem in ("rank_deviation_vs_epsilon", "mse_vs_epsilon", "adversary_accuracy_vs_epsilon",
                 "by_rank_rank_deviation_workload_harmonic",
                 "by_rank_rank_deviation_workload_even"):
        assert {f"{stem}.png", f"{stem}.svg"} <= names
    assert sum(n.startswith("top_items_grr_eps") for n in names) == 4  # one cell per workload, two formats
    assert "report.html" in names  # the run's report page, rebuilt with the figures
    assert all(Path(p).stat().st_size > 1000 for p in written)


def test_heatmap_marks_the_chosen_cell(tmp_path):
    ks, ms = [16, 64, 256], [32, 128]
    grid = pd.DataFrame([(k, m) for k in ks for m in ms], columns=["k", "m"])
    summary = pd.concat([grid.assign(metric=name, mean=np.arange(1.0, 7.0), se=0.1, rank=np.nan, workload="harmonic")
                         for name in ("rank_deviation", "variance")], ignore_index=True)
    written = km_heatmaps(summary, tmp_path, {"k": 64, "m": 32})
    assert sorted(p.name for p in written) == ["heatmap_rank_deviation_all.png", "heatmap_rank_deviation_all.svg",
                                               "heatmap_variance_all.png", "heatmap_variance_all.svg"]
    assert "#ff0000" in (tmp_path / "heatmap_variance_all.svg").read_text()  # the red outline of the mark
    assert all(p.stat().st_size > 1000 for p in written)


def test_empty_run_and_bad_mark_are_errors(tmp_path, run_dir, capsys):
    assert main(["plot", str(tmp_path)]) == 2
    assert "no such sweep run folder" in capsys.readouterr().err  # an empty folder is no run folder
    assert main(["plot", str(run_dir), "--mark", "epsilon4"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


@pytest.mark.slow
def test_top_item_bars_use_the_theory_and_captions_follow_reading_order(run_dir, capsys):
    """GRR's variance of an item depends on n and its own count only, so the bars' interval is the
    theory's even though the run stores only the top 4 of 10 items."""
    import json

    from ldpsim.evaluation.report.plots import _theory_sd
    from ldpsim.scenarios.studies.sweep.sweep_report import _cells
    from ldpsim.scenarios.studies.sweep.store import RunStore
    from ldpsim.evaluation.workloads.make import make_workload
    from ldpsim.mechanisms.frequency.grr import GRR

    store = RunStore(run_dir)
    estimates = store.read("estimates")
    cells = _cells(store)
    row = estimates[(estimates["mechanism"] == "grr") & (estimates["workload"] == "harmonic")]
    cell_id = row["cell_id"].iloc[0]
    rows = estimates[estimates["cell_id"] == cell_id]
    assert rows["item"].nunique() < 10
    sd, items = _theory_sd(cells, cell_id, rows)
    counts = make_workload("harmonic", 2000, domain_size=10).counts
    eps = float(rows["epsilon"].iloc[0])
    np.testing.assert_allclose(sd, np.sqrt(GRR(epsilon=eps, domain_size=10).variance(counts))[items.astype(int)])
    assert main(["plot", str(run_dir)]) == 0
    capsys.readouterr()
    names = list(json.loads((run_dir / "plots" / "captions.json").read_text(encoding="utf-8")))
    assert names[0].endswith("_vs_epsilon.png") and names[-1].startswith("top_items_grr_eps")


SWEEPS = [name for name, kind, _ in __import__("ldpsim.scenarios.catalog", fromlist=["listing"]).listing()
          if kind == "sweep"]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "discovery" else n for n in SWEEPS])
def test_one_epsilon_axis_holds_one_guarantee_kind(name):
    """For every shipped sweep scenario, each panel of an ε plot holds one guarantee kind, and each
    series sits at its mechanism's ε of one report (docs/math.md §8.1): never ε-SDLDP beside ε-LDP,
    never RAPPOR's ε_∞ beside another mechanism's per-report ε."""
    from ldpsim.evaluation.report.plots import epsilon_panels
    from ldpsim.scenarios.catalog import shipped

    cells = load_scenario(shipped()[name]).cells()
    rows = pd.DataFrame([{**c.labels(), "metric": "m", "rank": np.nan, "mean": 1.0, "se": 0.0} for c in cells])
    x, panels = epsilon_panels(rows)
    assert x == "epsilon_report"
    kinds = {c.guarantee.label for c in cells}
    assert [k for k, _ in panels] == sorted(kinds)
    by_id = {c.id: c for c in cells}
    for kind, panel in panels:
        assert panel["guarantee"].nunique() == 1
        for cid, value in zip(panel["cell_id"], panel[x]):
            g = by_id[cid].guarantee
            assert g.label == kind and value == g.epsilon_report


def test_rappor_is_drawn_at_the_epsilon_of_one_report(tmp_path):
    """A RAPPOR and a GRR sweep: RAPPOR's points sit at ε₁, below its parameter ε_∞."""
    from ldpsim.evaluation.report.plots import epsilon_panels
    from ldpsim.scenarios.studies.scenario.grid import scenario_from_dict

    sc = scenario_from_dict({"scenario": {"name": "r", "seed": 1, "repeats": 2, "top": 3},
                             "workload": {"name": "words", "n": 1000, "top": 20},
                             "mechanism": [{"name": "rappor", "num_bits": 16, "cohorts": 2}, {"name": "olh"}],
                             "grid": {"epsilon": [2.0, 4.0]}})
    rows = pd.DataFrame([c.labels() for c in sc.cells()])
    x, panels = epsilon_panels(rows)
    rappor = panels[0][1][panels[0][1]["mechanism"] == "rappor"]
    assert (rappor[x] < rappor["epsilon"]).all()
