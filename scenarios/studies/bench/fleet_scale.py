"""Scale measurement of a deployment run: device-days per second and peak memory of the machine.

``ldpsim scale --devices 10000000 --days 30 --shards 8 --workers 2`` (:func:`measure_scale`)
runs a deployment scenario (default: the keyboard fleet) on a local Dask cluster of ``--workers``
processes and prints one JSON line: the rate, the peak resident memory of this process and its
children (the Dask scheduler and workers) summed, the peak memory in use on the machine above what
was in use at the start, the load average before and after (other processes on the machine slow
the run down: the rate is a lower bound of what an idle machine gives; the CPU seconds of the
process tree give a rate per CPU-second that does not depend on the load), and the bundle-table
bytes of the shards. The run folder (its Parquet store) is deleted afterwards unless ``--keep``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from ldpsim.runtime.runfolder import Layout

#: ``ldpsim scale --out``: the measured deployment's report store
LAYOUT = Layout("scale", dirs={"store": ("use_case=*/day=*/part-*.parquet",)})


def _tree_rss(proc) -> int:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except Exception:  # a child that just ended  # noqa: BLE001
            pass
    return total


class MemorySampler:
    """Samples, every ``interval_s``, the RSS of this process tree and the machine's used memory."""

    def __init__(self, interval_s: float = 0.5):
        import psutil
        self._psutil, self.interval_s = psutil, interval_s
        self.proc = psutil.Process(os.getpid())
        vm = psutil.virtual_memory()
        self.machine_start = vm.total - vm.available
        self.peak_tree = self.peak_machine = 0
        self.cpu_s: dict = {}  # pid → user + system CPU seconds at its last sample
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            vm = self._psutil.virtual_memory()
            self.peak_machine = max(self.peak_machine, vm.total - vm.available - self.machine_start)
            self.peak_tree = max(self.peak_tree, _tree_rss(self.proc))
            for p in [self.proc, *self.proc.children(recursive=True)]:
                try:
                    t = p.cpu_times()
                    self.cpu_s[p.pid] = t.user + t.system
                except Exception:  # noqa: BLE001
                    pass
            self._stop.wait(self.interval_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def measure_scale(scenario, devices: int | None = None, days: int | None = None,
                  shards: int = 2, workers: int = 2, out: str | None = None, fsync: bool | None = None,
                  keep: bool = False) -> dict:
    """Run the deployment scenario file ``scenario`` on a local Dask cluster of ``workers`` processes
    (1: in this process); its rate and peak memory as one JSON-ready dict, with what the run's devices
    get (``person``: per use case ``epsilon_report``, ``epsilon_item``, ``epsilon_person``, δ = 0, as a
    run's ``summary.json`` gives them: :func:`~ldpsim.evaluation.privacy.accountant.person_summary`).

    Raises
    ------
    InputError
        ``shards`` above the fleet's blocks of devices (a shard simulates whole blocks), or ``keep`` with ``out``.
    CostError
        The run cannot fit this machine (:func:`~ldpsim.evaluation.cost.deployment_plan`, with one process and
        one copy of the days' truth per shard), refused before anything starts.
    """
    import dataclasses

    from ldpsim.evaluation.cost import deployment_plan
    from ldpsim.evaluation.privacy.accountant import device_spend, person_summary
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
    from ldpsim.mechanisms._validation import check_int
    from ldpsim.runtime.errors import InputError
    from ldpsim.simulator import deployment

    cfg, _ = load_deployment(scenario, devices, days)
    shards, workers = check_int("measure_scale", "shards", shards), check_int("measure_scale", "workers", workers)
    if shards > cfg.n_blocks:
        raise InputError(f"The 'shards' parameter of measure_scale (--shards) must be at most the {cfg.n_blocks:,} "
                         f"block(s) of {cfg.block_size:,} devices that {cfg.n_devices:,} devices make (a shard "
                         f"simulates whole blocks). Got {shards:,} instead.")
    if keep and out is not None:
        raise InputError("The 'keep' parameter of measure_scale (--keep) keeps the temporary folder; an 'out' "
                         f"folder (--out) is always kept. Got keep=True with out={str(out)!r}.")
    deployment_plan(cfg, shards, scenario)  # refused before the run when it cannot fit
    if fsync is not None:
        cfg = dataclasses.replace(cfg, fsync=fsync)
    from ldpsim.runtime.runfolder import RunFolder
    folder = out or tempfile.mkdtemp(prefix="ldpsim-scale-")
    load_before = os.getloadavg()
    # an --out is owned like every run folder (lock, manifest; never through a symbolic link)
    with RunFolder.open(folder, LAYOUT, {"fingerprint": "scale", "seed": cfg.seed}) as owned:
        t0 = time.perf_counter()
        with MemorySampler() as mem:
            result = deployment.run(cfg, folder, shards, "local" if workers > 1 else None,
                                    n_workers=workers)
        seconds = time.perf_counter() - t0
        owned.finalize(adopt=True, others=result.store_parts)
    stored = sum(f.stat().st_size for f in __import__("pathlib").Path(folder).rglob("*.parquet"))
    if out is None and not keep:  # only a folder this function made
        shutil.rmtree(folder)  # made by mkdtemp above; an error here is worth seeing
    device_days = cfg.n_devices * cfg.n_days
    cpu_s = sum(mem.cpu_s.values())
    return {"scenario": str(scenario), "devices": cfg.n_devices, "days": cfg.n_days, "shards": shards,
            "workers": workers, "seconds": round(seconds, 1), "device_days_per_s": round(device_days / seconds),
            "cpu_seconds": round(cpu_s, 1), "device_days_per_cpu_s": round(device_days / max(cpu_s, 1e-9)),
            "peak_tree_rss_gb": round(mem.peak_tree / 1e9, 2), "peak_machine_used_gb": round(mem.peak_machine / 1e9, 2),
            "bundle_table_peak_mb": round(result.peak_state_bytes / 1e6, 3),
            "store_gb": round(stored / 1e9, 2), "reports_stored": int(result.counters["stored"]),
            "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(), "person": person_summary(device_spend(cfg))}
