"""``tune``: candidates tried cheapest first; the winner is the cheapest whose confidence bound meets the target."""

from __future__ import annotations

import pytest

from ldpsim.scenarios.studies.sweep.tune import Target, tune
from ldpsim.mechanisms.registry import MECHANISMS
from ldpsim.scenarios.cli import main

pytestmark = pytest.mark.skipif("cms" not in MECHANISMS, reason="needs the CMS mechanism")
WORKLOAD = {"workload": "harmonic", "devices": 20_000, "domain_size": 40}
GRID = dict(ks=[2, 16, 64], ms=[8, 64], top=5, repeats=8, epsilon=4.0, **WORKLOAD)


def test_target_parsing():
    assert Target.parse("rank_deviation <= 1") == Target("rank_deviation", "<=", 1.0)
    assert Target.parse("top_k_precision>=0.9").met(0.95)
    for bad in ("rank_deviation<1", "rank_deviaton<=1", ""):
        with pytest.raises(ValueError, match="'target'"):
            Target.parse(bad)


def test_cheapest_meeting_candidate_wins():
    result = tune("rank_deviation<=-1", **GRID)
    everything, none = result.tried, result.best
    assert none is None and len(everything) == 6  # nothing met: every candidate tried
    costs = list(zip(everything["report_bytes"], everything["memory_km"]))
    assert costs == sorted(costs)  # cheapest first: bandwidth, then k·m
    threshold = float(everything["bound"].median())
    result = tune(f"rank_deviation<={threshold}", **GRID)
    tried, best = result.tried, result.best
    first_ok = everything[everything["bound"] <= threshold].iloc[0]
    assert (best["k"], best["m"]) == (first_ok["k"], first_ok["m"])
    assert len(tried) == everything.index.get_loc(first_ok.name) + 1  # stopped at the winner
    assert best["bound"] == pytest.approx(best["mean"] + 1.6448536 * best["se"])  # one-sided 95% upper bound


def test_cli_prints_the_table_and_the_choice(capsys):
    args = ["tune", "--workload", "harmonic", "--domain-size", "40", "--n", "20000", "--target",
            "rank_deviation<=50", "--top", "5", "--repeats", "4", "--k", "2", "16", "--m", "8"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "cheapest setting meeting rank_deviation<=50: k=2 m=8" in out and "report_bytes" in out
    assert main(args[:8] + ["rank_deviation<=-1"] + args[9:]) == 0  # a valid answer; exit 1 is check's alone
    assert "no setting tried meets rank_deviation<=-1" in capsys.readouterr().out
    assert main(args[:8] + ["nonsense"] + args[9:]) == 2
