"""Central ε after the shuffle when a device sends L > 1 reports a day (docs/math.md §8.4): the day's L
reports are one (L·ε)-LDP randomizer, and the n reports come from ⌈n/L⌉ devices — the users of FMT21."""

from __future__ import annotations

import pytest

from ldpsim.evaluation.privacy.accountant import device_spend, shuffle_step
from ldpsim.evaluation.privacy.composition import compose
from ldpsim.simulator.config import DeploymentConfig, UseCase

ITEMS = tuple(f"e{i}" for i in range(10))


def _spend(limit: int, n: int, days: int = 3, delta: float = 1e-6):
    uc = UseCase("emoji", "event", "grr", (("epsilon", 1.0), ("domain_size", len(ITEMS))), daily_limit=limit)
    cfg = DeploymentConfig(items=ITEMS, item_weights=(1,) * len(ITEMS), use_cases=(uc,), n_days=days)
    return device_spend(cfg, delta=delta, shuffled_among=n)


@pytest.mark.parametrize("limit, n", [(1, 30_000), (3, 30_000), (4, 30_001)])
def test_the_shuffle_counts_devices_not_reports(limit, n):
    days, delta = 3, 1e-6
    devices = -(-n // limit)
    per_day = shuffle_step(limit * 1.0, devices, delta / (2 * days))
    expected = compose([(per_day, delta / (2 * days))] * days, delta).epsilon
    got = _spend(limit, n, days, delta).table.set_index("use_case").loc["emoji", "epsilon_central"]
    assert got == pytest.approx(min(expected, 3.0 * limit), rel=1e-9)
    if limit > 1:   # counting n reports as n users would claim more amplification than the bound gives
        optimistic = shuffle_step(limit * 1.0, n, delta / (2 * days))
        assert optimistic < per_day
