"""Run the reference TrieHH (google-research/federated ``triehh/triehh_tff.py``) on given words (executed
INSIDE the TensorFlow Federated venv).

Usage: ``python -I triehh_reference_script.py TREE IN_DIR OUT_DIR``. ``TREE`` is a checkout of
google-research/federated (its ``triehh/`` and ``analytics/`` folders); this script puts it on
``sys.path`` and uses the reference's public ``build_triehh_process`` as its test does — one client
dataset per sampled device, ``iterative_process.next`` once per round. ``IN_DIR/job.json`` holds
``{"words": [...], "counts": [...], "gamma", "theta", "rounds", "max_num_prefixes", "repeats",
"seed", "alphabet"}``: device i holds one word; every round samples each device with probability
γ (the same Poisson sampling as ldpsim's TrieHH). Writes ``OUT_DIR/results.json``: per repeat the
discovered words and the wall seconds of each round (TensorFlow Federated computes in a worker process of
its own, which a CPU clock of this process would miss; the sampling of devices is
outside the clock).

This file imports only the standard library, numpy and the reference's own stack (TensorFlow,
TensorFlow Federated, TensorFlow Text), never ldpsim.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np


def main(tree: str, in_dir: str, out_dir: str) -> None:
    sys.path.insert(0, tree)
    import tensorflow as tf
    from triehh import triehh_tf, triehh_tff

    job = json.loads((Path(in_dir) / "job.json").read_text())
    holders = np.repeat(np.arange(len(job["words"])), job["counts"])
    words = np.array(job["words"], dtype=object)
    datasets = {}
    runs = []
    for repeat in range(job["repeats"]):
        rng = np.random.default_rng([job["seed"], repeat])
        process = triehh_tff.build_triehh_process(
            list(job["alphabet"]), num_sub_rounds=1, max_num_prefixes=job["max_num_prefixes"],
            threshold=job["theta"], max_user_contribution=1, default_terminator=triehh_tf.DEFAULT_TERMINATOR)
        state = process.initialize()
        seconds = []
        for _ in range(job["rounds"]):
            sampled = holders[rng.random(holders.size) < job["gamma"]]
            batch = []
            for w in sampled:
                if w not in datasets:
                    datasets[w] = tf.data.Dataset.from_tensor_slices([str(words[w])])
                batch.append(datasets[w])
            start = time.perf_counter()
            state, _ = process.next(state, batch)
            seconds.append(time.perf_counter() - start)
        found = [x.decode() for x in np.asarray(state.discovered_heavy_hitters).tolist()]
        votes = np.asarray(state.heavy_hitters_counts).tolist()
        runs.append({"words": found, "votes": votes, "round_seconds": seconds})
    (Path(out_dir) / "results.json").write_text(json.dumps({"runs": runs}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
