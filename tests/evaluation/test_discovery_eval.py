"""Discovery in the evaluation layer: the words-slang workload, the discovery metrics, the discovery
kind of sweep cell (grid validation, run_cell rows) and its figures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ldpsim.evaluation.discovery.scores import DISCOVERY_METRICS, first_reaching, run_scores, summarize_runs
from ldpsim.evaluation.report.plots import discovery_curves
from ldpsim.scenarios.studies.scenario.grid import scenario_from_dict
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.scenarios.studies.sweep.runner import run_cell
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms.discovery.words import WordCodec


def test_run_scores_by_hand():
    items, counts = ["a", "b", "c", "d"], [40, 30, 20, 10]
    s = run_scores(items, counts, ["b", "x", "a"], [33.0, 5.0, 36.0], k=3, planted="x")
    assert s["precision"] == pytest.approx(2 / 3) and s["recall"] == pytest.approx(2 / 3)
    assert s["f1"] == pytest.approx(2 / 3)
    assert s["ncr"] == pytest.approx((3 + 2) / 6)  # a (rank 1) scores 3, b (rank 2) scores 2
    assert s["relative_error"] == pytest.approx((0.1 + 0.1) / 2)
    assert s["found"] == 1.0
    empty = run_scores(items, counts, [], [], k=2)
    assert empty["f1"] == 0.0 and math.isnan(empty["relative_error"]) and math.isnan(empty["found"])


def test_summarize_runs_has_standard_errors():
    runs = [run_scores("ab", [2, 1], w, [1.0], 1, planted="b") for w in (["a"], ["b"], ["a"], ["a"])]
    rows = summarize_runs(runs).set_index("metric")
    assert list(rows.index) == list(DISCOVERY_METRICS)
    assert rows.loc["found", "mean"] == 0.25 and rows.loc["found", "se"] == pytest.approx(0.25)


def test_first_reaching():
    assert first_reaching([1e5, 1e6, 1e7], [0.2, 0.95, 1.0]) == 1e6
    assert first_reaching([3, 1, 2], [0.95, 0.95, 0.5]) == 3  # must stay above the level
    assert first_reaching([1, 2], [0.1, 0.5]) is None


def test_words_slang_workload():
    w = make_workload("words-slang", 100_000, rng=5, top=300, slang_shares=[0.02, 0.001], start_day=4)
    import wordfreq

    slang = w.params["slang"]
    assert len(slang) == 2 and w.params["start_day"] == 4 and w.n == 100_000 and w.domain_size == 302
    codec = WordCodec()
    codec.symbols(w.items)  # every item is carried by the protocols (alphabet, ≤ 8 symbols)
    for s in slang:
        assert wordfreq.word_frequency(s, "en") == 0 and any(c not in "abcdefghijklmnopqrstuvwxyz'" for c in s)
    share = dict(zip(w.items.tolist(), w.frequencies.tolist()))
    assert share[slang[0]] == pytest.approx(0.02, abs=1e-5) and share[slang[1]] == pytest.approx(0.001, abs=1e-5)
    again = make_workload("words-slang", 100_000, rng=5, top=300, slang_shares=[0.02, 0.001])
    assert again.params["slang"] == slang  # deterministic given the stream
    with pytest.raises(ValueError, match="slang_shares"):
        make_workload("words-slang", 10, slang_shares=[0.6, 0.5])


def _scenario(**metrics):
    raw = {"scenario": {"name": "d", "seed": 1, "repeats": 2, "path": "direct", "top": 5},
           "workload": {"name": "words-slang", "n": 20_000, "top": 100, "slang_shares": [0.05]},
           "mechanism": [{"name": "treehist", "k": 16, "m": 64}, {"name": "pem", "pool": 64}],
           "grid": {"epsilon": [4.0]}, **metrics}
    return scenario_from_dict(raw)


def test_discovery_cells_and_their_metrics():
    sc = _scenario()
    assert sc.metrics == DISCOVERY_METRICS  # the default for discovery-only scenarios
    cells = sc.cells()
    assert [c.kind for c in cells] == ["discovery", "discovery"]
    with pytest.raises(ScenarioError, match="metrics.names"):
        _scenario(metrics={"names": ["mse"]})
    estimates, summary = run_cell(cells[1], 1)
    assert set(summary["metric"]) == set(DISCOVERY_METRICS) and (summary["mechanism"] == "pem").all()
    f1 = summary.set_index("metric").loc["f1", "mean"]
    assert 0.5 <= f1 <= 1.0
    assert {"repeat", "item", "true_rank", "estimate", "est_rank"} <= set(estimates)
    again, _ = run_cell(cells[1], 1)
    pd.testing.assert_frame_equal(estimates.drop(columns="elapsed_s"), again.drop(columns="elapsed_s"))


def test_discovery_figures(tmp_path):
    rows = []
    for mech in ("pem", "sfp"):
        for eps in (1.0, 4.0):
            for n in (1e5, 1e6):
                for metric in ("f1", "found"):
                    rows.append({"mechanism": mech, "epsilon": eps, "n": n, "metric": metric, "rank": np.nan,
                                 "mean": 0.5, "se": 0.1})
    paths = discovery_curves(pd.DataFrame(rows), tmp_path)
    assert {p.name for p in paths} >= {"discovery_f1_by_epsilon.png", "discovery_probability_by_n.png"}


def _interactive_scenario(path="direct", **extra):
    raw = {"scenario": {"name": "d", "seed": 1, "repeats": 2, "path": path, "top": 5},
           "workload": {"name": "words-slang", "n": 20_000, "top": 100, "slang_shares": [0.05]},
           "mechanism": [{"name": "pem", "pool": 64}, {"name": "triehh", "gamma": 0.5, "delta": 1e-6, **extra},
                         {"name": "ldp_trie"}],
           "grid": {"epsilon": [8.0]}}
    return scenario_from_dict(raw)


def test_interactive_protocols_are_sweep_cells_with_their_own_guarantee():
    """A sweep names TrieHH and LDPTrie beside PEM: ε per user over one pass of rounds, the kind of each
    guarantee in its rows (the plots' panels), reproducible per seed, per-user path like the direct one."""
    pem, triehh, ldp_trie = _interactive_scenario().cells()
    assert [c.kind for c in (pem, triehh, ldp_trie)] == ["discovery"] * 3
    labels = {c.mechanism: c.labels() for c in (pem, triehh, ldp_trie)}
    assert labels["triehh"]["guarantee"] == "(ε, δ)-DP, central" and labels["triehh"]["epsilon_report"] == 8.0
    assert labels["ldp_trie"]["guarantee"] == labels["pem"]["guarantee"] == "ε-LDP"
    assert triehh.make_mechanism().delta <= 1e-6 and triehh.make_mechanism().rounds == 8
    estimates, summary = run_cell(triehh, 1)
    f1 = summary.set_index("metric").loc["f1", "mean"]
    assert 0.5 <= f1 <= 1.0 and (summary["guarantee"] == "(ε, δ)-DP, central").all()
    again, _ = run_cell(triehh, 1)
    pd.testing.assert_frame_equal(estimates.drop(columns="elapsed_s"), again.drop(columns="elapsed_s"))
    per_user = _interactive_scenario("reports").cells()[1]
    _, s = run_cell(per_user, 1)
    assert 0.5 <= s.set_index("metric").loc["f1", "mean"] <= 1.0


@pytest.mark.parametrize("extra, match", [({"theta": 3}, "not both"), ({"gama": 0.5}, "takes no parameter 'gama'"),
                                          ({"rounds_per_day": 2}, "takes no parameter 'rounds_per_day'")])
def test_bad_interactive_sweep_keys_are_refused(extra, match):
    with pytest.raises(ScenarioError, match=match):
        _interactive_scenario(**extra)


def test_discovery_figures_keep_guarantee_kinds_apart(tmp_path):
    from matplotlib.image import imread

    rows = [{"mechanism": mech, "guarantee": kind, "epsilon": eps, "epsilon_report": eps, "n": 1e5, "metric": "f1",
             "rank": np.nan, "mean": 0.5, "se": 0.1}
            for mech, kind in (("pem", "ε-LDP"), ("triehh", "(ε, δ)-DP, central")) for eps in (1.0, 4.0)]
    (tmp_path / "one").mkdir(), (tmp_path / "two").mkdir()
    one_kind = discovery_curves(pd.DataFrame(rows[:2]), tmp_path / "one")
    two_kinds = discovery_curves(pd.DataFrame(rows), tmp_path / "two")
    shape = [imread(next(p for p in paths if p.suffix == ".png")).shape for paths in (one_kind, two_kinds)]
    assert shape[1][0] == 2 * shape[0][0] and shape[1][1] == shape[0][1]  # one row of panels per kind
