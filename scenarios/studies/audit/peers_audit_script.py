"""Run pure-ldp's clients for the auditor (executed INSIDE the peers venv; imports no ldpsim).

Usage: ``python -I peers_audit_script.py IN_DIR OUT_DIR``. ``IN_DIR/jobs.json`` holds
``{"seed": int, "trials": int, "jobs": [{"id", "mech", "epsilon", "d", "k", "m"}, ...]}``. For every job
the library's own client privatises input 0 and input 1 ``trials`` times each, one ``privatise`` call per
report (the library's public API), and the script records, per report, whether it supports item 0 and
item 1, decided with the library's own hash functions and encodings (GRR: the reported value; OUE: the
bit; OLH: xxh32(str(item), seed) % g == y, as its server does; CMS: the sketch coordinate h_j(item) is +1;
HCMS: the bit equals the Hadamard entry of h_j(item)). Writes ``OUT_DIR/supports.npz``: for job id J,
``J_x`` and ``J_x_prime``, uint8 arrays of shape (trials, 2).
"""

import json
import random
import sys
from pathlib import Path

import numpy as np


def _client_and_support(job):
    from pure_ldp.frequency_oracles import CMSClient, CMSServer, DEClient, LHClient, UEClient

    eps, mech, d = job["epsilon"], job["mech"], job["d"]
    ident = dict(index_mapper=lambda x: x)
    if mech == "grr":
        return DEClient(eps, d, **ident), lambda r, item: r == item
    if mech == "oue":
        return UEClient(eps, d, use_oue=True, **ident), lambda r, item: r[item] == 1
    if mech == "olh":
        import xxhash
        client = LHClient(eps, d, use_olh=True, **ident)
        return client, lambda r, item: xxhash.xxh32(str(item), seed=r[1]).intdigest() % client.g == r[0]
    if mech in ("cms", "hcms"):
        hadamard = mech == "hcms"
        server = CMSServer(eps, job["k"], job["m"], is_hadamard=hadamard)
        funcs = server.get_hash_funcs()
        client = CMSClient(eps, funcs, job["m"], is_hadamard=hadamard)
        if hadamard:
            return client, lambda r, item: r[0] == client.had[r[2], funcs[r[1]](str(item))]
        return client, lambda r, item: r[0][funcs[r[1]](str(item))] == 1
    raise ValueError(f"no pure-ldp audit job {mech!r}")


def main(in_dir, out_dir):
    spec = json.loads((Path(in_dir) / "jobs.json").read_text())
    random.seed(spec["seed"])
    np.random.seed(spec["seed"] % 2**32)
    out = {}
    for job in spec["jobs"]:
        client, support = _client_and_support(job)
        for name, value in (("x", 0), ("x_prime", 1)):
            rows = np.zeros((spec["trials"], 2), dtype=np.uint8)
            for t in range(spec["trials"]):
                r = client.privatise(value)
                rows[t] = support(r, 0), support(r, 1)
            out[f"{job['id']}_{name}"] = rows
        print(f"peers audit: {job['id']} {job['mech']} eps={job['epsilon']} done", file=sys.stderr, flush=True)
    np.savez(Path(out_dir) / "supports.npz", **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
