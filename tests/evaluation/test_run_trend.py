"""A run's trend metrics (evaluation/trends/run_metrics.py): the summary's numbers are the detection module's on
the run's own releases, the band is the release's variance on each day, and nothing outside the run counts."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ldpsim.evaluation.deployment.estimates import measure
from ldpsim.evaluation.trends.detection import DAYS_PER_MONTH, Detector
from ldpsim.evaluation.trends.run_metrics import RUN_DETECTOR, run_trend, trend_limit, trend_tables
from ldpsim.simulator.deployment import run
from tests.fleets import ITEMS, tiny_config

TREND = dict(trend_item=6, trend_start_day=4, trend_ramp_days=2.0, trend_peak_share=0.3)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    cfg = tiny_config(n_devices=400, n_days=8, **TREND)
    result = run(cfg, tmp_path_factory.mktemp("run"))
    tables = measure(cfg, result, 0)
    tables.update(trend_tables(cfg, result, tables))
    return cfg, result, tables


def _grr_constants(cfg):
    """p, q of the tiny fleet's GRR emoji (ε = 2, d = 8): docs/math.md §1.1, written out here."""
    e, d = math.exp(2.0), len(ITEMS)
    return e / (e + d - 1), 1 / (e + d - 1)


def test_summary_numbers_are_the_detectors_on_the_runs_releases(measured):
    """Delay, false alarms before the start, expected false alarms and tracking error recomputed from the
    daily table with GRR's closed-form null variance n_t·q(1 − q)/(p − q)² (unbiased), then compared."""
    cfg, _, tables = measured
    s = tables["summary"]
    d = tables["daily"][tables["daily"]["item"] == cfg.trend_item].sort_values("day")
    assert d["day"].tolist() == list(range(cfg.n_days))
    n_t = d["reports"].to_numpy(float)
    estimate = n_t * d["estimate"].to_numpy()
    count = n_t * d["true_donated"].to_numpy()
    p, q = _grr_constants(cfg)
    null_var = n_t * q * (1 - q) / (p - q) ** 2
    w, a = RUN_DETECTOR.window, RUN_DETECTOR.rate / DAYS_PER_MONTH
    sums = np.array([estimate[max(t - w + 1, 0):t + 1].sum() for t in range(cfg.n_days)])
    tau = np.array([math.sqrt(null_var[max(t - w + 1, 0):t + 1].sum()) for t in range(cfg.n_days)]) * stats.norm.isf(a)
    alarms = sums > tau
    start = cfg.trend_start_day
    after = np.flatnonzero(alarms[start:])
    assert s["trend_delay_days"] == (after[0] if after.size else None)
    assert s["trend_false_alarms_month"] == pytest.approx(alarms[:start].sum() / (start / 30))
    assert s["trend_expected_false_alarms_run"] == pytest.approx(RUN_DETECTOR.rate * cfg.n_days / 30)
    assert s["trend_tracking_error"] == pytest.approx(math.sqrt(np.mean((estimate - count) ** 2)))
    np.testing.assert_allclose(tables["trend_trajectory"]["threshold"] * RUN_DETECTOR.lengths(cfg.n_days), tau,
                               rtol=1e-9)
    assert tables["trend"]["epsilon_person"].iloc[0] == s["person"]["emoji"]["epsilon_person"]


def test_band_is_the_release_variance_on_each_day(measured):
    """The trajectory's sd is the day's release sd at the day's own counts: n_t × the daily table's share sd
    (share_theory at the donated counts), and GRR's closed form c·p(1 − p) + (n − c)·q(1 − q) over (p − q)²."""
    cfg, _, tables = measured
    d = tables["daily"][tables["daily"]["item"] == cfg.trend_item].sort_values("day")
    traj = tables["trend_trajectory"]
    n_t = d["reports"].to_numpy(float)
    np.testing.assert_allclose(traj["sd"], n_t * d["sd"].to_numpy(), rtol=1e-9)
    p, q = _grr_constants(cfg)
    c = traj["expected"].to_numpy()
    np.testing.assert_allclose(traj["sd"] ** 2, (c * p * (1 - p) + (n_t - c) * q * (1 - q)) / (p - q) ** 2, rtol=1e-9)
    s = tables["summary"]
    assert s["trend_tracking_error_theory"] == pytest.approx(math.sqrt(np.mean(traj["sd"] ** 2)), rel=1e-9)


def _synthetic(cfg, alarm_days):
    """A run of ``cfg`` whose trend item's released count is huge on ``alarm_days`` and 0 elsewhere."""
    d = len(ITEMS)
    rows = [{"day": t, "item": i, "reports": 1000, "estimate": (1.0 if t in alarm_days else 0.0) if i == cfg.trend_item
             else 0.0, "true_donated": 1 / d} for t in range(cfg.n_days) for i in range(d)]
    truth = {"donated": np.full((cfg.n_days, d), 100.0)}
    return pd.DataFrame(rows), SimpleNamespace(truth=truth)


def test_alarms_before_the_start_are_false_alarms_never_a_detection():
    """An alarm before the trend starts is counted among the false alarms (on the days before the start only),
    never as a (negative) delay; no alarm on or after the start is 'no alarm by the last day' (None)."""
    cfg, daily_only = tiny_config(n_days=10, **TREND), Detector(window=1)
    daily, result = _synthetic(cfg, alarm_days={1})
    got = run_trend(cfg, result, daily, 3.0, daily_only).summary()
    assert got["trend_delay_days"] is None
    assert got["trend_false_alarms_month"] == pytest.approx(1 / (cfg.trend_start_day / 30))
    daily, result = _synthetic(cfg, alarm_days={6})
    got = run_trend(cfg, result, daily, 3.0, daily_only).summary()
    assert got["trend_delay_days"] == 6 - cfg.trend_start_day
    assert got["trend_false_alarms_month"] == 0.0


def test_a_trend_after_the_run_is_stated_outside_it():
    cfg = tiny_config(n_days=3, **TREND)
    daily, result = _synthetic(cfg, alarm_days=set())
    assert run_trend(cfg, result, daily, 3.0) is None
    assert "outside the run" in trend_limit(cfg, daily)
    tables = {"summary": {"person": {}}, "daily": daily}
    assert trend_tables(cfg, result, tables)["trend"].empty
    assert "outside the run" in tables["summary"]["trend_limit"]


def test_summary_keys_are_json_numbers(measured):
    """summary.json gets numbers (not strings of numpy scalars), None for 'no alarm', and no second copy of
    the item or start day the summary already holds."""
    import json
    s = json.loads(json.dumps(measured[2]["summary"], default=str))
    assert isinstance(s["trend_window"], int) and isinstance(s["trend_tracking_error"], float)
    assert "trend_item" not in s and s["trend_start_day"] == TREND["trend_start_day"]


def test_null_threshold_keeps_its_false_alarm_rate_within_berry_esseen():
    """For GRR (ε = 2, d = 8) and an item nobody uses, a window's ones are exactly Bin(N, q) (N its reports), so
    P[alarm] = P[Bin(N, q) > N·q + τ·(p − q)] exactly; the normal threshold keeps it within the Berry–Esseen bound
    0.4748·ρ/(σ³√N) (ρ = E|X − q|³, σ² = q(1 − q)) of the level r/30, on every day of a full 7-day window."""
    cfg = tiny_config(n_days=12, **TREND)
    daily, result = _synthetic(cfg, alarm_days=set())
    daily["reports"] = 1_000_000
    design = run_trend(cfg, result, daily, 3.0)  # builds the design; the thresholds are on its trajectory
    p, q = _grr_constants(cfg)
    lengths = RUN_DETECTOR.lengths(cfg.n_days)
    tau = (design.trajectory["threshold"] * lengths).to_numpy()
    n = 1_000_000 * lengths
    exact = stats.binom.sf(np.floor(n * q + tau * (p - q)), n, q)
    bound = 0.4748 * (q ** 2 + (1 - q) ** 2) / math.sqrt(q * (1 - q)) / np.sqrt(n)
    full = lengths == RUN_DETECTOR.window
    level = RUN_DETECTOR.rate / DAYS_PER_MONTH
    assert np.all(np.abs(exact - level)[full] <= bound[full]), (exact[full], level, bound[full])


def test_printed_summary_states_the_measured_numbers_beside_theory(measured):
    from ldpsim.evaluation.report.run_summary import render_text, trend
    cfg, _, tables = measured
    s = tables["summary"]
    text = "\n".join(line for block in trend(tables, cfg) for line in render_text(block))
    for key in ("trend_tracking_error", "trend_tracking_error_theory", "trend_false_alarms_month_theory",
                "trend_expected_false_alarms_run"):
        assert f"{s[key]:.3g}" in text, key
    assert f"ε = {s['trend_epsilon_person']:.3g} per person over the run" in text
