"""The scale measurement runs and reports its rate, memory and CPU time."""

from __future__ import annotations

import json

from ldpsim.scenarios.studies.bench.fleet_scale import measure_scale
from ldpsim.scenarios.catalog import shipped


def test_measure_scale_small_run_in_process(tmp_path):
    out = measure_scale(shipped()["keyboard"], devices=300, days=2, shards=1, workers=1, out=str(tmp_path / "run"), fsync=False)
    assert out["devices"] == 300 and out["days"] == 2
    assert out["device_days_per_s"] > 0 and out["cpu_seconds"] > 0
    assert out["peak_tree_rss_gb"] > 0 and out["bundle_table_peak_mb"] > 0
    assert (tmp_path / "run" / "store").is_dir()  # a folder the caller named is kept
    # beside the rate, what the run's devices get: per use case one report, one item, one person
    from ldpsim.evaluation.privacy.accountant import device_spend, person_summary
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
    want = person_summary(device_spend(load_deployment(shipped()["keyboard"], 300, 2)[0]))
    assert json.dumps(out["person"], sort_keys=True) == json.dumps(want, sort_keys=True)   # NaN: no per-report total
    assert all({"epsilon_report", "epsilon_item", "epsilon_person"} <= set(v) for v in out["person"].values())
