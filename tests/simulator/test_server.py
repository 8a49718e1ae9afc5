"""Server and report store: atomic parts, metadata stripped, crash/restart loses and duplicates nothing."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import simpy

from ldpsim.mechanisms import GRR
from ldpsim.simulator.channel import Upload
from ldpsim.simulator.deployment import run
from ldpsim.simulator.report_store import ReportStore
from ldpsim.simulator.server import Server
from tests.fleets import same_aggregates, tiny_config


def _upload(nonce, rows, bundle=None):
    n = len(nonce)
    bundle = np.arange(n) if bundle is None else bundle
    return Upload(bundle, np.zeros(n, np.int64), np.arange(100, 100 + n), np.asarray(nonce, np.int64),
                  np.zeros(n, np.int64), 5.0, {"emoji": (np.arange(n), rows)})


def _server(tmp_path, acks, dedupe_days=5.0):
    env = simpy.Environment()
    mech = GRR(1.0, 4)
    store = ReportStore(tmp_path, "t", fsync=False)
    server = Server(env, store, {"emoji": mech}, {"emoji": mech}, 1, 0.0, 100.0, np.random.default_rng(0),
                    lambda b, a: acks.append(b.tolist()), dedupe_days=dedupe_days)
    return env, server, store


def test_store_part_is_atomic_and_keeps_upload_ids(tmp_path):
    store = ReportStore(tmp_path, "w", fsync=False)
    rows = np.arange(6, dtype=np.uint8).reshape(3, 2)
    store.append("emoji", 4, rows, np.array([7, 9], dtype=np.uint64))
    (tmp_path / "use_case=emoji" / "day=4" / ".part-w-000001.parquet.tmp").write_bytes(b"half a file")
    assert len(store.parts()) == 1  # a temporary (interrupted) part is invisible
    assert store.read("emoji", 4).tolist() == rows.tolist()
    assert sorted(store.upload_ids("emoji").tolist()) == [7, 9]
    assert pq.read_schema(store.parts()[0]).names == ["report"]  # no device id, no timestamp
    assert store.partitions() == [("emoji", 4)]


def test_duplicate_upload_is_stored_once_and_acknowledged_twice(tmp_path):
    acks = []
    env, server, store = _server(tmp_path, acks)
    rows = np.array([[1], [2]], dtype=np.uint8)
    server.receive(_upload([11, 12], rows))
    env.run(until=150)  # flushed at t = 100
    server.receive(_upload([12], rows[1:], bundle=np.array([1])))  # a retry after a lost ack
    env.run(until=250)
    assert store.read("emoji", 0).shape == (2, 1)
    assert server.counters["duplicates"] == 1
    assert acks == [[0, 1], [1]]
    assert server.aggregates[("emoji", 0)].n == 2


def test_crash_loses_only_unacknowledged_buffer_and_recovers(tmp_path):
    acks = []
    env, server, store = _server(tmp_path, acks)
    rows = np.array([[1], [2], [3]], dtype=np.uint8)
    server.receive(_upload([1], rows[:1]))
    env.run(until=150)  # stored and acknowledged
    server.receive(_upload([2, 3], rows[1:], bundle=np.array([1, 2])))
    env.process(server.crash(160, 10))
    env.run(until=190)  # crashed before the flush at 200: the buffer is gone, never acknowledged
    assert acks == [[0]] and server.counters["lost_in_crash"] == 2
    assert server.aggregates[("emoji", 0)].n == 1  # rebuilt from the store
    server.receive(_upload([1, 2, 3], rows, bundle=np.array([0, 1, 2])))  # devices retry everything
    env.run(until=300)
    assert store.read("emoji", 0).shape == (3, 1)
    assert server.aggregates[("emoji", 0)].n == 3 and server.counters["duplicates"] == 1


def test_crash_in_a_deployment_changes_no_aggregate(tmp_path):
    cfg = tiny_config(window_length_h=20.0)
    calm = run(cfg, tmp_path / "calm")
    crashed = run(tiny_config(window_length_h=20.0, crash_at_h=24 + 23.5, restart_s=1800.0), tmp_path / "crash")
    assert crashed.counters["lost_in_crash"] > 0
    same_aggregates(calm.aggregates, crashed.aggregates)
    store = ReportStore(tmp_path / "crash" / "store")
    for uc in ("emoji", "typing_speed"):
        ids = store.upload_ids(uc)
        assert ids.size == np.unique(ids).size  # no upload stored twice


def test_overloaded_server_queues_but_loses_and_doubles_nothing(tmp_path):
    # one worker needing 20 s per report: a slot's batch (~100 reports) takes longer than the 15 min
    # between slots, so batches queue; acknowledgments come late, devices retry, the server dedupes
    cfg = tiny_config(server_capacity=1, service_s_per_report=20.0, window_length_h=20.0, retention_days=10.0,
                      drain_days=4)
    r = run(cfg, tmp_path)
    assert max(q["queue"] for q in r.records["queue"]) >= 1
    per_day = np.array([a.n for (uc, _), a in sorted(r.aggregates.items()) if uc == "emoji"])
    assert (r.truth["donated"].sum(axis=1) == per_day).all()


def test_dedupe_sets_are_dropped_once_their_day_can_no_longer_send(tmp_path):
    """Memory stays bounded: a collection day's upload ids are forgotten after dedupe_days (its bundles
    have expired on the devices by then), during normal operation and after a recovery."""
    acks = []
    env, server, store = _server(tmp_path, acks, dedupe_days=1.5)
    server.receive(_upload([1, 2], np.array([[1], [2]], dtype=np.uint8)))  # collection day 0
    env.run(until=150)
    assert set(server._seen["emoji"]) == {0}
    env.run(until=2 * 86400)  # flushes keep running; day 0 is older than 1.5 days at t = 1.5 days
    assert server._seen["emoji"] == {}
    env.process(server.crash(env.now + 1, 10))
    env.run(until=env.now + 50)
    assert server._seen["emoji"] == {}  # recovery does not reload days that can no longer send
    assert server.aggregates[("emoji", 0)].n == 2  # ... but still rebuilds every aggregate
