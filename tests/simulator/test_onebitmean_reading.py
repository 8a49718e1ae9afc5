"""1BitMean as a deployment reading (docs/math.md §7.3): memoized per device through α-point rounding,
charged once per rounded level, its daily mean estimate covered by its theory interval."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.deployment.estimates import reading_estimates
from ldpsim.simulator.config import DeploymentConfig, UseCase
from ldpsim.simulator.deployment import run
from ldpsim.simulator.fleet import memo_base
from ldpsim.simulator.memoization import device_keys
from tests.fleets import ITEMS, WEIGHTS
from tests.stats import z_bound

EPS = 1.0


def _config(n_devices: int, n_days: int, gamma: float = 0.0, **overrides) -> DeploymentConfig:
    uc = UseCase("typing_speed", "reading", "onebitmean", (("epsilon", EPS), ("granularity", 8), ("gamma", gamma)),
                 1, (0.0, 120.0), memoize=True)
    base = dict(items=ITEMS, item_weights=WEIGHTS, use_cases=(uc,), n_devices=n_devices, n_days=n_days,
                block_size=512, seed=5, opt_in=1.0, p_online=1.0, loss=0.0, ack_loss=0.0, fsync=False,
                adversary_devices=n_devices, window_length_h=20.0)
    return DeploymentConfig(**{**base, **overrides})


def _tapped(cfg, result):
    """(device, day, level, bit) of every donated reading: the tap covers every device here."""
    uc = cfg.use_cases[0]
    mech = uc.make_mechanism()
    device = np.concatenate([t["device"] for t in result.tap])
    day = np.concatenate([np.full(t["device"].size, t["day"]) for t in result.tap])
    value = np.concatenate([t["value"] for t in result.tap])
    bit = np.concatenate([t["rows"][:, 0] for t in result.tap])
    level = mech.rounded_levels(uc.to_input(value, mech), device_keys(memo_base(cfg.seed, 0), device))
    return device, day, level, bit


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    cfg = _config(600, 6)
    return cfg, run(cfg, tmp_path_factory.mktemp("onebit"))


def test_memoized_device_repeats_its_bit_and_pays_once_per_level(small_run):
    cfg, result = small_run
    assert all(t["rows"].shape[1] == 1 for t in result.tap)      # one byte per report on the wire
    device, day, level, bit = _tapped(cfg, result)
    assert set(np.unique(bit).tolist()) == {0, 1}
    pair = device.astype(np.int64) * 64 + level
    uniq, inv, count = np.unique(pair, return_inverse=True, return_counts=True)
    assert (count > 1).sum() > 100                              # many devices stay on a level across days
    lo = np.full(uniq.size, 2, np.int64)
    hi = np.full(uniq.size, -1, np.int64)
    np.minimum.at(lo, inv, bit)
    np.maximum.at(hi, inv, bit)
    assert np.all(lo == hi)                                     # same device and level ⇒ same bit every day
    per_device = np.bincount(uniq // 64, minlength=cfg.n_devices)
    np.testing.assert_allclose(result.ledger_spent, EPS * per_device)              # ε once per level
    np.testing.assert_allclose(result.ledger_saved, EPS * (np.bincount(device, minlength=cfg.n_devices)
                                                           - per_device))


def test_daily_estimate_within_its_interval():
    """γ = 0.1, one run of 20 000 devices × 4 days: every day |estimate − true mean of the donated
    readings| ≤ z·sd, sd the report's conservative (largest-variance) sd; Bonferroni over the days (valid
    under any dependence between days), family-wise α = 1e-3."""
    cfg = _config(20_000, 4, gamma=0.1, adversary_devices=0)
    import tempfile
    with tempfile.TemporaryDirectory() as out:
        daily, _ = reading_estimates(cfg, run(cfg, out))
    assert len(daily) == cfg.n_days
    z = ((daily["estimate"] - daily["true_donated"]).abs() / daily["sd"]).to_numpy()
    assert np.all(z <= z_bound(1e-3, cfg.n_days)), z
    # the interval is not vacuous: the sd is the theory's S/(2√n) in raw units
    e = np.exp(EPS)
    scale = 120.0 * (e + 1) / ((e - 1) * 0.8)                    # raw units: m ↦ 120 wpm
    np.testing.assert_allclose(daily["sd"], scale / (2 * np.sqrt(daily["reports"])), rtol=1e-9)
