"""Ranking the numeric designs for a stated query at equal ε per person (docs/math.md §9.12): the query
grammar, the ranking's rows, the limits it reports, and ``ldpsim compare --query``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.numeric_designs import BINS, parse_query, rank_designs
from ldpsim.evaluation.workloads.readings import typing_speed
from ldpsim.mechanisms.numeric.tree_histogram import quantile_from_cdf
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.cli import main
from tests.cli_cases import expect_clear_refusal


def test_queries_parse():
    assert parse_query("quantile:0.95").alpha == 0.95
    q = parse_query("range:30,inf")
    assert (q.low, q.high) == (30.0, math.inf)
    assert parse_query("heatmap:space").key == 26 and parse_query("heatmap:3").key == 3


@pytest.mark.parametrize("text", ["quantile:1.5", "quantile:x", "range:50,40", "range:-inf,3", "range:5",
                                  "heatmap:spacebar", "heatmap:30", "median", ""])
def test_bad_queries_are_refused(text):
    with pytest.raises(InputError, match="query"):
        parse_query(text)


def test_reading_ranking_rows_and_truth():
    """Every 1-D design is ranked, best first, each row saying what its ε means; the true answer is the
    64-bin population's 95th percentile (uniform inside a bin)."""
    r = rank_designs("quantile:0.95", devices=5000, repeats=3, rng=2)
    assert sorted(r.table["design"]) == ["central-flat", "ldp-sw-ems", "ldp-tree", "secagg-flat"]
    assert r.table["rmse"].is_monotonic_increasing
    assert r.table.set_index("design").loc["secagg-flat", "guarantee"].startswith("(ε = 1, δ = 1e-09)")
    values = typing_speed(5000, rng=np.random.default_rng(2).spawn(2)[0]).values
    counts = np.bincount(np.minimum(((values + 1) / 2 * BINS).astype(np.int64), BINS - 1), minlength=BINS)
    cdf = np.concatenate([[0.0], np.cumsum(counts)]) / counts.sum()
    assert r.truth == pytest.approx(quantile_from_cdf(np.linspace(0, 100, BINS + 1), cdf, np.array([0.95]))[0])


def test_heatmap_ranking_reports_the_cohort_limit():
    """3000 devices on 30 keys leave ~100 on the space bar: the adaptive SecAgg quadtree (a 200-device cohort
    per level) publishes nothing, and its row says so; the others have no note."""
    r = rank_designs("heatmap:space", devices=3000, repeats=2, rng=0).table.set_index("design")
    assert set(r.index) == {"ldp-quadtree", "ldp-hdg", "secagg-quadtree", "secagg-flat", "central-quadtree",
                            "central-flat"}
    assert "nothing published" in r.loc["secagg-quadtree", "note"]
    assert "nothing published" in r.loc["secagg-flat", "note"]
    assert r.loc["central-flat", "note"] == ""
    assert "seed 004" in r.loc["central-quadtree", "guarantee"]


def test_compare_query_prints_the_ranking(capsys):
    assert main(["compare", "--query", "range:60,inf", "--devices", "3000", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "range:60,inf" in out and "ldp-tree" in out and "ε = 1 per person" in out


def test_compare_query_refusals(capsys):
    expect_clear_refusal(["compare", "--query", "heatmap:spacebar"], ["query", "spacebar"], capsys)
    expect_clear_refusal(["compare", "--query", "quantile:0.5", "--days", "3"], ["--days", "--query"], capsys)


@pytest.mark.slow
def test_design_sweep_table_and_an_exact_check():
    """The sweep's long table has every metric of every design; the central flat histogram's single-bin range
    MSE has the closed form E = 2/(ε n)² (Lap(1/ε) per bin, shares over n) and, over 64 bins × R runs, the
    exact sd √(20 b⁴/(64 R))/n² of its mean (Laplace fourth moment 24b⁴, b = 1/ε; z-test, α = 10⁻⁴)."""
    from ldpsim.evaluation.numeric_designs import design_sweep
    from ldpsim.evaluation.report.design_sweep_plots import design_sweep_figure
    from tests.stats import assert_z
    eps, n, r = 2.0, 3000, 40
    table = design_sweep(epsilons=(eps,), devices=n, repeats=r, rng=4)
    metrics = set(table.loc[table["family"] == "reading", "metric"])
    assert metrics == {"range_mse_1", "range_mse_4", "range_mse_16", "range_mse_48", "wasserstein_wpm",
                       "quantile_error_wpm"}
    assert set(table.loc[table["family"] == "heatmap", "key"]) == {"e", "space", "q"}
    row = table[(table["design"] == "central-flat") & (table["metric"] == "range_mse_1")].iloc[0]
    b = 1 / eps
    assert_z(row["mean"], 2 * b * b / n ** 2, math.sqrt(20 * b ** 4 / (64 * r)) / n ** 2,
             what="central flat single-bin range MSE")
    assert len(design_sweep_figure(table, range_epsilon=eps).axes) == 4


def test_rank_sweep_keeps_the_population_across_epsilons(capsys):
    """Every ε ranks the same designs on the same devices (the range's true answer does not move), and the
    command line prints one block of ranks per ε; --epsilons needs --query."""
    from ldpsim.evaluation.numeric_designs import rank_sweep
    table = rank_sweep("range:60,inf", (0.5, 4.0), devices=3000, repeats=2, rng=5)
    assert table.groupby("epsilon")["rank"].apply(list).tolist() == [[1, 2, 3, 4], [1, 2, 3, 4]]
    assert (rank_designs("range:60,inf", 0.5, 3000, 2, rng=5).truth
            == rank_designs("range:60,inf", 4.0, 3000, 2, rng=5).truth)
    assert main(["compare", "--query", "quantile:0.5", "--epsilons", "1", "2", "--devices", "2000"]) == 0
    assert capsys.readouterr().out.count("central-flat") == 2
    expect_clear_refusal(["compare", "--epsilons", "1", "2"], ["--epsilons", "--query"], capsys)


def test_epsilons_and_epsilon_device_are_refused_together(capsys):
    expect_clear_refusal(["compare", "--query", "quantile:0.5", "--epsilons", "1", "2", "--epsilon-device", "1"],
                         ["--epsilons", "--epsilon-device"], capsys)
