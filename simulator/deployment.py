"""Run a deployment: one SimPy environment per shard (a contiguous range of device blocks), then merge.

All draws are keyed by device block and day (``fleet.block_rng``), so the merged aggregates and
truth are the same for any number of shards; only the server-side shuffle order, queue lengths and
file names depend on the sharding. Shards run serially in-process, or on a Dask cluster
(``scheduler`` = address of a ``dask.distributed`` scheduler, or ``"local"`` for a local cluster).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import simpy

from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.simulator.channel import UploadChannel
from ldpsim.simulator.config import DeploymentConfig
from ldpsim.simulator.device import DAY_S, Devices
from ldpsim.simulator.fleet import block_rng
from ldpsim.simulator.nightly_collection import collect_nights
from ldpsim.simulator.report_store import ReportStore
from ldpsim.simulator.server import Server


@dataclass(repr=False)
class DeploymentResult(BriefRepr):
    """What a run produced: mergeable by :meth:`merge` (aggregates and truth add, records concatenate).

    Attributes
    ----------
    aggregates : dict
        (use case name, day) → Aggregate of that day's reports.
    truth : dict
        Name → array of true totals (summable over shards).
    records : dict
        Table name → list of row dicts (uploads, server events, ...).
    ledger_spent, ledger_daily : numpy.ndarray
        ε spent per device, and per device and day (sequential composition).
    refused : int
        Donations refused by the privacy budgets.
    counters : dict
        Server and channel counters.
    tap : list
        The observer's linked view of the tapped devices' reports.
    favourite : dict
        Device id → most used item (tapped devices).
    seconds : float
        Wall-clock time of the run.
    shards : int
        Number of shards merged.
    """

    aggregates: dict                       # (use case, day) → Aggregate
    truth: dict                            # name → array (summable over shards)
    records: dict                          # table name → list of dict rows
    ledger_spent: np.ndarray               # ε spent per device (device order)
    ledger_daily: np.ndarray               # the largest ε each device spent on one day (device order)
    refused: int
    counters: dict
    tap: list
    favourite: dict                        # device id → most used item (tapped devices)
    seconds: float = 0.0
    shards: int = 1
    ledger_saved: np.ndarray | None = None  # ε per device not charged thanks to memoization
    ledger_day_totals: np.ndarray | None = None  # ε spent on each day, summed over devices
    peak_state_bytes: int = 0               # largest per-shard bundle table seen (bytes; summed over shards)
    ledger_budget: dict | None = None       # per day: devices whose budget no longer fits each use case
                                            # ("exhausted", days × use cases), daily budget full ("full"),
                                            # devices that donated ("donors"); see PrivacyLedger.close_day
    extra: dict = field(default_factory=dict)
    donations: dict = field(default_factory=dict)  # collected use case → (day, device, item, window_start_h)
    collections: dict = field(default_factory=dict)  # collected use case → its collectors' Collection
    store_parts: dict = field(default_factory=dict)  # absolute path → SHA-256 of each report-store part written

    @staticmethod
    def merge(parts: list["DeploymentResult"]) -> "DeploymentResult":
        aggs: dict = {}
        for p in parts:
            _fold(aggs, p.aggregates)
        first = parts[0]
        return DeploymentResult(
            aggregates=aggs,
            truth={k: sum(p.truth[k] for p in parts) for k in first.truth},
            records={k: [r for p in parts for r in p.records[k]] for k in first.records},
            ledger_spent=np.concatenate([p.ledger_spent for p in parts]),
            ledger_daily=np.concatenate([p.ledger_daily for p in parts]),
            refused=sum(p.refused for p in parts),
            counters={k: sum(p.counters[k] for p in parts) for k in first.counters},
            tap=[t for p in parts for t in p.tap],
            favourite={k: v for p in parts for k, v in p.favourite.items()},
            seconds=max(p.seconds for p in parts), shards=len(parts),
            ledger_saved=_concat([p.ledger_saved for p in parts]),
            ledger_day_totals=_sum([p.ledger_day_totals for p in parts]),
            peak_state_bytes=sum(p.peak_state_bytes for p in parts),
            ledger_budget=None if any(p.ledger_budget is None for p in parts) else
            {k: sum(p.ledger_budget[k] for p in parts) for k in parts[0].ledger_budget},
            donations={k: _by_day_and_device([p.donations[k] for p in parts]) for k in first.donations},
            store_parts={k: v for p in parts for k, v in p.store_parts.items()})


def _fold(into: dict, aggregates: dict) -> None:
    """Add ``aggregates`` ((use case, day) → Aggregate) into ``into``."""
    for k, a in aggregates.items():
        into[k] = a if k not in into else into[k] + a


def _by_day_and_device(parts) -> tuple:
    """The shards' donation arrays concatenated and put in (day, device) order: the same for any sharding."""
    cols = [np.concatenate(col) for col in zip(*parts)]
    order = np.lexsort((cols[1], cols[0]))
    return tuple(c[order] for c in cols)


def _concat(arrays):
    return None if any(a is None for a in arrays) else np.concatenate(arrays)


def _sum(arrays):
    return None if any(a is None for a in arrays) else sum(arrays)


def shard_blocks(cfg: DeploymentConfig, n_shards: int) -> list[list[int]]:
    """Contiguous block ranges, one per shard (never more shards than blocks)."""
    n = max(1, min(int(n_shards), cfg.n_blocks))
    return [list(a) for a in np.array_split(np.arange(cfg.n_blocks), n)]


def run_shard(cfg: DeploymentConfig, blocks: list[int], store_root, shard: int = 0,
              on_day=None, components=()) -> DeploymentResult:
    """Simulate the devices of ``blocks`` with their own channel and server in one environment.

    ``components``: extra fleet members, each ``component(env, server, mechanisms, cfg, blocks)``
    starting the processes of its members that belong to ``blocks`` (e.g.
    :class:`ldpsim.simulator.fakes.FakeFleet`); like the devices', their draws must not depend on the sharding.
    """
    t0 = time.perf_counter()
    env = simpy.Environment()
    # a collected use case goes to its trust model's collectors, an interactive words protocol has no
    # reports (its devices answer rounds, Devices.donate): neither has a mechanism on the LDP path
    mechanisms = {uc.name: uc.make_mechanism() for uc in cfg.use_cases if not (uc.collected or uc.interactive)}
    channel = UploadChannel(env, cfg.latency_median_s, cfg.latency_sigma, cfg.loss, cfg.ack_loss,
                            cfg.max_attempts)
    devices = Devices(env, cfg, blocks, channel, mechanisms)
    aggregators = {name: uc.make_aggregator(mechanisms[name]) for uc in cfg.use_cases if (name := uc.name) in mechanisms}
    store = ReportStore(store_root, writer=f"s{shard}", fsync=cfg.fsync)
    server = Server(env, store, mechanisms, aggregators, cfg.server_capacity, cfg.service_s_per_report,
                    cfg.batch_window_s, block_rng(cfg.seed, "server", shard), devices.acknowledge,
                    dedupe_days=cfg.retention_days + 2)
    devices.server = server
    env.process(devices.days())
    for component in components:
        component(env, server, mechanisms, cfg, blocks)
    if cfg.crash_at_h is not None:
        env.process(server.crash(cfg.crash_at_h * 3600.0, cfg.restart_s))
    end_day = cfg.n_days + cfg.drain_days
    peak = 0
    for day in range(1, end_day + 1):
        env.run(until=day * DAY_S)
        peak = max(peak, devices.bundles.nbytes())
        if on_day is not None:
            on_day(shard, day)
    if server.up:
        server.flush()
    return DeploymentResult(
        aggregates=dict(server.aggregates), truth=devices.truth,
        records={"uploads": [{**r, "shard": shard} for r in channel.records],
                 "queue": [{**r, "shard": shard} for r in server.queue_records],
                 "flushes": [{**r, "shard": shard} for r in server.flush_records],
                 "bundles": devices.bundles.records(shard)},
        ledger_spent=devices.ledger.spent, ledger_daily=devices.ledger.daily_max,
        ledger_saved=devices.ledger.saved, ledger_day_totals=devices.ledger.day_totals, peak_state_bytes=peak,
        ledger_budget=_budget_state(devices.ledger),
        refused=devices.ledger.refused, counters=dict(server.counters), tap=devices.tap, donations=devices.donated(),
        favourite=_favourites(cfg, devices), seconds=time.perf_counter() - t0, store_parts=dict(store.written))


def _budget_state(ledger) -> dict:
    ledger.close_day()  # the last donation day
    return {"exhausted": ledger.exhausted, "full": ledger.full, "donors": int((ledger.spent > 0).sum())}


def _favourites(cfg: DeploymentConfig, devices: Devices) -> dict:
    out = {}
    for t in devices.traits:
        sel = t.device < cfg.adversary_devices
        if sel.any():
            out.update(zip(t.device[sel].tolist(), t.favourite[sel].tolist()))
    return out


def run(cfg: DeploymentConfig, out_dir, n_shards: int = 1, scheduler: str | None = None,
        progress=None, components=(), n_workers: int | None = None, collectors: dict | None = None) -> DeploymentResult:
    """Run every shard (serially, or on Dask when ``scheduler`` is given) and merge the results.

    Parameters
    ----------
    cfg : DeploymentConfig
        The deployment to simulate.
    out_dir : str or pathlib.Path
        Folder of the run; the server's report store is written under ``out_dir/store``.
    n_shards : int, default 1
        Number of shards (contiguous ranges of device blocks); results do not depend on it except
        for shuffle order, queue lengths and file names.
    scheduler : str, optional
        Address of a ``dask.distributed`` scheduler, or ``"local"``; None runs the shards serially.
    progress : callable, optional
        Called with the number of shard-days completed so far.
    components : sequence of callables, optional
        Extra fleet members passed to :func:`run_shard` of every shard (e.g. fake devices), serial or on
        Dask (picklable: bound methods of frozen dataclasses with module-level functions).
    n_workers : int, optional
        Worker processes of the local Dask cluster (``scheduler="local"``; default: one per shard);
        with more shards than workers the shards queue, and a worker holds one shard at a time.
    collectors : dict, optional
        Collected use case (``UseCase.collected``) → its trust model's protocol (SecureSum, TwoServer or
        a release function, see :func:`~ldpsim.simulator.collectors.collect`): after the shards, the
        whole fleet's exact donations go through those collectors night by night
        (:func:`~ldpsim.simulator.nightly_collection.collect_nights`, into ``collections``).

    Returns
    -------
    DeploymentResult
        Daily aggregates per use case, truth, ledger, counters and the observer's tap, merged over
        shards; measure it with :func:`ldpsim.evaluation.deployment.estimates.measure`.
    """
    store_root = Path(os.path.abspath(out_dir)) / "store"  # workers may run in another working directory
    groups = shard_blocks(cfg, n_shards)
    t0 = time.perf_counter()
    if scheduler is None:
        done = [0]

        def on_day(_shard, _day):
            done[0] += 1
            if progress is not None:
                progress(done[0])
        finished = ((i, run_shard(cfg, g, store_root, i, on_day, components)) for i, g in enumerate(groups))
    else:
        finished = _run_dask(cfg, groups, store_root, scheduler, progress, n_workers, components)
    merged = _merge_in_order(finished, len(groups))
    for name, protocol in (collectors or {}).items():
        merged.collections[name] = collect_nights(cfg, name, protocol, merged.donations[name])
    merged.seconds = time.perf_counter() - t0
    return merged


def _merge_in_order(finished, n: int) -> DeploymentResult:
    """Merge shard results arriving as (index, result) in any order.

    Each result's daily aggregates are added into one running set as soon as every shard before it
    has been added (always in shard order, so float aggregates sum the same way serial or parallel),
    and dropped from the result: the client holds one set of aggregates, not one per shard.
    """
    aggregates: dict = {}
    parts: dict = {}
    folded = 0
    for i, part in finished:
        parts[i] = part
        while folded < n and folded in parts:
            _fold(aggregates, parts[folded].aggregates)
            parts[folded].aggregates = {}
            folded += 1
    merged = DeploymentResult.merge([parts[i] for i in range(n)])
    merged.aggregates = aggregates
    return merged


def _run_dask(cfg, groups, store_root, scheduler: str, progress, n_workers: int | None = None, components=()):
    """Yield (shard index, result) as the shards finish on the cluster."""
    from ldpsim.runtime.cluster import as_finished, connect, local_cluster, require_shared_folder

    cluster = client = None
    try:
        if scheduler == "local":
            cluster = local_cluster(min(len(groups), n_workers or len(groups)))
        client = connect(scheduler, cluster)
        require_shared_folder(client, store_root.parent)
        futures = [client.submit(run_shard, cfg, g, str(store_root), i, None, tuple(components), pure=False)
                   for i, g in enumerate(groups)]
        days = cfg.n_days + cfg.drain_days
        index = {f.key: i for i, f in enumerate(futures)}
        for k, future in enumerate(as_finished(client, futures), start=1):
            part = future.result()
            future.release()  # the worker frees the shard's result as soon as it is here
            if progress is not None:
                progress(k * days)
            yield index[future.key], part
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
