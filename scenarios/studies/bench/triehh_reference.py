"""ldpsim's TrieHH beside the reference implementation (google-research/federated ``triehh/``, on
TensorFlow Federated) on the same devices and parameters.

The reference runs in its own interpreter, never ldpsim's: ``LDPSIM_TRIEHH_PYTHON`` names a Python
with ``tensorflow-federated`` and ``tensorflow-text`` installed and ``LDPSIM_TRIEHH_TREE`` a checkout
of google-research/federated; without both, :func:`reference_setup` is None and the comparison is
skipped. The script run there is :mod:`ldpsim.scenarios.studies.bench.triehh_reference_script`.

Both sides: n devices holding the ``top`` most frequent a–z words of at most ``length`` letters in
wordfreq proportions, each device sampled with probability γ every round (Poisson), threshold θ;
the reference's trie cap (``max_num_prefixes``) is set far above what the workload fills. The
reference votes for the end mark in a round of its own, so it runs L + 1 rounds to ldpsim's L.
Per repeat: the words found ranked by the votes of the round that found them, F1 of the top
``top_k`` (:func:`~ldpsim.evaluation.discovery.scores.run_scores`) and the median wall seconds of a
round — ldpsim's per-device path (every device's vote drawn, then tallied) against the reference's
``iterative_process.next``. Verdict as :func:`~.discovery_peers.compare`: ≥ 20× faster at equal or
better F1 (exact paired sign-flip test).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldpsim.scenarios.studies.bench.discovery_peers import AZ, EQUAL_P, SPEEDUP_TARGET, paired_f1, repeat_seeds
from ldpsim.evaluation.discovery.scores import run_scores
from ldpsim.evaluation.workloads.slang import carried_words
from ldpsim.evaluation.workloads.types import Workload
from ldpsim.mechanisms.discovery.triehh import TrieHH

SCRIPT = Path(__file__).with_name("triehh_reference_script.py")
PYTHON_ENV, TREE_ENV = "LDPSIM_TRIEHH_PYTHON", "LDPSIM_TRIEHH_TREE"


@dataclass(frozen=True)
class ReferenceCase:
    """One comparison's devices and parameters (module docstring)."""

    n: int = 20_000
    top: int = 500
    length: int = 6
    gamma: float = 0.2
    theta: int = 15
    top_k: int = 20
    repeats: int = 5
    max_num_prefixes: int = 1024

    def workload(self) -> Workload:
        words, freqs = carried_words(AZ, self.length, self.top)
        return Workload.from_frequencies("words-az", np.array(words, dtype=object), np.asarray(freqs), self.n,
                                         {"length": self.length})


def reference_setup() -> tuple[str, str] | None:
    """(interpreter, checkout) from the environment, or None when either is missing."""
    python, tree = os.environ.get(PYTHON_ENV), os.environ.get(TREE_ENV)
    if not python or not tree or not Path(python).exists() or not (Path(tree) / "triehh").is_dir():
        return None
    return python, tree


def _f1(w: Workload, words, votes, top_k: int) -> float:
    order = np.argsort(-np.asarray(votes, float), kind="stable")
    ranked = [str(words[i]) for i in order]
    return run_scores(w.items, w.counts, ranked, np.full(len(ranked), np.nan), top_k)["f1"]


def run_ours(case: ReferenceCase, seed: int = 0) -> dict:
    """Per repeat: F1 and the wall seconds of a round of the per-device path (the run over its rounds)."""
    w = case.workload()
    protocol = TrieHH(gamma=case.gamma, theta=case.theta, length=case.length, alphabet=AZ)
    seconds, f1 = [], []
    for child in repeat_seeds(seed, case.repeats):
        values_rng, run_rng = (np.random.default_rng(s) for s in child.spawn(2))
        values = w.values(values_rng, as_ids=False)
        start = time.perf_counter()
        result = protocol.run(values=values, rng=run_rng)
        seconds.append((time.perf_counter() - start) / protocol.rounds)
        f1.append(_f1(w, result.words, result.votes, case.top_k))
    return {"seconds": np.array(seconds), "f1": np.array(f1)}


def run_reference(case: ReferenceCase, python: str, tree: str, seed: int = 0) -> dict:
    """The same per repeat from the reference, run by ``python`` on the checkout ``tree``."""
    w = case.workload()
    job = {"words": [str(x) for x in w.items], "counts": w.counts.tolist(), "gamma": case.gamma,
           "theta": case.theta, "rounds": case.length + 1, "max_num_prefixes": case.max_num_prefixes,
           "repeats": case.repeats, "seed": seed, "alphabet": AZ}
    with tempfile.TemporaryDirectory(prefix="ldpsim-triehh-ref-") as tmp:
        (Path(tmp) / "job.json").write_text(json.dumps(job))
        # its own session, ended whole afterwards: TensorFlow Federated's worker binaries outlive the script
        proc = subprocess.Popen([python, "-I", str(SCRIPT), tree, tmp, tmp], start_new_session=True)
        try:
            if proc.wait() != 0:
                raise subprocess.CalledProcessError(proc.returncode, proc.args)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        runs = json.loads((Path(tmp) / "results.json").read_text())["runs"]
    return {"seconds": np.array([np.median(r["round_seconds"]) for r in runs]),
            "f1": np.array([_f1(w, r["words"], r["votes"], case.top_k) for r in runs])}


def compare_reference(case: ReferenceCase = ReferenceCase(), seed: int = 0) -> dict | None:
    """One table row (F1 of each side, seconds per round, speed-up, paired test, verdict); None
    when the reference is not set up (:func:`reference_setup`)."""
    setup = reference_setup()
    if setup is None:
        return None
    ours, ref = run_ours(case, seed), run_reference(case, *setup, seed=seed)
    test = paired_f1(ours["f1"], ref["f1"])
    speedup = float(np.median(ref["seconds"]) / np.median(ours["seconds"]))
    f1_verdict = "equal F1" if test["p"] >= EQUAL_P else ("better F1" if test["diff"] > 0 else "worse F1")
    passed = speedup >= SPEEDUP_TARGET and f1_verdict != "worse F1"
    return {"n": case.n, "gamma": case.gamma, "theta": case.theta, "length": case.length,
            "repeats": case.repeats, "ref_s_per_round": float(np.median(ref["seconds"])),
            "ours_s_per_round": float(np.median(ours["seconds"])), "speedup": speedup,
            "f1_ref": float(ref["f1"].mean()), "f1_ours": float(ours["f1"].mean()), **test,
            "verdict": f"{'PASS' if passed else 'FAIL'} (≥{SPEEDUP_TARGET}×, F1 not worse): {f1_verdict}"}
