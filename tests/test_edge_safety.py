"""Data safety at the edges: the report store through a Dask cluster, files the user puts into a run
folder while a command runs, what the shared report embeds, and a finished folder's manifest.

Every test drives the real command in-process (``main([...])``) on the tiny fleet (``TINY``: 150 devices ×
2 days) and failed on the code before its fix.
"""

from __future__ import annotations

import json
import os

import pytest

from ldpsim.scenarios.cli import main
from tests.simulator.test_scenario import TINY


@pytest.fixture
def deployment(tmp_path):
    path = tmp_path / "tiny_run.toml"
    path.write_text(TINY, encoding="utf-8")
    return path


def _store_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                  if f.endswith(".parquet"))


@pytest.mark.slow  # ~25 s: a run on a local Dask cluster
def test_a_relative_out_reaches_workers_in_another_cwd_as_an_absolute_path(tmp_path, deployment, monkeypatch):
    from ldpsim.runtime.cluster import local_cluster
    from ldpsim.runtime.runfolder import read_manifest, verify_folder
    worker_cwd, here = tmp_path / "workers", tmp_path / "here"
    worker_cwd.mkdir()
    here.mkdir()
    monkeypatch.chdir(worker_cwd)  # the worker processes start (and stay) in another working directory
    with local_cluster(1) as cluster:
        monkeypatch.chdir(here)
        assert main(["run", str(deployment), "--scheduler", cluster.scheduler_address, "--out", "runs/x", "-q"]) == 0
    assert not (worker_cwd / "runs").exists(), _store_files(worker_cwd)
    assert _store_files(here / "runs/x/store")
    assert read_manifest(here / "runs/x")["status"] == "complete" and verify_folder(here / "runs/x") == []


@pytest.fixture
def threaded_client():
    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield client


def test_a_worker_that_cannot_see_the_folder_is_an_error_before_any_work(tmp_path, threaded_client, monkeypatch):
    from ldpsim.runtime import cluster
    from ldpsim.runtime.cluster import ClusterError, require_shared_folder
    assert require_shared_folder(threaded_client, tmp_path / "out") == tmp_path / "out"
    monkeypatch.setattr(cluster, "_read_probe", lambda path: "<FileNotFoundError: No such file or directory>")
    with pytest.raises(ClusterError, match=r"worker \w+://\S+ cannot see the run folder .*out"):
        require_shared_folder(threaded_client, tmp_path / "out")
    assert os.listdir(tmp_path / "out") == []  # the probe is gone


def test_a_worker_that_does_not_answer_is_named_instead_of_waited_for(tmp_path, threaded_client, monkeypatch):
    import time

    from ldpsim.runtime import cluster
    from ldpsim.runtime.cluster import ClusterError, require_shared_folder
    monkeypatch.setattr(cluster, "_read_probe", lambda path: time.sleep(3))
    with pytest.raises(ClusterError, match=r"worker \w+://\S+ did not answer within 0\.5 s"):
        require_shared_folder(threaded_client, tmp_path, timeout=0.5)
