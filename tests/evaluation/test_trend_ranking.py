"""``ldpsim compare --query trend:…`` and its library function (evaluation/trends/ranking.py; docs/math.md §12.9)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.trends.detection import Detector
from ldpsim.evaluation.trends.lineup import standard_designs
from ldpsim.evaluation.trends.design_rows import measure_design
from ldpsim.evaluation.trends.ranking import TrendQuery, parse_trend_query, rank_trend_designs
from ldpsim.evaluation.workloads.trends import TrendShape, peak_share
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.cli import main
from tests.cli_cases import expect_clear_refusal


@pytest.mark.parametrize("query, named", [
    ("trend:0,30,90", "GROWTH"), ("trend:-1,30,90", "GROWTH"), ("trend:nan,30,90", "GROWTH"),
    ("trend:fast,30,90", "GROWTH"), ("trend:0.2,90,90", "START"), ("trend:0.2,-1,90", "START"),
    ("trend:0.2,3.5,90", "START"), ("trend:0.2,0,1", "DAYS"), ("trend:0.2,30", "query"),
    ("trend:0.2,30,90,sus,x", "query"), ("trend:0.2,89,90", "START"),
])
def test_bad_query_values_are_refused_naming_the_part(query, named):
    with pytest.raises(InputError, match=named) as info:
        rank_trend_designs(query, devices=10_000, replicates=1)
    assert query in str(info.value)


@pytest.mark.parametrize("argv, names", [
    (["--query", "trend:0,30,90"], ["GROWTH", "trend:0,30,90"]),
    (["--query", "trend:0.2,30,20"], ["START", "30"]),
    (["--query", "trend:0.2,30,90", "--devices", "100"], ["devices", "100"]),
    (["--query", "trend:0.2,30,90", "--epsilon-device", "0"], ["epsilon", "0"]),
    pytest.param(["--query", "trend:0.2,30,90,zzqqxv"], ["zzqqxv"], marks=pytest.mark.slow),  # loads wordfreq
])
def test_cli_refusals_exit_2_naming_the_parameter(argv, names, capsys):
    expect_clear_refusal(["compare", *argv], names, capsys)


def test_parse_reads_the_word():
    assert parse_trend_query("trend:0.2,30,90") == TrendQuery(0.2, 30, 90, "sus")
    assert parse_trend_query("trend:0.2,30,90,rizz").word == "rizz"


@pytest.mark.slow
def test_rows_are_measure_designs_and_ranked_by_delay(capsys):
    """Each row is measure_design's on the stated word (same stream as the ranking gives it); the ranking
    puts the designs that detect in half the runs first, by median delay, and every ε is the one asked."""
    r = rank_trend_designs("trend:0.3,20,60", epsilon=2.0, devices=1_000_000, replicates=20, rng=3)
    t = r.table
    assert list(t["rank"]) == list(range(1, len(t) + 1))
    delays = t["delay_median"].fillna(np.inf).to_numpy()
    assert list(delays) == sorted(delays)
    assert np.all(t["epsilon"] <= 2.0 + 1e-9)
    designs = standard_designs(2.0, 60)
    pi = TrendShape("sus", peak_share("sus"), 20.0, 0.3).shares(60)
    streams = np.random.SeedSequence(np.random.default_rng(3).integers(2 ** 63)).spawn(len(designs))
    row, _ = measure_design(designs[0], Detector(), pi, 20, 1_000_000, 20, np.random.default_rng(streams[0]), 20, 14)
    got = t[t["design"] == designs[0].name].iloc[0]
    for key in ("delay_median", "false_alarms_month", "tracking_rmse", "tracking_theory", "smallest_growth"):
        assert got[key] == pytest.approx(row[key], nan_ok=True), key
    assert main(["compare", "--query", "trend:0.3,20,60", "--devices", "1000000"]) == 0
    out = capsys.readouterr().out
    assert "ε = 2 per person over the run" in out and "false/month" in out
    assert "Chernoff upper bound" in " ".join(out.split())   # the integer square root's theory is a bound
