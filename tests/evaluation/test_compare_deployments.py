"""Variants of one fleet: memoization saves ε at the same bytes; the shipped industrial scenario loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from ldpsim.evaluation.deployment.compare import compare, load_variants
from ldpsim.evaluation.scenario.deployment_file import load_deployment

INDUSTRIAL = Path(__file__).resolve().parents[2] / "scenarios" / "industrial.toml"


def test_industrial_scenario_loads_with_its_variants():
    cfg, meta = load_deployment(INDUSTRIAL)
    assert cfg.n_days == 30 and meta["name"] == "industrial"
    assert {"cms", "cms_memo", "grr_memo", "oue_memo"} <= set(load_variants(INDUSTRIAL))


def test_memoized_variant_charges_less_for_the_same_reports(tmp_path):
    text = INDUSTRIAL.read_text(encoding="utf-8")
    head = text[:text.index("[variants.cms]")]
    path = tmp_path / "s.toml"
    path.write_text(head + '[variants.grr]\nmechanism = "grr"\nepsilon = 2.0\n\n'
                    '[variants.grr_memo]\nmechanism = "grr"\nepsilon = 2.0\nmemoize = true\n', encoding="utf-8")
    df = compare(path, devices=400, days=4).set_index("variant")
    fresh, memo = df.loc["grr"], df.loc["grr_memo"]
    assert memo["epsilon_mean"] < fresh["epsilon_mean"]
    # what memoization saved is exactly the difference: the same donations are sent either way (the
    # memoized 1BitMean typing speed saves the same in both variants)
    assert memo["epsilon_mean"] + memo["epsilon_saved_mean"] == pytest.approx(
        fresh["epsilon_mean"] + fresh["epsilon_saved_mean"])
    assert fresh["epsilon_saved_mean"] > 0 and fresh["typing_speed_sd"] > 0
    assert memo["bytes_per_device"] == pytest.approx(fresh["bytes_per_device"], rel=0.02)
