"""Devices on tiny fleets: daily limits, the privacy ledger, retention expiry, retries (hand-checkable)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ldpsim.simulator.deployment import run, run_shard
from ldpsim.simulator.device import sample_per_device
from ldpsim.simulator.ledger import PrivacyLedger

from tests.fleets import tiny_config

def bundles(result) -> pd.DataFrame:
    return pd.DataFrame(result.records["bundles"]).groupby("status")[["bundles", "reports", "attempts"]].sum()


def test_sample_per_device_respects_quotas():
    device = np.array([0, 0, 0, 1, 2, 2, 2, 2])
    quota = np.array([2, 0, 4])
    chosen = sample_per_device(device, quota, np.random.default_rng(0))
    assert np.bincount(device[chosen], minlength=3).tolist() == [2, 0, 4]
    assert len(set(chosen.tolist())) == chosen.size


def test_sample_per_device_is_uniform():
    # one device with 4 records, quota 1: each record chosen w.p. 1/4 (chi-square, alpha 1e-4)
    from tests.stats import assert_chisquare_gof
    device = np.zeros(4, dtype=np.int64)
    rng = np.random.default_rng(1)
    picks = [sample_per_device(device, np.array([1]), rng)[0] for _ in range(4000)]
    assert_chisquare_gof(np.bincount(picks, minlength=4), np.full(4, 0.25))


def test_ledger_hand_checked():
    led = PrivacyLedger(3, n_days=2, budget_daily=3.0, budget_total=4.0)
    assert led.grant(0, 1.0, np.array([5, 2, 0])).tolist() == [3, 2, 0]
    assert led.grant(1, 1.0, np.array([5, 5, 5])).tolist() == [1, 2, 3]
    assert led.spent.tolist() == [4.0, 4.0, 3.0]
    assert led.refused == (5 - 3) + 0 + (5 - 1) + (5 - 2) + (5 - 3)


def test_daily_limits_and_ledger_totals(tmp_path):
    cfg = tiny_config()
    r = run(cfg, tmp_path)
    per_day = np.array([a.n for (uc, _), a in sorted(r.aggregates.items()) if uc == "emoji"])
    # every device types emoji most days; none may donate more than the limit (2 a day)
    assert per_day.max() <= 2 * cfg.n_devices
    assert (r.truth["donated"].sum(axis=1) == per_day).all()  # nothing lost: all donations stored
    # ledger: sequential composition = Σ donations × ε
    expected = 2.0 * r.truth["donated"].sum() + 1.0 * r.truth["typing_speed:donated_n"].sum()
    assert r.ledger_spent.sum() == pytest.approx(expected)
    assert r.ledger_daily.max() <= 2 * 2.0 + 1.0 + 1e-9


def test_budget_is_never_exceeded(tmp_path):
    cfg = tiny_config(budget_daily=3.0, budget_total=7.0, n_days=4)
    r = run(cfg, tmp_path)
    assert r.ledger_spent.max() <= 7.0 + 1e-9
    assert r.ledger_daily.max() <= 3.0 + 1e-9
    assert r.refused > 0


def test_retention_expiry_counts_lost(tmp_path):
    # the window opens at 22:00 and is 1 h long; records live 0.5 day: all expire unsent
    cfg = tiny_config(window_start_mean_h=22.0, window_start_sd_h=0.0, window_length_h=1.0, retention_days=0.5)
    r = run(cfg, tmp_path)
    b = bundles(r)
    assert b.loc["acked", "bundles"] == 0 and b.loc["expired", "bundles"] > 0
    assert not r.aggregates


def test_retries_until_given_up(tmp_path):
    # every upload lost: each bundle is tried exactly max_attempts times, then given up
    cfg = tiny_config(loss=1.0, max_attempts=2, backoff_s=60.0, window_length_h=20.0, drain_days=3,
                      retention_days=10.0)
    r = run(cfg, tmp_path)
    b = bundles(r)
    assert b.loc["gave_up", "bundles"] == b["bundles"].sum()
    assert b.loc["gave_up", "attempts"] == 2 * b["bundles"].sum()


def test_lost_acks_are_retried_and_deduplicated(tmp_path):
    cfg = tiny_config(ack_loss=0.5, window_length_h=20.0)
    r = run(cfg, tmp_path)
    assert r.counters["duplicates"] > 0
    per_day = np.array([a.n for (uc, _), a in sorted(r.aggregates.items()) if uc == "emoji"])
    assert (r.truth["donated"].sum(axis=1) == per_day).all()  # every donation stored exactly once


def test_opt_out_devices_never_donate(tmp_path):
    cfg = tiny_config(opt_in=0.0)
    r = run(cfg, tmp_path)
    assert r.truth["events"].sum() > 0 and r.truth["donated"].sum() == 0 and r.ledger_spent.max() == 0


def test_shard_of_one_block_runs_alone(tmp_path):
    cfg = tiny_config()
    r = run_shard(cfg, [1], tmp_path)
    assert r.ledger_spent.size == 64 and math.isfinite(r.seconds)


def test_local_store_keeps_only_days_that_can_still_upload(tmp_path, monkeypatch):
    """Memory stays bounded: report rows are kept only for bundles that may still be sent."""
    import ldpsim.simulator.deployment as deployment

    made = []

    class Recording(deployment.Devices):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(deployment, "Devices", Recording)
    cfg = tiny_config(n_days=8, retention_days=1.0)
    r = run(cfg, tmp_path)
    assert r.aggregates  # uploads still worked
    last_midnight = cfg.n_days + cfg.drain_days - 1
    table = made[0].bundles
    for rows in table.rows.values():
        assert all(d >= last_midnight - 1 - cfg.retention_days for d in rows)
    # the table keeps the bundles of the last days only (about one day's worth plus retries)
    per_day = bundles(r)["bundles"].sum() / cfg.n_days
    assert len(table) <= 2 * per_day
