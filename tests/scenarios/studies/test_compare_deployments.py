"""Designs on one fleet at one budget: the accountant's ε per design, memoization, the run folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ldpsim.scenarios.studies.deployment.compare import DEFAULT_DESIGNS, Design, compare, designs_from_variants
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.cli import main

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
INDUSTRIAL = SCENARIOS / "industrial.toml"


def test_industrial_scenario_loads_with_its_variants():
    cfg, meta = load_deployment(INDUSTRIAL)
    assert cfg.n_days == 30 and meta["name"] == "industrial"
    names = {d.name for d in designs_from_variants(INDUSTRIAL)}
    assert {"cms", "cms_memo", "grr_memo", "oue_memo", "rappor_memo", "dbitflip_memo"} <= names


def test_every_design_spends_the_budget():
    """At ε = 3 per device over 6 days every design's device spend is 3 (RAPPOR at the ε_∞ whose
    reports cost 3, not at ε_∞ = 3); fresh designs run at ε = 0.5 a report."""
    designs = (Design("grr", "grr"), Design("grr_memo", "grr", memoize=True),
               Design("rappor", "rappor", {"num_bits": 32, "cohorts": 4}, memoize=True))
    c = compare(SCENARIOS / "keyboard.toml", designs, epsilon_device=3.0, devices=300, days=6)
    t = c.table.set_index("design")
    assert t["epsilon_device"].tolist() == pytest.approx([3.0] * 3, rel=1e-5)
    assert t.loc["grr", "epsilon_report"] == pytest.approx(0.5, rel=1e-5)
    assert t.loc["grr_memo", "epsilon_report"] == pytest.approx(0.5, rel=1e-5)  # 6 reports, 100 classes
    assert t.loc["rappor", "epsilon_report"] == pytest.approx(0.5, rel=1e-5)
    assert t.loc["rappor", "epsilon_permanent"] > 0.5
    assert (t["kind"] == "ε-LDP").all() and (t["reports"] > 0).all()
    assert set(c.spend["design"]) == set(t.index)
    # one item: every fresh report (6 × 0.5); one memoized GRR value: its one report
    assert t.loc["grr", "epsilon_item"] == pytest.approx(3.0, rel=1e-5)
    assert t.loc["grr_memo", "epsilon_item"] == pytest.approx(0.5, rel=1e-5)
    assert "epsilon_item" in "\n".join(c.lines(width=200))


def test_per_report_budget_and_own_epsilon():
    d = (Design("grr", "grr", {"epsilon": 2.0}),)
    t = compare(SCENARIOS / "keyboard.toml", d, epsilon_report=1.0, devices=200, days=3).table
    assert t["epsilon_report"].iloc[0] == pytest.approx(1.0, rel=1e-5)
    assert t["epsilon_device"].iloc[0] == pytest.approx(3.0, rel=1e-5)
    t = compare(SCENARIOS / "keyboard.toml", d, devices=200, days=3).table
    assert t["epsilon"].iloc[0] == 2.0 and t["epsilon_device"].iloc[0] == pytest.approx(6.0)


def test_bad_designs_and_budgets_are_refused():
    with pytest.raises(InputError, match="'mechanism'"):
        Design("x", "nope")
    with pytest.raises(InputError, match="'aggregation'"):
        Design("x", "grr", aggregation="cloud")
    with pytest.raises(InputError, match="one budget"):
        compare(INDUSTRIAL, DEFAULT_DESIGNS, epsilon_device=1.0, epsilon_report=1.0)
    with pytest.raises(InputError, match="no 'epsilon'"):
        compare(SCENARIOS / "keyboard.toml", (Design("grr", "grr"),), devices=100, days=2)


@pytest.mark.slow
def test_command_writes_a_run_folder_and_refuses_to_replace_it(tmp_path, capsys):
    out = tmp_path / "cmp"
    argv = ["compare", "keyboard", "--designs", "olh,hr", "--devices", "200", "--days", "3", "--epsilon-device", "3",
            "--out", str(out), "-q"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "ε = 3 per device over 3 days" in printed and "olh" in printed and "hr" in printed
    assert {p.name for p in out.iterdir()} >= {"compare.csv", "spend.csv", "compare.png", "report.html", "manifest.json"}
    assert main(argv) == 2
    assert "--force" in capsys.readouterr().err
    assert main(argv + ["--force"]) == 0


def test_word_designs_shuffle_and_a_vocabulary_object():
    """A discovery design replaces the words use case; a shuffle design states its central ε; a
    vocabulary (anything with items and weights) replaces the fleet's items."""
    from types import SimpleNamespace

    vocab = SimpleNamespace(items=tuple("abcdefghijkl"), weights=tuple(range(12, 0, -1)))
    c = compare(SCENARIOS / "keyboard.toml", (Design("pem", "pem", {"pool": 16}),
                                              Design("olh", "olh", aggregation="shuffle")),
                epsilon_device=12.0, devices=400, days=3, vocabulary=vocab)
    t = c.table.set_index("design")
    assert t.loc["pem", "epsilon_report"] == pytest.approx(4.0, rel=1e-5)  # 12 over 3 fresh reports
    assert 0 <= t.loc["pem", "words_f1"] <= 1 and pd.isna(t.loc["pem", "share_mse_top10"])
    assert t.loc["olh", "epsilon_central"] <= t.loc["olh", "epsilon_device"]
    assert pd.isna(t.loc["pem", "epsilon_central"])
    assert t.loc["olh", "server_cells"] == 12  # one cell per item of the vocabulary
    assert list(t.columns[:4]) == ["mechanism", "memoize", "aggregation", "kind"]


def test_linking_observer_sees_more_of_fresh_than_of_memoized_reports():
    """At ε = 3 a report over 8 days, the linking observer (one emoji per device over the run) guesses
    fresh GRR reports far better than memoized ones, which stay at their one-report level. Each
    accuracy is a share of 500 devices (binomial sd ≤ 0.023); the margin asked, 0.15, is over 4.5 sd
    of the difference, so a correct implementation fails it with probability below 1e-5."""
    designs = (Design("grr", "grr"), Design("grr_memo", "grr", memoize=True))
    t = compare(SCENARIOS / "keyboard.toml", designs, epsilon_report=3.0, devices=300, days=8).table.set_index("design")
    assert t.loc["grr", "linking_linked"] > t.loc["grr_memo", "linking_linked"] + 0.15
