"""The confidential-aggregation (TEE) trust model: calibration to a person's ε over the run, its guarantees and
what is left if attestation fails, its scenario keys, its nightly discovery of new words (docs/math.md §9.13)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.discovery.tee_histogram import tee_nightly_scores
from ldpsim.evaluation.poisoning.trust_poisoning import trust_model_gain
from ldpsim.evaluation.privacy.trust_accounting import calibrate, guarantees
from ldpsim.evaluation.privacy.trust_models import DEFAULTS, MODELS, model_from, model_params, trust_model
from ldpsim.mechanisms.aggregation.tee import TeeDesign, bound_contributions
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.scenarios.studies.scenario.trust_keys import configured_model


@pytest.mark.parametrize("noise", ["gaussian", pytest.param("laplace", marks=pytest.mark.slow)])
@pytest.mark.parametrize("reports_per_day", [1, 2])
def test_calibrated_to_the_run_and_stated_per_scope(noise, reports_per_day):
    start = trust_model("tee", tee=TeeDesign(noise, 1.0, 1.0))
    model = calibrate(start, 2.0, 10_000, 30, 1e-9, reports_per_day)
    assert "tee" in MODELS and model.tee.max_keys == reports_per_day
    g = {x.scope: x for x in guarantees(model, 10_000, 30, 1e-9, reports_per_day)}
    assert 2.0 * 0.99 <= g["run"].epsilon <= 2.0 and g["run"].delta == 1e-9
    assert g["report"].epsilon <= g["day"].epsilon < g["run"].epsilon
    assert g["misbehaving server"].epsilon == math.inf and "attestation" in g["misbehaving server"].meaning
    # add-remove neighbours: half the noise's unit changes, the same threshold: a smaller ε
    add_remove = {x.scope: x for x in guarantees(model, 10_000, 30, 1e-9, reports_per_day, "add-remove")}
    assert add_remove["run"].epsilon < g["run"].epsilon


def test_plain_values_round_trip_and_the_release_is_the_designs():
    model = calibrate(DEFAULTS["tee"], 1.0, 5_000, 30, 1e-9)
    assert model_from(model_params(model)) == model
    counts = np.array([0, 1, 5000, 20_000])
    got = model.protocol(4)(counts, np.random.default_rng(1))
    assert got[0] == 0 and got[1] == 0 and got[3] > 0                 # one holder: below T (p₁ ≈ 1e-11)
    assert model.upload_bytes(100) == 4
    assert model.trusted.startswith("the attested enclave")


def test_a_crafted_report_counts_as_one_valid_report():
    """The enclave's bounding (L0 = L∞ = 1) keeps one key, counted once, of a fake that uploads a target 40
    times beside three other keys: a crafted multi-item report gains what one valid report gains."""
    _, key, count = bound_contributions(np.zeros(43, int), [4] * 40 + [1, 2, 3], 1, 1, np.random.default_rng(0))
    assert key.size == 1 and count.sum() == 1
    counts = np.array([400, 300, 200, 80, 20])
    crafted = trust_model_gain(DEFAULTS["tee"], "mga", [4], counts, 20)
    valid = trust_model_gain(DEFAULTS["tee"], "ria", [4], counts, 20)
    assert not crafted["as_crafted"] and crafted["gain"] == valid["gain"]


def test_scenario_keys(tmp_path):
    table = {"aggregation": "tee", "epsilon_device": 2.0, "tee_noise": "gaussian"}
    model = configured_model(table, "trust.use_case.x", tmp_path / "f.toml", 10_000, 30, 1e-9, 100)
    assert model.tee.noise == "gaussian" and model.tee.epsilon(30, 1e-9, replace=True) <= 2.0
    assert DEFAULTS["tee"].configured(tee_noise="laplace").tee.noise == "laplace"   # the key sets the design's noise
    with pytest.raises(ScenarioError, match="tee_noise"):
        configured_model({**table, "tee_noise": "cauchy"}, "trust.use_case.x", tmp_path / "f.toml", 10_000, 30, 1e-9,
                         100)
    with pytest.raises(ScenarioError, match="noise"):
        configured_model({**table, "noise": "skellam"}, "trust.use_case.x", tmp_path / "f.toml", 10_000, 30, 1e-9,
                         100)


def test_nightly_histogram_invents_nothing_and_states_its_single_holders():
    design = TeeDesign("gaussian", 2.0, 10.0)
    words = ("a", "b", "c", "rizz")
    online = np.array([[500, 1, 0, 0], [500, 1, 3, 40]])
    rows = tee_nightly_scores(design, words, online, 2, "rizz", np.random.default_rng(0))
    assert [r["invented"] for r in rows] == [0, 0]
    assert rows[0]["found"] is False and rows[1]["found"] is True
    assert rows[0]["expected_false"] == pytest.approx(design.key_delta())


@pytest.mark.parametrize("argv, names", [
    (["discover", "--epsilon", "2"], ["--epsilon", "--trust"]),
    (["discover", "--days", "5"], ["--days", "--trust"]),
    (["discover", "discovery_days", "--trust"], ["SCENARIO", "--trust", "discovery_days"]),
])
def test_discover_trust_refuses_what_does_not_apply(argv, names, capsys, tmp_path):
    from tests.cli_cases import expect_clear_refusal
    expect_clear_refusal([*argv, "--out", str(tmp_path / "out")], names, capsys)


@pytest.mark.slow
def test_word_discovery_under_four_trust_models():
    from ldpsim.scenarios.studies.trust.word_discovery import DESIGNS, compare_word_discovery
    r = compare_word_discovery(4.0, days=30, seeds=(0,))
    t = r.table.set_index("design")
    assert list(t.index) == list(DESIGNS)
    assert (t["epsilon_person"] <= 4.0 + 1e-9).all() and (t["epsilon_person"] >= 4.0 * 0.99).all()
    assert (t["epsilon_item"] <= t["epsilon_person"]).all() and (t["entries_lost"] > 0).all()
    assert (t["delta"] <= 1e-9).all()
    assert t.loc["tee_histogram", "found_share"] == 1.0 and t.loc["tee_histogram", "invented_mean"] == 0
    assert t.loc["tee_histogram", "invented_expected"] < 1e-6
    assert set(r.nights["design"]) == set(DESIGNS)
    assert r.nights[r.nights["design"] == "tee_histogram"]["day"].nunique() == 30     # one release a night
