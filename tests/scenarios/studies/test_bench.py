"""``ldpsim bench`` at a tiny n: the table and its floor ratios, skips, the run folder, ``--check``,
every case's runner and floor, and the MSE z-test.

The peers (pure-ldp, multi-freq-ldpy) need their own venv and minutes: they are not run here.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json

import numpy as np
import pandas as pd
import pytest

import ldpsim
from ldpsim.mechanisms.aggregation.secagg_quadtree import SecAggQuadtree
from ldpsim.mechanisms.numeric.tree_histogram import TreeHistogram
from ldpsim.scenarios.studies.bench import cases as bench, floors, peers, suite
from ldpsim.mechanisms import GRR
from ldpsim.scenarios.cli import main
from tests.stats import ALPHA

_TINY = ["bench", "--users", "3000", "--items", "50", "--only", "grr", "--repeats", "1"]


@pytest.mark.slow
def test_bench_prints_times_and_floor_ratios_without_grading(capsys, tmp_path):
    out = tmp_path / "bench"
    assert main([*_TINY, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.startswith("case"))
    for column in ("path", "wall s", "cpu s", "s/10⁶", "units/s", "floor", "÷ floor", "peak MiB", "status", "note"):
        assert column in header
    rows = [line for line in text.splitlines() if line.startswith("grr ")]
    assert len(rows) == 2 and "per-user" in rows[0] and "direct" in rows[1]
    assert "user-draws" in rows[0] and "extrapolated from n=3,000" in rows[0]
    assert "PASS" not in text and "FAIL" not in text and "load average" in text
    with (out / "bench.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert [r["path"] for r in table] == ["per-user", "direct"] and {r["table"] for r in table} == {"bench"}
    assert float(table[0]["seconds"]) > 0 and float(table[0]["floor_ratio"]) > 0
    assert float(table[0]["peak_mib"]) > float(table[0]["baseline_mib"]) / 2
    base = json.loads((out / "baseline.json").read_text())
    assert list(base["ratios"]) == ["grr|per-user"]
    assert json.loads((out / "manifest.json").read_text())["kind"] == "bench"


@pytest.mark.slow
def test_bench_owns_its_folder(capsys, tmp_path, monkeypatch):
    """A folder with a user's files is refused (their bench.csv untouched); a finished bench result is
    replaced only with --force. Both refusals come before the work (no case is timed)."""
    def no_work(*args, **kwargs):
        raise AssertionError("the bench ran before its folder was refused")

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "bench.csv").write_text("my numbers\n")
    with monkeypatch.context() as m:
        m.setattr(suite, "bench", no_work)
        assert main([*_TINY, "--out", str(theirs)]) == 2
    assert (theirs / "bench.csv").read_text() == "my numbers\n"
    assert "not empty" in capsys.readouterr().err
    ours = tmp_path / "ours"
    assert main([*_TINY, "--out", str(ours)]) == 0
    first = (ours / "bench.csv").read_text()
    with monkeypatch.context() as m:
        m.setattr(suite, "bench", no_work)
        assert main([*_TINY, "--out", str(ours)]) == 2
    assert "--force" in capsys.readouterr().err and (ours / "bench.csv").read_text() == first
    assert main([*_TINY, "--out", str(ours), "--force"]) == 0


@pytest.mark.slow
def test_library_bench_returns_tables():
    result = ldpsim.bench(users=2000, items=20, only=["grr"], repeats=1)
    assert isinstance(result.table, pd.DataFrame) and list(result.table["status"]) == ["ok", "ok"]
    assert result.table["floor_ratio"].iloc[0] > 0 and np.isnan(result.table["floor_ratio"].iloc[1])
    assert result.peers.empty and result.settings["load_before"]["cpus"] >= 1


def _result(ratios: dict) -> suite.BenchResult:
    rows = [{"case": c, "path": p, "floor_ratio": r, "status": "ok"} for (c, p), r in ratios.items()]
    return suite.BenchResult(pd.DataFrame(rows))


def test_check_fails_a_ratio_grown_past_the_factor():
    baseline = {"format": suite.BASELINE_FORMAT, "ratios": {"a|per-user": 2.0, "b|direct": 10.0, "c|per-user": 1.0}}
    verdict = suite.check(_result({("a", "per-user"): 5.9, ("b", "direct"): 30.5}), baseline, factor=3.0)
    assert verdict["ok"].tolist() == [True, False, False]
    assert verdict["growth"].iloc[0] == pytest.approx(2.95) and "not measured" in verdict["note"].iloc[2]
    with pytest.raises(ValueError, match="--factor"):
        suite.check(_result({}), baseline, factor=1.0)
    only_a = _result({("a", "per-user"): 9.0})
    only_a.settings["cases"] = ["a|per-user"]  # a run restricted with --only checks only what it selected
    assert suite.check(only_a, baseline)[["case", "ok"]].values.tolist() == [["a", False]]


@pytest.mark.slow
def test_check_command_exit_codes(tmp_path, capsys):
    """A baseline whose ratios are 100× smaller than anything measurable: --check exits 1 and names the
    paths; a missing or foreign baseline file, or a factor ≤ 1, exits 2 before anything runs."""
    planted = tmp_path / "fast.json"
    planted.write_text(json.dumps({"format": suite.BASELINE_FORMAT, "ratios": {"grr|per-user": 0.01}}))
    assert main([*_TINY, "--check", str(planted)]) == 1
    assert "SLOWER" in capsys.readouterr().out
    assert main(["bench", "--check", str(tmp_path / "none.json")]) == 2
    (tmp_path / "other.json").write_text("{}")
    assert main(["bench", "--check", str(tmp_path / "other.json")]) == 2
    assert main(["bench", "--check", "--factor", "1"]) == 2
    assert main(["bench", "--only", "no-such-case"]) == 2
    assert "--only no-such-case" in capsys.readouterr().err


def test_shipped_baseline_names_the_quick_subset():
    ratios = suite.load_baseline()["ratios"]
    assert set(ratios) == {f"{label}|{path}" for label, path in bench.QUICK}
    assert all(r > 0 for r in ratios.values())


@pytest.mark.slow
def test_check_gate_passes_on_this_machine(capsys):
    """The CI gate: the quick subset against the shipped baseline at the stated factor (3×, against a
    spread of ratios measured under load: docs/explanation/benchmarks.md)."""
    assert main(["bench", "--check"]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(floors.FLOORS))
def test_every_floor_runs(name):
    special = {"sketch-cells": lambda: ldpsim.make("cms", epsilon=1.0, k=4, m=16),
               "level-bits": lambda: TreeHistogram(1.0, 4, 3),
               "cell-shares": lambda: SecAggQuadtree(1.0, side=4, min_cohort=100)}
    mech = special[name]() if name in special else bench.CASES[0].make(40)
    sw = floors.FLOORS[name](mech, 500, 40, np.random.default_rng(0))
    assert sw.cpu >= 0 and sw.wall >= 0
    assert {c.floor for c in bench.CASES} - {None} <= set(floors.FLOORS)


def test_unregistered_or_rejected_case_is_skipped_with_a_note():
    missing = bench.BenchCase("nope", "no-such-mechanism", {"epsilon": 1.0})
    row = bench.bench_row(missing, 100, 10)
    assert row["status"] == "skip" and "not registered" in row["note"]
    bad = bench.BenchCase("grr bad", "grr", {"epsilon": -1.0})
    row = bench.bench_row(bad, 100, 10)
    assert row["status"] == "skip" and "'epsilon' parameter of GRR" in row["note"]


def _tiny(case: bench.BenchCase) -> bench.BenchCase:
    """The case with sketches shrunk (k ≤ 16, m ≤ 32) and EM bins ≤ 64, to keep the smoke test fast."""
    params = {k: min(v, 16 if k == "k" else 32) if k in ("k", "m") else v for k, v in case.params.items()}
    extra = {k: min(v, 64) for k, v in case.extra.items()}
    return dataclasses.replace(case, params=params, extra=extra)


#: trust cells whose calibration takes seconds (the cell itself takes milliseconds)
SLOW_CALIBRATION = ("shuffle", "secagg_local", "sample_threshold")
#: RAPPOR cases that take seconds (labels and paths)
SLOW_RAPPOR = {("rappor no-IRR d200", "direct"), ("rappor no-IRR d200", "per-user"),
               ("rappor k128 h2 c8 d200", "per-user")}


#: big-alphabet paths: the workload takes seconds to build and SFP's fragment search does not shrink with n
BIG_ALPHABET = ("discover-big", "gboard-round")


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow)
                                  if (c.path == "trust-cell" and c.name in SLOW_CALIBRATION) or c.path in BIG_ALPHABET
                                  or (c.label, c.path) in SLOW_RAPPOR else c
                                  for c in bench.CASES], ids=lambda c: f"{c.label}-{c.path}")
def test_every_case_runs_in_process(case):
    case = _tiny(case)
    reason = bench.skip_reason(case, 40)
    if reason is not None:
        pytest.skip(reason)
    sw, est = bench.RUNNERS[case.path](case, 500, 40, 0)
    assert sw.wall >= 0 and sw.cpu >= 0 and np.all(np.isfinite(est))
    if case.path.startswith("discover"):  # discovery: the F1 of the discovered top 20
        assert est.shape == (1,) and 0.0 <= est[0] <= 1.0
    elif case.path == "trust-cell":  # a comparison cell: its MSE and top-10 precision
        assert est.shape == (2,) and est[0] >= 0 and 0.0 <= est[1] <= 1.0
    elif case.path == "gboard-round":  # the prefixes the round keeps
        assert est.shape == (1,) and est[0] >= 0
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
    from ldpsim.scenarios.studies.bench import accuracy
    for label, name, params, d in accuracy.ROWS:
        small = {k: (min(v, 16) if k in ("num_bits", "pool_size") else v) for k, v in params.items()}
        row = accuracy.measure(name, small, min(d, 12) or 0, 400, 2)
        assert np.isfinite(row["mse"]) and row["theory"] > 0, label


# ---- discovery beside pure-ldp's heavy hitters (the peer itself needs its venv: faked here) ----------
def _tiny_discovery(case):
    return dataclasses.replace(case, n=2000, repeats=2)


def test_discovery_peer_rows_with_a_fake_peer(capsys):
    """The --peers discovery table's wiring: ours runs both paths per repeat, the peer's runs become F1
    and times, one row per case. The fake peer returns the true top 20 (F1 = 1) in 100 s."""
    from ldpsim.scenarios.studies.bench import discovery_peers as dp
    from ldpsim.scenarios import cmd_bench

    cases = [_tiny_discovery(c) for c in dp.select(["sfp", "pem", "treehist"])]
    assert {c.name for c in cases} == {"sfp", "pem", "treehist"} and dp.select(["grr"]) == []
    calls = []

    def fake_peer(jobs, workloads, repeats, seed, venv):
        calls.append((jobs, repeats))
        return [[{"seconds": 100.0, "words": list(w.items[:20]), "counts": [float(c) for c in w.counts[:20]]}] * r
                for w, r in zip(workloads, repeats)]

    rows = suite.discovery_peer_rows(cases, 0, None, run_peer=fake_peer)
    jobs, repeats = calls[0]
    assert [j["mech"] for j in jobs] == [c.name for c in cases] and repeats == [2, 2, 2]
    assert jobs[0]["alphabet"] == dp.AZ and jobs[0]["top_k"] == 20
    for case, row in zip(cases, rows):
        assert row["case"] == case.label and row["repeats"] == 2 and row["f1_peer"] == 1.0
        assert 0.0 <= row["f1_ours"] <= 1.0 and 0.0 <= row["f1_direct"] <= 1.0
        assert row["speedup"] == pytest.approx(100.0 / row["ours_user_s"])
        assert row["verdict"].startswith(("PASS", "FAIL")) and "F1" in row["verdict"]
    for row in rows:
        cmd_bench.print_row(row, cmd_bench.DISCOVERY_COLUMNS)
    assert capsys.readouterr().out.count("a–z L") >= 3


def test_paired_f1_sign_flip_is_exact():
    """Identical F1s: p = 1. Ten repeats all in our favour: only 2 of the 2^10 sign patterns reach the
    observed |mean|, so p = 2/1024 (< 0.01: "better"); a brute-force count agrees on a mixed case."""
    from ldpsim.scenarios.studies.bench.discovery_peers import paired_f1

    assert paired_f1([0.8] * 10, [0.8] * 10)["p"] == 1.0
    better = paired_f1(np.linspace(0.8, 0.9, 10), np.full(10, 0.5))
    assert better["p"] == pytest.approx(2 / 1024) and better["diff"] > 0
    d = np.array([0.1, -0.05, 0.2, 0.0, 0.15, -0.1])
    count = sum(abs(np.dot(s, np.abs(d))) >= abs(d.sum()) - 1e-12
                for s in np.array(np.meshgrid(*[[1, -1]] * 6)).reshape(6, -1).T)
    assert paired_f1(d, np.zeros(6))["p"] == pytest.approx(count / 64)


def test_peer_script_pads_and_indexes_words():
    """Words reach pure-ldp padded to L with '_' (ldpsim's ∅); the index of fixed-length strings is
    injective and below |Σ|^L, as pure-ldp's local-hashing oracles need."""
    from ldpsim.scenarios.studies.bench.peers_script import PAD, base_index, pad_words

    assert pad_words(["a", "the"], 4) == ["a___", "the_"]
    symbols = list("abc" + PAD)
    index = base_index(symbols)
    codes = [index("".join(t)) for t in itertools.product(symbols, repeat=3)]
    assert sorted(codes) == list(range(len(symbols) ** 3))


def test_peer_rows_compare_cpu_times_and_mses_with_a_fake_peer(monkeypatch):
    """The --peers frequency table's wiring: the peer's CPU seconds per 10⁶ users over our least CPU
    seconds per 10⁶, MSEs on the same counts, the target verdict. The fake peer answers with the truth
    in 10 s for 2000 users."""
    calls = []

    def fake_run_peers(jobs, counts, seed, venv, log):
        calls.append([j.label for j in jobs])
        return [{"seconds": 10.0, "n": int(counts.sum()), "frequencies": counts / counts.sum()} for _ in jobs]

    monkeypatch.setattr(peers, "run_peers", fake_run_peers)
    case = next(c for c in bench.CASES if (c.label, c.path) == ("she", "per-user"))
    ours = {"status": "ok", "n": 100_000, "cpu_min_s": 1.0, "s_per_1e6": 99.0}
    rows = suite.peer_rows({("she", "per-user"): ours}, {("she", "per-user"): case}, 2000, 2000, 20, 0, None,
                           log=lambda *a: None)
    assert calls == [["pure-ldp she ε1"]] and len(rows) == 1
    row = rows[0]
    assert row["peer_s_per_1e6"] == pytest.approx(10.0 * 1e6 / 2000) and row["ours_s_per_1e6"] == pytest.approx(10.0)
    assert row["speedup"] == pytest.approx(500.0) and row["target"] == "≥5×"
    assert row["mse_theirs"] == 0.0 and row["verdict"].startswith("FAIL: MSE differs")


def test_check_without_a_baseline_parses_to_the_shipped_one():
    """``--check`` alone means the shipped baseline: its constant is not a string, so the free-string check
    of user-given values (empty, blank, NUL) does not refuse it; an empty BASELINE given by the user is."""
    from ldpsim.scenarios.cli import build_parser

    assert build_parser("bench").parse_args(["bench", "--check"]).check is True
    assert build_parser("bench").parse_args(["bench", "--check", "b.json"]).check == "b.json"
    with pytest.raises(SystemExit):
        build_parser("bench").parse_args(["bench", "--check", ""])
