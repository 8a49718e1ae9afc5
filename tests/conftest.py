"""Shared pytest configuration: the long tests that ``-m "not slow"`` leaves to CI, and the small
fleets and scenarios that several test modules share (test modules import them from here, never
from each other).

The developer loop is ``pytest -m "not slow"`` (under two minutes serially); CI runs everything. A
test is slow when it takes more than about 2 s on the 2-core reference machine. Most carry
``@pytest.mark.slow`` where they are defined; the ones below are marked here, by node id (a
parametrized id marks only that case), because they are end-to-end runs or single cases of a
parametrized statistical suite whose fast cases stay in the loop.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from ldpsim.simulator.config import DeploymentConfig, UseCase

#: node ids (or their prefix up to a parametrization) measured at more than ~2 s each
SLOW = (
    # measured above 1.5 s in the fast tier (pytest --durations)
    "tests/simulator/test_collectors.py::test_the_shipped_trust_scenario_runs_every_model",
    "tests/evaluation/test_plots.py::test_one_epsilon_axis_holds_one_guarantee_kind[discovery]",
    "tests/evaluation/test_bench.py::test_every_case_runs_in_process[rappor no-IRR d200-direct]",
    "tests/evaluation/test_discovery_days.py::test_equal_privacy_spends_the_same_epsilon",
    "tests/evaluation/test_audit_plans.py::test_the_battery_passes_on_the_real_clients",
    "tests/evaluation/test_bench.py::test_check_command_exit_codes",
    "tests/evaluation/test_trust_models.py::test_comparison_measures_what_theory_says",
    "tests/evaluation/test_compare_deployments.py::test_command_writes_a_run_folder_and_refuses_to_replace_it",
    # a deployment's use case under a trust model, run end to end (tests/simulator/test_nightly_collection.py
    # covers the collection itself in the fast tier)
    "tests/evaluation/test_trust_deployment.py::test_daily_estimates_match_their_exact_theory_and_the_guarantee_is_stated",
    "tests/simulator/test_nightly_collection.py::test_count_level_and_per_device_noise_agree_in_distribution",
    "tests/evaluation/test_trust_deployment.py::test_two_workers_reproduce_the_serial_run",
    "tests/evaluation/test_trust_deployment.py::test_dry_run_plans_a_trust_deployment",
    "tests/evaluation/test_trust_deployment.py::test_every_collected_model_runs_over_the_nights_with_its_theory[threshold]",
    "tests/evaluation/test_trust_deployment.py::test_the_shipped_trust_deployment_runs",
    "tests/scenarios/test_reproduction_triehh.py::test_quick_run_is_registered_and_writes_its_outputs",
    "tests/scenarios/test_reproduction_triehh.py::test_paper_words_keep_the_papers_word_rule",
    # end to end: whole deployments, sweeps and checks through the command line
    "tests/evaluation/test_secagg_rounds.py::test_days_comparison_runs_gboard_at_its_central_guarantee",
    "tests/evaluation/test_secagg_rounds.py::test_calibrated_local_epsilon_spends_just_under_the_target",
    "tests/simulator/test_collectors.py::test_compare_command_runs_the_trust_models",   # calibration and discovery at 7 models
    "tests/scenarios/test_cli.py::test_shipped_scenarios_by_name_from_any_folder",
    "tests/scenarios/test_cli.py::test_python_api",
    "tests/evaluation/test_shuffle_ledger.py::test_ldpsim_run_prints_and_writes_the_central_epsilon",
    "tests/evaluation/test_bench.py::test_bench_prints_table_with_targets",
    "tests/test_run_folders.py::test_5_symlinks_in_a_run_folder_are_never_written_through",
    "tests/test_run_folders.py::test_4_an_interrupted_run_is_marked_incomplete_and_old_outputs_are_gone",
    "tests/test_run_folders.py::test_1_symlinked_store_is_refused_not_double_counted",
    "tests/test_run_folders.py::test_plot_refuses_a_folder_in_use",
    "tests/test_run_folders.py::test_3_results_belong_to_the_folder_scenario_and_seed_only",
    "tests/simulator/test_fakes.py::test_made_up_word_is_discovered_as_predicted_and_sharding_changes_nothing",
    "tests/simulator/test_fakes.py::test_fake_sweep_resumes_from_its_journal_without_counting_twice",
    "tests/simulator/test_fakes.py::test_enough_fakes_put_the_target_into_the_top_10",
    "tests/simulator/test_words.py::test_slang_discovery_probability_by_day",
    "tests/simulator/test_words_rounds.py::test_the_ledger_charges_a_day_of_rounds_per_answering_device",
    "tests/simulator/test_words_rounds.py::test_only_the_devices_online_that_night_answer",
    "tests/simulator/test_words_rounds.py::test_rounds_find_the_slang_word_and_state_the_guarantee",
    "tests/simulator/test_words_rounds.py::test_one_seed_reproduces_the_rounds_for_any_sharding",
    "tests/simulator/test_words_rounds.py::test_the_accountant_composes_the_rounds_under_their_kind",
    "tests/simulator/test_deployment.py::test_daily_estimate_agrees_with_population_engine",
    "tests/simulator/test_deployment.py::test_shards_equal_single_process[5]",
    "tests/simulator/test_cluster.py::test_sweep_on_a_workerless_cluster_fails_then_resumes",
    "tests/scenarios/test_library.py::test_rerunning_a_finished_sweep_keeps_its_figures",
    "tests/scenarios/test_reproductions.py::test_quick_run_writes_table_and_figure",  # every figure, --quick
    "tests/scenarios/test_reproductions.py::test_fig9_expected_accuracy_equals_reference_values",
    "tests/scenarios/test_reproductions_seeds.py::test_quick_run_writes_table_and_figure",
    "tests/scenarios/test_reproductions_seeds.py::test_cli_runs_a_seed_reproduction",
    "tests/scenarios/test_cli.py::test_local_cluster_needs_no_fixed_port",  # starts a Dask cluster
    "tests/evaluation/test_bench.py::test_every_case_runs_in_process[rappor no-IRR d200-per-user]",
    "tests/evaluation/test_bench.py::test_every_case_runs_in_process[rappor k128 h2 c8 d200-per-user]",
    "tests/evaluation/test_plots.py::test_plot_command_writes_png_and_svg",
    "tests/evaluation/test_plots.py::test_top_item_bars_use_the_theory_and_captions_follow_reading_order",
    "tests/evaluation/test_poisoning.py::test_fleet_scenario_runs_fake_devices",
    # statistical: many repeats against closed-form moments (the cheap cases of each suite stay; the
    # contract's mean and variance for every mechanism run in CI, each mechanism's own tests stay)
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory",
    "tests/mechanisms/test_rappor.py::test_decode_finds_frequent_candidates_and_no_absent_ones",
    "tests/mechanisms/test_personalized.py::test_combination_variance_and_beats_worst_group",
    "tests/mechanisms/test_discovery.py::test_discovered_estimates_match_closed_form_direct",
    "tests/mechanisms/test_discovery.py::test_sfp_fragment_estimate_has_per_position_variance",
    "tests/mechanisms/test_discovery.py::test_discovered_estimates_unbiased",
    "tests/mechanisms/test_central_dp.py::test_lattice_projection_is_l1_optimal",
    "tests/mechanisms/test_central_dp.py::test_privacy_ratio_of_laplace_densities_is_exactly_e_eps",
    "tests/mechanisms/test_onebitmean.py::test_mean_and_variance_match_theory[direct]",
    "tests/mechanisms/test_onebitmean.py::test_gamma_mean_and_variance_match_theory[direct]",
    "tests/mechanisms/test_rr.py::test_confidence_interval_coverage",
    "tests/mechanisms/test_cms.py::test_direct_sampler_total_of_ones[4096]",
    "tests/mechanisms/test_local_hashing.py::test_flh_direct_sampler_placement_branch_matches_theory",
    "tests/mechanisms/test_personalized.py::test_combination_is_unbiased",
    "tests/mechanisms/test_personalized_numeric.py::test_combined_mean_unbiased_with_fisher_variance",
    "tests/mechanisms/test_em.py::test_sdpm_em_mean_unbiased_with_fisher_variance",
    "tests/mechanisms/test_em.py::test_ems_converges_to_a_fixed_point_of_smoothed_em",
    "tests/mechanisms/test_rappor.py::test_decode_standard_errors_are_calibrated",
    "tests/mechanisms/test_hcms.py::test_family_averages",
    "tests/mechanisms/test_quadtree.py::test_measured_query_error_matches_analytic",
    "tests/mechanisms/test_cms.py::test_family_averaged_variance_is_mean_mse_over_families",
    # run folders, benchmark folders and reruns end to end (seconds each)
    "tests/evaluation/test_bench.py::test_bench_owns_its_folder",
    "tests/evaluation/test_bench.py::test_bench_prints_times_and_floor_ratios_without_grading",
    "tests/evaluation/test_bench.py::test_library_bench_returns_tables",
    "tests/test_edge_safety.py::test_a_file_the_user_writes_during_run_is_not_adopted_nor_deleted_by_a_rerun",
    "tests/test_edge_safety.py::test_the_report_embeds_only_files_the_run_wrote_never_through_a_symlink",
    "tests/test_edge_safety.py::test_a_folder_turned_read_only_mid_run_is_reported_as_read_only",
)


def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`SLOW` slow (an id without ``[...]`` marks every case of that test)."""
    slow = pytest.mark.slow
    for item in items:
        nodeid = item.nodeid
        if nodeid in SLOW or nodeid.split("[")[0] in SLOW:
            item.add_marker(slow)


# ---- shared fleets and scenarios ------------------------------------------------------------------------
ITEMS = tuple(f"e{i}" for i in range(8))
WEIGHTS = (8, 6, 5, 4, 3, 2, 1, 1)


def tiny_config(**overrides) -> DeploymentConfig:
    """A small fleet with GRR emoji and PM typing speed; no loss unless overridden; no fsync (speed)."""
    use_cases = (UseCase("emoji", "event", "grr", (("epsilon", 2.0), ("domain_size", len(ITEMS))), 2),
                 UseCase("typing_speed", "reading", "pm", (("epsilon", 1.0),), 1, (0.0, 120.0)))
    base = dict(items=ITEMS, item_weights=WEIGHTS, use_cases=use_cases, n_devices=300, n_days=3,
                block_size=64, seed=11, opt_in=1.0, p_online=1.0, loss=0.0, ack_loss=0.0, fsync=False,
                adversary_devices=50)
    return DeploymentConfig(**{**base, **overrides})


def same_aggregates(a: dict, b: dict) -> None:
    """Equal aggregates: integer data exactly, float data (PM's report sums) up to summation order."""
    assert a.keys() == b.keys()
    for key, agg in a.items():
        assert agg.n == b[key].n, key
        if np.issubdtype(agg.data.dtype, np.integer):
            assert np.array_equal(agg.data, b[key].data), key
        else:
            np.testing.assert_allclose(agg.data, b[key].data, rtol=1e-12, err_msg=str(key))


#: a deployment scenario of 150 devices over 2 days (emoji GRR, typing speed SDPM)
TINY = """
[deployment]
name = "tiny"
seed = 3
devices = 150
days = 2
block_size = 64
adversary_devices = 40

[workload]
name = "harmonic"
domain_size = 12

[trend]
rank = 9
start_day = 1

[use_case.emoji]
mechanism = "grr"
epsilon = 4.0
daily_limit = 1

[use_case.typing_speed]
mechanism = "sdpm"
epsilon = 2.0
range = [0.0, 120.0]
low_range = [20.0, 60.0]
em_bins = 16

[use_case.session_length]
mechanism = "pm"
epsilon = 1.0
range = [0.0, 300.0]

[server]
fsync = false
"""

#: TINY with discovered words (PEM) and a planted slang word, 2000 devices over 3 days
WORDS = TINY.replace("[server]", """[use_case.words]
mechanism = "pem"
epsilon = 4.0
top_k = 10
pool = 64

[words]
top = 200
slang = "rizzé"
slang_start_day = 1
slang_share = 0.3

[server]""").replace("devices = 150", "devices = 2000").replace("days = 2", "days = 3")

#: a sweep scenario of 4 tiny cells
SWEEP = """
[scenario]
name = "tiny"
seed = 5
repeats = 3
path = "direct"
top = 5

[workload]
name = "harmonic"
n = 2_000
domain_size = 20

[[mechanism]]
name = "grr"

[grid]
epsilon = [1.0, 2.0]
"workload.name" = ["harmonic", "exponential"]

[metrics]
names = ["mse", "variance"]
"""


def write_scenario(tmp_path, text, name="s.toml"):
    """Write a scenario text as ``tmp_path/name``; returns the path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---- shared by the EM tests of the numeric mechanisms --------------------------------------------------
def em_draw(f, edges, n, rng):
    """n i.i.d. values: a bin from f, then uniform inside it (so π = Mᵀf holds exactly)."""
    i = rng.choice(f.size, size=n, p=f)
    return edges[i] + (edges[i + 1] - edges[i]) * rng.random(n)


def fisher_covariance(em, f, n):
    """Asymptotic covariance of the MLE f̂ on the simplex: J (Jᵀ I J)⁻¹ Jᵀ / n with I = M diag(1/π) Mᵀ
    and J the (d × d−1) chart f_d = 1 − Σ_{i<d} f_i."""
    m = em.matrix
    info = (m / (f @ m)) @ m.T
    jac = np.vstack([np.eye(f.size - 1), -np.ones(f.size - 1)])
    return jac @ np.linalg.inv(jac.T @ info @ jac) @ jac.T / n


# ---- a run folder for the HTML report's tests (unit and browser) -------------------------------------------
#: text that would break out of a <pre> block or run a script if the report did not escape it
HOSTILE = "</pre><script>alert('x')</script>"


def small_figure(title="tiny figure") -> Figure:
    """A 3 × 2 inch line plot titled ``title``."""
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.plot([1, 2, 3], [1, 4, 9], marker="o")
    ax.set_title(title)
    return fig


def put(path: Path, write) -> None:
    """Write a file as a run does (:mod:`ldpsim.runtime.durable`): the report embeds only files the run wrote.
    ``write`` is text, or a callable filling the temporary path."""
    from ldpsim.runtime.durable import write_file, write_text
    write_file(path, write) if callable(write) else write_text(path, write)


def make_run_dir(root: Path) -> Path:
    """A run folder shaped like ``ldpsim run``'s: config, report.md, CSV (+ Parquet twin), JSON, plots."""
    root.mkdir(parents=True, exist_ok=True)
    put(root / "config.json", json.dumps({"seed": 2026, "note": HOSTILE}))
    put(root / "scenario.toml", '[deployment]\nseed = 2026\n')
    put(root / "report.md", "# Deployment run\n\n```\nrank  true\n1     0.5\n```\n\n![fig](plots/fig.png)\n")
    table = pd.DataFrame({"item": ["a", HOSTILE, "c"], "share": [0.5, 0.3, 0.2]})
    put(root / "top.csv", lambda p: table.to_csv(p, index=False))
    put(root / "top.parquet", table.to_parquet)
    put(root / "days.parquet", pd.DataFrame({"day": range(3)}).to_parquet)
    put(root / "summary.json", json.dumps({"devices": 10}))
    (root / "plots").mkdir(exist_ok=True)
    put(root / "plots" / "fig.png", lambda p: small_figure().savefig(p, dpi=60, format="png"))
    put(root / "plots" / "vector.svg", lambda p: small_figure("svg only").savefig(p, format="svg"))
    put(root / "plots" / "fig.svg", lambda p: small_figure().savefig(p, format="svg"))  # PNG twin: not embedded twice
    return root
