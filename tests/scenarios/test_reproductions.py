"""`ldpsim reproduce`: every SDLDP reproduction runs (quick), theory matches hand values, files validate."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.scenarios.cli import main
from ldpsim.scenarios.reproductions import KINDS, available, reproduce
from ldpsim.scenarios.reproductions import sdldp_frequency, sdldp_numeric
from ldpsim.scenarios.reproductions.sdldp import high_ids, load_reproduction, parse_label, shrink
from tests.stats import assert_z

NAMES = sorted(name for name in available() if name.startswith("sdldp-"))  # seeds 001/002/004: test_reproductions_seeds.py


def test_every_figure_has_a_scenario_file():
    assert NAMES == [f"sdldp-fig{k}" for k in (2, 4, 5, 6, 7, 8, 9)]


@pytest.mark.parametrize("name", NAMES)
def test_shipped_files_validate(name):
    config = load_reproduction(available()[name], KINDS)
    assert config["name"] == name and config["kind"] in KINDS


@pytest.mark.slow  # every figure, --quick
@pytest.mark.parametrize("name", NAMES)
def test_quick_run_writes_table_and_figure(name, quick_runs):
    out, results = quick_runs
    result = results[name]
    for ext in ("csv", "png", "svg", "json"):
        assert (out / f"{name}.{ext}").stat().st_size > 0
    assert json.loads((out / f"{name}.json").read_text())["runtime_s"] == round(result.runtime_s, 2)
    table = pd.read_csv(out / f"{name}.csv")
    assert len(table) == len(result.table) > 0
    assert set(table["epsilon"]) == {result.config["epsilon"][0], result.config["epsilon"][-1]}
    assert not result.summary.empty and result.runtime_s >= 0


# ---- theory: hand-computed values (docs/math.md §1.2 / paper eq. (2), eq. (12); §2.1 eq. (5), theorem 4) --
def _row(table, curve, eps):
    return table[(table["curve"] == curve) & np.isclose(table["epsilon"], eps)].iloc[0]


def test_fig2_matches_hand_values():
    config = load_reproduction(available()["sdldp-fig2"], KINDS)
    table = KINDS["frequency-variance"].compute({**config, "epsilon": [0.1, 1.0]})
    # D = 18, n = 2 458 285. GRR, ε = 1: (16 + e)/(n (e − 1)²) = 18.71828/(2 458 285 · 2.952492)
    assert _row(table, "GRR = SDGRR_H", 1.0)["variance_paper"] == pytest.approx(2.578962e-06, rel=1e-6)
    # ε = 0.1: (16 + 1.105171)/(n · 0.105171²)
    assert _row(table, "GRR = SDGRR_H", 0.1)["variance_paper"] == pytest.approx(6.290771e-04, rel=1e-6)
    # SDGRR_L-25, ε = 1: |X_L| = round(4.5) = 4, F_H = 14/18: (17 + e − 14/18)(14/18)/(n (3 + e)²)
    low = _row(table, "SDGRR_L-25", 1.0)
    assert low["n_low"] == 4
    assert low["variance_paper"] == pytest.approx(1.832668e-07, rel=1e-6)
    # eq. (12) treats Σ_h f̂_h as known: the exact variance (which includes its noise) is larger
    assert (table["variance_exact"] > table["variance_paper"]).all()


def test_fig4_matches_hand_values():
    config = load_reproduction(available()["sdldp-fig4"], KINDS)
    table = KINDS["numeric-variance"].compute({**config, "epsilon": [0.1, 1.0]})
    # PM at |x| = 1, ε = 1, t = e^0.5: 1/(t − 1) + (t + 3)/(3(t − 1)²) = 1.541494 + 3.682103
    assert _row(table, "PM = SDPM_H", 1.0)["variance_paper"] == pytest.approx(5.223597, rel=1e-6)
    assert _row(table, "PM = SDPM_H", 0.1)["variance_paper"] == pytest.approx(533.2222, rel=1e-6)
    # theorem 4, c = 0.5, ε = 1: (C³ − 0.125)(e − t)/(3e(t + 1)), C = (t + 1)/(t − 1) = 4.082988
    low = _row(table, "SDPM_L c=0.5", 1.0)
    assert low["variance_paper"] == pytest.approx(3.364259, rel=1e-6)
    assert _row(table, "SDPM_L c=0.5", 0.1)["variance_paper"] == pytest.approx(507.5328, rel=1e-6)
    # the exact largest low-branch variance (at |x| = c) is at least theorem 4's value at x = 0
    assert (table["variance_exact"] >= table["variance_paper"] * (1 - 1e-12)).all()


# ---- Fig. 9: expected accuracies are the paper's reference values (docs/math.md §3) -----------------------
@pytest.mark.slow
def test_fig9_expected_accuracy_equals_reference_values(quick_runs):
    table = quick_runs[1]["sdldp-fig9"].table
    np.testing.assert_allclose(table["expected"], table["reference"], rtol=1e-12)
    e = math.exp(0.1)
    urr = table[(table["mechanism"] == "URR") & (table["attribute"] == "census-education")
                & (table["high_share"] == 0.25) & np.isclose(table["epsilon"], 0.1)].iloc[0]
    assert urr["n_high"] == 4 and urr["expected"] == pytest.approx(e / (4 + e - 1), rel=1e-12)
    sd = table[table["mechanism"] == "SDGRR"]
    assert np.allclose(sd["expected"], np.exp(sd["epsilon"]) / (sd["domain_size"] + np.exp(sd["epsilon"]) - 1))
    # empirical accuracy over the high users: binomial around the expectation (alpha 1e-4, Bonferroni)
    sd_emp = np.sqrt(table["expected"] * (1 - table["expected"]) / table["n_high_users"])
    assert_z(table["empirical"], table["expected"], sd_emp, what="empirical adversary accuracy")


# ---- simulated MSE agrees with the exact theory ---------------------------------------------------
def test_frequency_mse_matches_exact_theory():
    config = {"epsilon": [1.0], "attributes": ["census-marital"], "n": 20_000, "repeats": 2000,
              "mechanisms": ["GRR", "URR-25", "SDGRR-25"], "high_choices": ["least-frequent"], "seed": 11}
    table = sdldp_frequency.compute(config)
    assert_z(table["mse"], table["mse_theory"], table["se"], what="frequency MSE vs exact theory")
    low = table.set_index("mechanism")["mse_low"]
    assert np.isnan(low["GRR"]) and np.isfinite(low[["URR-25", "SDGRR-25"]]).all()
    assert table.set_index("mechanism")["n_high"].tolist() == [-1, 2, 2]


def test_pm_mean_mse_matches_exact_theory():
    config = {"epsilon": [0.5, 2.0], "attributes": ["heights"], "n": 2_000, "repeats": 400, "bins": 8,
              "mechanisms": ["PM"], "seed": 12}
    table = sdldp_numeric.compute(config)
    assert_z(table["mse"], table["mse_theory"], table["se"], what="PM mean MSE vs exact variance")


# ---- labels, high sets, overrides -----------------------------------------------------------------
def test_labels_and_high_sets():
    assert parse_label("SDGRR-25") == ("SDGRR", 0.25)
    assert parse_label("SDPM-Personalized") == ("SDPM", "Personalized")
    assert parse_label("PM+EM") == ("PM+EM", None)
    assert high_ids(0.25, 18, "most-frequent") == (0, 1, 2, 3)
    assert high_ids(0.25, 18, "least-frequent") == (14, 15, 16, 17)
    assert high_ids(0.25, 7, "least-frequent") == (5, 6)


def test_repeats_override_and_quick():
    config = load_reproduction(available()["sdldp-fig7"], KINDS)
    quick = shrink(config, quick=True, repeats=3)
    assert quick["repeats"] == 3 and quick["bins"] <= 16 and quick["n"] <= 4000
    assert quick["epsilon"] == [config["epsilon"][0], config["epsilon"][-1]]
    assert shrink(config)["repeats"] == config["repeats"]


# ---- scenario file validation -------------------------------------------------------------------
GOOD = """
[reproduction]
name = "x"
kind = "frequency-mse"
title = "t"
seed = 1

[parameters]
epsilon = [0.1, 1.0]
mechanisms = ["GRR", "SDGRR-25"]
"""


@pytest.mark.parametrize("old, new, key, words", [
    ('kind = "frequency-mse"', 'kind = "frequency"', "reproduction.kind", "must be one of"),
    ("seed = 1", "sed = 1", "reproduction.sed", "did you mean 'seed'"),
    ("epsilon = [0.1, 1.0]", "epsilon = [1.0, 0.1]", "parameters.epsilon", "increasing"),
    ("epsilon = [0.1, 1.0]", "epsilon = [0.0, 1.0]", "parameters.epsilon", "positive"),
    ('"SDGRR-25"]', '"SDGRR"]', "parameters.mechanisms", "take a share"),
    ('"SDGRR-25"]', '"SDPM-25"]', "parameters.mechanisms", "not a label"),
    ('"SDGRR-25"]', '"URR-Personalized"]', "parameters.mechanisms", "no personalized"),
    ("seed = 1", 'seed = "one"', "reproduction.seed", "must be int"),
    ('mechanisms = ["GRR", "SDGRR-25"]', 'mechanisms = ["GRR"]\npersonalized_weights = [0.5, 0.5]',
     "parameters.personalized_weights", "one entry per entry"),
    ('mechanisms = ["GRR", "SDGRR-25"]', 'mechanisms = ["GRR"]\nhigh_choices = ["rarest"]',
     "parameters.high_choices", "least-frequent"),
    ('title = "t"\n', "", "reproduction.title", "is required"),
])
def test_scenario_errors_name_the_key(tmp_path, old, new, key, words):
    path = tmp_path / "bad.toml"
    assert old in GOOD
    path.write_text(GOOD.replace(old, new), encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_reproduction(path, KINDS)
    assert err.value.key == key and words in str(err.value) and str(path) in str(err.value)


def test_good_file_loads_and_runs_from_a_path(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(GOOD + 'attributes = ["census-marital"]\nhigh_choices = ["most-frequent"]\n', encoding="utf-8")
    result = reproduce(path, tmp_path / "out", quick=True)
    assert (tmp_path / "out" / "x.csv").exists() and set(result.table["mechanism"]) == {"GRR", "SDGRR-25"}


# ---- command line -------------------------------------------------------------------------------
def test_cli_list_run_and_errors(tmp_path, capsys):
    assert main(["reproduce", "--list"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in NAMES)
    assert main(["reproduce", "sdldp-fig4", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "runtime" in out and "PM = SDPM_H" in out and (tmp_path / "sdldp-fig4.png").exists()
    assert main(["reproduce"]) == 2
    assert main(["reproduce", "sdldp-fig99", "--out", str(tmp_path)]) == 2
    assert main(["reproduce", "sdldp-fig2", "--repeats", "0"]) == 2
    assert "Unknown reproduction" in capsys.readouterr().err
