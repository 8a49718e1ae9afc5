"""Audit pure-ldp's clients (GRR, OUE, OLH, CMS, HCMS) black-box, in the peers' own venv.

The clients run in the benchmark's peers venv (:func:`ldpsim.scenarios.studies.bench.peers.ensure_venv`:
pure-ldp needs numpy < 2) through :mod:`.peers_audit_script`, which returns, per report, whether it
supports item 0 and item 1 (decided with the library's own hashes). Here the auditor
(:func:`.auditor.audit_reports`) turns those into Clopper–Pearson bounds over its four pre-registered
events; the claimed ε is the ε each client was built with.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ldpsim.evaluation.audit.auditor import audit_reports

SCRIPT = Path(__file__).with_name("peers_audit_script.py")
MECHS = ("grr", "oue", "olh", "cms", "hcms")


def audit_pure_ldp(epsilons=(1.0, 4.0), trials: int = 100_000, mechs=MECHS, d: int = 10, k: int = 64,
                   m: int = 256, seed: int = 0, confidence: float = 0.95, venv=None, log=print) -> list:
    """Audit pure-ldp 1.2.0's clients at each ε; returns one :class:`~.auditor.AuditResult` per client."""
    from ldpsim.scenarios.studies.bench.peers import ensure_venv

    python = ensure_venv(venv, log)
    jobs = [{"id": f"j{i}", "mech": mech, "epsilon": float(e), "d": d, "k": k, "m": m}
            for i, (mech, e) in enumerate((mech, e) for mech in mechs for e in epsilons)]
    with tempfile.TemporaryDirectory(prefix="ldpsim-peers-audit-") as tmp:
        tmp = Path(tmp)
        (tmp / "jobs.json").write_text(json.dumps({"seed": seed, "trials": int(trials), "jobs": jobs}))
        subprocess.run([str(python), "-I", str(SCRIPT), str(tmp), str(tmp)], check=True)
        with np.load(tmp / "supports.npz") as data:
            supports = {key: data[key] for key in data.files}
    out = []
    each = 1 - (1 - confidence) / len(jobs)  # Bonferroni over the battery: family-wise confidence
    for job in jobs:
        shape = f", k={k}, m={m}" if job["mech"] in ("cms", "hcms") else f", d={d}"
        out.append(audit_reports(supports[f"{job['id']}_x"], supports[f"{job['id']}_x_prime"], job["epsilon"],
                                 0, 1, None, each, f"pure-ldp {job['mech'].upper()}(ε={job['epsilon']:g}{shape})"))
    return out
