"""Run the peer libraries' frequency oracles on given true counts (executed INSIDE the peers venv).

Usage: ``python -I peers_script.py IN_DIR OUT_DIR``. ``IN_DIR/jobs.json`` holds
``{"seed": int, "jobs": [{"id", "lib", "mech", "epsilon", "k", "m"}, ...]}`` and ``IN_DIR/counts.npy``
the true count of each item id 0..D−1. Writes ``OUT_DIR/results.json`` (CPU seconds and n per job id)
and ``OUT_DIR/estimates.npz`` (frequency-scale estimates per job id). A ``jobs.json`` with a
``"discovery"`` list instead runs pure-ldp's heavy-hitter protocols (:func:`discovery_main`).

This file imports only the standard library, numpy and the peer libraries (pure-ldp 1.2.0,
multi-freq-ldpy 0.2.5), never ldpsim: the peers need numpy < 2. It uses their public APIs as their
documentation shows: one ``privatise`` / ``*_Client`` call per user, the server's ``aggregate`` or
``*_Aggregator_MI``, then ``estimate_all``. Their global random state is seeded from the job seed.
The timed section is client + aggregation + estimation of all D items (the workload's shuffled user
array is built before the clock starts, as in ldpsim's bench), in CPU seconds (``time.process_time``:
on a loaded machine wall time measures the load as much as the code) for the frequency oracles.
"""

import json
import random
import sys
import time
from pathlib import Path

import numpy as np


def _pure_ldp(job, values, d):
    import math
    from pure_ldp.frequency_oracles import (CMSClient, CMSServer, DEClient, DEServer, FastLHClient,
                                            FastLHServer, HadamardResponseClient, HadamardResponseServer,
                                            HEClient, HEServer, LHClient, LHServer, RAPPORClient,
                                            RAPPORServer, UEClient, UEServer)
    eps, mech = job["epsilon"], job["mech"]
    ident = dict(index_mapper=lambda x: x)  # ldpsim's item ids are already 0..D-1
    if mech == "rappor":  # pure-ldp's RAPPOR: permanent response only, f from ε_∞ = 2h·ln((1 − f/2)/(f/2))
        f = 2 / (1 + math.exp(eps / (2 * job["k"])))
        server = RAPPORServer(f, job["m"], job["k"], d, num_of_cohorts=8, **ident)
        client = RAPPORClient(f, job["m"], server.get_hash_funcs(), num_of_cohorts=8, **ident)
    elif mech == "hr":
        server = HadamardResponseServer(eps, d, **ident)
        client = HadamardResponseClient(eps, d, server.get_hash_funcs(), **ident)
    elif mech == "sue":
        server, client = UEServer(eps, d, use_oue=False, **ident), UEClient(eps, d, use_oue=False, **ident)
    elif mech in ("she", "the"):
        server, client = HEServer(eps, d, use_the=mech == "the", **ident), HEClient(eps, d, **ident)
    elif mech == "blh":
        server, client = LHServer(eps, d, g=2, use_olh=False, **ident), LHClient(eps, d, g=2, use_olh=False, **ident)
    elif mech == "flh":
        server = FastLHServer(eps, d, job["k"], use_olh=True, **ident)
        client = FastLHClient(eps, d, job["k"], use_olh=True, **ident)
    elif mech in ("cms", "hcms"):
        server = CMSServer(eps, job["k"], job["m"], is_hadamard=mech == "hcms")
        client = CMSClient(eps, server.get_hash_funcs(), job["m"], is_hadamard=mech == "hcms")
    elif mech == "grr":
        server, client = DEServer(eps, d, **ident), DEClient(eps, d, **ident)
    elif mech == "oue":
        server, client = UEServer(eps, d, use_oue=True, **ident), UEClient(eps, d, use_oue=True, **ident)
    elif mech == "olh":
        server, client = LHServer(eps, d, use_olh=True, **ident), LHClient(eps, d, use_olh=True, **ident)
    else:
        raise ValueError(f"pure-ldp has no job {mech!r}")
    t0 = time.process_time()
    for v in values:  # streamed: OUE reports are D-long vectors, too many to keep
        server.aggregate(client.privatise(v))
    est = np.asarray(server.estimate_all(range(d), suppress_warnings=True), dtype=float)
    return time.process_time() - t0, est / len(values)  # counts → frequencies


class _LazyReports:
    """The reports of every user, produced while the aggregator iterates (keeps memory O(D))."""

    def __init__(self, client, values):
        self.client, self.values = client, values

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return (self.client(v) for v in self.values)


def _multi_freq(job, values, d):
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, UE
    eps, mech = job["epsilon"], job["mech"]
    if mech == "grr":
        client = lambda v: GRR.GRR_Client(v, d, eps)  # noqa: E731
        aggregate = lambda reports: GRR.GRR_Aggregator_MI(reports, d, eps)  # noqa: E731
    elif mech == "oue":
        client = lambda v: UE.UE_Client(v, d, eps, True)  # noqa: E731
        aggregate = lambda reports: UE.UE_Aggregator_MI(reports, eps, True)  # noqa: E731
    elif mech == "olh":
        client = lambda v: LH.LH_Client(v, d, eps, True)  # noqa: E731
        aggregate = lambda reports: LH.LH_Aggregator_MI(reports, d, eps, True)  # noqa: E731
    elif mech == "sue":  # symmetric unary encoding = UE with optimal=False
        client = lambda v: UE.UE_Client(v, d, eps, False)  # noqa: E731
        aggregate = lambda reports: UE.UE_Aggregator_MI(reports, eps, False)  # noqa: E731
    elif mech == "blh":  # binary local hashing = LH with optimal=False
        client = lambda v: LH.LH_Client(v, d, eps, False)  # noqa: E731
        aggregate = lambda reports: LH.LH_Aggregator_MI(reports, d, eps, False)  # noqa: E731
    else:
        raise ValueError(f"multi-freq-ldpy has no job {mech!r}")
    client(0)  # numba compiles on first call: keep compilation out of the timing
    t0 = time.process_time()
    reports = _LazyReports(client, values) if mech in ("oue", "sue") else [client(v) for v in values]
    est = np.asarray(aggregate(reports), dtype=float)  # MI: clipped at 0 and renormalised
    return time.process_time() - t0, est


LIBS = {"pure-ldp": _pure_ldp, "multi-freq-ldpy": _multi_freq}

#: padding symbol of the discovery runs: in the alphabet, so every word is sent as exactly L symbols
PAD = "_"


def base_index(symbols):
    """Index mapper of fixed-length strings over ``symbols``: the base-|symbols| number they spell
    (distinct strings of one length map to distinct ints below |symbols|^length, as pure-ldp's
    local-hashing oracles need)."""
    digit = {c: i for i, c in enumerate(symbols)}
    base = len(symbols)

    def index(text):
        code = 0
        for c in text:
            code = code * base + digit[c]
        return code
    return index


def pad_words(values, length):
    """Each word padded on the right with :data:`PAD` to ``length`` symbols (ldpsim's ∅ padding)."""
    return [w + PAD * (length - len(w)) for w in values]


def _pure_ldp_discovery(job, values):
    """One pure-ldp heavy-hitter run (``job["mech"]`` in pem, treehist, sfp) on padded words: server and
    client built, every user privatised and aggregated, ``find_heavy_hitters(k=top_k)`` — all timed.
    Returns (seconds, words, estimated counts), at most ``top_k`` words, largest estimate first."""
    from pure_ldp.frequency_oracles import CMSClient, CMSServer, FastLHClient, FastLHServer
    from pure_ldp.heavy_hitters import PEMClient, PEMServer, SFPClient, SFPServer, TreeHistClient, TreeHistServer
    eps, length, top_k, mech = job["epsilon"], job["length"], job["top_k"], job["mech"]
    symbols = list(job["alphabet"] + PAD)
    padded = pad_words(values, length)
    t0 = time.perf_counter()
    if mech == "pem":  # FLH with a pool of k hashes (ldpsim's PEM); groups report prefixes of 2 .. L symbols
        index = base_index(symbols)
        server = PEMServer(eps, 1, length, 1, alphabet=symbols, index_mapper=index,
                           fo_server=FastLHServer(eps, 1, job["k"], use_olh=True))
        client = PEMClient(eps, 1, length, 1, alphabet=symbols, index_mapper=index,
                           fo_client=FastLHClient(eps, 1, job["k"], use_olh=True))
    else:  # count-mean sketches of k rows and m columns for the words and the fragments / prefixes
        cms = CMSServer(eps, job["k"], job["m"])
        cms_client = CMSClient(eps, cms.get_hash_funcs(), job["m"])
        if mech == "treehist":  # one symbol per level
            server = TreeHistServer(eps, length, 1, alphabet=symbols, fo_server=cms)
            client = TreeHistClient(eps, 1, length, alphabet=symbols, fo_client=cms_client)
        elif mech == "sfp":  # 2-symbol fragments, 256 word hashes (pure-ldp's fixed choice)
            server = SFPServer(eps, 2, length, alphabet=set(symbols), fo_server=cms)
            client = SFPClient(eps, 2, length, alphabet=set(symbols), fo_client=cms_client)
        else:
            raise ValueError(f"pure-ldp has no discovery job {mech!r}")
    for v in padded:
        server.aggregate(client.privatise(v))
    words, freqs = server.find_heavy_hitters(k=top_k)
    seconds = time.perf_counter() - t0
    order = sorted(range(len(words)), key=lambda i: -float(freqs[i]))[:top_k]  # SFP returns every candidate
    return seconds, [words[i].rstrip(PAD).rstrip("*") for i in order], [float(freqs[i]) for i in order]


def discovery_main(spec, out_dir):
    """Discovery jobs: ``spec["discovery"] = [{"id", "items", "counts", "repeats", **job}]``; repeat r
    draws its user order and seeds the peer's global generators from child r of ``SeedSequence(seed)``.
    Writes ``discovery.json``: per job id, per repeat, seconds, words and estimated counts."""
    results = {}
    for job in spec["discovery"]:
        items = np.array(job["items"], dtype=object)
        runs = []
        for r, seed in enumerate(np.random.SeedSequence(spec["seed"]).spawn(job["repeats"])):
            values = list(items[np.random.default_rng(seed).permutation(np.repeat(np.arange(items.size), job["counts"]))])
            state = seed.generate_state(2)
            random.seed(int(state[0]))
            np.random.seed(int(state[1]))
            print(f"  peer pure-ldp {job['mech']} n={len(values):,} repeat {r + 1}/{job['repeats']} ...",
                  file=sys.stderr, flush=True)
            seconds, words, counts = _pure_ldp_discovery(job, values)
            print(f"    {seconds:.2f} s", file=sys.stderr, flush=True)
            runs.append({"seconds": seconds, "words": words, "counts": counts})
        results[job["id"]] = runs
    (out_dir / "discovery.json").write_text(json.dumps(results))


def main(in_dir, out_dir):
    in_dir, out_dir = Path(in_dir), Path(out_dir)
    spec = json.loads((in_dir / "jobs.json").read_text())
    if "discovery" in spec:
        import warnings
        warnings.simplefilter("ignore")  # pure-ldp warns about small n on every estimate
        return discovery_main(spec, out_dir)
    counts = np.load(in_dir / "counts.npy")
    d = int(counts.size)
    seeds = np.random.SeedSequence(spec["seed"]).spawn(len(spec["jobs"]))
    results, estimates = {}, {}
    for job, seed in zip(spec["jobs"], seeds):
        rng = np.random.default_rng(seed)
        values = [int(v) for v in rng.permutation(np.repeat(np.arange(d), counts))]
        state = seed.generate_state(2)
        random.seed(int(state[0]))
        np.random.seed(int(state[1]))  # the peers draw from numpy's and Python's global generators
        print(f"  peer {job['lib']} {job['mech']} ε={job['epsilon']} n={len(values):,} ...",
              file=sys.stderr, flush=True)
        seconds, est = LIBS[job["lib"]](job, values, d)
        print(f"    {seconds:.2f} s", file=sys.stderr, flush=True)
        results[job["id"]] = {"seconds": seconds, "n": len(values)}
        estimates[job["id"]] = est
    np.savez(out_dir / "estimates.npz", **estimates)
    (out_dir / "results.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main(*sys.argv[1:3])
