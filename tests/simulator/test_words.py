"""The words use case of the deployment: [words] and [use_case.words] loaded and checked, the fleet
types words and the slang word from its start day, the server's daily discovery job finds the slang
word, and ε and bytes of word donations are accounted like every other use case."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.deployment.estimates import measure
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.simulator.deployment import run
from tests.fleets import WORDS, write_scenario as _write




def test_words_use_case_loads(tmp_path):
    cfg, _ = load_deployment(_write(tmp_path, WORDS))
    uc = cfg.use_case("word")
    assert uc.mechanism == "pem" and uc.top_k == 10 and uc.ledger_cost == 4.0
    assert cfg.words[-1] == "rizzé" and cfg.word_weights[-1] == 0.0 and len(cfg.words) == 201
    assert cfg.slang_start_day == 1 and cfg.slang_share == 0.3


@pytest.mark.parametrize("old, new, key", [
    ('slang = "rizzé"', 'slang = "riz-z"', "words.slang"),          # '-' is not in the alphabet
    ('slang = "rizzé"', 'slang = "the"', "words.slang"),            # a dictionary word
    ("slang_share = 0.3", "slang_share = 1.5", "words.slang_share"),
    ("top_k = 10", "top_k = 0", "use_case.words.top_k"),
    ('mechanism = "pem"', 'mechanism = "cms"', "use_case.words"),  # not a discovery protocol
])
def test_bad_word_values_are_refused(tmp_path, old, new, key):
    with pytest.raises(ScenarioError) as err:
        load_deployment(_write(tmp_path, WORDS.replace(old, new, 1)))
    assert err.value.key == key


def test_slang_is_found_and_accounted(tmp_path):
    cfg, _ = load_deployment(_write(tmp_path, WORDS))
    result = run(cfg, tmp_path / "run")
    tables = measure(cfg, result, 0)
    words, s = tables["words"], tables["summary"]
    assert not words["slang_found"].iloc[0] or cfg.slang_start_day == 0
    assert s["slang_first_day_found"] is not None and s["slang_first_day_found"] >= cfg.slang_start_day
    assert 0.1 < s["slang_estimated_share"] < 0.5 and abs(s["slang_true_share"] - 0.3 * 2 / 3) < 0.1
    donated = result.truth["word_donated"]
    assert donated[0, -1] == 0 and donated[1:, -1].sum() > 0  # no slang before its start day
    # every word donation costs the use case's ε in the ledger, like emoji and readings
    uc_eps = sum(u.ledger_cost for u in cfg.use_cases)
    assert result.ledger_daily.max() <= uc_eps + 1e-9
    assert s["words_report_bytes"] == cfg.use_case("word").make_mechanism().report_bytes


@pytest.mark.slow
def test_slang_discovery_probability_by_day(tmp_path):
    from ldpsim.evaluation.deployment.discovery_job import slang_discovery_by_day

    cfg, _ = load_deployment(_write(tmp_path, WORDS))
    by_day, first = slang_discovery_by_day(cfg, [1, 2, 3], tmp_path / "runs")
    assert list(by_day["day"]) == [0, 1, 2] and (by_day["runs"] == 3).all()
    assert by_day.loc[0, "p_found"] == 0.0  # before the slang word exists
    assert first is not None and first >= cfg.slang_start_day
