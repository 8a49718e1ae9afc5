"""``ldpsim trends`` and its study: bad input refused with exit 2, the table, the run folder (docs/math.md §12.6)."""

import math

import numpy as np
import pytest

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
