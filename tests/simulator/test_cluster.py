"""Dask failures end with a clear message instead of a hang: no scheduler, no workers, workers killed."""

from __future__ import annotations

import gc
import os
import time
import warnings

import pytest

from ldpsim.runtime.cluster import ClusterError, as_finished, connect


def _die():
    os._exit(1)  # the worker process dies (like kill -9 or the OOM killer)


def test_unreachable_scheduler_says_what_was_tried():
    start = time.perf_counter()
    with warnings.catch_warnings():  # distributed leaves the failed attempt's socket to the collector
        warnings.simplefilter("ignore", ResourceWarning)
        with pytest.raises(ClusterError, match=r"tcp://127\.0\.0\.1:1.*tried to connect for 1 s"):
            connect("tcp://127.0.0.1:1", timeout=1.0)
        gc.collect()
    assert time.perf_counter() - start < 10


def test_a_cluster_without_workers_fails_instead_of_hanging():
    from dask.distributed import LocalCluster
    with LocalCluster(n_workers=0, processes=True, host="127.0.0.1", scheduler_port=0,
                      dashboard_address="localhost:0") as cluster:
        client = connect(cluster=cluster)
        try:
            future = client.submit(sum, [1, 2])
            start = time.perf_counter()
            with pytest.raises(ClusterError, match="no worker for 1 s"):
                list(as_finished(client, [future], grace_s=1.0, poll_s=0.2))
            assert time.perf_counter() - start < 15
        finally:
            client.close()


@pytest.mark.slow
def test_sweep_on_a_workerless_cluster_fails_then_resumes(tmp_path, monkeypatch, capsys):
    from dask.distributed import LocalCluster

    from ldpsim.runtime.runfolder import read_manifest
    from ldpsim.scenarios.studies.sweep import runner
    from ldpsim.scenarios.cli import main
    from tests.fleets import SWEEP
    scenario = tmp_path / "s.toml"
    scenario.write_text(SWEEP)
    out = tmp_path / "out"
    monkeypatch.setattr(runner, "WORKERLESS_GRACE_S", 1.0)
    monkeypatch.setattr(runner, "_size_hint", lambda cell: 0)
    with LocalCluster(n_workers=0, processes=True, host="127.0.0.1", scheduler_port=0,
                      dashboard_address="localhost:0") as cluster:
        assert main(["sweep", str(scenario), "--scheduler", cluster.scheduler_address, "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert "no worker" in err and "rerun to resume" in err
    assert read_manifest(out)["status"] == "running"
    assert main(["sweep", str(scenario), "--workers", "1", "--out", str(out), "-q"]) == 0
    assert read_manifest(out)["status"] == "complete"


@pytest.mark.slow  # ~20 s: the nanny restarts the killed worker until Dask gives up on the task
def test_killed_workers_end_in_a_clear_error():
    from dask.distributed import LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", scheduler_port=0,
                      dashboard_address="localhost:0") as cluster:
        client = connect(cluster=cluster)
        try:
            future = client.submit(_die, pure=False)
            with pytest.raises(ClusterError, match="died"):
                list(as_finished(client, [future], grace_s=60.0))
        finally:
            client.close()
