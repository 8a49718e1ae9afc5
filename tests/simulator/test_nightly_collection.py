"""A deployment's trust collection over its nights (simulator/nightly_collection.py, simulator/collectors.py)."""

import numpy as np
import pandas as pd
import pytest

from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum
from ldpsim.mechanisms.aggregation.two_server import TwoServer
from ldpsim.simulator.collectors import HOUR_S, CollectorSetup, Opportunities, collect
from ldpsim.simulator.config import UseCase
from ldpsim.simulator.deployment import run
from tests.fleets import ITEMS, tiny_config
from tests.stats import assert_same_distribution, assert_variance

SECAGG = SecureSum(IntegerNoise("skellam", 60.0), min_cohort=100, min_arrival=0.8)


def collected_config(aggregation="secagg", **overrides):
    """tiny_config with its emoji collected by a trust model (ε 1 charged per device-day)."""
    emoji = UseCase("emoji", "event", "grr", (("epsilon", 1.0), ("domain_size", len(ITEMS))), 1,
                    aggregation=aggregation, trust=(("epsilon_day", 1.0),))
    speed = UseCase("typing_speed", "reading", "pm", (("epsilon", 1.0),), 1, (0.0, 120.0))
    base = dict(use_cases=(emoji, speed), n_devices=1200, n_days=4, block_size=256, p_online=0.9, loss=0.05,
                drain_days=2)
    return tiny_config(**{**base, **overrides})


def test_secagg_over_the_days_counts_each_donation_once_in_published_cohorts(tmp_path):
    cfg = collected_config()
    result = run(cfg, tmp_path, collectors={"emoji": SECAGG})
    got = result.collections["emoji"]
    day, device, item, _ = result.donations["emoji"]
    assert np.array_equal(np.bincount(item, minlength=len(ITEMS)), result.truth["donated"].sum(axis=0))
    assert (got.counted <= result.truth["donated"].sum(axis=0)).all()     # never counted twice
    assert got.counters["counted"] > 0.8 * item.size
    nights = [p["period"] for p in got.periods]
    assert nights[0] >= 1 and len(nights) >= cfg.n_days                  # one release per night
    cohorts = pd.DataFrame([r for r in got.records if r["event"] == "cohort"])
    assert (cohorts["size"] >= 100).all()
    assert (cohorts["published"] == (cohorts["arrived"] >= np.ceil(0.8 * cohorts["size"]))).all()
    assert got.counters["counted"] == cohorts.loc[cohorts["published"], "arrived"].sum()
    assert ("emoji", 0) not in result.aggregates                          # nothing through the LDP path


def test_aborted_cohorts_are_retried_in_later_rounds_and_nights(tmp_path):
    strict = SecureSum(IntegerNoise("skellam", 60.0), min_cohort=100, min_arrival=0.97)   # 5 % loss: many abort
    result = run(collected_config(), tmp_path, collectors={"emoji": strict})
    got = result.collections["emoji"]
    cohorts = pd.DataFrame([r for r in got.records if r["event"] == "cohort"])
    assert (~cohorts["published"]).sum() > 0 and cohorts["published"].sum() > 0
    assert got.counters["counted"] == cohorts.loc[cohorts["published"], "arrived"].sum()
    assert cohorts["size"].sum() > len(result.donations["emoji"][0])     # devices of aborted cohorts came back


def test_two_server_helper_crash_delays_the_release_but_loses_nothing(tmp_path):
    ts = TwoServer(IntegerNoise("polya", 2.0), noise_by="both")
    crash = (("crash", ("helper", 24 + 23.0, 14.0)), ("invalid_share", 0.02))   # night 1, down until 13:00
    calm = run(collected_config(collectors=(("invalid_share", 0.02),)), tmp_path / "a",
               collectors={"emoji": ts}).collections["emoji"]
    down = run(collected_config(collectors=crash), tmp_path / "b", collectors={"emoji": ts}).collections["emoji"]
    assert down.counters["counted"] == calm.counters["counted"] > 0
    assert down.counters["rejected"] == calm.counters["rejected"] > 0
    assert any(r["event"] == "job waits (collector down)" for r in down.records)
    per_night = {p["period"]: int(p["counted"].sum()) for p in down.periods}
    calm_night = {p["period"]: int(p["counted"].sum()) for p in calm.periods}
    assert per_night[1] < calm_night[1] and per_night[2] > calm_night[2]  # night 1 (day 1, 22:00) released on night 2


def test_same_collection_for_any_sharding(tmp_path):
    cfg = collected_config(n_days=2, n_devices=700)
    one = run(cfg, tmp_path / "a", n_shards=1, collectors={"emoji": SECAGG})
    three = run(cfg, tmp_path / "b", n_shards=3, collectors={"emoji": SECAGG})
    for a, b in zip(one.donations["emoji"], three.donations["emoji"]):
        assert np.array_equal(a, b)
    assert np.array_equal(one.collections["emoji"].estimate, three.collections["emoji"].estimate)


def _night(n: int, rng) -> tuple[np.ndarray, Opportunities]:
    """n reports over two nights (windows as the fleet's: 22:00 ± 2 h, 6 h long, online 90 %)."""
    items = rng.integers(0, 6, n)
    start = np.concatenate([(24 * k + rng.normal(22, 2, n)) * HOUR_S for k in (1, 2)])
    online = rng.random(2 * n) < 0.9
    return items, Opportunities(np.tile(np.arange(n), 2)[online], start[online], start[online] + 6 * HOUR_S)


@pytest.mark.slow
def test_count_level_and_per_device_noise_agree_in_distribution():
    # standardized release errors (estimate − counted)/sd of every night and item, i.i.d. N(0, 1) under both
    # paths (Skellam with μ ≥ 60·m/t ≈ 75 per cohort: normal well within the tests' power), pooled into one
    # sample of 1 200 per path; χ² and KS + Welch each at family-wise false-alarm 1e-4
    items, opp = _night(1500, np.random.default_rng(0))
    setup = CollectorSetup(loss=0.1)
    z = {False: [], True: []}
    for seed in range(100):
        for per_device in (False, True):
            got = collect(SECAGG, items, 6, opp, setup, seed, per_device=per_device)
            for p in got.periods:
                z[per_device].append((p["estimate"] - p["counted"]) / np.sqrt(p["variance"]))
    sample = {path: np.concatenate(z[path])[:, None] for path in z}
    for path in (False, True):
        assert_variance(sample[path], 0.0, 1.0, what=f"per_device={path}")
    assert_same_distribution(sample[False], sample[True], what="count level vs per device")
