"""Shared pytest configuration: the long tests that ``-m "not slow"`` leaves to CI.

The developer loop is ``pytest -m "not slow"`` (under two minutes serially); CI runs everything. A
test is slow when it takes more than about 2 s on the 2-core reference machine. Most carry
``@pytest.mark.slow`` where they are defined; the ones below are marked here, by node id (a
parametrized id marks only that case), because they are end-to-end runs or single cases of a
parametrized statistical suite whose fast cases stay in the loop.
"""

from __future__ import annotations

import pytest

#: node ids (or their prefix up to a parametrization) measured at more than ~2 s each
SLOW = (
    # end to end: whole deployments, sweeps and checks through the command line
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
    "tests/simulator/test_deployment.py::test_daily_estimate_agrees_with_population_engine",
    "tests/simulator/test_deployment.py::test_shards_equal_single_process[5]",
    "tests/simulator/test_cluster.py::test_sweep_on_a_workerless_cluster_fails_then_resumes",
    "tests/scenarios/test_library.py::test_rerunning_a_finished_sweep_keeps_its_figures",
    # statistical: many repeats against closed-form moments (the cheap cases of each suite stay)
    "tests/mechanisms/test_discovery.py::test_discovered_estimates_match_closed_form_direct",
    "tests/mechanisms/test_discovery.py::test_sfp_fragment_estimate_has_per_position_variance",
    "tests/mechanisms/test_discovery.py::test_discovered_estimates_unbiased",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[hcms-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[dbitflip-gamma-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[flh-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[dbitflip-d3-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[hr-eps3-default-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[rappor-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[cms-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[dbitflip-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[oue-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[cms-m10-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[hr-large-eps-direct]",
    "tests/mechanisms/test_contract.py::test_estimator_mean_and_variance_match_theory[hr-direct]",
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
)


def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`SLOW` slow (an id without ``[...]`` marks every case of that test)."""
    slow = pytest.mark.slow
    for item in items:
        nodeid = item.nodeid
        if nodeid in SLOW or nodeid.split("[")[0] in SLOW:
            item.add_marker(slow)
