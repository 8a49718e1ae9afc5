"""``ldpsim bench`` at a tiny n: the table, skips, the CSV, every case's runner, and the MSE z-test.

The peers (pure-ldp, multi-freq-ldpy) need their own venv and minutes: they are not run here.
"""

from __future__ import annotations

import csv
import dataclasses

import numpy as np
import pytest

from ldpsim.evaluation.bench import cases as bench, peers
from ldpsim.mechanisms import GRR
from ldpsim.scenarios.cli import main
from tests.stats import ALPHA


def test_bench_prints_table_with_targets(capsys, tmp_path):
    out = tmp_path / "bench"
    assert main(["bench", "--users", "3000", "--items", "50", "--only", "grr", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.startswith("case"))
    for column in ("path", "wall s", "s/10⁶", "units/s", "peak MiB", "target (per 10⁶)", "result", "note"):
        assert column in header
    rows = [line for line in text.splitlines() if line.startswith("grr ")]
    assert len(rows) == 2 and "per-user" in rows[0] and "direct" in rows[1]
    assert "≥1e7 users/s" in rows[0] and ("PASS" in rows[0] or "FAIL" in rows[0])
    assert "extrapolated from n=3,000" in rows[0]
    with (out / "bench.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert [r["path"] for r in table] == ["per-user", "direct"]
    assert float(table[0]["seconds"]) > 0 and float(table[0]["peak_mib"]) > float(table[0]["baseline_mib"]) / 2


def test_unregistered_or_rejected_case_is_skipped_with_a_note():
    missing = bench.BenchCase("nope", "no-such-mechanism", {"epsilon": 1.0})
    row = bench.bench_row(missing, 100, 10)
    assert row["pass"] == "skip" and "not registered" in row["note"]
    bad = bench.BenchCase("grr bad", "grr", {"epsilon": -1.0})
    row = bench.bench_row(bad, 100, 10)
    assert row["pass"] == "skip" and "'epsilon' parameter of GRR" in row["note"]


def _tiny(case: bench.BenchCase) -> bench.BenchCase:
    """The case with sketches shrunk (k ≤ 16, m ≤ 32) and EM bins ≤ 64, to keep the smoke test fast."""
    params = {k: min(v, 16 if k == "k" else 32) if k in ("k", "m") else v for k, v in case.params.items()}
    extra = {k: min(v, 64) for k, v in case.extra.items()}
    return dataclasses.replace(case, params=params, extra=extra)


@pytest.mark.parametrize("case", bench.CASES, ids=lambda c: f"{c.label}-{c.path}")
def test_every_case_runs_in_process(case):
    case = _tiny(case)
    reason = bench.skip_reason(case, 40)
    if reason is not None:
        pytest.skip(reason)
    seconds, est = bench.RUNNERS[case.path](case, 500, 40, 0)
    assert seconds >= 0 and np.all(np.isfinite(est))
    if case.path.startswith("discover"):  # discovery: the F1 of the discovered top 20
        assert est.shape == (1,) and 0.0 <= est[0] <= 1.0
    elif case.path != "em" and not case.numeric:
        assert est.shape == (case.domain or 40,)


def test_select_by_mechanism_or_label():
    assert {c.name for c in bench.select(bench.CASES, ["cms"])} == {"cms"}
    assert [c.label for c in bench.select(bench.CASES, ["sdpm EM d1024"])] == ["sdpm EM d1024"]
    assert bench.select(bench.CASES, None) == bench.CASES


def _grr_frequencies(epsilon, counts, seed):
    mech = GRR(epsilon=epsilon, domain_size=counts.size)
    return mech.estimate(mech.sample_aggregate(counts, seed)) / counts.sum()


def test_mse_comparison_equal_and_different():
    """Same mechanism, independent runs: p ≥ ALPHA unless a false alarm (rate ALPHA). ε = 1 vs ε = 2
    (MSE ratio ≈ 3.8 over 2000 items): the test must reject."""
    counts = np.full(2000, 50)
    truth = counts / counts.sum()
    same = peers.mse_comparison(_grr_frequencies(1.0, counts, 1), _grr_frequencies(1.0, counts, 2), truth)
    assert same["p"] >= ALPHA
    assert same["mse_ours"] == pytest.approx(same["mse_theirs"], rel=0.2)
    diff = peers.mse_comparison(_grr_frequencies(1.0, counts, 1), _grr_frequencies(2.0, counts, 2), truth)
    assert diff["p"] < ALPHA and diff["z"] > 0


def test_accuracy_rows_measure_against_theory():
    """The README accuracy table's runner: every row runs at a tiny size and its theory is finite."""
    from ldpsim.evaluation.bench import accuracy
    for label, name, params, d in accuracy.ROWS:
        small = {k: (min(v, 16) if k in ("num_bits", "pool_size") else v) for k, v in params.items()}
        row = accuracy.measure(name, small, min(d, 12) or 0, 400, 2)
        assert np.isfinite(row["mse"]) and row["theory"] > 0, label
