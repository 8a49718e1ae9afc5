"""Sharding: same seed ⇒ same aggregates and truth for any number of shards (serial or Dask);
and the deployment's daily estimate agrees in distribution with the population engine."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.simulator.config import UseCase
from ldpsim.simulator.deployment import run, shard_blocks
from ldpsim.simulator.population import simulate_aggregate
from tests.fleets import ITEMS, same_aggregates, tiny_config
from tests.stats import assert_same_distribution


def _same(a, b):
    same_aggregates(a.aggregates, b.aggregates)
    for key in a.truth:  # float sums of readings differ only in summation order
        np.testing.assert_allclose(a.truth[key], b.truth[key], rtol=1e-12, err_msg=key)
    assert np.array_equal(a.ledger_spent, b.ledger_spent)
    assert a.favourite == b.favourite


def test_shard_blocks_are_contiguous_and_complete():
    cfg = tiny_config()  # 300 devices in blocks of 64: 5 blocks
    assert shard_blocks(cfg, 2) == [[0, 1, 2], [3, 4]]
    assert shard_blocks(cfg, 99) == [[0], [1], [2], [3], [4]]


@pytest.mark.parametrize("n_shards", [2, pytest.param(5, marks=pytest.mark.slow)])
def test_shards_equal_single_process(tmp_path, n_shards):
    cfg = tiny_config(loss=0.2, ack_loss=0.1, p_online=0.7)
    _same(run(cfg, tmp_path / "one"), run(cfg, tmp_path / "many", n_shards=n_shards))


def test_different_seed_differs(tmp_path):
    a = run(tiny_config(seed=1, n_days=1), tmp_path / "a")
    b = run(tiny_config(seed=2, n_days=1), tmp_path / "b")
    assert not np.array_equal(a.truth["events"], b.truth["events"])


@pytest.mark.slow
def test_dask_shards_equal_single_process(tmp_path):
    cfg = tiny_config(n_days=2)
    _same(run(cfg, tmp_path / "one"), run(cfg, tmp_path / "dask", n_shards=2, scheduler="local"))


@pytest.mark.slow
@pytest.mark.parametrize("mechanism, params", [
    ("grr", (("epsilon", 2.0), ("domain_size", len(ITEMS)))),
    ("cms", (("epsilon", 2.0), ("k", 16), ("m", 32), ("seed", 5))),
])
def test_daily_estimate_agrees_with_population_engine(tmp_path, mechanism, params):
    """With every loss off (opt-in 1, online 1, no loss, no budget), a day's server aggregate is the
    aggregate of the donated values, so estimate − truth must have the population engine's law.

    R = 40 deployments (seeds 100..139); each is paired with a population-engine aggregate drawn
    (direct sampler) from the same day's true donated counts. Test: Welch z and KS per item,
    Bonferroni, family-wise false-alarm rate 1e-3 per mechanism (tests.stats.assert_same_distribution).
    """
    base = tiny_config()
    emoji = UseCase("emoji", "event", mechanism, params, 2)
    sim, pop = [], []
    for r in range(40):
        cfg = tiny_config(seed=100 + r, n_days=1, n_devices=200, block_size=256, window_length_h=20.0,
                          use_cases=(emoji, base.use_cases[1]))
        res = run(cfg, tmp_path / str(r))
        mech = emoji.make_mechanism()
        items = np.asarray(ITEMS, dtype=object) if mech.takes_tokens else np.arange(len(ITEMS))
        truth = res.truth["donated"][0]
        sim.append(mech.estimate(res.aggregates[("emoji", 0)], items) - truth)
        pop_agg = simulate_aggregate(mech, items, truth, np.random.SeedSequence(7, spawn_key=(r,)), path="direct")
        pop.append(mech.estimate(pop_agg, items) - truth)
    assert_same_distribution(np.array(sim), np.array(pop), alpha=1e-3, what=f"{mechanism}: estimate - truth")


def test_shard_results_merge_in_shard_order_whatever_order_they_arrive():
    """Float aggregates sum in shard order (bitwise the same serial or parallel), and each shard's
    aggregates are folded in and dropped as soon as its predecessors are in (the client holds one set)."""
    from ldpsim.simulator.deployment import DeploymentResult, _merge_in_order

    rng = np.random.default_rng(3)
    values = rng.standard_normal((6, 1000)) * 10.0 ** rng.integers(-8, 8, (6, 1000))

    def part(i):
        return DeploymentResult(aggregates={("u", 1): values[i].copy()}, truth={"t": np.ones(2)},
                                records={"r": [i]}, ledger_spent=np.array([float(i)]),
                                ledger_daily=np.array([0.0]), refused=0, counters={"c": 1}, tap=[],
                                favourite={})
    in_order = DeploymentResult.merge([part(i) for i in range(6)])
    arrivals = [(i, part(i)) for i in (4, 1, 5, 0, 3, 2)]
    seen = []

    def arriving():
        for k, (i, p) in enumerate(arrivals):
            yield i, p
            seen.append(sum(1 for _, q in arrivals[:k + 1] if q.aggregates))  # arrived, not folded yet

    merged = _merge_in_order(arriving(), 6)
    assert np.array_equal(merged.aggregates[("u", 1)], in_order.aggregates[("u", 1)])  # bitwise
    assert merged.records["r"] == list(range(6)) and np.array_equal(merged.ledger_spent, np.arange(6.0))
    assert seen == [1, 2, 3, 2, 3, 0]  # 0 arrives: 0 and 1 are folded, 4 and 5 wait; 2 arrives: all are


def test_every_stream_of_a_run_has_its_role_in_one_table():
    """The measurement, slang and adversary streams were minted beside the table as (9,), (11,), (0x0B5E,):
    moved into ``fleet.ROLES`` with the same keys, so a run's numbers did not change."""
    from ldpsim.simulator.fleet import ROLES, block_rng, stream
    assert len(set(ROLES.values())) == len(ROLES)
    assert [stream(7, role).spawn_key for role in ("measure", "slang", "adversary")] == [(9,), (11,), (0x0B5E,)]
    assert block_rng(7, "day", 2, 3).random() == np.random.default_rng(
        np.random.SeedSequence(7, spawn_key=(ROLES["day"], 2, 3))).random()


def test_a_use_case_builds_its_mechanism_once():
    import dataclasses

    from ldpsim.simulator.config import UseCase
    uc = UseCase("emoji", "event", "cms", (("epsilon", 4.0), ("k", 16), ("m", 64)))
    assert uc.make_mechanism() is uc.make_mechanism()  # client, server and measurement share one object
    cheaper = dataclasses.replace(uc, mech_epsilon=1.0)
    assert cheaper.make_mechanism().epsilon == 1.0 and uc.make_mechanism().epsilon == 4.0
    assert cheaper == dataclasses.replace(uc, mech_epsilon=1.0)  # the cache is not part of the value
