"""`ldpsim reproduce` for seeds 001 (rr-survey), 002 (central-vs-local), 004 (quadtree-budget).

Quick runs write every output; analytic numbers match hand values; the measured RR coverage, LDP
and Laplace MSE, and quadtree query errors agree with their exact theory (tests/stats.py, alpha 1e-4).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.mechanisms.central.central_dp import LaplaceHistogram, project_lattice, project_simplex_l1, synthetic_data
from ldpsim.mechanisms.central.quadtree import level_errors, worst_case_nodes_per_level
from ldpsim.scenarios.cli import main
from ldpsim.scenarios.reproductions import KINDS, available
from ldpsim.scenarios.reproductions import seed001_rr, seed002_central, seed004_quadtree
from ldpsim.scenarios.reproductions.sdldp import load_reproduction
from tests.stats import assert_z

NAMES = sorted(name for name in available() if not name.startswith("sdldp-"))


def test_registered_and_files_validate():
    assert set(NAMES) <= set(available())
    for name in NAMES:
        config = load_reproduction(available()[name], KINDS)
        assert config["name"] == name and config["kind"] == name


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_quick_run_writes_table_and_figure(name, quick_runs):
    out, results = quick_runs
    for ext in ("csv", "png", "svg", "json"):
        assert (out / f"{name}.{ext}").stat().st_size > 0
    assert json.loads((out / f"{name}.json").read_text())["runtime_s"] == round(results[name].runtime_s, 2)
    assert len(pd.read_csv(out / f"{name}.csv")) == len(results[name].table) > 0
    assert not results[name].summary.empty


@pytest.mark.slow
def test_cli_runs_a_seed_reproduction(tmp_path, capsys):
    assert main(["reproduce", "quadtree-budget", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "runtime" in out and "d_opt" in out and (tmp_path / "quadtree-budget.png").exists()


def test_bad_parameter_names_the_key(tmp_path):
    text = available()["rr-survey"].read_text(encoding="utf-8").replace("confidence = 0.95", "confidence = 1.5")
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_reproduction(path, KINDS)
    assert err.value.key == "parameters.confidence" and "between 0 and 1" in str(err.value)


# ---- seed 001: Warner RR (docs/math.md §1.1) ----------------------------------------------------------------
RR_CONFIG = {"seed": 101, "shares": [0.2], "epsilon": [0.5, 2.0], "n_values": [200, 5000], "repeats": 4000,
             "confidence": 0.95}


@pytest.fixture(scope="module")
def rr_table():
    return seed001_rr.compute(RR_CONFIG)


def test_rr_interval_hand_values():
    table = seed001_rr.compute({**RR_CONFIG, "epsilon": [math.log(3), 1.0], "n_values": [100, 1000],
                                "repeats": 2})
    row = table.set_index(["epsilon", "n"])
    # ε = ln 3: p = 3/4, sd = sqrt(3/16/100)/(1/2) = 0.0866025; width = 2·1.959964·sd
    assert row.loc[(math.log(3), 100), "sd_theory"] == pytest.approx(0.08660254, rel=1e-6)
    assert row.loc[(math.log(3), 100), "width_theory"] == pytest.approx(0.3394757, rel=1e-6)
    # ε = 1: p = e/(1+e) = 0.7310586, sd = sqrt(p(1−p)/1000)/(2p − 1) = 0.01402184/0.4621172
    assert row.loc[(1.0, 1000), "sd_theory"] == pytest.approx(0.03034263, rel=1e-6)


def test_rr_exact_coverage_matches_direct_convolution():
    n, n_yes, eps = 60, 17, 1.0
    p = math.exp(eps) / (1 + math.exp(eps))
    from scipy import stats
    pmf = np.convolve(stats.binom.pmf(np.arange(n_yes + 1), n_yes, p),
                      stats.binom.pmf(np.arange(n - n_yes + 1), n - n_yes, 1 - p))
    pi_hat = (p - 1 + np.arange(n + 1) / n) / (2 * p - 1)
    half = 1.959963984540054 * math.sqrt(p * (1 - p) / n) / (2 * p - 1)
    expected = pmf[np.abs(pi_hat - n_yes / n) <= half].sum()
    assert seed001_rr.exact_coverage(n, n_yes, eps, 0.95) == pytest.approx(expected, abs=1e-12)
    # for large n the normal interval's exact coverage is close to nominal
    assert abs(seed001_rr.exact_coverage(100_000, 30_000, 1.0, 0.95) - 0.95) < 0.002


def test_rr_coverage_and_unbiasedness(rr_table):
    t = rr_table
    # empirical coverage over R surveys ~ Binomial(R, exact coverage)/R
    c = t["coverage_exact"]
    assert_z(t["coverage"], c, np.sqrt(c * (1 - c) / t["repeats"]), what="RR interval coverage")
    # π̂ is unbiased with sd sqrt(p(1−p)/n)/(2p − 1)
    assert_z(t["estimate_mean"], t["pi"], t["sd_theory"] / np.sqrt(t["repeats"]), what="RR π̂ mean")
    assert (t["mle_clipped"] >= 0).all() and (t["width_mean"] <= t["width_theory"] * (1 + 1e-12)).all()


# ---- seed 002: central DP histogram (docs/math.md §6) -------------------------------------------------------
def test_seed002_concrete_example():
    theta = np.array([0.5, 0.3, 0.2])
    release = LaplaceHistogram(epsilon=1.0)  # α = 1, one record replaced: Δ = 2/n
    z = theta + release.noise_scale(100) * np.array([0.5, -1.2, 0.8])  # z_j = θ_j + 2L_j/(nα)
    np.testing.assert_allclose(z, [0.510, 0.276, 0.216], atol=1e-12)
    # minimum-L1 projection onto the simplex: cost = Σz − 1 = 0.002; the L2-closest such point
    proj = project_simplex_l1(z)
    np.testing.assert_allclose(proj, z - 0.002 / 3, atol=1e-12)
    assert np.abs(proj - z).sum() == pytest.approx(0.002, abs=1e-12)
    # the 1/n lattice: brute force over every integer histogram of 100 records
    counts = project_lattice(z, 100)
    best = min(abs(51 - a) + abs(27.6 - b) + abs(21.6 - (100 - a - b))
               for a, b in itertools.product(range(101), repeat=2) if a + b <= 100)
    assert counts.sum() == 100 and np.abs(counts - z * 100).sum() == pytest.approx(best, abs=1e-9)
    assert tuple(counts) in {(51, 28, 21), (51, 27, 22)}  # seed 002 names (0.51, 0.28, 0.21)
    records = synthetic_data(proj, 100, rng=2)
    assert records.shape == (100,) and set(records) <= {0, 1, 2}


def test_central_and_local_mse_match_theory():
    config = {"seed": 102, "epsilon": [0.5, 2.0], "workloads": ["census-marital"], "n": 20_000, "repeats": 300,
              "local": ["GRR", "OUE"], "neighbour": "replace"}
    table = seed002_central.compute(config)
    has = table["mse_theory"].notna()
    assert set(table.loc[has, "method"]) == {"GRR", "OUE", "central-raw"}
    assert_z(table.loc[has, "mse"], table.loc[has, "mse_theory"], table.loc[has, "se"],
             what="frequency MSE vs exact theory")
    # 2(Δ/ε)² with Δ = 2/n, by hand at ε = 0.5: 2·(2/(20000·0.5))² = 8e-8
    raw = table[table["method"] == "central-raw"].set_index("epsilon")
    assert raw.loc[0.5, "mse_theory"] == pytest.approx(8e-8, rel=1e-12)
    # the projection is non-expansive (clip, then Euclidean projection onto sets holding θ): never worse
    by = table.set_index(["epsilon", "method"])["mse"]
    for eps in config["epsilon"]:
        assert by[(eps, "central-L1")] <= by[(eps, "central-raw")]
    summary = seed002_central.summary(table, config)
    ratios = summary.filter(like="bestLDP/central").stack().dropna()
    assert len(ratios) == 2 and (ratios > 100).all()  # orders of magnitude (∝ n) in the trusted model


# ---- seed 004: quadtree budget allocation (docs/math.md §6) -------------------------------------------------
QT_CONFIG = {"seed": 104, "epsilon": [1.0], "h": 5, "heights": [7, 9], "d_values": [0.0, 0.024],
             "q_values": [1.415], "d_points": 20, "figure_epsilon": 1.0, "n": 2000, "queries": 100,
             "repeats": 300, "measured_q": 1.415}


@pytest.fixture(scope="module")
def qt_table():
    return seed004_quadtree.compute(QT_CONFIG)


def test_quadtree_seed_findings(qt_table):
    opt = qt_table[qt_table["part"] == "optimum"].set_index("h")
    assert round(opt.loc[7, "d_opt"], 3) == 0.024 and round(opt.loc[9, "d_opt"], 3) == 0.018  # seed 004
    assert round(opt.loc[7, "d_opt_capped"], 3) == 0.030  # capping n_i at the 4^{h−i} nodes of a level
    # uncapped: Err_i ∝ 2^{h−i}/q^{2(h−i)} is level-independent exactly at q = √2 (seed: 1.415)
    assert opt["q_equal"].to_numpy() == pytest.approx(math.sqrt(2), abs=1e-4)


def test_quadtree_analytic_hand_values():
    h = 7
    uniform = seed004_quadtree.allocations(1.0, h, {"d_values": [0.024], "q_values": []})
    # uniform, ε = 1: ε_i = 1/8; level 0: 8·2^7·2·64 = 131 072; total 2·64·8·(2^8 − 1) = 261 120
    assert seed004_quadtree.total_error(uniform["uniform"][2], h, capped=False) == pytest.approx(261_120)
    # d = 0.024: ε_0 = 1/8 + 3.5·0.024 = 0.209, Err(level_0) = 1024·2/0.209²
    budgets = uniform["d=0.024"][2]
    assert budgets[0] == pytest.approx(0.209) and budgets.sum() == pytest.approx(1.0)
    assert level_errors(budgets)[0] == pytest.approx(46_885.37, rel=1e-6)
    assert "d=0.024" not in seed004_quadtree.allocations(0.5, h, {"d_values": [0.024], "q_values": []})


def test_quadtree_measured_error_matches_analytic(qt_table):
    m = qt_table[(qt_table["part"] == "measured") & (qt_table["mse_analytic"] > 0)]
    assert len(m) > 0
    # per-draw mean squared errors are i.i.d. over the R noise draws: CLT with their sample se
    assert_z(m["mse"], m["mse_analytic"], m["se"], what="quadtree query MSE vs Σ n_i(Q)·2/ε_i²")
    levels = m[m["level"] >= 0]
    bound = worst_case_nodes_per_level(QT_CONFIG["h"])[levels["level"].astype(int)]
    assert (levels["nodes_max"] <= bound).all() and (m["mse_analytic"] <= m["err_bound"]).all()
