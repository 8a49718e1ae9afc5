"""The word-discovery comparison under contribution bounding (docs/math.md §8.8): what the bound keeps of
several typed words a night, the cells a person touches, and each design's ε per person and per word
checked against an independent computation."""

import numpy as np
import pytest

from ldpsim.evaluation.privacy.levels import bounded_cells
from ldpsim.mechanisms.bounding import ContributionBound, bound_run
from ldpsim.simulator.typed_nights import bounded_nights, typed_entries
from tests.by_hand import tee_epsilon_by_hand


def _entries(seed=0, days=6, devices=40, words=12, typed=7):
    shares = np.random.default_rng(seed).dirichlet(np.ones(words), size=days)
    return typed_entries(shares, devices, 0.8, typed, rng=seed), words


def test_typed_entries_hold_every_occurrence_once():
    e, words = _entries()
    assert e.count.sum() % 7 == 0 and (e.count >= 1).all()
    per = np.bincount(e.day * 1000 + e.device, weights=e.count)
    assert set(per[per > 0].astype(int)) == {7}                      # every online device typed 7 words a night
    assert np.unique(np.stack([e.day, e.device, e.item]), axis=1).shape[1] == e.day.size


@pytest.mark.parametrize("l0", [1, 2, 3])
def test_uniform_bound_keeps_min_l0_k_words_and_one_vote_a_night(l0):
    e, words = _entries()
    b = bounded_nights(e, words, ContributionBound(l0=l0, linf=1, sampler="uniform"), rng=1)
    k = np.bincount(e.day * 1000 + e.device)                         # distinct words of each (night, device)
    k = k[k > 0]
    assert b.kept.sum() == np.minimum(l0, k).sum()                   # uniform keeps exactly min(L0, k) of them
    assert b.votes.sum() == k.size                                   # one vote per online device a night
    assert b.contributions.sum() == b.kept.sum()                     # L∞ = 1: each kept word counts once
    assert (b.kept <= b.holders).all() and (b.votes <= b.kept).all() and b.typed.sum() == e.count.sum()
    lost = b.lost("kept")
    assert lost["entries_lost"] == pytest.approx(1 - np.minimum(l0, k).sum() / k.sum())
    if l0 >= k.max():
        assert lost["entries_lost"] == 0


@pytest.mark.parametrize("per_day, per_run, days, expected", [
    (ContributionBound(3, 1), None, 30, (30, 90)),
    (ContributionBound(3, 1), ContributionBound(5), 30, (30, 90)),            # L0_run without L∞_run: no cap
    (ContributionBound(3, 1), ContributionBound(5, 4), 30, (4, 20)),
    (ContributionBound(2, 1), ContributionBound(40, 30), 30, (30, 60)),
])
def test_bounded_cells(per_day, per_run, days, expected):
    assert bounded_cells(days, per_day, per_run) == expected


def test_bounded_cells_bound_what_bound_run_lets_through():
    """A device typing 10 words every night of 12, under per-night and per-run bounds: its cells and its
    nights for one word never pass the formula (an upper bound: bound_run may pick, on a night, a word whose
    run cap is spent), and reach it without a per-run bound."""
    days, words = 12, 10
    day, item = np.meshgrid(np.arange(days), np.arange(words), indexing="ij")
    day, item = day.ravel(), item.ravel()
    for per_day, per_run in [(ContributionBound(3, 1, "uniform"), None),
                             (ContributionBound(3, 1, "uniform"), ContributionBound(4, 5, "uniform")),
                             (ContributionBound(2, 1, "top"), ContributionBound(6, 3, "top"))]:
        item_cells, person_cells = bounded_cells(days, per_day, per_run)
        for seed in range(5):
            got = bound_run(day, np.zeros_like(day), item, np.full(day.size, 3), per_day, per_run, rng=seed)
            assert (got > 0).sum() <= person_cells
            assert np.bincount(item, weights=got > 0).max() <= item_cells
        if per_run is None:
            assert (got > 0).sum() == person_cells                   # the device types enough to reach it


def _designs(epsilon, fleet, delta, codec, bound, per_run):
    """design → (protocol, privacy row) of ``discover --trust``'s four designs."""
    from ldpsim.scenarios.studies.trust.bounded_discovery import bounded_design
    from ldpsim.scenarios.studies.trust.word_discovery import DESIGNS
    return {name: bounded_design(name, model, epsilon, fleet, delta, codec, bound, per_run)[:2]
            for name, (model, _) in DESIGNS.items()}


@pytest.fixture(scope="module")
def fleet_and_codec():
    from ldpsim.scenarios.studies.discovery.days import growing_slang
    from ldpsim.scenarios.studies.trust.trust_fleet import keyboard_fleet
    return keyboard_fleet(days=30), growing_slang("en", n_days=3).codec


@pytest.mark.parametrize("bound, per_run", [
    (ContributionBound(3, 1, "uniform"), None),
    (ContributionBound(2, 2, "top"), ContributionBound(6, 10, "top")),
])
def test_each_designs_person_epsilon_under_bounding(bound, per_run, fleet_and_codec):
    """ε per person and per word of every design, recomputed from its calibrated parameters by hand:
    L0 reports a night (or the per-run cells) are charged, not one."""
    from ldpsim.evaluation.privacy.trust_accounting import run_epsilon
    from ldpsim.evaluation.privacy.threshold_composition import threshold_run
    fleet, codec = fleet_and_codec
    eps, delta, days = 4.0, 1e-9, 30
    d = _designs(eps, fleet, delta, codec, bound, per_run)
    nights = days if per_run is None else min(days, per_run.linf)
    cells = days * bound.l0 if per_run is None else min(days * bound.l0, per_run.l0 * nights)
    # LDP trie: one report per kept word a night, pure, basic composition
    trie, row = d["ldp_trie"]
    assert trie.epsilon * cells == pytest.approx(eps)
    assert (row["epsilon_person"], row["epsilon_item"]) == pytest.approx((eps, nights * trie.epsilon))
    # TEE: Gaussian over 2·cells unit changes of L∞, plus the threshold's δ
    tee, row = d["tee_histogram"]
    assert tee.max_per_key == bound.linf and tee.max_keys == bound.l0
    person, item = tee_epsilon_by_hand(tee, 2 * cells, delta), tee_epsilon_by_hand(tee, 2 * nights, delta)
    assert row["epsilon_person"] == pytest.approx(person, rel=1e-6) and 0.99 * eps <= person <= eps * (1 + 1e-6)
    assert row["epsilon_item"] == pytest.approx(item, rel=1e-6) and item < person
    # secure-aggregation trie: the device's L0 reports a round, each at ε₀, through the model's accountant
    trie, row = d["secagg_trie"]
    online = round(fleet.word_devices * fleet.p_online)
    assert row["model"].epsilon_report == pytest.approx(trie.epsilon)
    charged = row["model"].epsilon(online, days * bound.l0, delta, 2)
    assert row["epsilon_person"] == pytest.approx(charged) and charged <= eps * (1 + 1e-9)
    assert row["epsilon_item"] == pytest.approx(run_epsilon(row["model"], online, days, delta))
    # TrieHH: one vote a night whatever L0: the run of `days` rounds of one vote
    proto, row = d["triehh"]
    run = threshold_run(proto, eps, delta, days)
    assert run["theta"] == proto.theta and row["epsilon_person"] == row["epsilon_item"] == eps
    assert row["delta"] <= delta


def test_more_words_a_night_cost_more_noise(fleet_and_codec):
    """L0 = 4 against L0 = 1 at one ε per person: the local report's ε is split four ways and the
    enclave's noise grows as √4 (Gaussian at L2 sensitivity √(2·cells))."""
    fleet, codec = fleet_and_codec
    one = _designs(4.0, fleet, 1e-9, codec, ContributionBound(1, 1, "uniform"), None)
    four = _designs(4.0, fleet, 1e-9, codec, ContributionBound(4, 1, "uniform"), None)
    assert four["ldp_trie"][0].epsilon == pytest.approx(one["ldp_trie"][0].epsilon / 4)
    assert four["tee_histogram"][0].scale / one["tee_histogram"][0].scale == pytest.approx(2.0, rel=0.02)
    assert four["secagg_trie"][0].epsilon < one["secagg_trie"][0].epsilon


@pytest.mark.parametrize("kwargs, names", [
    ({"bound": ContributionBound(2, None, "uniform")}, ["bound", "linf"]),
    ({"bound": (2, 1)}, ["bound", "ContributionBound"]),
    ({"typed": 0}, ["typed"]),
    ({"seeds": ()}, ["seeds"]),
])
def test_compare_word_discovery_refuses_bad_input(kwargs, names):
    from ldpsim.runtime.errors import InputError
    from ldpsim.scenarios.studies.trust.word_discovery import compare_word_discovery
    with pytest.raises(InputError) as err:
        compare_word_discovery(**kwargs)
    assert all(n in str(err.value) for n in names)


def test_the_enclaves_nights_take_several_words_a_device():
    """The TEE's days to discovery read the bounded contributions of several typed words: one word typed
    a night loses nothing; eight typed, two kept, lose what the bound drops; a loud new word is found."""
    import pandas as pd
    from ldpsim.evaluation.discovery.tee_histogram import tee_nightly_scores
    from ldpsim.mechanisms.aggregation.tee import calibrate_tee
    from ldpsim.scenarios.studies.trust.bounded_discovery import found_days
    shares = np.tile([0.4, 0.3, 0.2, 0.1, 0.0], (4, 1))
    shares[2:] = [0.3, 0.2, 0.1, 0.1, 0.3]                        # the new word from night 2
    words = ("a", "b", "c", "d", "new")
    for typed, l0 in ((1, 1), (8, 2)):
        design = calibrate_tee("gaussian", 4.0, 1e-9, 4, l0, 1, replace=True)
        rows, lost = [], []
        for seed in (0, 1):
            kept = bounded_nights(typed_entries(shares, 3000, 0.9, typed, rng=seed), len(words),
                                  ContributionBound(l0=l0, linf=1, sampler="uniform"), rng=seed + 10)
            lost.append(kept.lost("contributions")["entries_lost"])
            rows += [{"seed": seed, **r} for r in tee_nightly_scores(design, words, kept.contributions, 3, "new",
                                                                     np.random.default_rng(seed), truth=kept.holders)]
        assert found_days(pd.DataFrame(rows), 2, 2) == (1.0, 0.0)
        assert (max(lost) == 0) if typed == 1 else (0 < min(lost) and max(lost) < 1)


@pytest.mark.parametrize("argv, names", [
    (["discover", "--l0", "2"], ["--l0", "--trust"]),
    (["discover", "--trust", "--run-linf", "3"], ["--run-linf", "--run-l0"]),
    (["discover", "--trust", "--sampler", "random"], ["--sampler", "random"]),
    (["discover", "--trust", "--l0", "0"], ["--l0", "0"]),
])
def test_discover_trust_refuses_a_bad_bound(argv, names, capsys, tmp_path):
    from tests.cli_cases import expect_clear_refusal
    expect_clear_refusal([*argv, "--out", str(tmp_path / "out")], names, capsys)
