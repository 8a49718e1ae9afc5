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
from tests.fleets import TINY


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
                      dashboard_address="localhost:0") as cluster, Client(cluster) as client:
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


def _drop_user_files_during(monkeypatch, module, name, files):
    """Wrap ``module.name`` so that the user's ``files`` (relative path → bytes) appear in the run folder
    while the command runs (the folder is the wrapped function's argument ``out``/``root``)."""
    real = getattr(module, name)

    def wrapped(*args, **kw):
        out = next(a for a in (*args, *kw.values()) if isinstance(a, os.PathLike))
        for rel, data in files.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(data)
        return real(*args, **kw)
    monkeypatch.setattr(module, name, wrapped)


USER_FILES = {"notes.txt": b"my notes", "plots/mine.txt": b"keep me"}


@pytest.mark.slow
def test_a_file_the_user_writes_during_run_is_not_adopted_nor_deleted_by_a_rerun(tmp_path, deployment, monkeypatch):
    from ldpsim.evaluation.report import html
    from ldpsim.runtime.runfolder import read_manifest, verify_folder
    out = tmp_path / "out"
    _drop_user_files_during(monkeypatch, html, "report_from_run_dir", USER_FILES)
    assert main(["run", str(deployment), "--out", str(out), "-q"]) == 0
    manifest = read_manifest(out)
    assert manifest["status"] == "complete" and verify_folder(out) == []
    assert not set(USER_FILES) & set(manifest["files"])
    assert {"summary.txt", "report.html", "config.json"} <= set(manifest["files"])
    assert any(f.startswith("store/") for f in manifest["files"])
    monkeypatch.undo()
    assert main(["run", str(deployment), "--out", str(out), "-q"]) == 0
    assert all((out / rel).read_bytes() == data for rel, data in USER_FILES.items())


def test_a_file_the_user_writes_during_audit_is_not_adopted(tmp_path, monkeypatch):
    from ldpsim.runtime import runfolder
    out = tmp_path / "audit"
    real = runfolder.RunFolder.finalize

    def finalize(self, adopt=False):
        (self.root / "notes.txt").write_bytes(b"my notes")
        return real(self, adopt)
    monkeypatch.setattr(runfolder.RunFolder, "finalize", finalize)
    assert main(["audit", "--mechanism", "grr", "--epsilon", "1", "--trials", "2000", "--out", str(out), "-q"]) in (0, 1)
    files = runfolder.read_manifest(out)["files"]
    assert "audit.csv" in files and "notes.txt" not in files


@pytest.mark.slow
def test_the_report_embeds_only_files_the_run_wrote_never_through_a_symlink(tmp_path, deployment, monkeypatch):
    import base64
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\nTOP-SECRET")
    (tmp_path / "secret.json").write_text('{"key": "TOP-SECRET-JSON"}')
    (tmp_path / "secret.csv").write_text("key\nTOP-SECRET-CSV\n")
    planted = {"plots/leak.png": secret, "leak.csv": tmp_path / "secret.csv", "leak.json": tmp_path / "secret.json"}
    out = tmp_path / "out"
    from ldpsim.evaluation.report import html
    real = html.report_from_run_dir

    def plant_then_report(run_dir, *args, **kw):
        for rel, target in planted.items():
            os.symlink(target, run_dir / rel)
        (run_dir / "plots" / "user.png").write_bytes(b"\x89PNG\r\n\x1a\nUSER-FILE")
        (run_dir / "user.csv").write_text("a\nUSER-CSV\n")
        return real(run_dir, *args, **kw)
    monkeypatch.setattr(html, "report_from_run_dir", plant_then_report)
    assert main(["run", str(deployment), "--out", str(out), "--figures", "all", "-q"]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    blobs = b"".join(base64.b64decode(b.split('"', 1)[0]) for b in page.split("base64,")[1:])
    assert b"TOP-SECRET" not in blobs and b"USER-FILE" not in blobs and blobs.count(b"\x89PNG") >= 3
    assert "TOP-SECRET" not in page and "USER-CSV" not in page and "leak" not in page and "Table top.csv" in page


def test_a_complete_manifest_that_lists_no_files_is_not_verified(tmp_path):
    from ldpsim.runtime.runfolder import MANIFEST, verify_folder
    (tmp_path / MANIFEST).write_text(json.dumps({"format": "ldpsim-run-folder/1", "kind": "run",
                                                 "status": "complete"}))
    assert verify_folder(tmp_path) == [f"{tmp_path}: the manifest says complete but lists no files"]
    (tmp_path / MANIFEST).write_text(json.dumps({"kind": "run", "status": "complete", "files": {}}))
    assert verify_folder(tmp_path)


@pytest.mark.slow  # ~15 s: an external worker process
def test_a_worker_advertising_an_unreachable_address_is_named_not_waited_for(tmp_path):
    import subprocess
    import sys
    import time

    from dask.distributed import Client, LocalCluster

    from ldpsim.runtime.cluster import ClusterError, require_shared_folder
    with LocalCluster(n_workers=0, processes=True, host="127.0.0.1", scheduler_port=0,
                      dashboard_address="localhost:0") as cluster, Client(cluster) as client:
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                                   "--contact-address", "tcp://192.0.2.1:9", "--listen-address", "tcp://127.0.0.1:0",
                                   "--no-nanny", "--nthreads", "1", "--no-dashboard"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            client.wait_for_workers(1, timeout=60)
            start = time.perf_counter()
            with pytest.raises(ClusterError, match=r"worker tcp://192\.0\.2\.1:9 did not answer within 3 s"):
                require_shared_folder(client, tmp_path, timeout=3.0)
            assert time.perf_counter() - start < 30
        finally:
            worker.kill()
            worker.wait()


def test_scheduler_security_is_said_at_run_time(capsys):
    import gc
    import warnings

    from ldpsim.runtime.cluster import ClusterError, connect
    with pytest.raises(ClusterError, match=r"tls://127\.0\.0\.1:1: a tls:// scheduler needs .*ca-file"):
        connect("tls://127.0.0.1:1", timeout=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        with pytest.raises(ClusterError):
            connect("tcp://127.0.0.1:1", timeout=1.0)
        gc.collect()
    assert "reached without TLS: anyone who can reach it can run code" in capsys.readouterr().err


@pytest.mark.slow
def test_a_folder_turned_read_only_mid_run_is_reported_as_read_only(tmp_path, deployment, monkeypatch, capsys):
    import errno

    from ldpsim.evaluation.report import html

    def read_only(*args, **kw):
        raise PermissionError(errno.EROFS, "Read-only file system", str(tmp_path / "out" / "report.html"))
    monkeypatch.setattr(html, "report_from_run_dir", read_only)
    assert main(["run", str(deployment), "--out", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "is read-only or no longer writable (read-only file system" in err and "lock" not in err
