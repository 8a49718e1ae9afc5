"""Run a scenario's cells — in-process or on a Dask cluster — writing each cell as it finishes.

``run_cell(cell, seedseq)`` is pure: the same cell and root seed give the same numbers wherever it
runs. Streams (all addressed by index from the root ``SeedSequence(scenario.seed)``, see
:func:`ldpsim.scenarios.studies.scenario.grid.child_seed`):

* ``(0, w)``     building workload setting ``w`` (synthetic shapes draw nothing);
* ``(1, w, r)``  repeat ``r`` of workload setting ``w`` — shared by every mechanism and parameter of
  that workload (common random numbers: differences between cells are not masked by population noise);
* ``(2, c)``     cell ``c``'s own draws (the hash-family seed when the scenario gives none).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import signal
import threading
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.simulator.population import estimate_counts

from ldpsim.scenarios.studies.sweep.cell_metrics import Context, summarize
from ldpsim.scenarios.studies.sweep.discovery_cell import discovery_rows
from ldpsim.scenarios.studies.sweep.numeric_cell import numeric_rows
from ldpsim.evaluation.metrics import ranks_of
from ldpsim.scenarios.studies.scenario.grid import Cell, Scenario, build_workload, child_seed
from ldpsim.scenarios.studies.sweep.store import RunStore


@functools.lru_cache(maxsize=8)
def _workload(cell_workload: tuple, entropy: int, w_index: int):
    """Build (and keep, per process) a workload setting; synthetic workloads are deterministic."""
    return build_workload(dict(cell_workload), np.random.SeedSequence(entropy), w_index)


def run_cell(cell: Cell, seedseq) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Workload → ``cell.repeats`` runs of ``estimate_counts`` → tidy estimates and metric summaries
    (discovery cells: ``cell.repeats`` discovery runs, :mod:`ldpsim.scenarios.studies.sweep.discovery_cell`;
    numeric cells: ``cell.repeats`` runs of a numeric design, :mod:`ldpsim.scenarios.studies.sweep.numeric_cell`).

    ``seedseq`` is the run's root SeedSequence (or its integer entropy). Returns
    ``(estimates, summary)``: one row per (repeat, item) for the top ``cell.store_top`` items (all
    when 0), and one row per (metric[, item]) with ``mean`` and ``se`` over the repeats; every row
    carries the cell's parameters, the root entropy, the cell's indices and the cell's run time.
    """
    start = time.perf_counter()
    root = seedseq if isinstance(seedseq, np.random.SeedSequence) else np.random.SeedSequence(seedseq)
    mech = cell.make_mechanism()
    labels = {**cell.labels(), "root_seed": int(root.entropy)}
    if cell.kind == "numeric":  # the cell draws its own populations (key taps, readings)
        estimates, summary = numeric_rows(cell, mech, lambda r: child_seed(root, 1, cell.workload_index, r))
        labels["elapsed_s"] = time.perf_counter() - start
        return _label(estimates, labels), _label(summary, labels)
    workload = _workload(cell.workload_items, root.entropy, cell.workload_index)
    if cell.kind == "discovery":
        estimates, summary = discovery_rows(cell, mech, workload,
                                            lambda r: child_seed(root, 1, cell.workload_index, r))
        labels["elapsed_s"] = time.perf_counter() - start
        return _label(estimates, labels), _label(summary, labels)
    items, counts = workload.items, workload.counts
    est = np.empty((cell.repeats, counts.size))
    for r in range(cell.repeats):
        est[r] = estimate_counts(mech, items, counts, child_seed(root, 1, cell.workload_index, r), path=cell.path)
    summary = summarize(cell.metrics, counts, est, cell.top, Context(mech, items))
    summary["item"] = [None if pd.isna(r) else str(items[int(r) - 1]) for r in summary["rank"]]

    keep = counts.size if cell.store_top == 0 else min(cell.store_top, counts.size)
    est_ranks = ranks_of(est)[:, :keep]
    estimates = pd.DataFrame({
        "repeat": np.repeat(np.arange(cell.repeats), keep),
        "item": np.tile(np.asarray([str(x) for x in items[:keep]], dtype=object), cell.repeats),
        "true_rank": np.tile(np.arange(1, keep + 1), cell.repeats),
        "true_count": np.tile(counts[:keep], cell.repeats),
        "estimate": est[:, :keep].ravel(),
        "est_rank": est_ranks.ravel(),
    })
    labels["elapsed_s"] = time.perf_counter() - start
    return _label(estimates, labels), _label(summary, labels)


def _label(frame: pd.DataFrame, labels: dict) -> pd.DataFrame:
    front = pd.DataFrame({k: [v] * len(frame) for k, v in labels.items()}, index=frame.index)
    return pd.concat([front, frame], axis=1)


@dataclass(frozen=True)
class SweepReport:
    """What a sweep did: cells in the grid, skipped (already on disk), run now, and timings."""

    n_cells: int
    n_skipped: int
    n_run: int
    wall_s: float
    cell_s: float  # sum of the cells' own run times
    n_workers: int
    startup_s: float = 0.0  # starting and connecting to the cluster (part of wall_s)

    @property
    def overhead(self) -> float:
        """1 − Σ cell time / ((wall − startup) × workers): worker time not spent in cells once running."""
        busy = (self.wall_s - self.startup_s) * self.n_workers
        return 1.0 - self.cell_s / busy if busy > 0 else 0.0


def run_sweep(scenario: Scenario, scenario_text: str, out_dir, *, serial: bool = False, scheduler=None,
              n_workers: int | None = None, force: bool = False, progress=None) -> SweepReport:
    """Run every unfinished cell of ``scenario`` into ``out_dir`` (see :class:`ldpsim.scenarios.studies.sweep.store.RunStore`).

    ``serial`` runs in this process; ``scheduler`` is the address of an existing Dask cluster;
    otherwise a ``LocalCluster`` of ``n_workers`` processes (default: one per core) is started and
    closed again before returning, also on errors and Ctrl-C. Cells already stored are skipped.

    Parameters
    ----------
    scenario : Scenario
        A loaded sweep scenario (:mod:`ldpsim.scenarios.studies.scenario.grid`); its ``seed`` is the root
        entropy of every cell's random streams.
    scenario_text : str
        The scenario file's text, stored beside the results.
    out_dir : str or pathlib.Path
        The run folder (resumed if it holds the same scenario).
    serial : bool, default False
        Run the cells in this process.
    scheduler : str, optional
        Address of an existing Dask scheduler.
    n_workers : int, optional
        Processes of the local cluster (≥ 1; default one per core).
    force : bool, default False
        Delete the results of a different scenario in ``out_dir`` instead of refusing.
    progress : callable, optional
        Called as ``progress(done, total)`` after each cell run now (the command
        line shows it: :class:`ldpsim.scenarios.options.Progress`); ``None`` or ``False``: nothing.

    Returns
    -------
    SweepReport
        Cells in the grid, skipped, run now, and timings; results are read with
        :func:`ldpsim.scenarios.studies.sweep.store.read_results`.
    """
    cells = scenario.cells()
    store = RunStore(out_dir)
    config = {"scenario": scenario.as_dict(), "fingerprint": scenario.fingerprint(),
              "root_entropy": scenario.seed, "cells": [{"id": c.id, **c.labels()} for c in cells]}
    store.open(config, scenario_text, force=force)
    try:
        done = store.finished()
        pending = [c for c in cells if c.id not in done]
        show = progress or (lambda done, total: None)
        done_now = len(cells) - len(pending)
        start, cell_s, workers, startup = time.perf_counter(), 0.0, 1, 0.0

        def finish(cell, result):
            nonlocal cell_s, done_now
            store.write_cell(cell.id, *result)
            cell_s += float(result[1]["elapsed_s"].iloc[0]) if len(result[1]) else 0.0
            done_now += 1
            show(done_now, len(cells))

        if serial or not pending:
            for cell in pending:
                finish(cell, run_cell(cell, scenario.seed))
        else:
            workers, startup = _run_dask(pending, scenario.seed, finish, scheduler, n_workers)
        store.close(complete=True)
    finally:
        store.close()
    return SweepReport(len(cells), len(cells) - len(pending), len(pending),
                       time.perf_counter() - start, cell_s, workers, startup)


#: seconds without any Dask worker before a sweep fails (module attribute: tests shorten it)
WORKERLESS_GRACE_S = 30.0

#: Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 in workers, which makes every large sketch
#: allocation a fresh mmap: a k = 65535, m = 1024 CMS cell ran 2.5× slower (12.5 s vs 5.1 s).
FAST_ALLOCATOR = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


def _size_hint(cell: Cell) -> int:
    """Dask priority: large sketches (k·m) first, so the run does not end waiting on one big cell."""
    params = cell.params
    return int(params.get("k", 1)) * int(params.get("m", 1))


@contextlib.contextmanager
def _workers_ignore_ctrl_c():
    """Start worker processes with SIGINT ignored (inherited), so Ctrl-C reaches only this process,
    which then closes the cluster cleanly instead of every worker printing a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_dask(cells, seed, finish, scheduler, n_workers) -> tuple[int, float]:
    """Run ``cells`` on Dask, calling ``finish`` as each completes; returns (workers, startup seconds).

    An unreachable scheduler, or a cluster whose workers all died, raises
    :class:`~ldpsim.runtime.cluster.ClusterError` (finished cells are already stored: a rerun resumes).
    """
    import dask
    import distributed  # noqa: F401 - loads Dask's distributed config before dask.config.set below

    from ldpsim.runtime.cluster import as_finished, connect, local_cluster

    start, cluster, client = time.perf_counter(), None, None
    try:
        if scheduler is None:
            with dask.config.set(FAST_ALLOCATOR), _workers_ignore_ctrl_c():
                cluster = local_cluster(n_workers or os.cpu_count() or 1)
        client = connect(scheduler, cluster)
        workers = max(1, len(client.scheduler_info()["workers"]))
        client.run(importlib.import_module, __name__)  # warm up: every worker imports the cell runner
        startup = time.perf_counter() - start
        futures = {client.submit(run_cell, cell, seed, key=f"cell-{cell.id}", pure=False,
                                 priority=_size_hint(cell)): cell for cell in cells}
        for future in as_finished(client, futures, grace_s=WORKERLESS_GRACE_S):
            finish(futures[future], future.result())
        return workers, startup
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
