"""Vocabulary files in scenario files and on the command line: ``[workload] vocabulary``, ``--vocabulary``,
``[fleet] events_per_day``; the shipped my_emoji scenarios run with ``ldpsim run`` and ``ldpsim sweep``."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.scenarios.studies.scenario.grid import load_scenario
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.scenarios.studies.sweep.runner import run_cell
from ldpsim.evaluation.workloads import load_vocabulary
from ldpsim.scenarios.cli import main

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
EMOJI_500 = SCENARIOS / "data" / "emoji_500.csv"


def _scenario(folder: Path, name: str, text: str) -> Path:
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


DEPLOYMENT = """[deployment]
devices = 2048
days = 2
[workload]
{workload}
[fleet]
{fleet}
[use_case.emoji]
mechanism = "grr"
epsilon = 2.0
"""


def test_shipped_deployment_uses_the_files_items_and_weights():
    cfg, meta = load_deployment(SCENARIOS / "my_emoji.toml")
    vocab = load_vocabulary(EMOJI_500)
    assert cfg.items == vocab.items and np.allclose(cfg.item_weights, vocab.shares, rtol=1e-12, atol=0)
    assert cfg.events_per_session == pytest.approx(5.0 / cfg.sessions_per_day) and cfg.activity_sigma == 0.8
    assert cfg.opt_in == 0.7 and meta["notices"] == ()


def test_relative_files_are_relative_to_the_scenario_and_the_option_to_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mine.txt").write_text("lol 5\nbrb 3\nlol 1\n", encoding="utf-8")
    path = _scenario(tmp_path, "s.toml", DEPLOYMENT.format(workload='vocabulary = "data/mine.txt"', fleet=""))
    monkeypatch.chdir(SCENARIOS)
    cfg, meta = load_deployment(path)
    assert cfg.items == ("lol", "brb") and cfg.item_weights == (0.6666666666666666, 0.3333333333333333)
    assert "1 repeated item(s) merged" in meta["notices"][0]
    cfg, _ = load_deployment(path, vocabulary="data/emoji_500.csv")  # relative to the current folder
    assert len(cfg.items) == 500
    top = _scenario(tmp_path, "t.toml", DEPLOYMENT.format(
        workload='vocabulary = "data/mine.txt"\nformat = "corpus"\nlowercase = false\ntop = 2', fleet=""))
    cfg, _ = load_deployment(top)  # the list read as text: its words and numbers counted
    assert cfg.items == ("lol", "5")


@pytest.mark.parametrize("workload, fleet, key, match", [
    ('vocabulary = "nope.csv"', "", "workload.vocabulary", "nope.csv: no such file"),
    ('vocabulary = "../data/one.txt"', "", "workload.vocabulary", "one.txt holds 1 item; at least 2"),
    ('vocabulary = "../data/emoji_500.csv"\nname = "emoji"', "", "workload.name", "named 'vocabulary'"),
    ('vocabulary = "../data/emoji_500.csv"\ntopp = 3', "", "workload.topp", "unknown key"),
    ("vocabulary = 3", "", "workload.vocabulary", "must be a file name"),
    ('vocabulary = "../data/emoji_500.csv"', "events_per_day = { mean = 0.0 }", "fleet.events_per_day.mean",
     "must be > 0"),
    ('vocabulary = "../data/emoji_500.csv"', "events_per_day = { mean = 3.0 }\nevents_per_session = 1.0",
     "fleet.events_per_day", "leave out fleet.events_per_session"),
    ('vocabulary = "../data/emoji_500.csv"', 'events_per_day = "nope.txt"', "fleet.events_per_day",
     "nope.txt: no such file"),
])
def test_bad_vocabulary_keys_name_the_key(tmp_path, workload, fleet, key, match):
    folder = tmp_path / "sub"
    folder.mkdir()
    shutil.copytree(SCENARIOS / "data", tmp_path / "data")
    (tmp_path / "data" / "one.txt").write_text("lol\n", encoding="utf-8")
    path = _scenario(folder, "s.toml", DEPLOYMENT.format(workload=workload, fleet=fleet))
    with pytest.raises(ScenarioError, match=match) as info:
        load_deployment(path)
    assert info.value.key == key


def test_events_per_day_file_gives_each_device_its_measured_mean(tmp_path):
    """Devices draw their level from the file; a device at level L types Poisson(L·a·s·e)-compounded emoji:
    mean L a day, variance L(1 + e) (e = emoji per session). Fixed seed; |z| < 4.5 (false alarm ~ 7e-6 each)."""
    from ldpsim.simulator.fleet import draw_day, draw_traits
    (tmp_path / "per_device.txt").write_text("0\n2\n10\n10\n", encoding="utf-8")
    path = _scenario(tmp_path, "s.toml", DEPLOYMENT.format(workload=f'vocabulary = "{EMOJI_500}"',
                                                           fleet='events_per_day = "per_device.txt"'))
    cfg, _ = load_deployment(path)
    mean = 22 / 4
    assert cfg.events_per_session == pytest.approx(mean / cfg.sessions_per_day)
    traits = draw_traits(cfg, 0)
    level = np.round(traits.activity * mean, 9)
    n, days = level.size, 6
    for value, p in ((0.0, 0.25), (2.0, 0.25), (10.0, 0.5)):
        k = int((level == value).sum())
        assert abs(k - n * p) / np.sqrt(n * p * (1 - p)) < 4.5
    events = sum(np.bincount(draw_day(cfg, traits, 0, d).event_device, minlength=n) for d in range(days))
    assert events[level == 0].sum() == 0
    for value in (2.0, 10.0):
        m = int((level == value).sum()) * days
        z = (events[level == value].sum() - m * value) / np.sqrt(m * value * (1 + cfg.events_per_session))
        assert abs(z) < 4.5, (value, z)


def test_events_per_day_mean_and_dispersion(tmp_path):
    path = _scenario(tmp_path, "s.toml", DEPLOYMENT.format(
        workload=f'vocabulary = "{EMOJI_500}"', fleet="events_per_day = { mean = 12.0, dispersion = 1.5 }"))
    cfg, _ = load_deployment(path)
    assert cfg.events_per_session * cfg.sessions_per_day == pytest.approx(12.0) and cfg.activity_sigma == 1.5
    assert cfg.activity_levels == ()


# sweeps -----------------------------------------------------------------------------------------------
def test_shipped_sweep_reads_the_file_and_results_name_the_items():
    scenario = load_scenario(SCENARIOS / "my_emoji_sweep.toml")
    assert scenario.workload["vocabulary"] == str(EMOJI_500)
    assert scenario.workload["sha256"] == load_vocabulary(EMOJI_500).source["sha256"]
    cell = scenario.cells()[0]
    estimates, summary = run_cell(cell, scenario.seed)
    top = summary.dropna(subset=["rank"]).sort_values("rank")
    assert top["item"].iloc[:3].tolist() == ["😂", "🙂", "\u2764\ufe0f"]
    assert set(estimates["item"].iloc[:10]) <= set(load_vocabulary(EMOJI_500).items[:10])


def test_sweep_option_replaces_the_workload_keeping_n(tmp_path):
    data = tmp_path / "mine.tsv"
    data.write_text("item\tshare\nx\t0.5\ny\t0.3\nz\t0.2\n", encoding="utf-8")
    scenario = load_scenario(SCENARIOS / "emoji_mechanisms.toml", vocabulary=data)
    assert scenario.workload["name"] == "vocabulary" and scenario.workload["n"] == 1_000_000
    assert "top" not in scenario.workload and scenario.cells()[0].params["domain_size"] == 3


def test_sweep_grid_cannot_vary_the_workload_of_a_vocabulary(tmp_path):
    text = (SCENARIOS / "my_emoji_sweep.toml").read_text(encoding="utf-8").replace(
        "[grid]", '[grid]\n"workload.name" = ["emoji"]').replace('"data/', f'"{SCENARIOS}/data/')
    with pytest.raises(ScenarioError, match="cannot vary with a vocabulary file") as info:
        load_scenario(_scenario(tmp_path, "s.toml", text))
    assert info.value.key == "grid.workload.name"


# the command line -------------------------------------------------------------------------------------
@pytest.mark.slow
def test_run_and_sweep_the_shipped_example(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "my_emoji", "--devices", "400", "--days", "2", "--out", "r", "-q"]) == 0
    top = pd.read_csv(tmp_path / "r" / "top.csv")
    assert top["token"].iloc[:3].tolist() == ["😂", "🙂", "\u2764\ufe0f"]
    assert main(["sweep", "my_emoji_sweep", "--dry-run"]) == 0
    assert "12 cells" in capsys.readouterr().out


@pytest.mark.slow
def test_sweep_the_shipped_example_with_a_corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpus = SCENARIOS / "data" / "chat_en.corpus.txt"
    import ldpsim
    summary = ldpsim.sweep("my_emoji_sweep", vocabulary=corpus, out="s").summary  # the notebook's --vocabulary
    assert summary.loc[summary["rank"] == 1, "item"].unique().tolist() == ["the"]


def test_bad_vocabulary_option_exits_2_naming_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.csv").write_text("item,count\nx,-3\n", encoding="utf-8")
    assert main(["run", "my_emoji", "--vocabulary", "bad.csv", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "[--vocabulary]" in err and "bad.csv, line 2, column 'count'" in err and "got '-3'" in err
    assert main(["sweep", "my_emoji_sweep", "--vocabulary", "nope.parquet", "--dry-run"]) == 2
    assert "nope.parquet: no such file" in capsys.readouterr().err


def test_words_use_case_takes_the_words_of_a_corpus(tmp_path):
    text = DEPLOYMENT.format(workload=f'vocabulary = "{EMOJI_500}"', fleet="") + (
        '[use_case.words]\nmechanism = "pem"\nepsilon = 4.0\n[words]\nvocabulary = "{file}"\ntop = 20\n')
    corpus = SCENARIOS / "data" / "chat_en.corpus.txt"
    cfg, meta = load_deployment(_scenario(tmp_path, "w.toml", text.format(file=corpus)))
    assert cfg.words[:3] == ("the", "😂", "you") and len(cfg.words) == 21  # 20 carried words + the slang word
    assert "28 of 120 items left out" in meta["notices"][-1] and "'\u2764\ufe0f'" in meta["notices"][-1]
    assert "1 emoji presentation variant(s) counted as the fully-qualified emoji" in meta["notices"][0]
    (tmp_path / "zh.txt").write_text("我们 3\n你好 2\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match="0 of its 2 items are words of at most 8 characters") as info:
        load_deployment(_scenario(tmp_path, "w2.toml", text.format(file="zh.txt")))
    assert info.value.key == "words.vocabulary"


def test_notices_are_printed_by_run_and_sweep(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dup.txt").write_text("lol\t4\nbrb\t2\nLOL\t1\nlol\t1\n", encoding="utf-8")
    assert main(["sweep", "my_emoji_sweep", "--vocabulary", "dup.txt", "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "note: vocabulary file " in err and "1 repeated item(s) merged" in err
    assert "'lol' at line 1 and line 4" in err
    assert main(["run", "my_emoji", "--vocabulary", "dup.txt", "--dry-run"]) == 0
    assert "1 repeated item(s) merged" in capsys.readouterr().err
    assert load_vocabulary("dup.txt").counts.tolist() == [5, 2, 1]
