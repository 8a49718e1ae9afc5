"""An interactive words protocol in a deployment (docs/math.md §10.8): the devices online each night
answer a day of rounds, the ledger charges each of them ε/D of the run's ε, the server's rounds find the
slang word no earlier than it is typed, one seed reproduces the run for any sharding (serial or Dask),
and bad keys of ``[use_case.words]`` are refused naming the key."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.deployment.estimates import measure
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.simulator.deployment import run
from tests.fleets import WORDS, write_scenario

PEM = 'mechanism = "pem"\nepsilon = 4.0\ntop_k = 10\npool = 64\n'
TRIEHH = 'mechanism = "triehh"\nepsilon = 8.0\ntop_k = 10\ngamma = 0.5\ndelta = 1e-3\n'
#: the words use case alone: every ε in the ledger is a day of rounds
ONLY_WORDS = WORDS.split("[use_case.emoji]")[0] + "[use_case.words]" + WORDS.split("[use_case.words]")[1]


def _config(tmp_path, use_case=TRIEHH, text=WORDS, **kw):
    return load_deployment(write_scenario(tmp_path, text.replace(PEM, use_case)), **kw)[0]


@pytest.mark.slow
def test_the_ledger_charges_a_day_of_rounds_per_answering_device(tmp_path):
    cfg = _config(tmp_path, text=ONLY_WORDS)
    uc = cfg.use_case("word")
    plan = uc.make_mechanism()
    assert [u.name for u in cfg.use_cases] == ["words"] and plan.n_days == cfg.n_days == 3
    assert uc.ledger_cost == pytest.approx(8.0 / 3) == pytest.approx(plan.rounds_per_day * plan.epsilon_round)
    result = run(cfg, tmp_path / "run")
    answered = result.truth["word_donated"]
    assert answered.sum() > 0 and not result.aggregates  # rounds, no reports
    # each answer is one device-day charged ε/D: the ledger's total, and no device above ε over the run
    assert result.ledger_spent.sum() == pytest.approx(uc.ledger_cost * answered.sum(), rel=1e-12)
    assert result.ledger_spent.max() <= 8.0 + 1e-9
    days = result.ledger_spent / uc.ledger_cost
    np.testing.assert_allclose(days, np.round(days), atol=1e-9)


@pytest.mark.slow
def test_rounds_find_the_slang_word_and_state_the_guarantee(tmp_path):
    cfg = _config(tmp_path)
    tables = measure(cfg, run(cfg, tmp_path / "run"), 0)
    words, s = tables["words"], tables["summary"]
    assert list(words["day"]) == list(range(cfg.n_days))
    assert not words.loc[words["day"] < cfg.slang_start_day, "slang_found"].any()
    assert s["slang_first_day_found"] is not None and s["slang_first_day_found"] >= cfg.slang_start_day
    assert s["words_kind"] == "(ε, δ)-DP, central" and s["words_epsilon_device"] == pytest.approx(8.0)
    assert 0 < s["words_delta_device"] <= 1e-3 and "secure aggregation" in s["words_privacy"]
    assert np.isnan(s["slang_estimated_share"])  # TrieHH publishes the words, not their counts
    spend = tables["summary"]
    assert spend["epsilon_device_central"] == pytest.approx(8.0)


@pytest.mark.slow
def test_only_the_devices_online_that_night_answer(tmp_path):
    """Same seed, same typed words: PEM's donors are the opted-in devices with a word; the rounds' answerers
    are those of them online the following night, each with probability p_online = 0.5 independently, so
    answerers ~ Bin(donors, 0.5) (|z| < 4.5: false alarm < 1e-5)."""
    text = ONLY_WORDS.replace("[use_case.words]", "[fleet]\np_online = 0.5\n\n[use_case.words]")
    pem = run(_config(tmp_path, PEM, text), tmp_path / "pem").truth["word_donated"].sum()
    rounds = run(_config(tmp_path, TRIEHH, text), tmp_path / "rounds").truth["word_donated"].sum()
    assert abs(rounds - 0.5 * pem) < 4.5 * np.sqrt(pem * 0.25)


@pytest.mark.slow
@pytest.mark.parametrize("n_shards", [2])
def test_one_seed_reproduces_the_rounds_for_any_sharding(tmp_path, n_shards):
    cfg = _config(tmp_path, 'mechanism = "triehh_pp"\nepsilon = 8.0\ntop_k = 10\ngamma = 0.5\ntheta = 20\n')
    one, many = (measure(cfg, run(cfg, tmp_path / f"r{k}", n_shards=k), 0) for k in (1, n_shards))
    assert one["words"].equals(many["words"])
    other = _config(tmp_path, 'mechanism = "triehh_pp"\nepsilon = 8.0\ntop_k = 10\ngamma = 0.5\ntheta = 20\n',
                    seed=4)
    assert not measure(other, run(other, tmp_path / "seed4"), 0)["words"].equals(one["words"])


@pytest.mark.slow
def test_dask_workers_reproduce_the_rounds(tmp_path):
    cfg = _config(tmp_path, 'mechanism = "ldp_trie"\nepsilon = 24.0\ntop_k = 10\n')
    serial = run(cfg, tmp_path / "one")
    dask = run(cfg, tmp_path / "dask", n_shards=2, scheduler="local")
    assert np.array_equal(serial.ledger_spent, dask.ledger_spent)
    assert measure(cfg, serial, 0)["words"].equals(measure(cfg, dask, 0)["words"])


@pytest.mark.parametrize("use_case, key, match", [
    ('mechanism = "ldp_trie"\nepsilon = 8.0\ndelta = 1e-6\n', "use_case.words", "'delta' parameter of ldp_trie does not apply"),
    ('mechanism = "triehh"\nepsilon = 8.0\ngamma = 0.5\ndaily_limit = 2\n', "use_case.words",
     "'daily_limit' .* must be 1 with the interactive protocol 'triehh'.*Got 2"),
    ('mechanism = "triehh"\nepsilon = 8.0\ngama = 0.5\n', "use_case.words", "takes no parameter 'gama'"),
    ('mechanism = "triehh"\nepsilon = 8.0\ngamma = 0.5\nrounds_per_day = 0\n', "use_case.words", "rounds_per_day"),
    ('mechanism = "trie"\nepsilon = 8.0\n', "use_case.words", "must be one of .*'ldp_trie'.*'triehh'.*Got 'trie'"),
    ('mechanism = "triehh"\nepsilon = -1.0\ngamma = 0.5\n', "use_case.words.epsilon", "must be > 0"),
])
def test_bad_interactive_keys_are_refused(tmp_path, use_case, key, match):
    with pytest.raises(ScenarioError, match=match) as err:
        _config(tmp_path, use_case)
    assert err.value.key == key


def test_a_fake_word_attack_needs_a_one_shot_words_protocol(tmp_path):
    from ldpsim.scenarios.studies.poisoning.experiment import poison

    path = write_scenario(tmp_path, WORDS.replace(PEM, TRIEHH))
    with pytest.raises(ScenarioError, match="interactive protocol 'triehh'.*one-shot protocol") as err:
        poison(path, deployment=True, word="xqzw", fakes=[0], epsilons=[4.0])
    assert err.value.key == "--word"


@pytest.mark.slow
def test_the_accountant_composes_the_rounds_under_their_kind(tmp_path):
    """ε per device over the run: the basic sum ε, and the R rounds' (ε_r, δ_r) composed at the
    accountant's δ (docs/math.md §10.8), in the use case's row and in its kind's total."""
    from ldpsim.evaluation.privacy.accountant import device_spend
    from ldpsim.evaluation.privacy.composition import compose

    cfg = _config(tmp_path, text=ONLY_WORDS)
    plan = cfg.use_case("word").make_mechanism()
    table = device_spend(cfg, 0.01).table.set_index("use_case")
    composed = compose(plan.steps, 0.01).epsilon
    assert table.loc["words", "kind"] == "(ε, δ)-DP, central" and table.loc["words", "epsilon_device"] == pytest.approx(8.0)
    assert table.loc["words", "epsilon_device_at_delta"] == pytest.approx(composed)
    assert table.loc["total", "epsilon_device_at_delta"] == pytest.approx(composed)
    assert np.isnan(device_spend(cfg, 1e-6).table.set_index("use_case").loc["words", "epsilon_device_at_delta"])
