"""Poisoning attacks (Cao, Jia, Gong 2021): measured gains against the closed forms, defenses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.poisoning import (expected_gain, fake_aggregate, fake_reports, gain_after_detection,
                                         measure_gain, norm_sub, normalized_frequencies, paper_gain)
from ldpsim.evaluation.poisoning import crafted
from ldpsim.evaluation.poisoning.crafted import olh_seed_pool
from ldpsim.evaluation.poisoning.gains import fake_contribution
from ldpsim.evaluation.workloads import make_workload
from ldpsim.mechanisms import (BLH, CMS, FLH, GRR, HCMS, HR, OLH, OUE, RAPPOR, SDGRR, SHE, SUE, THE, URR, DBitFlip,
                               PersonalizedSDGRR)
from ldpsim.scenarios.cli import main
from tests.stats import z_bound

D, N, M, REPEATS = 40, 20_000, 1_000, 120
WORKLOAD = make_workload("zipf", N, domain_size=D)
EVEN = list(range(0, D, 2))  # URR's sensitive / SDGRR's high ids: the targets 37, 38 are one of each
MECHS = [GRR(1.0, D), URR(1.0, D, EVEN), SDGRR(1.0, D, EVEN), HR(1.0, D), HR(4.0, D), OUE(1.0, D), SUE(1.0, D),
         THE(1.0, D), SHE(1.0, D), OLH(1.0, D), BLH(1.0, D), FLH(2.0, D, pool_size=64), DBitFlip(1.0, D, d=4),
         CMS(2.0, 16, 64), HCMS(2.0, 16, 64), RAPPOR(2.0, num_bits=32, cohorts=8)]
CASES = [(mech, attack) for mech in MECHS for attack in ("rpa", "ria", "mga")]


def _targets(mech, r=2):
    ids = list(range(D - 1 - r, D - 1))
    return ([WORKLOAD.items[i] for i in ids] if mech.takes_tokens else ids), ids


@pytest.mark.parametrize("mech, attack", CASES, ids=lambda v: getattr(v, "name", v))
def test_measured_gain_matches_the_closed_form(mech, attack):
    """Mean of REPEATS gains (genuine direct sampler + fake aggregate) within z·s/√R of the closed form,
    z at α = 1e-4 family-wise (Bonferroni over the 48 oracle × attack cases; s the sample sd)."""
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
    """Where fake aggregates are drawn directly, their mean equals the mean of aggregated fake reports
    (z, α = 1e-4 family-wise over every entry of every cell)."""
    rng = np.random.default_rng(3)
    items = ["a", "b", "c", "d", "e", "f", "g", "h"]
    cells = [(GRR(1.0, 8), "rpa"), (GRR(1.0, 8), "mga"), (OUE(1.0, 8), "rpa"), (OUE(1.0, 8), "ria"),
             (URR(1.0, 8, [0, 2, 4, 6]), "rpa"), (SDGRR(1.0, 8, [0, 2, 4, 6]), "mga"), (HR(1.0, 8), "rpa"),
             (HR(4.0, 8), "mga"), (SUE(1.0, 8), "rpa"), (FLH(2.0, 8, pool_size=4), "rpa"),
             (FLH(2.0, 8, pool_size=4), "mga"), (SHE(1.0, 8), "mga"),
             (RAPPOR(2.0, num_bits=8, cohorts=2), "rpa"), (RAPPOR(2.0, num_bits=8, cohorts=2), "mga")]
    diffs, ses = [], []
    for mech, attack in cells:
        targets, known = (["c", "f"], items) if mech.takes_tokens else ([2, 5], None)
        direct = np.array([fake_aggregate(mech, attack, targets, 500, rng, known).data.ravel() for _ in range(200)])
        reports = np.array([mech.aggregate(fake_reports(mech, attack, targets, 500, rng, known)).data.ravel()
                            for _ in range(200)])
        diffs.append(direct.mean(axis=0) - reports.mean(axis=0))
        ses.append(np.sqrt(direct.var(axis=0) / 200 + reports.var(axis=0) / 200) + 1e-9)
    diffs, ses = np.concatenate(diffs), np.concatenate(ses)
    assert np.all(np.abs(diffs) <= z_bound(1e-4, diffs.size) * ses)


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


def test_bad_attack_oracle_and_targets_are_refused():
    with pytest.raises(ValueError, match="'attack'"):
        fake_reports(GRR(1.0, 4), "nope", [1], 3)
    for bad in ([], [1, 1], [7]):
        with pytest.raises(ValueError, match="'targets'"):
            expected_gain(GRR(1.0, 4), "mga", bad, [5, 5, 5, 5], np.arange(4), 3)
        with pytest.raises(ValueError, match="'targets'"):
            fake_aggregate(OUE(1.0, 4), "rpa", bad, 3)
    from ldpsim.mechanisms import PM
    with pytest.raises(ValueError, match="Poisoning is modelled"):
        fake_reports(PM(1.0), "rpa", [1], 3)
    with pytest.raises(ValueError, match="Poisoning is modelled"):  # non-linear estimator: not modelled
        fake_reports(PersonalizedSDGRR(1.0, 4, partitions=[[0]]), "mga", [1], 3)


TINY = """
[poisoning]
seed = 1
repeats = 4
detection_repeats = 1
n = 3000
domain_size = 12
targets = 2
mechanisms = ["grr", "oue", "rappor"]
attacks = ["mga"]
defenses = ["none", "normalization", "detection", "decoder"]
epsilon = [1.0]
beta = [0.05]
"""


def test_ldpsim_poison_runs_a_tiny_sweep(tmp_path, capsys):
    scenario = tmp_path / "p.toml"
    scenario.write_text(TINY, encoding="utf-8")
    assert main(["poison", str(scenario), "--out", str(tmp_path / "out"), "-q"]) == 0
    import pandas as pd
    table = pd.read_csv(tmp_path / "out" / "poisoning.csv")
    assert len(table) == 8  # 3 oracles × (none, normalization) + OUE detection + RAPPOR decoder
    none = table[table["defense"] == "none"]
    assert (abs(none["gain"] - none["closed_form"]) < 6 * none["gain_se"] + 1e-9).all()
    from ldpsim.scenarios.studies.poisoning.sweep import closed_form_check
    check = closed_form_check(table)
    assert check["agree"] and check["cells"] == 3 and check["bound"] > 6  # t with 3 df, α = 0.01 over 3 cells
    assert (tmp_path / "out" / "plots" / "poisoning_gain_eps1.png").exists()
    scenario.write_text(TINY.replace("targets = 2", "target = 2"), encoding="utf-8")
    assert main(["poison", str(scenario), "--out", str(tmp_path / "out2"), "-q"]) == 2
    assert "did you mean 'targets'" in capsys.readouterr().err


def test_shipped_poisoning_scenario_loads():
    from ldpsim.scenarios.studies.poisoning.sweep import load_poisoning
    from ldpsim.scenarios.catalog import resolve
    cfg = load_poisoning(resolve("poisoning"))
    assert cfg["targets"] == 3 and "mga" in cfg["attacks"]


@pytest.mark.slow
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


# ---- every oracle: MGA is the best report, RPA the mean report, each closed form as derived ---------------


def _one_report_contributions(mech, reports, targets, items=None):
    """Σ_t ĉ_t of the aggregate of each single report (n = 1), by the oracle's own estimator."""
    n = len(reports[0]) if isinstance(reports, tuple) else len(reports)
    pick = (lambda i: type(reports)(*(a[i:i + 1] for a in reports))) if isinstance(reports, tuple) \
        else (lambda i: reports[i:i + 1])
    query = targets if items is None else list(items)
    idx = [list(query).index(t) for t in targets] if items is not None else slice(None)
    return np.array([mech.estimate(mech.aggregate(pick(i)), query)[idx].sum() for i in range(n)])


ENUMERABLE = [GRR(1.0, 8), URR(1.0, 8, [0, 2, 4, 6]), SDGRR(1.0, 8, [0, 2, 4, 6]), SDGRR(2.0, 8, [5]),
              HR(1.0, 8), HR(4.0, 8), OUE(1.0, 8), SUE(1.0, 8), THE(1.0, 8), FLH(2.0, 8, pool_size=16),
              DBitFlip(1.0, 8, d=2), DBitFlip(1.0, 8, d=3)]


@pytest.mark.parametrize("mech", ENUMERABLE, ids=lambda m: m.name)
def test_mga_is_the_best_report_and_rpa_the_mean_one(mech):
    """Over the whole (enumerated) report space: the MGA closed form is the largest one-report contribution
    to Σ_t ĉ_t, the MGA reports attain it, and the RPA closed form is the mean over all reports."""
    targets = [5, 6, 3]
    space = np.arange(mech.n_outputs if isinstance(mech, HR) else mech.domain_size) \
        if isinstance(mech, (GRR, URR, SDGRR, HR)) else mech.all_reports()
    every = _one_report_contributions(mech, space, targets)
    assert fake_contribution(mech, "mga", targets) == pytest.approx(every.max(), rel=1e-9)
    assert fake_contribution(mech, "rpa", targets) == pytest.approx(every.mean(), rel=1e-9, abs=1e-9)
    crafted_reports = fake_reports(mech, "mga", targets, 20, rng=2)
    assert _one_report_contributions(mech, crafted_reports, targets) == pytest.approx(np.full(20, every.max()))


def test_rappor_mga_is_the_best_report_over_every_cohort_and_bit_pattern():
    mech = RAPPOR(2.0, num_bits=8, num_hashes=2, cohorts=4)
    items = ["a", "b", "c", "d", "e"]
    every = _one_report_contributions(mech, mech.all_reports(), ["c", "e"], items)
    assert fake_contribution(mech, "mga", ["c", "e"], items) == pytest.approx(every.max(), rel=1e-9)
    assert fake_contribution(mech, "rpa", ["c", "e"], items) == pytest.approx(every.mean(), rel=1e-9, abs=1e-9)
    crafted_reports = fake_reports(mech, "mga", ["c", "e"], 3, rng=1, items=items)
    assert _one_report_contributions(mech, crafted_reports, ["c", "e"], items) == pytest.approx([every.max()] * 3)


def test_closed_forms_of_the_derivations():
    """docs/math.md §7.5's explicit forms, written from the parameters (not from the code's weights)."""
    e, d, r = math.exp(1.0), 40, 3
    targets = [36, 37, 38]                                       # 36, 38 sensitive / high (EVEN), 37 not
    c2 = 1 / (len(EVEN) + e - 1)
    c3 = (e - 1) * c2
    assert fake_contribution(URR(1.0, d, EVEN), "mga", targets) == pytest.approx((1 - 2 * c2) / c3)
    assert fake_contribution(URR(1.0, d, EVEN), "rpa", targets) == pytest.approx((r - 2 * d * c2) / (d * c3))
    den = d + e - 1
    c1, c2, c3 = e / den, 1 / den, (len(EVEN) + e - 1) / den   # SDGRR: |X_L| = 20, r_H = 2, r_L = 1
    k, h = c2 / (c1 - c2), len(EVEN)
    high = 1 / (c1 - c2) - 2 * k - k / c3 + k * h * c2 / c3     # a high target reported
    assert fake_contribution(SDGRR(1.0, d, EVEN), "mga", targets) == pytest.approx(high)
    rpa = (2 / (c1 - c2) - d * 2 * k + (1 - k * h + d * k * h * c2) / c3) / d
    assert fake_contribution(SDGRR(1.0, d, EVEN), "rpa", targets) == pytest.approx(rpa)
    hr = HR(1.0, d)                                              # one block of 64 cells, s = 32
    kappa = (32 * e + 64 - 32) / (32 * (e - 1))
    assert fake_contribution(hr, "mga", targets) == pytest.approx(kappa * r)
    assert fake_contribution(hr, "rpa", targets) == pytest.approx(0.0, abs=1e-12)
    half = math.exp(0.5)
    p, q = half / (half + 1), 1 / (half + 1)
    assert fake_contribution(SUE(1.0, d), "mga", targets) == pytest.approx(r * (1 - q) / (p - q))
    assert fake_contribution(BLH(1.0, d), "mga", targets) == pytest.approx(r * 0.5 / (e / (e + 1) - 0.5))
    assert fake_contribution(DBitFlip(1.0, d, d=2), "mga", targets) == pytest.approx(2 * d / 2 * half / (half - 1))
    assert fake_contribution(DBitFlip(1.0, d, d=2), "rpa", targets) == pytest.approx(r / 2)
    assert fake_contribution(SHE(1.0, d), "mga", targets) == pytest.approx(r * (1 + 2 * math.log(1e6)))


def test_she_cap_is_a_genuine_entrys_one_in_two_million_tail():
    """P(1 + Lap(2/ε) > 1 + B) = ½e^{−B/b} = ½·10⁻⁶ at B = she_cap; the MGA report puts 1 + B on targets."""
    mech = SHE(2.0, 10)
    cap = crafted.she_cap(mech)
    assert 0.5 * math.exp(-cap / mech.scale) == pytest.approx(0.5e-6)
    y = fake_reports(mech, "mga", [3, 7], 4, rng=0)
    assert (y[:, [3, 7]] == 1 + cap).all()


def test_olh_search_finds_full_collisions_beyond_the_old_limit():
    """g^(r−1) = 34³ ≈ 3.9·10⁴ > 3·10⁴, where the former search (2^15 tries) gave up."""
    mech = OLH(3.5, D)
    assert mech.g ** 3 > 3e4
    seeds, ys, supported = olh_seed_pool(mech, (30, 31, 32, 33))
    assert (supported == 4).all() and seeds.size == 64
    assert (mech.hash_items(seeds[:, None], np.array([30, 31, 32, 33])[None, :]) == ys[:, None]).all()


def test_olh_gain_at_the_pool_the_search_found(monkeypatch):
    """When the budget cannot find a full collision (g² ≈ 8.9·10⁶ ≫ 2^18 tries), the pool holds the best
    seeds found (2 of 3 targets) and the measured gain matches the closed form at that support, well
    below the paper's form for all r targets (z at α = 1e-4)."""
    monkeypatch.setattr(crafted, "OLH_SEED_BUDGET", 1 << 18)
    olh_seed_pool.cache_clear()
    try:
        mech, ids = OLH(8.0, D), [36, 37, 38]
        assert (olh_seed_pool(mech, tuple(ids))[2] == 2).all()
        gains = measure_gain(mech, "mga", [WORKLOAD.items[i] for i in ids], WORKLOAD.counts, WORKLOAD.items,
                             M, 60, rng=4)
        expected = expected_gain(mech, "mga", ids, WORKLOAD.counts, np.arange(D), M)
        assert abs(gains.mean() - expected) <= z_bound(1e-4) * gains.std(ddof=1) / math.sqrt(60)
        full = paper_gain("olh", "mga", 8.0, D, 3, M / (N + M), WORKLOAD.counts[ids].sum() / N)
        assert expected < 0.75 * full
    finally:
        olh_seed_pool.cache_clear()


@pytest.mark.parametrize("mech", [SUE(1.0, D), THE(1.0, D), DBitFlip(1.0, D, d=4), BLH(1.0, D),
                                  FLH(2.0, D, pool_size=64)], ids=lambda m: m.name)
def test_detection_runs_on_every_oracle_with_item_set_reports(mech):
    """Detection runs on the new oracles; on the unary encodings and dBitFlip (d = 4 ≥ r) it flags every
    MGA fake. (BLH and FLH: a genuine report supports ~1/g of all items, so their fakes hide better.)"""
    targets = [WORKLOAD.items[i] for i in (36, 37, 38, 39)]
    gains, fakes_flagged, genuine_flagged = gain_after_detection(mech, "mga", targets, WORKLOAD.counts,
                                                                 WORKLOAD.items, M, 1, rng=9)
    assert np.isfinite(gains).all() and 0 <= genuine_flagged <= 1
    if isinstance(mech, (SUE, THE, DBitFlip)):
        assert fakes_flagged == 1.0 and genuine_flagged < 0.05


@pytest.mark.parametrize("mech", [URR(1.0, D, EVEN), HR(1.0, D), SHE(1.0, D), FLH(2.0, D, pool_size=64),
                                  RAPPOR(2.0, num_bits=32, cohorts=8)], ids=lambda m: m.name)
def test_normalization_runs_on_the_new_oracles(mech):
    targets = [WORKLOAD.items[i] for i in (37, 38)]
    gains = measure_gain(mech, "mga", targets, WORKLOAD.counts, WORKLOAD.items, M, 3, rng=5,
                         defense=normalized_frequencies)
    assert np.isfinite(gains).all() and (np.abs(gains) <= 2.0).all()  # Norm-Sub frequencies lie in [0, 1]
