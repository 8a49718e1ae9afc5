"""A file named exactly like a report-store part, dropped into a run folder mid-run, is never adopted: the
server's recovery does not read it, a part is never written over it, and the finishing run leaves it out of
its manifest with a note (docs/explanation/promises.md, "store parts")."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ldpsim.runtime import durable
from ldpsim.runtime.runfolder import RunFolder, read_manifest
from ldpsim.simulator import report_store
from ldpsim.simulator.deployment import run
from ldpsim.simulator.report_store import ReportStore
from ldpsim.scenarios.studies.deployment.study import LAYOUT as RUN_LAYOUT
from tests.fleets import same_aggregates, tiny_config


def _plant_after_first_part(monkeypatch, planted: list):
    """After the first part of each store, put a valid part named like its next ones (other reports)."""
    real = ReportStore.append

    def append(self, use_case, day, rows, upload_ids):
        path = real(self, use_case, day, rows, upload_ids)
        if not planted:
            for seq in range(self._seq, self._seq + 3):
                fake = path.parent / f"part-{self.writer}-{seq:06d}.parquet"
                other = ReportStore(path.parent.parent.parent / "elsewhere", self.writer, fsync=False)
                src = real(other, use_case, day, np.full_like(rows, 255), upload_ids + 10**6)
                os.replace(src, fake)
                durable._WRITTEN.pop(os.path.abspath(src), None)  # written by "somebody else"
                planted.append((fake, fake.read_bytes()))
        return path

    monkeypatch.setattr(report_store.ReportStore, "append", append)


def test_a_planted_part_is_not_read_back_by_the_recovering_server(tmp_path, monkeypatch):
    calm = run(tiny_config(window_length_h=20.0), tmp_path / "calm")
    planted = []
    _plant_after_first_part(monkeypatch, planted)
    crashed = run(tiny_config(window_length_h=20.0, crash_at_h=24 + 23.5, restart_s=1800.0), tmp_path / "crash")
    assert planted and crashed.counters["lost_in_crash"] > 0
    same_aggregates(calm.aggregates, crashed.aggregates)  # the planted reports were not aggregated
    for path, data in planted:
        assert path.read_bytes() == data  # and no part was written over them
        assert os.path.abspath(path) not in crashed.store_parts


def test_finalize_adopts_the_shards_parts_by_checksum_and_leaves_a_planted_one_out(tmp_path):
    notes = []
    with RunFolder.open(tmp_path / "r", RUN_LAYOUT, {"fingerprint": "f", "seed": 0}, log=notes.append) as folder:
        store = ReportStore(folder.root / "store", "s1", fsync=False)
        ours = store.append("emoji", 1, np.zeros((2, 3), np.uint8), np.arange(2))
        durable._WRITTEN.pop(os.path.abspath(ours))  # as if a worker process had written it
        planted = ours.parent / "part-s1-000007.parquet"
        planted.write_bytes(ours.read_bytes())  # named like a part, same bytes, but not in the shards' list
        renamed = ours.parent / "part-s2-000000.parquet"
        other = ReportStore(folder.root / "store", "s2", fsync=False)
        theirs = other.append("emoji", 1, np.ones((2, 3), np.uint8), np.arange(2))
        durable._WRITTEN.pop(os.path.abspath(theirs))
        renamed.write_bytes(b"replaced by somebody")  # a listed name whose checksum no longer matches
        folder.finalize(adopt=True, others={**store.written, **other.written})
    files = read_manifest(tmp_path / "r")["files"]
    assert "store/use_case=emoji/day=1/part-s1-000000.parquet" in files
    assert not any(p.endswith(("part-s1-000007.parquet", "part-s2-000000.parquet")) for p in files)
    assert any("not written by this run" in n and "part-s1-000007" in n for n in notes)
    assert planted.exists() and renamed.read_bytes() == b"replaced by somebody"


@pytest.mark.slow
def test_a_run_leaves_a_part_planted_mid_run_out_of_its_results_and_manifest(tmp_path, monkeypatch):
    import ldpsim
    from tests.fleets import TINY, write_scenario
    scenario = write_scenario(tmp_path, TINY)
    clean = ldpsim.run(scenario, out=tmp_path / "clean", log=lambda m: None)
    planted, notes = [], []
    _plant_after_first_part(monkeypatch, planted)
    monkeypatch.setattr(RunFolder, "open", _with_log(RunFolder.open, notes.append))
    dirty = ldpsim.run(scenario, out=tmp_path / "dirty", log=lambda m: None)
    assert planted
    assert dirty.tables["daily"].equals(clean.tables["daily"])  # the planted reports were never read
    files = read_manifest(tmp_path / "dirty")["files"]
    for path, data in planted:
        rel = path.relative_to(tmp_path / "dirty").as_posix()
        assert rel not in files and path.read_bytes() == data
        assert any(rel in n for n in notes)


def _with_log(open_, log):
    def opened(*args, **kwargs):
        return open_(*args, **{**kwargs, "log": log})
    return opened
