"""Fake devices as a fleet component: their reports reach the aggregates exactly; the gate's defenses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ldpsim.scenarios.studies.poisoning.deployment_attack import fake_sweep, mga_reports
from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
from ldpsim.simulator.deployment import run
from ldpsim.simulator.fakes import FakeFleet
from ldpsim.scenarios.studies.poisoning.experiment import LAYOUT as POISON_LAYOUT
from tests.fleets import TINY


@pytest.fixture(scope="module")
def tiny_cfg(tmp_path_factory):
    path = tmp_path_factory.mktemp("fakes") / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    return load_deployment(path)[0]


def test_fake_reports_add_exactly_to_the_daily_aggregates(tiny_cfg, tmp_path):
    base = run(tiny_cfg, tmp_path / "a")
    fleet = FakeFleet(7, 11, mga_reports, start_day=1, reports_per_day=2)
    attacked = run(tiny_cfg, tmp_path / "b", components=(fleet.component,))
    for day in range(tiny_cfg.n_days):
        a, b = base.aggregates[("emoji", day)], attacked.aggregates[("emoji", day)]
        extra = 14 if day >= 1 else 0  # GRR's MGA report is the target itself
        assert b.n == a.n + extra and b.data[11] == a.data[11] + extra
        assert np.array_equal(np.delete(b.data, 11), np.delete(a.data, 11))


def test_gate_refuses_unattested_and_rate_limited_fakes():
    assert FakeFleet(100, 0, mga_reports, attested=0.3).accepted_per_day() == 30
    assert FakeFleet(100, 0, mga_reports, identities=4, rate_limit=5).accepted_per_day() == 20
    assert FakeFleet(100, 0, mga_reports, attested=0.0).accepted_per_day() == 0
    with pytest.raises(ValueError, match="'attested'"):
        FakeFleet(1, 0, mga_reports, attested=1.5)


@pytest.mark.slow
def test_enough_fakes_put_the_target_into_the_top_10(tiny_cfg):
    table = fake_sweep(tiny_cfg, 10, fakes=(0, 40), epsilons=(4.0,), defenses=("none", "attestation 50%"))
    base = table[table["fakes"] == 0].iloc[0]
    attacked = table[(table["fakes"] == 40) & (table["defense"] == "none")].iloc[0]
    assert attacked["days_in_top"] == tiny_cfg.n_days and attacked["estimated_share"] > base["estimated_share"]
    half = table[table["defense"] == "attestation 50%"].iloc[0]
    assert half["fakes_accepted_per_day"] == 20
    assert base["estimated_share"] < half["estimated_share"] < attacked["estimated_share"]


def test_deployment_share_matches_the_closed_form(tiny_cfg, tmp_path):
    """GRR's MGA reports are deterministic, so the daily estimated share is the genuine estimate plus m·c
    over N: its mean over days matches the closed form within z = 4 sd of the genuine estimates' noise
    (the oracle's theoretical sd given each day's donated counts, ``sd``)."""
    from ldpsim.evaluation.deployment.estimates import daily_estimates
    from ldpsim.scenarios.studies.poisoning.deployment_attack import target_ranks
    fleet = FakeFleet(25, 10, mga_reports)
    result = run(tiny_cfg, tmp_path, components=(fleet.component,))
    got = target_ranks(tiny_cfg, result, 10, 10, fleet.accepted_per_day(), fleet.start_day)
    daily = daily_estimates(tiny_cfg, result)
    var = daily.loc[daily["item"] == 10, "sd"].to_numpy() ** 2
    sd = np.sqrt(var.sum()) / var.size
    assert abs(got["estimated_share"] - got["closed_form_share"]) <= 4 * sd
    assert got["closed_form_share"] > 3 * got["true_share"]


def _gated_cms_fleet():
    """A CMS emoji use case (the MGA report's row is random) and fakes whose 4 identities lie in blocks
    0..3, so 2 shards ([0, 1, 2], [3, 4]) both run fakes; 7 of 10 are attested, 1 report per identity
    per day: 10 sent, 3 refused by attestation, 3 by the rate limit, 4 accepted a day."""
    from ldpsim.simulator.config import UseCase
    from tests.fleets import ITEMS, tiny_config
    emoji = UseCase("emoji", "event", "cms", (("epsilon", 2.0), ("k", 16), ("m", 32), ("seed", 5)), 1)
    cfg = tiny_config(n_days=2, use_cases=(emoji,))
    return cfg, FakeFleet(10, ITEMS[3], mga_reports, attested=0.7, identities=4, rate_limit=1)


def _same_with_fakes(cfg, a, b):
    from tests.fleets import same_aggregates
    same_aggregates(a.aggregates, b.aggregates)
    from ldpsim.evaluation.deployment.estimates import daily_estimates
    pd_a, pd_b = daily_estimates(cfg, a), daily_estimates(cfg, b)
    assert pd_a["estimate"].to_numpy().tolist() == pd_b["estimate"].to_numpy().tolist()
    gate = {k: v for k, v in a.counters.items() if k.startswith("fake_")}
    assert gate == {k: v for k, v in b.counters.items() if k.startswith("fake_")}
    return gate


@pytest.mark.parametrize("n_shards", [2, 5])
def test_fakes_give_the_same_result_for_any_sharding(tmp_path, n_shards):
    cfg, fleet = _gated_cms_fleet()
    one = run(cfg, tmp_path / "one", components=(fleet.component,))
    gate = _same_with_fakes(cfg, one, run(cfg, tmp_path / "many", n_shards, components=(fleet.component,)))
    days = cfg.n_days
    assert gate == {"fake_sent": 10 * days, "fake_refused_attestation": 3 * days,
                    "fake_refused_rate_limit": 3 * days, "fake_accepted": 4 * days}
    assert fleet.accepted_per_day() == fleet.accepted_reports().size == 4
    base = run(cfg, tmp_path / "base")
    assert sum(a.n for a in one.aggregates.values()) == sum(a.n for a in base.aggregates.values()) + 4 * days


@pytest.mark.slow  # ~13 s under load, nearly all of it the local cluster's start (as test_deployment's Dask test)
def test_fakes_on_dask_equal_the_serial_run(tmp_path):
    """2 shards on a 2-worker local Dask cluster: same daily estimates and gate counts as one process."""
    cfg, fleet = _gated_cms_fleet()
    serial = run(cfg, tmp_path / "one", components=(fleet.component,))
    dask = run(cfg, tmp_path / "dask", 2, scheduler="local", components=(fleet.component,), n_workers=2)
    assert dask.shards == 2
    assert _same_with_fakes(cfg, serial, dask)["fake_accepted"] == 4 * cfg.n_days


def _words_cfg(tmp_path, devices=1200, days=3):
    from tests.fleets import write_scenario as _write
    from tests.fleets import WORDS
    text = WORDS.replace("devices = 2000", f"devices = {devices}").replace("days = 3", f"days = {days}")
    return load_deployment(_write(tmp_path, text, "words.toml"))[0]


@pytest.mark.slow
def test_made_up_word_is_discovered_as_predicted_and_sharding_changes_nothing(tmp_path):
    """PEM fakes for a word nobody types: on the last night its estimated count is exactly the genuine
    walk's estimate of it plus m_R·c, scaled by N/n_R (the fakes' reports are deterministic supports),
    the nights agree with the cut-off prediction, and 1 or 3 shards give the same aggregates."""
    from ldpsim.evaluation.poisoning import word_attack
    from ldpsim.scenarios.studies.poisoning.deployment_attack import word_nights, word_reports
    from tests.fleets import same_aggregates
    cfg = _words_cfg(tmp_path)
    fleet = FakeFleet(70, "xqzw", word_reports, use_case="word")
    one = run(cfg, tmp_path / "one", components=(fleet.component,))
    same_aggregates(one.aggregates, run(cfg, tmp_path / "three", 3, components=(fleet.component,)).aggregates)
    base = run(cfg, tmp_path / "base")
    got = word_nights(cfg, one, fleet)
    assert got["days_in_top"] == got["predicted_days_in_top"] == cfg.n_days
    mech = cfg.use_case("word").make_mechanism()
    total = sum(one.aggregates[("words", d)] for d in range(1, cfg.n_days))
    total += one.aggregates[("words", 0)]
    genuine = sum(base.aggregates[("words", d)] for d in range(1, cfg.n_days)) + base.aggregates[("words", 0)]
    last = mech.groups - 1
    code = mech.group_prefix_codes(mech.codec.symbols(["xqzw"])[0])[0][last:]
    m_last = word_attack.fakes_per_round(mech, fleet.accepted_reports(), cfg.n_days)[last]
    n_last = int(total.data[last, :, mech.g].sum())
    expected = total.n / n_last * (mech.group_estimate(genuine, last, code)[0][0] + m_last * word_attack.contribution(mech))
    assert got["estimated_share"] * total.n == pytest.approx(expected, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("n_fakes, nights, first", [(40, 1, 2), (50, 2, 1)])
def test_made_up_word_is_listed_from_the_night_its_count_bar_predicts(tmp_path, n_fakes, nights, first):
    """Too few fakes for night 0: the last group's count bar (its excess over an empty word's mean support
    grows like √d over d nights, the fakes' support like d) holds the word back until a later night. The
    nights and the first night predicted from the run's own genuine aggregate equal the measured ones
    (the cut-offs alone predicted one night more, a night earlier)."""
    from ldpsim.scenarios.studies.poisoning.deployment_attack import word_nights, word_reports
    cfg = _words_cfg(tmp_path)
    fleet = FakeFleet(n_fakes, "xqzw", word_reports, use_case="word")
    got = word_nights(cfg, run(cfg, tmp_path / "run", components=(fleet.component,)), fleet)
    assert (got["days_in_top"], got["first_day_in_top"]) == (nights, first)
    assert (got["predicted_days_in_top"], got["predicted_first_day_in_top"]) == (nights, first)


@pytest.mark.slow
def test_fake_sweep_resumes_from_its_journal_without_counting_twice(tmp_path):
    """A sweep stopped after its first deployment (and a torn store part of the next one left behind)
    resumes from the journaled cell, deletes the leftover, and ends with the uninterrupted table."""
    from ldpsim.scenarios.studies.poisoning.deployment_attack import fake_sweep
    from ldpsim.runtime.runfolder import RunFolder, verify_folder
    cfg = _words_cfg(tmp_path, devices=600, days=2)
    kw = dict(fakes=(0, 60), epsilons=(4.0,), defenses=("none", "attestation 50%"), use_case="word")
    reference = fake_sweep(cfg, "xqzw", **kw)
    out = tmp_path / "sweep"

    def stop(done, total):
        if done == 1:
            raise KeyboardInterrupt

    with RunFolder.open(out, POISON_LAYOUT, {"fingerprint": "f", "seed": 0}, resume=True) as folder:
        with pytest.raises(KeyboardInterrupt):
            fake_sweep(cfg, "xqzw", progress=stop, folder=folder, **kw)
    torn = out / "stores" / "eps4-fakes60-none" / "use_case=words" / "day=0" / "part-s0-0.parquet"
    torn.parent.mkdir(parents=True)
    torn.write_bytes(b"torn")
    assert sorted(p.name for p in (out / "cells").iterdir()) == ["eps4-fakes0-none.json"]
    with RunFolder.open(out, POISON_LAYOUT, {"fingerprint": "f", "seed": 0}, resume=True, log=lambda m: None) as folder:
        assert not torn.exists() and folder.finished("cells/") == {"cells/eps4-fakes0-none.json"}
        table = fake_sweep(cfg, "xqzw", folder=folder, **kw)
        folder.finalize(adopt=True)
    pd.testing.assert_frame_equal(table, reference)
    assert not verify_folder(out) and not (out / "stores").exists()


@pytest.mark.parametrize("word", ["the", "x-y"])  # typed by the fleet; '-' is not in the alphabet
def test_poison_refuses_a_word_that_is_not_made_up(tmp_path, capsys, word):
    from ldpsim.scenarios.cli import main
    code = main(["poison", "--deployment", "--word", word, "--devices", "100", "--days", "1", "-q",
                 "--out", str(tmp_path / "out")])
    assert code == 2 and "--word" in capsys.readouterr().err and not (tmp_path / "out").exists()
