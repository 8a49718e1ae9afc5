"""Scenario files: grid expansion, stable cell ids, seeds by index, and one test per error class."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.scenarios.studies.scenario.grid import build_workload, child_seed, load_scenario

BASE = """
[scenario]
name = "t"
seed = 7
repeats = 3
top = 5

[workload]
name = "harmonic"
n = 2000
domain_size = 20

[[mechanism]]
name = "grr"
epsilon = 1.0

[[mechanism]]
name = "sdgrr"
epsilon = 1.0
grid = { high_fraction = [0.1, 0.5] }

[grid]
epsilon = [1.0, 2.0]
"workload.name" = ["harmonic", "even"]
"""


def write(tmp_path, text, name="s.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_expansion_order_ids_and_resolved_params(tmp_path):
    cells = load_scenario(write(tmp_path, BASE)).cells()
    # 2 workloads × 2 ε × (grr + 2 sdgrr fractions)
    assert len(cells) == 12
    assert [c.index for c in cells] == list(range(12))
    assert [c.workload_index for c in cells] == [0] * 6 + [1] * 6
    assert len({c.id for c in cells}) == 12
    assert [c.id for c in load_scenario(write(tmp_path, BASE, "again.toml")).cells()] == [c.id for c in cells]
    sd = [c for c in cells if c.mechanism == "sdgrr"]
    assert sd[0].params["high"] == (0, 1) and len(sd[1].params["high"]) == 10  # fraction of D = 20
    assert sd[0].labels()["high_fraction"] == 0.1 and "high" not in sd[0].labels()  # rows carry the scenario's value
    assert all(c.params["domain_size"] == 20 for c in cells)  # filled from the workload


def test_synthetic_shape_with_word_labels(tmp_path):
    text = BASE.replace("domain_size = 20", 'domain_size = 20\nlabels = "words"\nsort_labels = true')
    cell = load_scenario(write(tmp_path, text)).cells()[0]
    workload = build_workload(cell.workload, np.random.SeedSequence(7), 0)
    assert workload.items.tolist() == sorted(workload.items.tolist()) and len(set(workload.items)) == 20
    assert workload.counts.tolist() == build_workload({"name": "harmonic", "n": 2000, "domain_size": 20},
                                                      np.random.SeedSequence(7), 0).counts.tolist()
    assert cell.labels()["workload.labels"] == "words"


def test_fingerprint_changes_with_any_setting(tmp_path):
    a = load_scenario(write(tmp_path, BASE))
    b = load_scenario(write(tmp_path, BASE.replace("repeats = 3", "repeats = 4"), "b.toml"))
    assert a.fingerprint() != b.fingerprint()
    assert set(c.id for c in a.cells()).isdisjoint(c.id for c in b.cells())


def test_child_seed_is_spawn_by_index():
    root = np.random.SeedSequence(2026)
    via_spawn = root.spawn(3)[2].spawn(5)[4]
    assert child_seed(np.random.SeedSequence(2026), 2, 4).generate_state(4).tolist() == \
        via_spawn.generate_state(4).tolist()


@pytest.mark.parametrize("old, new, key, allowed", [
    # unknown key, with a did-you-mean
    ("repeats = 3", "repeat = 3", "scenario.repeat", "did you mean 'repeats'"),
    # wrong type
    ("repeats = 3", 'repeats = "three"', "scenario.repeats", "must be int"),
    # unknown value of a choice
    ("top = 5", 'top = 5\npath = "fast"', "scenario.path", "'auto', 'direct', 'reports'"),
    # unknown mechanism, listing what exists
    ('name = "grr"', 'name = "gr"', "mechanism[0].name", "grr, "),
    # unknown workload, listing what exists
    ('name = "harmonic"', 'name = "harmonik"', "workload.name", "harmonic"),
    ('"workload.name" = ["harmonic", "even"]', '"workload.name" = ["harmonic", "odd"]', "grid.workload.name",
     "exponential"),
    # empty grid
    ("epsilon = [1.0, 2.0]", "epsilon = []", "grid.epsilon", "non-empty list"),
    # a shared grid parameter a mechanism does not take
    ("epsilon = [1.0, 2.0]", "m = [32, 64]", "grid.m", "allowed: domain_size, epsilon"),
    # a fixed parameter the mechanism does not take
    ('name = "grr"\nepsilon = 1.0', 'name = "grr"\nepsilon = 1.0\nk = 3', "mechanism[0].k", "allowed: "),
    # a value the mechanism rejects (caught by constructing the cell's mechanism)
    ("epsilon = [1.0, 2.0]", "epsilon = [1.0, -2.0]", "mechanism", "range [1e-06, 50]"),
    # a workload parameter the workload rejects
    ("domain_size = 20", "domain_size = 20\nshape = 3", "workload", "allowed: ['domain_size']"),
    ("domain_size = 20", 'domain_size = 20\nlabels = "words"\nsort_labels = "yes"', "workload", "true or false"),
    # a metric the mechanism cannot give (no transition matrix)
    ('name = "sdgrr"\nepsilon = 1.0\ngrid = { high_fraction = [0.1, 0.5] }',
     'name = "cms"\nepsilon = 1.0\nk = 4\nm = 8\n[metrics]\nnames = ["adversary_accuracy"]',
     "metrics.names", "need a discrete oracle"),
    # unknown metric
    ("top = 5", 'top = 5\n[metrics]\nnames = ["rank_deviaton"]', "metrics.names", "rank_deviation"),
])
def test_errors_name_file_key_and_allowed(tmp_path, old, new, key, allowed):
    assert old in BASE
    path = write(tmp_path, BASE.replace(old, new, 1))
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert str(path) in message and f"[{key}]" in message and allowed in message, message
    assert info.value.key == key


def test_missing_file_and_bad_toml(tmp_path):
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario(tmp_path / "nope.toml")
    with pytest.raises(ScenarioError, match="not valid TOML"):
        load_scenario(write(tmp_path, "[scenario\n"))
