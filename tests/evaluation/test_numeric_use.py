"""Numeric use cases (docs/math.md §9.14): designs named and validated through the design table and the
registry, a deployment's nightly heat maps and distributions (their metrics, their ε scopes, their law),
and the figures that draw each estimate beside its truth."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ldpsim.evaluation.deployment.numeric_runs import numeric_run, numeric_tables, reporting_nights, run_taps
from ldpsim.evaluation.distribution_metrics import heatmap_error, range_query_mse, wasserstein1
from ldpsim.evaluation.numeric_designs import BINS, SIDE, SWEEP_SIZES
from ldpsim.evaluation.numeric_use import (FAMILIES, READINGS, NumericUseCase, design_names,
                                           key_ids, numeric_design, registered_numeric)
from ldpsim.evaluation.report.numeric_use_plots import numeric_figures
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.mechanisms.numeric.quadtree_heatmap import QuadtreeHeatmap
from ldpsim.runtime.errors import InputError
from ldpsim.simulator.fleet import stream
from tests.fleets import tiny_config


@pytest.mark.parametrize("family", FAMILIES)
def test_every_design_of_the_family_is_named_and_scoped(family):
    """Every name of the table (and, for readings, the registry's numeric mechanisms) builds; local designs
    are ε-LDP with δ = 0, secure aggregation (ε, δ) central with the δ given, the server's ε central with δ = 0."""
    for name in design_names(family):
        d = numeric_design(name, family, epsilon=0.7, **({"delta": 1e-7} if "secagg" in name else {}))
        g = d.guarantee
        assert g.epsilon_report == 0.7
        if d.trusts == "nobody":
            assert g.kind in ("ldp", "sdldp") and g.delta == 0.0
        else:
            assert g.kind == "central" and g.delta == (1e-7 if "secagg" in name else 0.0)
    assert set(registered_numeric()) <= set(design_names("reading"))
    assert {"ldp-sw-ems", "ldp-tree", "pm", "sdpm", "sw"} <= set(design_names("reading"))
    assert {"ldp-hdg", "ldp-quadtree", "secagg-quadtree", "central-quadtree"} <= set(design_names("heatmap"))


@pytest.mark.parametrize("name, family, params, says", [
    ("ldp-hgd", "heatmap", {"epsilon": 1.0}, "did you mean 'ldp-hdg'"),
    ("ldp-sw-ems", "heatmap", {"epsilon": 1.0}, "choose one of ldp-quadtree"),
    ("ldp-hdg", "heatmap", {"epsilon": 1.0, "delta": 1e-9}, "its parameters are epsilon."),
    ("secagg-quadtree", "heatmap", {"epsilon": 1.0, "eps": 2}, "its parameters are epsilon, delta"),
    ("sdpm", "reading", {"epsilon": 1.0, "lo": (0, 1)}, "its parameters are epsilon, low"),
    ("ldp-tree", "reading", {}, "needs 'epsilon'"),
    ("ldp-tree", "reading", {"epsilon": -1.0}, "epsilon"),
    ("secagg-flat", "reading", {"epsilon": 1.0, "delta": 2.0}, "delta"),
    ("sdpm", "reading", {"epsilon": 1.0, "low": (0.5, 0.1)}, "sdpm"),
    ("pm", "survey", {"epsilon": 1.0}, "family"),
])
def test_bad_designs_and_keys_are_refused_by_name(name, family, params, says):
    with pytest.raises(InputError, match=None) as err:
        numeric_design(name, family, **params)
    assert says in str(err.value)


def test_keys_by_name():
    assert key_ids(["space", "e"]) == (26, 4)
    for bad in ([], "space", ["spcae"], ["e", "e"]):
        with pytest.raises(InputError):
            key_ids(bad)


def _cfg(**kw):
    return tiny_config(**{"n_devices": 3000, "n_days": 2, "opt_in": 0.9, "p_online": 0.8, **kw})


def test_run_metrics_are_evaluations_functions_on_the_runs_counts():
    """The metrics table holds heatmap_error's and the distance functions' values on the run's own true and
    estimated counts; the true counts are those of the reporting devices' draws (replayed from the run's
    streams), and ε per person is the accountant's: ε of one report or release times the run's nights."""
    cfg = _cfg()
    taps_uc = NumericUseCase("taps", numeric_design("secagg-quadtree", "heatmap", epsilon=2.0), key_ids(["space", "a"]))
    lat_uc = NumericUseCase("lat", numeric_design("ldp-tree", "reading", epsilon=1.5), reading="key_latency")
    tables = numeric_tables(cfg, (taps_uc, lat_uc))
    metrics, cells = tables["numeric_metrics"], tables["numeric_cells"]
    for i, uc in enumerate((taps_uc, lat_uc)):
        g_who, g_data, _ = np.random.default_rng(stream(cfg.seed, "numeric", i)).spawn(3)
        nights = reporting_nights(cfg, g_who)
        m = metrics[metrics["use_case"] == uc.name]
        assert (m["epsilon_report"] == uc.design.epsilon).all()
        assert (m["epsilon_person"] == uc.design.epsilon * cfg.n_days).all()
        assert nights.sum(axis=0).max() == 2  # (so the scope's factor is not 1)
        c = cells[cells["use_case"] == uc.name]
        if uc.design.family == "heatmap":
            assert (m["delta"] == DELTA_RELEASE).all()
            taps = run_taps(cfg, nights, g_data)[1]
            for key, k in zip(("space", "a"), uc.keys):
                t = c[c["key"] == key]["true_count"].to_numpy().reshape(1, SIDE, SIDE)
                e = c[c["key"] == key]["estimate"].to_numpy().reshape(1, SIDE, SIDE)
                assert np.array_equal(t[0], taps.grid_counts(SIDE)[k])
                err = heatmap_error(t, e)
                got = m[m["key"] == key].set_index("metric")["value"]
                assert got["heatmap_l1"] == pytest.approx(err.l1[0], rel=1e-12)
                assert got["heatmap_l2"] == pytest.approx(math.sqrt(err.l2sq[0]), rel=1e-12)
                assert got["heatmap_max"] == pytest.approx(err.max_abs[0], rel=1e-12)
                assert (m[m["key"] == key]["reports"] == t.sum()).all()
        else:
            values = READINGS["key_latency"](int(nights.sum()), rng=g_data).values
            t, e = c["true_count"].to_numpy(), c["estimate"].to_numpy()
            assert np.array_equal(t, np.histogram(values, np.linspace(-1, 1, BINS + 1))[0])
            got = m.set_index("metric")["value"]
            for s, v in zip(SWEEP_SIZES, range_query_mse(t, e, SWEEP_SIZES)):
                assert got[f"range_mse_{s}"] == pytest.approx(v, rel=1e-12)
            assert got["wasserstein"] == pytest.approx(wasserstein1(t, np.clip(e, 0, None), 0.0, 1000.0), rel=1e-12)
            assert c["low"].iloc[0] == 0.0 and c["high"].iloc[-1] == 1000.0 and (m["unit"] == "ms").all()


@pytest.mark.slow
def test_nightly_ldp_quadtree_maps_have_the_closed_form_error():
    """Summed nightly LDP-quadtree estimates are unbiased with the nights' variances added (docs/math.md §2.7):
    over R = 80 runs, Σ_cells (est − truth)² − Σ_nights Σ_cells Var has mean 0; |z| < 4 (false alarm 6e-5)."""
    design = numeric_design("ldp-quadtree", "heatmap", epsilon=1.0)
    uc = NumericUseCase("taps", design, key_ids(["space"]))
    quad = QuadtreeHeatmap(1.0, SIDE)
    diffs = []
    for seed in range(80):
        cfg = _cfg(seed=seed, n_devices=2000)
        _, cells = numeric_run(cfg, uc, 0)
        g_who, g_data, _ = np.random.default_rng(stream(cfg.seed, "numeric", 0)).spawn(3)
        nights = reporting_nights(cfg, g_who)
        per_night = nights.sum(axis=1)
        taps = run_taps(cfg, nights, g_data)[1]
        bounds = np.concatenate([[0], np.cumsum(per_night)])
        variance = sum(quad.cell_variance(taps._replace(keys=taps.keys[a:b], xy=taps.xy[a:b]).grid_counts(SIDE)[26]).sum()
                       for a, b in zip(bounds[:-1], bounds[1:]))
        diffs.append(((cells["estimate"] - cells["true_count"]) ** 2).sum() - variance)
    d = np.asarray(diffs)
    assert abs(d.mean() / (d.std(ddof=1) / math.sqrt(d.size))) < 4


def test_the_report_draws_the_estimate_beside_the_truth_with_its_scopes():
    """Each heat map's left image is the true shares and its right the estimate's; the distribution's two lines
    are the true and the estimated shares; titles name the design, ε of one report or release and ε per
    person over the run."""
    cfg = _cfg()
    ucs = (NumericUseCase("taps", numeric_design("ldp-hdg", "heatmap", epsilon=1.0), key_ids(["e"])),
           NumericUseCase("speed", numeric_design("central-flat", "reading", epsilon=2.0), reading="typing_speed"))
    tables = numeric_tables(cfg, ucs)
    figures = {name: (fig, caption) for name, fig, caption in numeric_figures(tables)}
    assert set(figures) == {"numeric_taps_e.png", "numeric_speed.png"}
    cells = tables["numeric_cells"]
    heat, caption = figures["numeric_taps_e.png"]
    c = cells[cells["use_case"] == "taps"]
    n = c["true_count"].sum()
    left, right = (ax.images[0].get_array() for ax in heat.axes[:2])
    assert np.allclose(left, c["true_count"].to_numpy().reshape(SIDE, SIDE) / n)
    assert np.allclose(right, c["estimate"].to_numpy().reshape(SIDE, SIDE) / n)
    assert not np.allclose(left, right)
    title = heat._suptitle.get_text()
    assert "ldp-hdg" in title and "ε = 1 of one report" in title and "ε ≤ 2 per person over the run" in title
    dist, caption = figures["numeric_speed.png"]
    s = cells[cells["use_case"] == "speed"]
    ax = dist.axes[0]
    true_line, est_line = (p.get_data()[0] for p in ax.patches[:2])
    assert np.allclose(true_line, s["true_count"] / s["true_count"].sum())
    assert np.allclose(est_line, s["estimate"] / s["true_count"].sum())
    assert "central-flat" in ax.get_title() and "ε = 2 of one nightly release" in ax.get_title()
    assert "ε ≤ 4 per person" in ax.get_title() and ax.get_xlabel() == "wpm" and "the server" in caption


def test_no_numeric_use_case_adds_nothing():
    assert all(t.empty for t in numeric_tables(_cfg(), ()).values())
    assert numeric_figures({"numeric_metrics": pd.DataFrame(), "numeric_cells": pd.DataFrame()}) == []


def test_the_printed_summary_gives_each_use_case_its_error_and_scopes():
    """A distributed design's line says ε and δ of one nightly release and both composed over the run's nights."""
    from ldpsim.evaluation.report.run_summary import numeric, render_text
    cfg = _cfg()
    ucs = (NumericUseCase("lat", numeric_design("secagg-flat", "reading", epsilon=1.0, delta=1e-9), reading="key_latency"),)
    tables = numeric_tables(cfg, ucs)
    text = "\n".join(render_text(numeric(tables, cfg)[0]))
    w1 = tables["numeric_metrics"].set_index("metric").loc["wasserstein", "value"]
    assert "ε = 1, δ = 1e-09 of one nightly release, ε ≤ 2, δ ≤ 2e-09 per person over the run" in " ".join(text.split())
    assert f"Wasserstein-1 {w1:.3g} ms" in text


def test_a_reading_whose_nights_are_all_below_the_cohort_says_so_instead_of_dividing_by_zero():
    """A secure sum releases nothing below its smallest cohort (1 000 devices): on a fleet smaller than that no
    night is published, the metrics say ``nights_released`` = 0 and carry no error (no NaN, no warning)."""
    cfg = _cfg(n_devices=1000)
    uc = NumericUseCase("lat", numeric_design("secagg-flat", "reading", epsilon=1.0), reading="key_latency")
    metrics = numeric_tables(cfg, (uc,))["numeric_metrics"]
    assert list(metrics["metric"]) == ["nights_released"] and metrics["value"].tolist() == [0.0]
