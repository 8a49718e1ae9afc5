"""The scale measurement runs and reports its rate, memory and CPU time."""

from __future__ import annotations

from ldpsim.scenarios.studies.bench.fleet_scale import measure_scale
from ldpsim.scenarios.catalog import shipped


def test_measure_scale_small_run_in_process(tmp_path):
    out = measure_scale(shipped()["keyboard"], devices=300, days=2, shards=1, workers=1, out=str(tmp_path / "run"), fsync=False)
    assert out["devices"] == 300 and out["days"] == 2
    assert out["device_days_per_s"] > 0 and out["cpu_seconds"] > 0
    assert out["peak_tree_rss_gb"] > 0 and out["bundle_table_peak_mb"] > 0
    assert (tmp_path / "run" / "store").is_dir()  # a folder the caller named is kept
