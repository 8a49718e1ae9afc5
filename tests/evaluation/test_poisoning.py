"""Poisoning attacks (Cao, Jia, Gong 2021): measured gains against the closed forms, defenses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.poisoning import (expected_gain, fake_aggregate, fake_reports, gain_after_detection,
                                         measure_gain, norm_sub, normalized_frequencies, paper_gain)
from ldpsim.evaluation.poisoning.attacks import olh_seed_pool
from ldpsim.evaluation.workloads import make_workload
from ldpsim.mechanisms import CMS, GRR, HCMS, OLH, OUE
from ldpsim.scenarios.cli import main
from tests.stats import z_bound

D, N, M, REPEATS = 40, 20_000, 1_000, 120
WORKLOAD = make_workload("zipf", N, domain_size=D)
MECHS = [GRR(1.0, D), OUE(1.0, D), OLH(1.0, D), CMS(2.0, 16, 64), HCMS(2.0, 16, 64)]
CASES = [(mech, attack) for mech in MECHS for attack in ("rpa", "ria", "mga")]


def _targets(mech, r=2):
    ids = list(range(D - 1 - r, D - 1))
    return ([WORKLOAD.items[i] for i in ids] if mech.takes_tokens else ids), ids


@pytest.mark.parametrize("mech, attack", CASES, ids=lambda v: getattr(v, "name", v))
def test_measured_gain_matches_the_closed_form(mech, attack):
    """Mean of REPEATS gains (genuine direct sampler + fake aggregate) within z·s/√R of the closed form,
    z at α = 1e-4 Bonferroni over the 15 cases (s the sample sd)."""
    targets, ids = _targets(mech)
    items = WORKLOAD.items if mech.takes_tokens else np.arange(D)
    gains = measure_gain(mech, attack, targets, WORKLOAD.counts, WORKLOAD.items, M, REPEATS, rng=17)
    expected = expected_gain(mech, attack, targets if mech.takes_tokens else ids, WORKLOAD.counts, items, M)
    se = gains.std(ddof=1) / math.sqrt(REPEATS)
    assert abs(gains.mean() - expected) <= z_bound(1e-4, len(CASES)) * se + 1e-12, (gains.mean(), expected, se)


@pytest.mark.parametrize("kind, mech", [("grr", GRR(2.0, D)), ("oue", OUE(2.0, D)), ("olh", OLH(2.0, D))])
@pytest.mark.parametrize("attack", ["rpa", "ria", "mga"])
def test_closed_forms_are_the_papers(kind, mech, attack):
    ids = [10, 20, 30]
    f_t = WORKLOAD.counts[ids].sum() / N
    beta = M / (N + M)
    got = expected_gain(mech, attack, ids, WORKLOAD.counts, np.arange(D), M)
    assert got == pytest.approx(paper_gain(kind, attack, 2.0, D, 3, beta, f_t), rel=1e-12)


def test_mga_beats_ria_beats_rpa_on_grr():
    ids = [30, 31]
    g = {a: expected_gain(GRR(1.0, D), a, ids, WORKLOAD.counts, np.arange(D), M) for a in ("rpa", "ria", "mga")}
    assert g["mga"] > g["ria"] > g["rpa"]


def test_direct_fake_aggregates_match_the_reports():
    """Where fake aggregates are drawn directly (GRR RPA/MGA, OUE RPA, RIA), their mean equals the mean of
    aggregated fake reports (z, α = 1e-4 over all cells)."""
    rng = np.random.default_rng(3)
    for mech, attack in [(GRR(1.0, 8), "rpa"), (GRR(1.0, 8), "mga"), (OUE(1.0, 8), "rpa"), (OUE(1.0, 8), "ria")]:
        direct = np.array([fake_aggregate(mech, attack, [2, 5], 500, rng).data for _ in range(300)])
        reports = np.array([mech.aggregate(fake_reports(mech, attack, [2, 5], 500, rng)).data for _ in range(300)])
        se = np.sqrt(direct.var(axis=0) / 300 + reports.var(axis=0) / 300) + 1e-9
        assert np.all(np.abs(direct.mean(axis=0) - reports.mean(axis=0)) <= z_bound(1e-4, 32) * se)


def test_olh_mga_pool_supports_every_target():
    mech = OLH(1.0, D)
    seeds, ys, supported = olh_seed_pool(mech, (30, 31, 32))
    assert (supported == 3).all()
    assert (mech.hash_items(seeds[:, None], np.array([30, 31, 32])[None, :]) == ys[:, None]).all()


def test_norm_sub_projects_onto_the_simplex():
    f = norm_sub([0.5, 0.4, 0.3, -0.1])
    assert f.sum() == pytest.approx(1.0) and (f >= 0).all() and f.tolist() == pytest.approx([13 / 30, 10 / 30, 7 / 30, 0])


def test_normalization_reduces_but_does_not_remove_the_mga_gain():
    mech = OUE(1.0, D)
    targets = [WORKLOAD.items[i] for i in (36, 37, 38)]
    raw = measure_gain(mech, "mga", targets, WORKLOAD.counts, WORKLOAD.items, M, 30, rng=5)
    normed = measure_gain(mech, "mga", targets, WORKLOAD.counts, WORKLOAD.items, M, 30, rng=5,
                          defense=normalized_frequencies)
    assert 0 < normed.mean() < raw.mean()


@pytest.mark.parametrize("mech", [OUE(1.0, D), OLH(1.0, D)], ids=["oue", "olh"])
def test_detection_flags_every_mga_fake(mech):
    targets = [WORKLOAD.items[i] for i in (36, 37, 38, 39)]
    gains, fakes_flagged, genuine_flagged = gain_after_detection(mech, "mga", targets, WORKLOAD.counts,
                                                                 WORKLOAD.items, M, 2, rng=9)
    assert fakes_flagged == 1.0 and genuine_flagged < 0.01
    assert abs(gains.mean()) < expected_gain(mech, "mga", [36, 37, 38, 39], WORKLOAD.counts, np.arange(D), M) / 3


def test_bad_attack_and_oracle_are_refused():
    with pytest.raises(ValueError, match="'attack'"):
        fake_reports(GRR(1.0, 4), "nope", [1], 3)
    from ldpsim.mechanisms import PM
    with pytest.raises(ValueError, match="Poisoning is modelled"):
        fake_reports(PM(1.0), "rpa", [1], 3)


TINY = """
[poisoning]
seed = 1
repeats = 4
detection_repeats = 1
n = 3000
domain_size = 12
targets = 2
mechanisms = ["grr", "oue"]
attacks = ["mga"]
defenses = ["none", "normalization", "detection"]
epsilon = [1.0]
beta = [0.05]
"""


def test_ldpsim_poison_runs_a_tiny_sweep(tmp_path, capsys):
    scenario = tmp_path / "p.toml"
    scenario.write_text(TINY, encoding="utf-8")
    assert main(["poison", str(scenario), "--out", str(tmp_path / "out"), "-q"]) == 0
    import pandas as pd
    table = pd.read_csv(tmp_path / "out" / "poisoning.csv")
    assert len(table) == 5  # 2 oracles × (none, normalization) + OUE detection
    none = table[table["defense"] == "none"]
    assert (abs(none["gain"] - none["closed_form"]) < 6 * none["gain_se"] + 1e-9).all()
    assert (tmp_path / "out" / "plots" / "poisoning_gain_eps1.png").exists()
    scenario.write_text(TINY.replace("targets = 2", "target = 2"), encoding="utf-8")
    assert main(["poison", str(scenario), "--out", str(tmp_path / "out2"), "-q"]) == 2
    assert "did you mean 'targets'" in capsys.readouterr().err


def test_shipped_poisoning_scenario_loads():
    from ldpsim.evaluation.poisoning.sweep import load_poisoning
    from ldpsim.scenarios.catalog import resolve
    cfg = load_poisoning(resolve("poisoning"))
    assert cfg["targets"] == 3 and "mga" in cfg["attacks"]


def test_fleet_scenario_runs_fake_devices(tmp_path, capsys):
    scenario = tmp_path / "f.toml"
    scenario.write_text('[poisoning_fleet]\nscenario = "keyboard"\ndevices = 300\ndays = 2\ntarget_rank = 60\n'
                        'fakes = [0, 30]\nepsilon = [4.0]\ndefenses = ["none"]\n', encoding="utf-8")
    assert main(["poison", str(scenario), "--out", str(tmp_path / "out"), "-q"]) == 0
    import pandas as pd
    table = pd.read_csv(tmp_path / "out" / "fakes.csv")
    assert table["fakes"].tolist() == [0, 30] and table["days_in_top"].iloc[1] == 2
    assert (tmp_path / "out" / "plots" / "fakes_top10.png").exists()


def test_rr_is_grr_with_two_values():
    from ldpsim.mechanisms import RR
    counts = np.array([900, 100])
    gains = measure_gain(RR(1.0), "mga", [1], counts, np.arange(2), 50, 200, rng=1)
    expected = expected_gain(RR(1.0), "mga", [1], counts, np.arange(2), 50)
    assert abs(gains.mean() - expected) <= z_bound(1e-4) * gains.std(ddof=1) / np.sqrt(200)
