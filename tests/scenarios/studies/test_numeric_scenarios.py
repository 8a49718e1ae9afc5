"""Numeric designs in scenario files: a deployment's ``[numeric.<name>]`` tables accept every design by name and
refuse unknown designs and keys naming the allowed ones; a sweep takes heat-map designs and their parameters
as axes, and its summary holds the evaluation's errors of the estimates it stores."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.distribution_metrics import heatmap_error
from ldpsim.evaluation.numeric_designs import MAP_METRICS, SIDE
from ldpsim.evaluation.numeric_use import design_keys, design_names
from ldpsim.scenarios.catalog import shipped
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.scenarios.studies.scenario.grid import scenario_from_dict
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.scenarios.studies.sweep.runner import run_cell
from tests.fleets import TINY, write_scenario


def _deployment(tmp_path, table: str):
    return load_deployment(write_scenario(tmp_path, TINY + "\n" + table))


@pytest.mark.parametrize("family, target", [("heatmap", 'keys = ["space", "e"]'), ("reading", 'reading = "key_latency"')])
def test_every_design_is_accepted_by_name(tmp_path, family, target):
    for name in design_names(family):
        extra = "delta = 1e-8\n" if "delta" in design_keys(name, family) else ""
        extra += "low = [-0.5, 0.5]\n" if name == "sdpm" else ""
        _, meta = _deployment(tmp_path, f'[numeric.u]\ndesign = "{name}"\n{target}\nepsilon = 1.5\n{extra}')
        (uc,) = meta["numeric"]
        assert uc.design.name == name and uc.design.epsilon == 1.5 and uc.design.family == family
        assert uc.keys == ((26, 4) if family == "heatmap" else ())
        assert uc.design.delta == (1e-8 if extra.startswith("delta") else 0.0)


@pytest.mark.parametrize("table, says", [
    ('design = "ldp-hdg"\nkeys = ["e"]\nepsilon = 1.0\ndelta = 1e-9', "unknown key; allowed keys: design, epsilon, keys"),
    ('design = "secagg-quadtree"\nkeys = ["e"]\nepsilon = 1.0\ndelt = 1e-9',
     "unknown key (did you mean 'delta'?); allowed keys: delta, design, epsilon, keys"),
    ('design = "sdpm"\nreading = "key_latency"\nepsilon = 1.0\nlow_range = [0.1, 0.2]', "allowed keys: design, epsilon, low, reading"),
    ('design = "ldp-hgd"\nkeys = ["e"]\nepsilon = 1.0', "must name a design of a heat map (keys = [...]): ldp-quadtree"),
    ('design = "ldp-hdg"\nreading = "key_latency"\nepsilon = 1.0', "must name a design of a reading (reading = ...)"),
    ('design = "ldp-hdg"\nkeys = ["spcae"]\nepsilon = 1.0', "Unknown key 'spcae' (did you mean 'space'?)"),
    ('design = "ldp-tree"\nreading = "latency"\nepsilon = 1.0', "must be one of typing_speed, key_latency"),
    ('design = "ldp-tree"\nreading = "key_latency"', "[numeric.u.epsilon] is required"),
    ('design = "ldp-tree"\nreading = "key_latency"\nepsilon = 0.0', "epsilon"),
    ('design = "sw"\nreading = "key_latency"\nepsilon = 1.0\nb = -1.0', "[numeric.u]"),
])
def test_bad_tables_are_refused_naming_the_key(tmp_path, table, says):
    with pytest.raises(ScenarioError) as err:
        _deployment(tmp_path, "[numeric.u]\n" + table + "\n")
    assert says in str(err.value)


@pytest.mark.slow
def test_shipped_scenarios_name_a_heat_map_and_a_latency_distribution(tmp_path):
    from ldpsim.scenarios.studies.deployment.study import plan_deployment
    plan = plan_deployment(shipped()["keyboard-taps"], out=tmp_path / "run")
    assert ("numeric use cases: taps (ldp-hdg, ε = 1 of one report: space, e); latency (ldp-sw-ems, ε = 1 of one "
            "report: key_latency)") in plan.describe()
    _, meta = load_deployment(shipped()["keyboard-taps"])
    designs = {uc.design.family: uc for uc in meta["numeric"]}
    assert designs["heatmap"].design.name == "ldp-hdg" and designs["reading"].reading == "key_latency"
    _, default = load_deployment(shipped()["keyboard"])
    assert default["numeric"] == ()  # the default run's cost is unchanged: it has none


SWEEP = {"scenario": {"name": "maps", "seed": 4, "repeats": 3},
         "workload": {"name": "key-taps", "n": 6000, "keys": ["space", "e"]},
         "mechanism": [{"name": "ldp-hdg"}, {"name": "secagg-quadtree", "delta": 1e-9}],
         "grid": {"epsilon": [1.0, 2.0]}}


def test_a_sweep_over_two_heat_map_designs():
    """Four cells (two designs × two ε), the same taps for every design (common random numbers), and each
    summary row the mean over repeats of heatmap_error on the stored true and estimated maps."""
    scenario = scenario_from_dict(SWEEP)
    cells = scenario.cells()
    assert [(c.mechanism, c.params["epsilon"]) for c in cells] == [
        ("ldp-hdg", 1.0), ("secagg-quadtree", 1.0), ("ldp-hdg", 2.0), ("secagg-quadtree", 2.0)]
    assert scenario.metrics == MAP_METRICS and {c.kind for c in cells} == {"numeric"}
    truths = []
    for cell in cells:
        estimates, summary = run_cell(cell, scenario.seed)
        labels = summary.iloc[0]
        assert labels["epsilon_report"] == cell.params["epsilon"]
        assert labels["guarantee"] == ("ε-LDP" if cell.mechanism == "ldp-hdg" else "(ε, δ)-DP, central")
        per_repeat = []
        for r, rows in estimates.groupby("repeat"):
            t = rows["true_count"].to_numpy().reshape(2, SIDE, SIDE)
            e = rows["estimate"].to_numpy().reshape(2, SIDE, SIDE)
            per_repeat.append(np.sqrt(heatmap_error(t, e).l2sq))
            truths.append((r, t.tobytes()))
        per_repeat = np.array(per_repeat)
        got = summary[summary["metric"] == "heatmap_l2"].set_index("item", drop=False)
        assert got.loc["space", "mean"] == pytest.approx(per_repeat[:, 0].mean(), rel=1e-12)
        assert got.loc["e", "mean"] == pytest.approx(per_repeat[:, 1].mean(), rel=1e-12)
        mean_row = got[got["rank"].isna()].iloc[0]
        assert mean_row["mean"] == pytest.approx(per_repeat.mean(), rel=1e-12)
        assert mean_row["se"] == pytest.approx(per_repeat.mean(axis=1).std(ddof=1) / math.sqrt(3), rel=1e-9)
    assert len(set(truths)) == 3  # one population per repeat, shared by every cell


@pytest.mark.parametrize("edit, says", [
    ({"mechanism": [{"name": "ldp-sw-ems"}]}, "unknown heatmap design 'ldp-sw-ems'"),
    ({"mechanism": [{"name": "ldp-hdg", "delta": 1e-9}]}, "ldp-hdg takes no parameter 'delta'; allowed: epsilon"),
    ({"grid": {"delta": [1e-9]}}, "takes no parameter 'delta'"),
    ({"workload": {"name": "key-taps", "n": 100, "keys": ["nope"]}}, "Unknown key 'nope'"),
    ({"metrics": {"names": ["wasserstein"]}}, "unknown metric 'wasserstein' for numeric mechanisms"),
])
def test_bad_numeric_sweeps_are_refused(edit, says):
    with pytest.raises(ScenarioError) as err:
        scenario_from_dict({**SWEEP, **edit})
    assert says in str(err.value)
