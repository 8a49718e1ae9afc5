"""The Parquet run store: atomic per-cell files, finished set, refusal of a different scenario."""

from __future__ import annotations

import pandas as pd
import pytest

from ldpsim.scenarios.studies.sweep.store import RunExistsError, RunStore, read_results


def frames(cell_index):
    est = pd.DataFrame({"cell_id": "c", "cell_index": cell_index, "repeat": [0, 1], "estimate": [1.0, 2.0]})
    summ = pd.DataFrame({"cell_id": "c", "cell_index": cell_index, "metric": ["mse"], "mean": [0.5], "se": [0.1]})
    return est, summ


def test_write_read_and_finished(tmp_path):
    store = RunStore(tmp_path / "run")
    store.open({"fingerprint": "a"}, "[scenario]\n")
    assert store.finished() == set() and store.read().empty
    store.write_cell("c1", *frames(1))
    store.write_cell("c0", *frames(0))
    assert store.finished() == {"c0", "c1"}
    summary = read_results(tmp_path / "run")
    assert summary["cell_index"].tolist() == [0, 1]  # sorted by grid position
    assert len(store.read("estimates")) == 4
    assert (tmp_path / "run" / "scenario.toml").read_text() == "[scenario]\n"
    assert not list((tmp_path / "run").rglob("*.tmp"))  # atomic writes leave no temporaries
    with pytest.raises(ValueError, match="'table'"):
        store.read("nope")


def test_failed_write_leaves_no_cell(tmp_path):
    store = RunStore(tmp_path)
    store.open({"fingerprint": "a"}, "")
    est, summ = frames(0)
    with pytest.raises(Exception):
        store.write_cell("bad", est, summ.assign(mean=[object()]))  # not serializable
    assert store.finished() == set()
    assert not list(tmp_path.rglob("*.tmp"))


def test_same_scenario_resumes_other_is_refused_unless_forced(tmp_path):
    store = RunStore(tmp_path)
    store.open({"fingerprint": "a"}, "")
    store.write_cell("c0", *frames(0))
    store.open({"fingerprint": "a"}, "")  # same scenario: results kept
    assert store.finished() == {"c0"}
    with pytest.raises(RunExistsError, match="different scenario.*--force"):
        store.open({"fingerprint": "b"}, "")
    store.open({"fingerprint": "b"}, "", force=True)
    assert store.finished() == set() and store.read_config()["fingerprint"] == "b"
