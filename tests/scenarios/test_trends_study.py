"""``ldpsim trends`` and its study: bad input refused with exit 2, the table, the run folder (docs/math.md §12.6)."""

import math

import numpy as np
import pytest

from ldpsim.evaluation.trends.lineup import standard_designs
from ldpsim.runtime.errors import LdpsimError
from ldpsim.scenarios.cli import main
from ldpsim.scenarios.studies.trends.rising_word import rising_word
from tests.cli_cases import expect_clear_refusal


@pytest.mark.parametrize("argv, names", [
    (["--devices", "100"], ["devices", "100"]),
    (["--days", "20"], ["days", "20"]),
    (["--epsilon", "-1"], ["epsilon", "-1"]),
    (["--false-alarms", "0"], ["false_alarms", "0"]),
    (["--window", "0"], ["window", "0"]),
    (["--replicates", "0"], ["replicates", "0"]),
    pytest.param(["--item", "zzqqxv"], ["zzqqxv"], marks=pytest.mark.slow),   # loads wordfreq
    (["--engine", "gpu"], ["engine", "exact, devices", "gpu"]),
    (["--workers", "2"], ["--workers", "--engine"]),                            # the exact engine has no workers
    (["--engine", "devices", "--replicates", "1000"], ["replicates", "CPU time", "--replicates"]),
])
def test_bad_input_exits_2_naming_it(argv, names, capsys, tmp_path):
    expect_clear_refusal(["trends", *argv, "--out", str(tmp_path / "t")], names, capsys)


@pytest.mark.slow
def test_study_table_and_folder(tmp_path):
    """Every design: ε per person ≤ 2, the detector's false alarms per month ≤ its rate in theory, the
    distributed designs detect 'sus' at 10⁷ devices in every run, and the folder holds table and figure."""
    r = rising_word("sus", 10_000_000, 90, 2.0, replicates=40, seed=0)
    t = r.table
    assert len(t) == 12 and np.all(t["epsilon"] <= 2.0 + 1e-9)
    assert np.all(t["false_alarms_theory"] <= 0.05 + 1e-12)
    dist = t[t["placement"] == "distributed"]
    assert np.all(dist["detected"] == 1.0) and np.all(np.isfinite(dist["delay_median"]))
    assert math.isinf(t.loc[t["design"] == "memoized RR", "epsilon_person"].iloc[0])
    assert (t["epsilon_item"] == t["epsilon"]).all()             # one item tracked: the item is the whole record
    paths = r.to_folder(tmp_path / "trends")
    assert {p.name for p in map(__import__("pathlib").Path, paths)} == {"trends.csv", "trajectory.png"}
    assert main(["trends", "--devices", "100000", "--replicates", "5", "--out", str(tmp_path / "cli")]) == 0


def test_devices_engine_states_its_cost_first(capsys, tmp_path):
    """--dry-run prints the devices engine's plan (CPU time, peak memory) and writes nothing."""
    out = tmp_path / "t"
    assert main(["trends", "--engine", "devices", "--dry-run", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "10,000,000 devices × 90 days" in text and "estimated CPU time" in text and "estimated peak memory" in text
    assert not out.exists()


@pytest.mark.slow
def test_devices_engine_table(tmp_path, capsys):
    """10⁴ devices, one replicate: every design runs device by device, the theory columns equal the exact
    engine's (they do not depend on the engine), and the command prints its progress and plan."""
    r = rising_word("sus", 10_000, 90, 2.0, replicates=1, seed=0, engine="devices")
    exact = rising_word("sus", 10_000, 90, 2.0, replicates=1, seed=0)
    assert list(r.table["engine"]) == ["devices"] * len(standard_designs(2.0, 90)) and set(exact.table["engine"]) == {"exact law"}
    for col in ("sd_day", "false_alarms_theory", "tracking_theory", "smallest_growth"):
        assert np.allclose(r.table[col], exact.table[col], equal_nan=True), col
    assert "device by device" in r.title and "device by device" not in exact.title
    exact.to_folder(tmp_path / "t")
    with pytest.raises(LdpsimError):                 # another engine's results are not replaced silently
        r.to_folder(tmp_path / "t")
    assert main(["trends", "--engine", "devices", "--devices", "10000", "--out", str(tmp_path / "cli")]) == 0
    assert "estimated CPU time" in capsys.readouterr().err


def test_devices_engine_beyond_the_machines_memory_is_refused(monkeypatch, capsys, tmp_path):
    """On a 1 GiB machine the devices engine at 10⁷ devices (THRESH's state alone is 1.2 GiB) is refused before it starts."""
    monkeypatch.setenv("LDPSIM_MEMORY_BYTES", str(2**30))
    expect_clear_refusal(["trends", "--engine", "devices", "--out", str(tmp_path / "t")], ["budget", "GiB"], capsys)
    assert not (tmp_path / "t").exists()
