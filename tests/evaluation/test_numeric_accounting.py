"""The run's one accountant charges the numeric use cases (docs/math.md §8.2, §9.14): each use case's nights
per use case and in its kind's total, outside the ledger's caps, secure-aggregation releases' δ composed; the
run's summary.json and printed summary state them."""

from __future__ import annotations

import json
import math

import pytest

from ldpsim.evaluation.numeric_use import NumericUseCase, key_ids, numeric_design
from ldpsim.evaluation.privacy.accountant import device_spend, spend_summary
from ldpsim.evaluation.privacy.composition import compose
from ldpsim.mechanisms.deltas import DELTA_SPEND
from tests.fleets import TINY, tiny_config, write_scenario

CENTRAL = "(ε, δ)-DP, central"
NUMERIC = (NumericUseCase("taps", numeric_design("ldp-hdg", "heatmap", epsilon=1.5), key_ids(["space"])),
           NumericUseCase("lat", numeric_design("secagg-flat", "reading", epsilon=2.0, delta=1e-9),
                          reading="key_latency"),
           NumericUseCase("speed", numeric_design("central-flat", "reading", epsilon=0.5), reading="typing_speed"))


def _independent(cfg):
    """ε-LDP and central totals summed from the scenario's own numbers: every ledger use case's n_days ×
    daily_limit reports at its ε (capped by the budget), every numeric use case's n_days nights at its ε."""
    ledger = min(sum(cfg.n_days * uc.daily_limit * dict(uc.params)["epsilon"] for uc in cfg.use_cases),
                 cfg.budget_total)
    return (ledger + cfg.n_days * 1.5, cfg.n_days * (2.0 + 0.5), cfg.n_days * 1e-9)


@pytest.mark.parametrize("budget_total", [math.inf, 5.0])
def test_totals_equal_an_independent_sum(budget_total):
    """Per use case n_days · ε (δ: n_days · δ of one release); per kind the independent sum (the ledger's cap
    bounds only the ledger's use cases); at δ the PLD of exactly those steps."""
    cfg = tiny_config(n_days=3, numeric=NUMERIC, budget_total=budget_total)
    spend = device_spend(cfg)
    t = spend.table.set_index(["use_case", "kind"])
    for uc in NUMERIC:
        row = t.loc[(uc.name, uc.design.guarantee.label)]
        assert row["epsilon_device"] == pytest.approx(3 * uc.design.epsilon, rel=1e-12)
        assert row["epsilon_person"] == row["epsilon_item"] == row["epsilon_device"]
        assert row["delta_device"] == pytest.approx(3 * uc.design.guarantee.delta, rel=1e-12)
        assert row["reports"] == 3
    ldp, central, delta = _independent(cfg)
    assert spend.total("ε-LDP") == pytest.approx(ldp, rel=1e-12)
    assert spend.total(CENTRAL) == pytest.approx(central, rel=1e-12)
    assert spend.total(CENTRAL, "delta_device") == pytest.approx(delta, rel=1e-12)
    assert spend.total(CENTRAL, "epsilon_person") == pytest.approx(central, rel=1e-12)
    steps = [(2.0, 1e-9)] * 3 + [(0.5, 0.0)] * 3
    assert spend.total(CENTRAL, "epsilon_device_at_delta") == pytest.approx(
        min(compose(steps, DELTA_SPEND).epsilon, central), rel=1e-9)
    if math.isinf(budget_total):
        pure = [(2.0, 0.0)] * 6 + [(1.0, 0.0)] * 3 + [(1.5, 0.0)] * 3
        assert spend.total("ε-LDP", "epsilon_device_at_delta") == pytest.approx(
            min(compose(pure, DELTA_SPEND).epsilon, ldp), rel=1e-9)
    assert spend.total("ε-LDP", "delta_device") == 0.0


def test_no_numeric_use_case_leaves_the_spend_unchanged():
    cfg = tiny_config(n_days=3)
    assert "delta_device_central" not in spend_summary(cfg)
    assert spend_summary(cfg)["epsilon_device_ldp"] == pytest.approx(_independent(cfg)[0] - 4.5, rel=1e-12)


@pytest.mark.slow
def test_a_runs_summary_states_the_numeric_use_cases_spend(tmp_path):
    """summary.json's per-person and per-device ε and the printed summary hold the numeric use cases, each and
    in the person's total over all use cases; numeric_metrics' ε and δ per person are the accountant's."""
    from ldpsim.scenarios.studies.deployment.study import run_deployment
    numeric = ('[numeric.taps]\ndesign = "ldp-hdg"\nkeys = ["space"]\nepsilon = 1.5\n\n'
               '[numeric.lat]\ndesign = "secagg-flat"\nreading = "key_latency"\nepsilon = 2.0\ndelta = 1e-9\n')
    study = run_deployment(write_scenario(tmp_path, TINY + "\n" + numeric), out=tmp_path / "run", devices=2500)  # secagg-flat: cohorts ≥ 1000 a night
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    person = summary["person"]
    assert person["taps"]["epsilon_person"] == pytest.approx(2 * 1.5)
    assert person["lat"]["epsilon_person"] == pytest.approx(2 * 2.0)
    assert person["lat"]["delta_person"] == pytest.approx(2e-9)
    # TINY's ε-LDP ledger use cases: emoji GRR ε = 4 and session length PM ε = 1, one report a day each over 2
    # days (typing speed's SDPM is ε-SDLDP, another kind)
    assert person["total ε-LDP"]["epsilon_person"] == pytest.approx(2 * (4.0 + 1.0) + 2 * 1.5)
    assert summary["epsilon_device_ldp"] == pytest.approx(2 * (4.0 + 1.0) + 2 * 1.5)
    assert summary["epsilon_device_central"] == pytest.approx(4.0)
    assert summary["delta_device_central"] == pytest.approx(2e-9)
    m = study.tables["numeric_metrics"].drop_duplicates("use_case").set_index("use_case")
    assert m.loc["taps", "epsilon_person"] == person["taps"]["epsilon_person"]
    assert m.loc["lat", "delta_person"] == person["lat"]["delta_person"]
    text = " ".join((tmp_path / "run" / "summary.txt").read_text(encoding="utf-8").split())
    for line in ("taps 1.5 3 3", "lat 2 4 4", "all, ε-LDP — 8 13", "all, (ε, δ)-DP, central — 4 4",
                 "With a δ (the releases' δ summed over the run): lat δ = 2e-09; all, (ε, δ)-DP, central δ = 2e-09.",
                 "the ledger's use cases only: the numeric use cases' spend is in the ε per report, item and person table"):
        assert line in text
