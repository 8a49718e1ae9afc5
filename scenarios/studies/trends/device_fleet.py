"""The trend designs on a whole fleet, device by device, in blocks — serially or on Dask — docs/math.md §12.12.

The fleet of n devices is cut into blocks of at most ``block`` devices; each (replicate, block) is one
task with its own child stream (the run's root ``SeedSequence`` spawns one child per replicate, each
spawns one per block), which draws the block's histories and privatizes them on the devices
(:func:`~ldpsim.evaluation.trends.device_path.block_aggregates`). The server's daily aggregates are the
sums of the blocks' aggregates, added in block order — so a serial run and a run on any number of Dask
workers give the same numbers, bit for bit. Only the blocks' sums (a few hundred numbers per design)
travel back; a task's memory is bounded by its batch (:data:`~ldpsim.evaluation.trends.device_path.BATCH`).

THRESH is interactive: its server decides each epoch from the fleet's votes whether the devices collect,
and that decision moves every device's state. :func:`simulate_thresh_fleet` runs it in rounds — each
block keeps its devices' state where it was made (a Dask future on its worker) and returns only its ones
of each epoch's votes and collection; the server (:meth:`~ldpsim.evaluation.trends.thresh_design.ThreshDesign.serve`)
sums them over blocks and decides. A block's stream spawns one child per epoch, so serial and Dask agree.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass

import numpy as np

from ldpsim.evaluation.trends.device_path import BATCH, block_aggregates, block_histories, release
from ldpsim.mechanisms._validation import check_int
from ldpsim.runtime.brief_repr import BriefRepr

#: devices per Dask task
BLOCK = 500_000


@dataclass(frozen=True, repr=False)
class FleetRun(BriefRepr):
    """Released daily estimates of every design on the fleet, device by device.

    Parameters
    ----------
    counts : ndarray, shape (replicates, T)
        The fleet's true daily counts (devices that used the item each day).
    daily : dict
        Design name → released daily estimates, shape (replicates, T).
    devices, blocks : int
        n, and the blocks (tasks) per replicate.
    seconds : float
        Wall-clock time of the simulation.
    """

    counts: np.ndarray
    daily: dict
    devices: int
    blocks: int
    seconds: float


def _block(designs, workload, size: int, n: int, seed, batch: int):
    """One task: a block's true counts and each design's summed messages (module docstring)."""
    return block_aggregates(designs, workload, size, n, np.random.default_rng(seed), batch)


def simulate_fleet(designs, workload, devices: int, replicates: int = 1, seed=0, block: int = BLOCK,
                   workers: int | None = None, scheduler: str | None = None, progress=None,
                   batch: int = BATCH) -> FleetRun:
    """Run ``designs`` on ``devices`` devices of ``workload``, device by device (module docstring).

    Parameters
    ----------
    designs : sequence
        Designs with a per-device path (:func:`~ldpsim.evaluation.trends.device_path.has_device_path`).
    workload : DailyUse or FavouriteUse
        Each device's history of the tracked item.
    devices : int
        n ≥ 1.
    replicates : int
        Independent runs of the whole fleet.
    seed : int or SeedSequence
        Root entropy.
    block : int
        Devices per task.
    workers : int, optional
        Worker processes of a local Dask cluster (:func:`~ldpsim.runtime.cluster.local_cluster`); None or 1
        runs the blocks in this process.
    scheduler : str, optional
        Address of an existing Dask scheduler (takes precedence over ``workers``), or ``"local"`` for a local
        cluster of ``workers`` (default 1) processes.
    progress : callable, optional
        ``progress(done, total)`` in blocks, as they finish.
    batch : int
        Devices privatized together inside a block (bounds a task's memory).

    Returns
    -------
    FleetRun
    """
    n = check_int("simulate_fleet", "devices", devices, low=1)
    replicates = check_int("simulate_fleet", "replicates", replicates, low=1)
    block = check_int("simulate_fleet", "block", block, low=1)
    batch = check_int("simulate_fleet", "batch", batch, low=1)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(check_int(
        "simulate_fleet", "seed", seed, low=0))
    n_blocks = math.ceil(n / block)
    sizes = [min(block, n - b * block) for b in range(n_blocks)]
    tasks = [(r, b, s) for r, rep in enumerate(root.spawn(replicates)) for b, s in enumerate(rep.spawn(n_blocks))]
    designs = list(designs)
    t0 = time.perf_counter()
    if scheduler is None and (workers or 1) == 1:
        finished = (((r, b), _block(designs, workload, sizes[b], n, s, batch)) for r, b, s in tasks)
    else:
        finished = _on_dask(tasks, designs, workload, sizes, n, batch, workers, scheduler)
    counts = np.zeros((replicates, workload.days), dtype=np.int64)
    totals = [[0] * len(designs) for _ in range(replicates)]
    parts, folded = {}, [0] * replicates
    for done, (key, part) in enumerate(finished, start=1):
        parts[key] = part
        r = key[0]
        while folded[r] < n_blocks and (r, folded[r]) in parts:   # add in block order: serial = parallel
            c, agg = parts.pop((r, folded[r]))
            counts[r] += c
            totals[r] = [t + a for t, a in zip(totals[r], agg)]
            folded[r] += 1
        if progress is not None:
            progress(done, len(tasks))
    daily = {d.name: np.stack([release(d, totals[r][k], n) for r in range(replicates)])
             for k, d in enumerate(designs)}
    return FleetRun(counts.astype(float), daily, n, n_blocks, time.perf_counter() - t0)


@contextlib.contextmanager
def _client(workers: int, scheduler: str | None):
    """A Dask client of a local cluster of ``workers`` processes (the sweep's allocator setting; ``scheduler``
    None or ``"local"``), or of the scheduler at ``scheduler``."""
    import dask
    import distributed  # noqa: F401 - loads Dask's distributed config before dask.config.set below

    from ldpsim.runtime.cluster import connect, local_cluster
    from ldpsim.scenarios.studies.sweep.runner import FAST_ALLOCATOR

    cluster = client = None
    try:
        if scheduler in (None, "local"):
            with dask.config.set(FAST_ALLOCATOR):
                cluster = local_cluster(workers)
        client = connect(None if cluster else scheduler, cluster)
        yield client
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def _on_dask(tasks, designs, workload, sizes, n, batch, workers, scheduler):
    """Yield ((replicate, block), result) as the tasks finish on a local cluster or at ``scheduler``."""
    from ldpsim.runtime.cluster import as_finished

    with _client(min(workers or 1, len(tasks)), scheduler) as client:
        shared_designs, shared_workload = client.scatter([designs, workload], broadcast=True)
        futures = {client.submit(_block, shared_designs, shared_workload, sizes[b], n, s, batch, pure=False): (r, b)
                   for r, b, s in tasks}
        for future in as_finished(client, futures):
            part = future.result()
            future.release()
            yield futures[future], part


def _thresh_start(design, workload, size: int, seed, batch: int):
    """A block's epoch 0: (state, (ones of its collection, its true daily counts))."""
    rng = np.random.default_rng(seed)
    bits = block_histories(workload, size, rng, batch)
    state, ones = design.device_start(bits, rng)
    return state, (ones, bits.sum(axis=0))


def _thresh_step(design, j: int, refreshed: bool, state, seed):
    """A block's epoch j: (state, (ones of its votes, ones of its collection))."""
    return design.device_step(state, j, refreshed, np.random.default_rng(seed))


class _Blocks:
    """Blocks whose state stays where it was made: in this process, or as Dask futures on the workers."""

    def __init__(self, client=None):
        self.client, self.states = client, []

    def run(self, fn, per_block, *common) -> list:
        """Call ``fn(*common, state, *extra)`` (``fn(*common, *extra)`` at the start: no states yet) on every
        block; keep each block's new state and return the small results in block order."""
        calls = [common + ((s,) if self.states else ()) + tuple(e) for s, e in
                 zip(self.states or [None] * len(per_block), per_block)]
        if self.client is None:
            out = [fn(*c) for c in calls]
            self.states = [o[0] for o in out]
            return [o[1] for o in out]
        from operator import getitem
        futures = [self.client.submit(fn, *c, pure=False) for c in calls]
        self.states = [self.client.submit(getitem, f, 0) for f in futures]
        return self.client.gather([self.client.submit(getitem, f, 1) for f in futures])


def simulate_thresh_fleet(design, workload, devices: int, replicates: int = 1, seed=0, block: int = BLOCK,
                          workers: int | None = None, scheduler: str | None = None, progress=None,
                          batch: int = BATCH) -> FleetRun:
    """THRESH on ``devices`` devices of ``workload``, device by device in rounds over blocks (module docstring).

    Parameters as :func:`simulate_fleet` (``progress`` counts epochs: one round each while collections remain).
    A block holds its devices' histories and local counts between rounds: about ``block`` × (T + 2J + 4)
    bytes, on its worker.

    Returns
    -------
    FleetRun
        ``daily`` holds the one design's released daily estimates.
    """
    n = check_int("simulate_thresh_fleet", "devices", devices, low=1)
    replicates = check_int("simulate_thresh_fleet", "replicates", replicates, low=1)
    block = check_int("simulate_thresh_fleet", "block", block, low=1)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(check_int(
        "simulate_thresh_fleet", "seed", seed, low=0))
    n_blocks, epochs = math.ceil(n / block), design.days // design.epoch
    sizes = [min(block, n - b * block) for b in range(n_blocks)]
    t0 = time.perf_counter()
    daily, counts = [], []
    on_dask = scheduler is not None or (workers or 1) > 1
    with _client(min(workers or 1, n_blocks), scheduler) if on_dask else contextlib.nullcontext() as client:
        for r, rep in enumerate(root.spawn(replicates)):
            streams = [s.spawn(epochs) for s in rep.spawn(n_blocks)]
            blocks = _Blocks(client)
            first = blocks.run(_thresh_start, [(size, st[0], batch) for size, st in zip(sizes, streams)],
                               design, workload)
            counts.append(sum(c for _, c in first))
            rounds = [0]

            def step(j, refreshed, blocks=blocks, streams=streams, r=r):
                ones = blocks.run(_thresh_step, [(st[j],) for st in streams], design, j, bool(refreshed))
                rounds[0] += 1
                if progress is not None:
                    progress(r * epochs + rounds[0], replicates * epochs)
                return sum(v for v, _ in ones), sum(c for _, c in ones)
            daily.append(design.serve(n, sum(o for o, _ in first), step)[0][0])
            if progress is not None:                        # the run may end before its last epoch
                progress((r + 1) * epochs, replicates * epochs)
    return FleetRun(np.stack(counts).astype(float), {design.name: np.stack(daily)}, n, n_blocks,
                    time.perf_counter() - t0)
