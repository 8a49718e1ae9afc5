"""Days until a new slang word is found (docs/math.md §10.4): the growing workload, equal privacy,
the comparison's scores, its scenario file and its run folder."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.scenarios.studies.discovery.days import discovery_days, discovery_days_from_file, growing_slang
from ldpsim.evaluation.discovery.equal_privacy import equal_privacy_protocols
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.evaluation.privacy.threshold_composition import composed_delta
from ldpsim.mechanisms.discovery.threshold_privacy import run_privacy
from ldpsim.runtime.runfolder import RunFolderError


@pytest.mark.parametrize("language,slang", [("en", "rizz"), ("zh", "绝绝子")])
def test_growing_slang_ramps_the_slang_word(language, slang):
    sd = growing_slang(language, n_days=8, start_day=2, peak_share=0.1, ramp_days=4)
    assert sd.slang == slang and sd.words[-1] == slang and sd.start_day == 2
    np.testing.assert_allclose(sd.shares.sum(axis=1), 1.0)
    np.testing.assert_allclose(sd.shares[:, -1], [0, 0, 0.025, 0.05, 0.075, 0.1, 0.1, 0.1])
    # the other words keep their proportions
    np.testing.assert_allclose(sd.shares[7, :-1] / sd.shares[0, :-1], 0.9)
    sd.codec.symbols(list(sd.words))  # every word, the slang too, can be carried


def test_slang_word_already_in_the_vocabulary_is_refused():
    with pytest.raises(ValueError, match="already in the vocabulary"):
        growing_slang("en", slang="the")


@pytest.mark.slow
def test_equal_privacy_spends_the_same_epsilon():
    sd = growing_slang("zh", n_days=5)
    prot = equal_privacy_protocols(sd.codec, 4.0, 1e-9, 5, 4, gamma=0.05,
                                   names=("triehh", "triehh_pp", "ldp_trie", "sfp", "pem", "treehist"))
    assert [row["epsilon"] for _, row in prot.values()] == pytest.approx([4.0] * 6)
    assert prot["ldp_trie"][0].epsilon == pytest.approx(4.0 / 20) and prot["ldp_trie"][1]["kind"] == "pure ε-LDP"
    for name in ("triehh", "triehh_pp"):
        proto, row = prot[name]
        # θ is the smallest whose composed δ meets the target (docs/math.md §10.9), at most basic composition's
        assert row["delta"] <= 1e-9 < composed_delta(4.0, 0.05, proto.theta - 1, 20, proto.counts_released)
        assert run_privacy(4.0, 0.05, int(row["per_step"].split("θ=")[2].split(")")[0]), 20,
                           proto.counts_released)["delta"] <= 1e-9
    assert prot["pem"][0].epsilon == pytest.approx(4.0 / 5) and prot["pem"][1]["delta"] == 0.0
    # the accountant's ε at the same δ: never above the basic sum, below it over many small rounds
    assert all(row["epsilon_pld"] <= row["epsilon"] + 1e-9 for _, row in prot.values())
    many = equal_privacy_protocols(sd.codec, 4.0, 1e-9, 14, 8, gamma=0.05, names=("ldp_trie", "pem"))
    assert many["ldp_trie"][1]["epsilon_pld"] == pytest.approx(2.15, abs=0.01)  # quoted in the docs
    assert many["pem"][1]["epsilon_pld"] == pytest.approx(4.0)
    tree, row = equal_privacy_protocols(sd.codec, 4.0, 1e-9, 5, 4, 0.05, names=("prefix_tree",),
                                        cohort=100_000)["prefix_tree"]
    assert (row["kind"], row["delta"]) == ("central (ε, δ) after secure aggregation", 1e-9)
    assert row["epsilon"] <= 4.0 and tree.epsilon > 4.0 / 20  # amplified: more local ε than the local split
    with pytest.raises(ValueError, match="unknown protocol"):
        equal_privacy_protocols(sd.codec, 4.0, 1e-9, 5, 4, 0.05, names=("rappor",))


def _small(seeds=(0,)):
    sd = growing_slang("en", n_days=5, start_day=1, peak_share=0.3, ramp_days=1)
    prot = equal_privacy_protocols(sd.codec, 8.0, 1e-6, 5, sd.codec.length, 0.2, names=("triehh_pp", "pem"))
    return discovery_days(sd, prot, n_devices=20_000, p_online=0.5, rounds_per_day=sd.codec.length, top_k=5,
                          seeds=seeds)


def test_a_loud_slang_word_is_found_by_the_interactive_pass_the_day_it_is_typed():
    r = _small()
    tri = r.days[r.days["protocol"] == "triehh_pp"].set_index("day")
    assert not tri.loc[0, "found"] and tri.loc[1:, "found"].all()
    s = r.summary.set_index("protocol")
    assert s.loc["triehh_pp", "days_to_discovery_median"] == 0 and s.loc["triehh_pp", "kind"] == "central (ε, δ)"
    # TrieHH++'s share estimate: votes/γ over the online devices, close to the 30 % typed
    assert abs(tri.loc[4, "slang_estimate"] - 0.3) < 0.05 and tri.loc[4, "slang_true"] == pytest.approx(0.3, abs=0.02)
    # every list, one-shot nights (PEM) as interactive passes, states the live prefixes its caps dropped
    assert r.days["dropped"].notna().all() and (r.days["dropped"] >= 0).all() and s["dropped_mean"].notna().all()


def test_same_seed_same_numbers():
    a, b = _small(), _small()
    assert a.days.equals(b.days)


def test_scenario_file_runs_and_writes_a_run_folder(tmp_path):
    toml = tmp_path / "d.toml"
    toml.write_text('[discovery_days]\nvocabulary = "zh"\nn_days = 3\nn_devices = 5000\npeak_share = 0.3\n'
                    'start_day = 0\nramp_days = 1\nepsilon = 8.0\ndelta = 1e-6\ngamma = 0.3\n'
                    'protocols = ["triehh"]\n', encoding="utf-8")
    r = discovery_days_from_file(toml)
    assert r.days["found"].all()
    out = tmp_path / "out"
    names = sorted(p.name for p in r.to_folder(out))
    assert names == ["discovery_days.csv", "discovery_days.png", "discovery_days_summary.csv"]
    with pytest.raises(RunFolderError, match="force"):
        r.to_folder(out)
    r.to_folder(out, force=True)


@pytest.mark.parametrize("body,key", [('[discovery_days]\nn_dayz = 3\n', "n_dayz"),
                                       ('[discovery_days]\ngamma = 2.0\n', "gamma"),
                                       ('[discovery_days]\nseeds = []\n', "seeds"),
                                       ('[discovery_days]\nprotocols = ["rappor"]\n', "protocols"),
                                       ('[other]\n', "file")])
def test_scenario_file_errors_name_the_key(tmp_path, body, key):
    toml = tmp_path / "d.toml"
    toml.write_text(body, encoding="utf-8")
    with pytest.raises(ScenarioError, match=key):
        discovery_days_from_file(toml)


def test_interactive_lists_are_ranked_by_votes_before_the_top_k():
    """'cab' completes in the last round, after 'a' and 'b', but has the most votes: it heads the list."""
    from ldpsim.scenarios.studies.discovery.days import SlangDays
    from ldpsim.mechanisms.discovery.words import WordCodec

    words = ("a", "b", "cab")
    sd = SlangDays(words, np.array([[0.1, 0.1, 0.8]]), "cab", 0, WordCodec.for_words(words))
    prot = equal_privacy_protocols(sd.codec, 8.0, 1e-6, 1, 3, 0.5, names=("triehh",))
    r = discovery_days(sd, prot, n_devices=2000, p_online=1.0, rounds_per_day=3, top_k=1)
    assert r.days["found"].tolist() == [True] and r.days["f1"].tolist() == [1.0]


def test_the_discover_command_runs_a_scenario_into_its_folder(tmp_path, monkeypatch, capsys):
    """``ldpsim discover`` is the thin layer over discovery_days_from_file: same table, a run folder; the
    printed table fits the terminal and leads with the answer."""
    from ldpsim.scenarios.cli import main
    monkeypatch.setenv("COLUMNS", "100")
    scenario = tmp_path / "days.toml"
    scenario.write_text("[discovery_days]\nn_devices = 20000\nn_days = 4\nstart_day = 1\nseeds = [0]\n"
                        "protocols = [\"triehh\", \"pem\"]\n", encoding="utf-8")
    assert main(["discover", str(scenario), "--out", str(tmp_path / "out"), "-q"]) == 0
    assert (tmp_path / "out" / "discovery_days_summary.csv").is_file()
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("Days until the new word is found")
    assert printed[1].split()[:2] == ["protocol", "days_to_discovery_median"]
    assert all(len(line) <= 100 for line in printed[1:]), max(printed, key=len)
    assert {"epsilon", "epsilon_item", "epsilon_person"} <= set(printed[1].split())   # an ε with what it covers
    assert main(["discover", str(scenario), "--out", str(tmp_path / "out"), "-q"]) == 2  # finished: --force
