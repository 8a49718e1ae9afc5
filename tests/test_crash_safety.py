"""``kill -9`` at random moments of ``ldpsim run``, ``ldpsim sweep`` and ``ldpsim poison`` (fake devices in
deployments, resumed from its journaled cells): never a folder that claims to be complete
and is not, and a rerun always converges to the uninterrupted result.

Each trial starts the command in its own process group, SIGKILLs the group after a random delay
(stratified over the uninterrupted run's duration: trial i of n in its i-th n-th, so kills land in
start-up, simulation, writing and finalizing), checks the folder (a manifest saying ``complete`` must
verify), sometimes kills a second rerun too, then reruns to the end and compares the results with an
uninterrupted run.

Run as a script for the numbers quoted in the README (``python -m tests.test_crash_safety 20``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.fleets import TINY
from tests.fleets import WORDS
from tests.fleets import SWEEP

RUN_TOML = TINY.replace("devices = 150", "devices = 400").replace("days = 2", "days = 4")
POISON_DEPLOYMENT = WORDS.replace("devices = 2000", "devices = 600")
POISON_TOML = """[poisoning_fleet]
scenario = "{path}"
use_case = "word"
word = "xqzw"
devices = 600
days = 2
seed = 5
fakes = [0, 40]
epsilon = [4.0]
defenses = ["none", "attestation 50%"]
"""
SWEEP_TOML = SWEEP.replace('path = "direct"', 'path = "reports"').replace("n = 2_000", "n = 200_000") \
    .replace("epsilon = [1.0, 2.0]", "epsilon = [0.5, 1.0, 2.0, 4.0]")


def _cmd(kind: str, scenario: Path, out: Path, workers: int = 1) -> list[str]:
    return [sys.executable, "-m", "ldpsim.scenarios.cli", kind, str(scenario), "--workers", str(workers), "-q",
            "--out", str(out)]


def _run(cmd, kill_after: float | None = None) -> int | None:
    """Run ``cmd``; with ``kill_after`` SIGKILL its process group then (None when it finished first)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        proc.wait(timeout=kill_after)
        return proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None
    finally:
        proc.stderr.close()


def _result(kind: str, out: Path) -> pd.DataFrame:
    if kind == "sweep":
        from ldpsim.scenarios.studies.sweep.store import read_results
        return read_results(out).drop(columns="elapsed_s")
    if kind == "poison":
        return pd.read_csv(out / "fakes.csv")
    return pd.read_parquet(out / "daily_estimates.parquet")


def trials(kind: str, n: int, root: Path, seed: int = 0, workers: int = 1) -> dict:
    """``n`` kill-and-rerun trials of ``kind`` ("run" or "sweep") on ``workers`` processes (> 1: a local Dask
    cluster, killed with its process group); returns the tallies."""

    from ldpsim.runtime.runfolder import read_manifest, verify_folder
    root.mkdir(parents=True, exist_ok=True)
    scenario = root / f"{kind}.toml"
    if kind == "poison":
        (root / "deployment.toml").write_text(POISON_DEPLOYMENT)
        scenario.write_text(POISON_TOML.format(path=(root / "deployment.toml").as_posix()))
    else:
        scenario.write_text(RUN_TOML if kind == "run" else SWEEP_TOML)
    start = time.perf_counter()
    assert _run(_cmd(kind, scenario, root / "reference", workers)) == 0
    full = time.perf_counter() - start
    reference = _result(kind, root / "reference")
    rng = np.random.default_rng(seed)
    tally = {"trials": n, "uninterrupted_s": round(full, 2), "killed": 0, "finished_before_kill": 0,
             "left_running": 0, "left_complete_and_verified": 0, "false_complete": 0, "second_kills": 0,
             "rerun_ok": 0, "rerun_equal": 0, "kill_times_s": []}
    for i in range(n):
        out = root / f"trial{i}"
        delay = float(rng.uniform(i, i + 1) / n * full)  # stratified: trial i kills in the i-th n-th of the run
        tally["kill_times_s"].append(round(delay, 2))
        code = _run(_cmd(kind, scenario, out, workers), kill_after=delay)
        tally["killed" if code is None else "finished_before_kill"] += 1
        manifest = read_manifest(out)
        if manifest is not None and manifest.get("status") == "complete":
            tally["left_complete_and_verified" if not verify_folder(out) else "false_complete"] += 1
        else:
            tally["left_running"] += 1
        if rng.random() < 0.3:  # kill the rerun as well, sometimes
            again = _run(_cmd(kind, scenario, out, workers), kill_after=float(rng.uniform(0, full)))
            tally["second_kills"] += again is None
            manifest = read_manifest(out)
            if manifest is not None and manifest.get("status") == "complete" and verify_folder(out):
                tally["false_complete"] += 1
        final = subprocess.run(_cmd(kind, scenario, out, workers), capture_output=True, text=True)
        if final.returncode != 0 or verify_folder(out):
            tally.setdefault("failures", []).append(f"exit {final.returncode}: {final.stderr[-300:]}")
        if final.returncode == 0 and not verify_folder(out):
            tally["rerun_ok"] += 1
            try:
                pd.testing.assert_frame_equal(_result(kind, out), reference)
                tally["rerun_equal"] += 1
            except AssertionError:
                pass
    return tally


#: trials per command in the test suite (the suite stays under 10 minutes); the script below runs 20 or more.
#: The kill times are stratified, so 5 trials put a kill in each fifth of the run (8 uniform ones left some
#: fifth without a kill with probability Σ_j (−1)^(j+1) C(5, j) (1 − j/5)⁸ ≈ 0.68)
TEST_TRIALS = 5


@pytest.mark.slow  # ~1 min: 5 trials of each command
@pytest.mark.parametrize("kind", ["run", "sweep", "poison"])
def test_kill_9_never_leaves_a_false_complete_folder_and_reruns_converge(tmp_path, kind):
    tally = trials(kind, TEST_TRIALS, tmp_path)
    assert tally["false_complete"] == 0, tally
    assert tally["rerun_ok"] == tally["rerun_equal"] == TEST_TRIALS, tally
    assert tally["killed"] >= TEST_TRIALS // 2, tally  # the kills did land mid-run


if __name__ == "__main__":
    import tempfile
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    n_workers = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    with tempfile.TemporaryDirectory(prefix="ldpsim-kill9-") as tmp:
        for kind in ("run", "sweep", "poison"):
            result = trials(kind, n, Path(tmp) / kind, seed=1, workers=n_workers)
            print(json.dumps({"kind": kind, "workers": n_workers, **result}), flush=True)
