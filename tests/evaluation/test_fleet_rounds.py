"""Interactive discovery on a deployment's fleet (docs/math.md §10.4): the devices that donate words
each day answer TrieHH rounds; the slang word is found no earlier than it is typed."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.discovery.fleet_rounds import fleet_word_rounds
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.runtime.errors import InputError
from ldpsim.simulator.deployment import run
from tests.fleets import write_scenario as _write
from tests.fleets import WORDS

pytestmark = pytest.mark.slow  # one small deployment, ~9 s


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fleet")
    cfg, _ = load_deployment(_write(tmp, WORDS))
    return cfg, run(cfg, tmp / "run")


@pytest.mark.parametrize("name", ["triehh", "triehh_pp"])
def test_fleet_devices_find_the_slang_word(deployment, name):
    cfg, result = deployment
    table, s = fleet_word_rounds(cfg, result, name, gamma=0.5, epsilon_device=8.0, delta=1e-3, rng=1)
    assert list(table["day"]) == list(range(cfg.n_days))
    assert not table.loc[: cfg.slang_start_day - 1, "found"].any()  # not before it is typed
    assert s["slang_first_day_found"] is not None and s["slang_days_after_start"] >= 0
    assert s["words_interactive_kind"] == "central (ε, δ)" and s["words_interactive_delta"] <= 1e-3
    donated = result.truth["word_donated"][s["slang_first_day_found"]]
    assert s["slang_true_share"] == pytest.approx(donated[-1] / donated.sum())
    if name == "triehh_pp":  # votes/γ over the day's donors: within a few sd of the true share
        n = donated.sum()
        sd = np.sqrt(donated[-1] * (1 - 0.5) / 0.5) / n
        assert abs(s["slang_estimated_share"] - s["slang_true_share"]) < 6 * sd


def test_fleet_devices_answer_gboard_rounds_at_its_central_guarantee(deployment):
    cfg, result = deployment
    table, s = fleet_word_rounds(cfg, result, "gboard", epsilon_device=8.0, delta=1e-3, rng=1)
    assert list(table["day"]) == list(range(cfg.n_days))
    assert not table.loc[: cfg.slang_start_day - 1, "found"].any()  # not before it is typed
    assert s["words_interactive_kind"] == "central (ε, δ) after secure aggregation"
    assert 0.99 * 8.0 <= s["words_interactive_epsilon"] <= 8.0 and s["words_interactive_delta"] == 1e-3


def test_fleet_rounds_need_one_word_per_device(deployment):
    import dataclasses
    cfg, result = deployment
    uc = dataclasses.replace(cfg.use_case("word"), daily_limit=2)
    bad = dataclasses.replace(cfg, use_cases=tuple(uc if u.kind == "word" else u for u in cfg.use_cases))
    with pytest.raises(InputError, match="daily_limit"):
        fleet_word_rounds(bad, result)
    with pytest.raises(InputError, match="name"):
        fleet_word_rounds(cfg, result, name="pem")
