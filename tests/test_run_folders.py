"""Regression tests of issue 10's data-loss findings 1–6: each failed on the code before the run-folder module.

Every test drives the real command (``main([...])`` in-process) or the real store, on a tiny fleet
(``TINY``: 150 devices × 2 days) or the tiny sweep below.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys

import pandas as pd
import pytest

from ldpsim.scenarios.studies.sweep.store import read_results
from ldpsim.scenarios.cli import main
from ldpsim.scenarios.studies.sweep.store import LAYOUT as SWEEP_LAYOUT
from tests.fleets import SWEEP, TINY  # shared helpers


# imported on use, so that this module also runs (and fails finding by finding) on the code before the fix
def read_manifest(path):
    from ldpsim.runtime.runfolder import read_manifest
    return read_manifest(path)


def verify_folder(path):
    from ldpsim.runtime.runfolder import verify_folder
    return verify_folder(path)




@pytest.fixture
def deployment(tmp_path):
    path = tmp_path / "tiny_run.toml"
    path.write_text(TINY, encoding="utf-8")
    return path


@pytest.fixture
def sweep_toml(tmp_path):
    path = tmp_path / "tiny_sweep.toml"
    path.write_text(SWEEP, encoding="utf-8")
    return path


def run(*argv) -> int:
    return main([*map(str, argv), "-q"])


def files_under(path) -> dict:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# finding 1 ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_1_symlinked_store_is_refused_not_double_counted(tmp_path, deployment, capsys):
    out = tmp_path / "runs" / "a"
    assert run("run", deployment, "--out", out) == 0
    moved = tmp_path / "runs" / "a_store"
    (out / "store").rename(moved)
    (out / "store").symlink_to(moved, target_is_directory=True)
    before = files_under(moved)
    capsys.readouterr()
    assert run("run", deployment, "--seed", "7", "--out", out, "--force") == 2  # was: exit 0, twice the reports
    assert "symbolic link" in capsys.readouterr().err
    assert files_under(moved) == before  # nothing deleted or added through the link


# finding 2 ------------------------------------------------------------------------------------
def test_2_peers_venv_that_ldpsim_did_not_create_is_never_deleted(tmp_path, monkeypatch):
    from ldpsim.scenarios.studies.bench import peers

    def no_processes(*a, **k):
        raise OSError("no subprocesses in this test")

    monkeypatch.setattr(peers.subprocess, "run", no_processes)
    mine = tmp_path / "mydata"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    with pytest.raises(ValueError, match="not a peers venv ldpsim created"):
        peers.ensure_venv(mine, log=lambda m: None)
    assert (mine / "thesis.tex").read_text() == "years of work"


# finding 3 ------------------------------------------------------------------------------------
def test_3_a_second_sweep_cannot_write_into_a_locked_folder(tmp_path, sweep_toml, capsys):
    out = tmp_path / "s"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / ".lock").write_text(json.dumps({"pid": holder.pid, "host": socket.gethostname(),
                                               "command": "ldpsim sweep big.toml", "started": "now"}))
        assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 2  # was: both runs wrote
        err = capsys.readouterr().err
        assert f"pid {holder.pid}" in err and "ldpsim sweep big.toml" in err
    finally:
        holder.kill()
        holder.wait()
    # the holder is gone: its lock is stale, removed with a note, and the run proceeds
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 0
    assert "stale lock" in capsys.readouterr().err


@pytest.mark.slow
def test_3_results_belong_to_the_folder_scenario_and_seed_only(tmp_path, sweep_toml, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert run("sweep", sweep_toml, "--workers", "1", "--out", a) == 0
    assert run("sweep", sweep_toml, "--workers", "1", "--out", b, "--seed", "2027") == 0
    # another seed's finished parts dropped into the folder are not results of this folder
    for part in (b / "summary").glob("*.parquet"):
        shutil.copy(part, a / "summary" / part.name)
    assert set(read_results(a)["root_seed"]) == {5}  # was: cells of both seeds
    assert run("sweep", sweep_toml, "--workers", "1", "--out", a, "--seed", "2027") == 2  # another seed: refused
    assert run("sweep", sweep_toml, "--workers", "1", "--out", a, "--seed", "2027", "--force") == 0
    assert set(read_results(a)["root_seed"]) == {2027} and len(read_results(a)["cell_id"].unique()) == 4


# finding 4 ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_4_an_interrupted_run_is_marked_incomplete_and_old_outputs_are_gone(tmp_path, deployment, monkeypatch):
    out = tmp_path / "c"
    assert run("run", deployment, "--out", out) == 0
    assert read_manifest(out)["status"] == "complete" and verify_folder(out) == []
    import ldpsim.evaluation.deployment.estimates as dm

    def killed(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(dm, "measure", killed)
    assert run("run", deployment, "--seed", "7", "--out", out, "--force") == 130
    manifest = read_manifest(out)
    assert manifest["status"] == "running" and manifest["seed"] == 7
    assert verify_folder(out) and "incomplete" in verify_folder(out)[0]
    for stale in ("summary.json", "report.html", "report.md", "top.csv", "daily_estimates.parquet"):
        assert not (out / stale).exists(), stale  # was: the earlier run's outputs, looking current
    assert not (out / ".lock").exists()


# finding 5 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["../../escaped", "/tmp/abs", "a/b", "..", ".hidden"])
def test_5_names_that_become_paths_must_be_plain(tmp_path, sweep_toml, deployment, capsys, name):
    sweep_toml.write_text(SWEEP.replace('name = "tiny"', f'name = "{name}"', 1))
    assert run("sweep", sweep_toml, "--dry-run") == 2
    assert "scenario.name" in capsys.readouterr().err
    deployment.write_text(TINY.replace('name = "tiny"', f'name = "{name}"', 1))
    assert run("run", deployment, "--dry-run") == 2
    assert "deployment.name" in capsys.readouterr().err


def test_5_force_never_deletes_an_unrelated_folder(tmp_path, sweep_toml, deployment, capsys):
    theirs = tmp_path / "theirs"
    (theirs / "summary").mkdir(parents=True)
    (theirs / "estimates").mkdir()
    (theirs / "store").mkdir()
    (theirs / "summary" / "results.parquet").write_bytes(b"their data")
    (theirs / "store" / "precious.bin").write_bytes(b"their data")
    (theirs / "config.json").write_text("{}")
    before = files_under(theirs)
    assert run("sweep", sweep_toml, "--workers", "1", "--out", theirs, "--force") == 2
    assert run("run", deployment, "--out", theirs) == 2  # was: deleted store/ (config.json "qualifies")
    assert "not an ldpsim" in capsys.readouterr().err
    assert files_under(theirs) == before


def test_5_unrelated_non_empty_folder_is_refused_by_sweep(tmp_path, sweep_toml, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "secrets.csv").write_text("password\nhunter2\n")
    (out / "scenario.toml").write_text("# my own notes")
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 2
    assert (out / "scenario.toml").read_text() == "# my own notes" and not (out / "report.html").exists()


def test_5_run_refuses_a_sweep_folder(tmp_path, sweep_toml, deployment, capsys):
    out = tmp_path / "s"
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 0
    before = files_under(out)
    assert run("run", deployment, "--out", out) == 2
    assert "sweep folder" in capsys.readouterr().err
    assert files_under(out) == before


@pytest.mark.slow
def test_5_symlinks_in_a_run_folder_are_never_written_through(tmp_path, deployment, capsys):
    out = tmp_path / "r"
    assert run("run", deployment, "--out", out) == 0
    target = tmp_path / "my_notes.md"
    target.write_text("mine")
    (out / "report.md").unlink()
    (out / "report.md").symlink_to(target)
    assert run("run", deployment, "--out", out) == 2  # was: report.md's target overwritten
    assert target.read_text() == "mine" and "symbolic link" in capsys.readouterr().err
    from ldpsim.runtime import durable
    with pytest.raises(OSError, match="symbolic link"):
        durable.write_text(out / "report.md", "x")
    assert target.read_text() == "mine"


# finding 6 ------------------------------------------------------------------------------------
def _sweep_done(tmp_path, sweep_toml):
    out = tmp_path / "s"
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 0
    return out, read_results(out), read_results(out, "estimates")


def test_6_truncated_and_missing_parts_are_recomputed_on_resume(tmp_path, sweep_toml, capsys):
    out, summary, estimates = _sweep_done(tmp_path, sweep_toml)
    parts = sorted((out / "summary").glob("*.parquet"))
    data = parts[0].read_bytes()
    parts[0].write_bytes(data[: len(data) // 2])  # truncated
    sorted((out / "estimates").glob("*.parquet"))[1].unlink()  # missing
    with pytest.raises(ValueError, match="damaged|missing"):
        read_results(out)  # was: read as a finished cell (or silently 3 of 4 cells)
    capsys.readouterr()
    assert main(["sweep", str(sweep_toml), "--workers", "1", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "2 damaged or missing part(s) will be recomputed" in err  # was: "all 4 cells already done"
    drop = ["elapsed_s"]
    pd.testing.assert_frame_equal(read_results(out).drop(columns=drop), summary.drop(columns=drop))
    pd.testing.assert_frame_equal(read_results(out, "estimates").drop(columns=drop), estimates.drop(columns=drop))
    assert verify_folder(out) == []


def test_6_every_single_bit_flip_in_a_part_is_detected(tmp_path, sweep_toml):
    out, _, _ = _sweep_done(tmp_path, sweep_toml)
    part = sorted((out / "summary").glob("*.parquet"))[0]
    good = part.read_bytes()
    rng = __import__("numpy").random.default_rng(0)
    for bit in rng.choice(len(good) * 8, size=40, replace=False):
        flipped = bytearray(good)
        flipped[bit // 8] ^= 1 << (bit % 8)
        part.write_bytes(bytes(flipped))
        with pytest.raises(ValueError, match="damaged"):
            read_results(out)  # was: 3 of 40 flips read back as other numbers
    part.write_bytes(good)
    assert verify_folder(out) == []


def test_6_durable_writes_fsync_file_then_rename_then_folder_and_respect_umask(tmp_path, monkeypatch):
    from ldpsim.runtime import durable
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
                        or real_fsync(fd))
    monkeypatch.setattr(os, "replace", lambda a, b: calls.append(("replace", str(b))) or real_replace(a, b))
    target = tmp_path / "part.parquet"
    durable.write_file(target, lambda tmp: pd.DataFrame({"a": [1]}).to_parquet(tmp))
    assert [c[0] for c in calls] == ["fsync", "replace", "fsync"]
    assert calls[0][1].endswith(".tmp") and calls[2][1] == str(tmp_path)
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # was: 0600 (mkstemp)


def test_6_report_store_fsyncs_the_folder_after_the_rename(tmp_path, monkeypatch):
    import numpy as np

    from ldpsim.runtime import durable
    from ldpsim.simulator.report_store import ReportStore
    synced = []
    monkeypatch.setattr(durable, "fsync_dir", lambda path: synced.append(str(path)))
    store = ReportStore(tmp_path / "store")
    part = store.append("emoji", 1, np.zeros((3, 2), dtype=np.uint8), np.arange(3))
    assert str(part.parent) in synced


def test_lock_and_manifest_of_a_finished_sweep(tmp_path, sweep_toml):
    from ldpsim.runtime.runfolder import RunFolder
    out, _, _ = _sweep_done(tmp_path, sweep_toml)
    manifest = read_manifest(out)
    assert manifest["kind"] == "sweep" and manifest["status"] == "complete" and manifest["seed"] == 5
    assert len([p for p in manifest["files"] if p.startswith("summary/")]) == 4
    assert not (out / ".lock").exists()
    with RunFolder.open(out, SWEEP_LAYOUT, {"fingerprint": manifest["fingerprint"], "seed": 5}, resume=True):
        assert read_manifest(out)["status"] == "running"
        with pytest.raises(ValueError, match="already open in this process"):
            RunFolder.open(out, SWEEP_LAYOUT, {"fingerprint": manifest["fingerprint"], "seed": 5}, resume=True)


def test_a_folder_whose_run_finished_nothing_does_not_block_the_corrected_scenario(tmp_path, sweep_toml,
                                                                                    monkeypatch, capsys):
    from ldpsim.scenarios.studies.sweep import runner

    def broken(cell, seed):
        raise RuntimeError("a bug in the first cell")

    out = tmp_path / "s"
    monkeypatch.setattr(runner, "run_cell", broken)
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 3
    monkeypatch.undo()
    assert read_manifest(out)["status"] == "running"
    sweep_toml.write_text(SWEEP.replace("repeats = 3", "repeats = 4"))  # the corrected scenario
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 0  # was: refused (its config.json)
    assert read_manifest(out)["status"] == "complete"


def test_force_deletes_only_files_ldpsim_wrote_even_inside_its_own_folders(tmp_path, sweep_toml):
    out = tmp_path / "s"
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 0
    (out / "summary" / "my_notes.txt").write_text("mine")
    (out / "notes.md").write_text("mine too")
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out, "--seed", "9", "--force") == 0
    assert (out / "summary" / "my_notes.txt").read_text() == "mine" and (out / "notes.md").read_text() == "mine too"
    assert set(read_results(out)["root_seed"]) == {9}


def test_a_lock_held_on_another_host_is_never_taken_over(tmp_path, sweep_toml, capsys):
    out = tmp_path / "s"
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 0
    (out / ".lock").write_text(json.dumps({"pid": 1, "host": "elsewhere.example", "command": "ldpsim sweep x",
                                           "started": "then"}))
    assert run("sweep", sweep_toml, "--workers", "1", "--out", out) == 2
    assert "elsewhere.example" in capsys.readouterr().err and (out / ".lock").exists()


@pytest.mark.slow
def test_plot_refuses_a_folder_in_use(tmp_path, sweep_toml, capsys):
    out, _, _ = _sweep_done(tmp_path, sweep_toml)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / ".lock").write_text(json.dumps({"pid": holder.pid, "host": socket.gethostname(),
                                               "command": "ldpsim sweep again", "started": "now"}))
        assert run("plot", out) == 2
        assert f"pid {holder.pid}" in capsys.readouterr().err and not (out / "plots").exists()
    finally:
        holder.kill()
        holder.wait()
    assert run("plot", out) == 0 and (out / "plots").is_dir() and not (out / ".lock").exists()


def test_audit_and_poison_outputs_respect_foreign_folders(tmp_path, capsys):
    """`ldpsim audit --out` and `ldpsim poison --out` refuse an unrelated non-empty folder, leave its files
    alone, and write a complete, locked folder of their own otherwise."""
    from ldpsim.runtime.runfolder import read_manifest
    from ldpsim.scenarios.cli import main
    foreign = tmp_path / "thesis"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("mine")
    assert main(["audit", "--mechanism", "grr", "--epsilon", "1", "--domain-size", "4", "--trials", "1000",
                 "--out", str(foreign), "-q"]) == 2
    assert (foreign / "thesis.tex").read_text() == "mine" and not (foreign / "audit.csv").exists()
    own = tmp_path / "audit"
    assert main(["audit", "--mechanism", "grr", "--epsilon", "1", "--domain-size", "4", "--trials", "1000",
                 "--out", str(own), "-q"]) == 0
    assert (own / "audit.csv").is_file() and read_manifest(own)["status"] == "complete"
