"""Trust-model accounting and comparison (evaluation/privacy/trust_accounting.py, trust_compare.py)."""

import math

import numpy as np
import pytest

from ldpsim.evaluation.privacy.amplification import numerical_epsilon
from ldpsim.evaluation.privacy.trust_accounting import calibrate, guarantees, noise_epsilon, run_epsilon
from ldpsim.evaluation.privacy.trust_models import TRUST_MODELS, trust_model
from ldpsim.scenarios.studies.trust.trust_compare import compare_trust_models
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.runtime.errors import InputError


def test_noise_accounting_matches_dp_accounting_builtin_mechanisms():
    from dp_accounting.pld import privacy_loss_distribution as pld
    dg = pld.from_discrete_gaussian_mechanism(20.0, value_discretization_interval=1e-3)
    assert noise_epsilon(IntegerNoise("discrete_gaussian", 20.0), 1e-9, 60) == pytest.approx(
        dg.self_compose(60).get_epsilon_for_delta(1e-9), rel=1e-3)
    dl = pld.from_discrete_laplace_mechanism(0.25, value_discretization_interval=1e-3)
    # the pmf route rounds each loss up to the 1e-3 grid: at most 1e-3 per composed unit change
    assert noise_epsilon(IntegerNoise("polya", 4.0), 1e-9, 2) == pytest.approx(
        dl.self_compose(2).get_epsilon_for_delta(1e-9), abs=2e-3)


def test_discrete_laplace_accounting_is_the_closed_form():
    # pure ε = 1/b per unit change; replace moves two bins: 2/b (up to the 1e-3 pessimistic discretization)
    eps = noise_epsilon(IntegerNoise("polya", 5.0), 1e-12, 2)
    assert 0.4 <= eps <= 0.4 + 2e-3


def test_skellam_accounting_approaches_the_gaussian_with_the_same_variance():
    from dp_accounting.pld import privacy_loss_distribution as pld
    mu = 2000.0                                             # Skellam(μ) → N(0, 2μ) as μ grows
    gauss = pld.from_gaussian_mechanism(math.sqrt(2 * mu), value_discretization_interval=1e-3)
    assert noise_epsilon(IntegerNoise("skellam", mu), 1e-9) == pytest.approx(
        gauss.get_epsilon_for_delta(1e-9), rel=0.02)


def test_guarantees_per_scope():
    ldp = {g.scope: g for g in guarantees(trust_model("ldp", epsilon_report=0.5), 1000, 30, reports_per_day=2)}
    assert (ldp["report"].epsilon, ldp["day"].epsilon, ldp["run"].epsilon) == (0.5, 1.0, 30.0)
    sh = {g.scope: g for g in guarantees(trust_model("shuffle", epsilon_report=2.0), 10**5, 10, delta=1e-8)}
    assert sh["report"].epsilon == pytest.approx(min(2.0, numerical_epsilon(2.0, 10**5, 1e-8 / 2, tol=1e-4)))
    # the run composes 10 reports each accounted at δ/20: never above their sum (basic composition)
    assert sh["report"].epsilon < sh["run"].epsilon <= 10 * numerical_epsilon(2.0, 10**5, 1e-8 / 20, tol=1e-4) + 1e-12
    assert sh["misbehaving server"].epsilon == 20.0
    ts = {g.scope: g for g in guarantees(trust_model("two_server", noise=IntegerNoise("discrete_gaussian", 40.0)),
                                         10**5, 30)}
    assert ts["misbehaving server"].epsilon == math.inf
    assert ts["run"].epsilon == pytest.approx(noise_epsilon(IntegerNoise("discrete_gaussian", 40.0), 1e-9, 60))


def test_secagg_local_amplifies_only_within_a_cohort():
    small = run_epsilon(trust_model("secagg_local", epsilon_report=2.0, min_cohort=1000), 10**6, 1, 1e-9)
    whole = run_epsilon(trust_model("shuffle", epsilon_report=2.0), 10**6, 1, 1e-9)
    assert whole < small <= 2.0


@pytest.mark.parametrize("kind, params", [("shuffle", {}), ("two_server", {"noise": IntegerNoise("discrete_gaussian", 10.0)})])
def test_calibration_hits_the_target_from_below(kind, params):
    base = trust_model(kind, **params)
    m = calibrate(base, 2.0, 10**5, 30, 1e-9)
    eps = run_epsilon(m, 10**5, 30, 1e-9)
    assert 2.0 * 0.98 <= eps <= 2.0


def test_unknown_model_is_refused():
    with pytest.raises(InputError, match="'aggregation'"):
        trust_model("mpc")
    with pytest.raises(InputError, match="'noise'"):
        trust_model("secagg")


@pytest.mark.slow
def test_comparison_measures_what_theory_says():
    r = compare_trust_models("zipf", n=50_000, domain_size=40, days=10, epsilons=(2.0,), repeats=40, rng=3,
                             discovery=False, models=("ldp", "shuffle", "secagg", "two_server"))
    t = r.table.set_index("model")
    # measured MSE = mean of 40 days × 40 items of squared, nearly normal errors: relative sd √(2/1600);
    # |z| < 4.5 (false alarm ≈ 7e-6 per model, normal approximation)
    for model in t.index:
        ratio = t.loc[model, "mse_measured"] / t.loc[model, "mse_theory"]
        assert abs(ratio - 1) < 4.5 * math.sqrt(2 / (40 * 40)), (model, ratio)
    assert t.loc["two_server", "mse_theory"] < t.loc["shuffle", "mse_theory"] < t.loc["ldp", "mse_theory"]
    assert np.all(t["epsilon_device"] <= 2.0)
    fig = r.figure()
    assert len(fig.axes[0].lines) == 8                       # per model: the theory line and the measured dots


def test_dp_draft_client_example_is_reproduced():
    from ldpsim.scenarios.studies.trust.trust_reproductions import (DRAFT_CLIENT, ldp_sd_at, rappor_sd,
                                                                    symmetric_rappor_central_epsilon)
    for eps, _, sd, eps0 in DRAFT_CLIENT:
        assert rappor_sd(eps0, 100_000) == pytest.approx(sd, abs=1e-4)
    # the exact pair accounting is tighter than the draft's stated 0.317 (its argument is a TODO there)
    ours = symmetric_rappor_central_epsilon(5.0, 100_000, 1e-9)
    assert 0.28 < ours < 0.317
    assert 1900 < ldp_sd_at(0.317, 100_000) < 2100          # "pure LDP at that ε: sd near 2 000"


@pytest.mark.slow
def test_dp_draft_aggregator_sigma_is_reproduced():
    from ldpsim.scenarios.studies.trust.trust_reproductions import dp_draft_aggregator_table
    t = dp_draft_aggregator_table()
    # exact discrete-Gaussian accounting vs the draft's continuous analytic Gaussian: within 0.5 %
    assert np.allclose(t["sd_one_ours"], t["sd_one_draft"], rtol=5e-3)
    assert np.all(t["sd_one_ours"] >= t["sd_one_draft"] * (1 - 1e-4))


def test_dropouts_raise_epsilon_unless_shares_are_provisioned_for_the_quorum():
    from ldpsim.evaluation.privacy.trust_accounting import dropout_epsilon
    target = IntegerNoise("skellam", 400.0)
    full = dropout_epsilon(target, 1000, 1000)
    assert full == pytest.approx(noise_epsilon(target, 1e-9, 2), rel=1e-6)
    eps = [dropout_epsilon(target, 1000, m) for m in (900, 700, 500)]
    assert full < eps[0] < eps[1] < eps[2]
    # Skellam(μ·m/s) exactly: half the shares = the target at μ/2
    assert eps[2] == pytest.approx(noise_epsilon(IntegerNoise("skellam", 200.0), 1e-9, 2), rel=1e-6)
    # provisioned for a quorum of 800: any publishable cohort (m ≥ 800) is at least as private as the target
    assert dropout_epsilon(target, 800, 800) == pytest.approx(full, rel=1e-6)
    assert dropout_epsilon(target, 800, 1000) < full


def test_client_randomization_keeps_a_local_guarantee_when_both_aggregators_collude():
    from ldpsim.evaluation.privacy.trust_accounting import client_rappor_epsilon
    noise = IntegerNoise("discrete_gaussian", 5.0)
    plain = {g.scope: g for g in guarantees(trust_model("two_server", noise=noise), 10**5, 10)}
    both = {g.scope: g for g in guarantees(trust_model("two_server", noise=noise, client_epsilon=10.0), 10**5, 10)}
    client_only = client_rappor_epsilon(10.0, 10**5, 1e-9, 2 * 10)
    assert both["run"].epsilon == pytest.approx(min(plain["run"].epsilon, client_only))
    assert plain["misbehaving server"].epsilon == math.inf
    assert both["misbehaving server"].epsilon == 100.0            # 10 reports of a 10-LDP randomizer
    with pytest.raises(InputError, match="client_epsilon"):
        trust_model("secagg", noise=noise, client_epsilon=1.0)


def test_comparison_is_written_to_a_run_folder(tmp_path):
    from ldpsim.scenarios.studies.trust.trust_scenario import write_trust_results
    r = compare_trust_models("zipf", n=5000, domain_size=20, days=5, epsilons=(4.0,), models=("ldp", "two_server"),
                             discovery=False, repeats=2, rng=7)
    out = write_trust_results(tmp_path / "c", comparison=r)
    assert (out / "comparison.csv").is_file() and (out / "plots" / "trust_models.png").is_file()
    again = compare_trust_models("zipf", n=5000, domain_size=20, days=5, epsilons=(4.0,), models=("ldp", "two_server"),
                                 discovery=False, repeats=2, rng=7)
    assert again.table.equals(r.table)                        # one seed reproduces the comparison


def test_unreachable_or_invalid_targets_are_refused():
    with pytest.raises(InputError, match="target_epsilon"):
        calibrate(trust_model("two_server", noise=IntegerNoise("polya", 1.0)), 0.0, 1000, 5)


def test_a_sampling_rate_without_a_finite_epsilon_is_reported_unbounded():
    g = {x.scope: x for x in guarantees(trust_model("sample_threshold", rate=0.9, threshold=2), 1000, 3, delta=1e-9)}
    assert g["report"].epsilon == g["run"].epsilon == math.inf


def test_secagg_bytes_reproduce_the_papers_expansion():
    from ldpsim.mechanisms.aggregation.secagg_cost import expansion, secagg_bits
    # Bonawitz et al. (CCS 2017), abstract: 1.73× for 2^10 users and 2^20 16-bit entries, 1.98× for 2^14 and 2^24
    assert round(expansion(2**10, 2**20, 16), 2) == 1.73
    assert round(expansion(2**14, 2**24, 16), 2) == 1.98
    # SecAgg+ (Bell et al., CCS 2020): k neighbours instead of n − 1 others; the masked vector is unchanged
    full, plus = secagg_bits(100, 10_000, 14), secagg_bits(100, 10_000, 14, neighbours=300)
    assert full - plus == (2 + 5) * 256 * (10_000 - 301)
    assert secagg_bits(100, 10_000, 14, neighbours=20_000) == full


@pytest.mark.slow
def test_tuned_sample_threshold_is_at_the_target():
    from ldpsim.evaluation.privacy.trust_accounting import calibrate_threshold
    start = trust_model("sample_threshold", rate=0.05, threshold=1)
    model = calibrate_threshold(start, 8.0, 10_800, 30, 1e-9)
    assert run_epsilon(model, 10_800, 30, 1e-9) <= 8.0
    # the smallest such τ: one less overshoots the target
    assert run_epsilon(trust_model("sample_threshold", rate=0.05, threshold=model.threshold - 1), 10_800, 30, 1e-9) > 8.0
    assert calibrate_threshold(start, 0.5, 10_800, 30, 1e-9) is None         # below p's floor ln(1/(1 − p)) per report


@pytest.mark.slow
def test_keyboard_fleet_comparison_is_inside_the_theory_interval():
    r = compare_trust_models(epsilons=(2.0,), repeats=40, discovery=False, rng=11,
                             models=("ldp", "shuffle", "secagg", "two_server", "sample_threshold"))
    t = r.table.set_index("model")
    assert r.params["fleet"] == "keyboard" and r.params["domain_size"] == 100
    # the interval is theory ± 1.96 sd of the measured mean (normal errors); |z| < 4.5: false alarm ≈ 7e-6 per model
    for model in ("ldp", "shuffle", "secagg", "two_server"):
        sd = (t.loc[model, "mse_high"] - t.loc[model, "mse_theory"]) / 1.96
        assert abs(t.loc[model, "mse_measured"] - t.loc[model, "mse_theory"]) < 4.5 * sd, model
    assert np.all(t["epsilon_device"] <= 2.0)
    assert t.loc["sample_threshold", "parameter"].startswith("p=")


def test_shuffle_accounting_is_the_accountants_step_within_closed_forms():
    from ldpsim.evaluation.privacy.accountant import shuffle_step
    from ldpsim.evaluation.privacy.trust_accounting import shuffled_epsilon
    from ldpsim.evaluation.privacy.amplification import closed_form_epsilon
    from ldpsim.evaluation.privacy.composition import advanced_composition
    e0, n, days, delta = 1.5, 20_000, 30, 1e-9
    from ldpsim.evaluation.privacy.composition import compose
    g = {x.scope: x for x in guarantees(trust_model("shuffle", epsilon_report=e0), n, days, delta)}
    assert g["run"].epsilon == shuffled_epsilon(e0, n, days, delta)
    step = shuffle_step(e0, n, delta / (2 * days))
    # the split of δ: each day's report at δ/(2·days) by FMT21's numerical bound, composed at δ (dp-accounting)
    by_hand = min(e0, numerical_epsilon(e0, n, delta / (2 * days), tol=1e-4))
    assert g["run"].epsilon == pytest.approx(compose([(by_hand, delta / (2 * days))] * days, delta).epsilon)
    # FMT21's numerical bound is below its closed form (Theorem 3.1), and never above ε₀
    assert step <= min(e0, closed_form_epsilon(e0, n, delta / (2 * days)))
    # PLD composition of 30 (step, δ/60) pairs at δ: no worse than advanced composition at δ/2 (DRV 2010)
    assert step * 1.0 < g["run"].epsilon <= advanced_composition(step, days, delta / 2)


@pytest.mark.slow
def test_discovery_designs_are_paired_and_amplified():
    from ldpsim.scenarios.studies.discovery.days import growing_slang
    from ldpsim.mechanisms.bounding import ContributionBound
    from ldpsim.scenarios.studies.trust.bounded_discovery import bounded_design
    from ldpsim.scenarios.studies.trust.trust_fleet import keyboard_fleet
    assert {k: cls.discovery for k, cls in TRUST_MODELS.items()} == {
        "ldp": "pem", "shuffle": "ldp_trie", "secagg_local": "ldp_trie", "secagg": "ldp_trie",
        "two_server": "triehh_pp", "threshold": "triehh_pp", "sample_threshold": "triehh", "tee": "tee_histogram"}
    fleet = keyboard_fleet()
    codec = growing_slang("en", n_days=3).codec
    one = ContributionBound(l0=1, linf=1, sampler="uniform")           # one word a device a night
    pem = bounded_design("pem", "ldp", 4.0, fleet, 1e-9, codec, one)[0]
    assert pem.epsilon == pytest.approx(4.0 / 30)                       # one pure-LDP report a day
    trie = bounded_design("ldp_trie", "shuffle", 4.0, fleet, 1e-9, codec, one)[0]
    online = round(fleet.word_devices * fleet.p_online)
    assert trie.epsilon == pytest.approx(calibrate(trust_model("shuffle"), 4.0, online, 30, 1e-9).epsilon_report)
    assert trie.epsilon > 4.0 / 30                                       # the shuffle buys a larger ε₀


def test_the_fleet_and_a_users_vocabulary(tmp_path):
    from ldpsim.scenarios.studies.trust.trust_fleet import keyboard_fleet
    f = keyboard_fleet()
    assert (f.name, f.devices, f.counts.sum(), f.counts.size, f.days) == ("keyboard", 10_800, 10_800, 100, 30)
    vocab = tmp_path / "mine.csv"
    vocab.write_text("item,count\na,60\nb,30\nc,10\n", encoding="utf-8")
    r = compare_trust_models(vocabulary=vocab, models=("ldp",), epsilons=(4.0,), repeats=2, discovery=False, rng=1)
    assert r.params["domain_size"] == 3 and r.table["epsilon_device"].iloc[0] == pytest.approx(4.0)
    with pytest.raises(InputError, match="nosuch"):
        compare_trust_models("nosuch", models=("ldp",), discovery=False)
