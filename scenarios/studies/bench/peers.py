"""Peer libraries (pure-ldp 1.2.0, multi-freq-ldpy 0.2.5) in their own cached venv, driven by subprocess.

pure-ldp 1.2 needs numpy < 2, xxhash < 4 and the undeclared scikit-learn and statsmodels, so the
peers live in a separate virtual environment (default ``~/.cache/ldpsim/peers-venv``, created on
first use and recreated when broken — only when ldpsim created it: a venv ldpsim made holds the
marker file :data:`MARKER`; any other existing folder is refused, never deleted) and never constrain ldpsim's own dependencies. Data goes
through a temporary directory: true counts in (``counts.npy`` + ``jobs.json``), frequency
estimates and timings out (discovery jobs: words and counts in, discovered lists and timings out);
the script run there is :mod:`ldpsim.scenarios.studies.bench.peers_script`.

:func:`mse_comparison` states the statistical test used to call two MSEs equal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from ldpsim.runtime.user_cache import user_cache_dir

REQUIREMENTS = ("numpy<2", "xxhash<4", "scikit-learn", "statsmodels", "pure-ldp==1.2.0",
                "multi-freq-ldpy==0.2.5")
_PROBE = ("import numpy, pure_ldp.frequency_oracles, multi_freq_ldpy.pure_frequency_oracles.LH; "
          "assert int(numpy.__version__.split('.')[0]) < 2")
SCRIPT = Path(__file__).with_name("peers_script.py")
#: file ldpsim writes into a peers venv it created; only such a folder is ever deleted (to recreate it)
MARKER = "ldpsim-peers-venv"


def default_venv() -> Path:
    """``$XDG_CACHE_HOME/ldpsim/peers-venv`` (``~/.cache/ldpsim/peers-venv`` by default)."""
    return user_cache_dir("peers-venv")


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def venv_ok(venv: Path) -> bool:
    """True when ``venv`` has a working interpreter that imports both peers with numpy < 2."""
    try:
        return subprocess.run([str(_python(venv)), "-I", "-c", _PROBE], capture_output=True).returncode == 0
    except OSError:  # missing or not executable
        return False


def ensure_venv(venv: Path | None = None, log=print) -> Path:
    """Return the peers' interpreter, creating (or recreating a broken) venv first; logs each step."""
    venv = Path(venv or default_venv())
    if venv_ok(venv):
        log(f"peers: using cached venv {venv}")
        return _python(venv)
    if venv.is_symlink() or (venv.exists() and not venv.is_dir()):
        raise ValueError(f"--peers-venv {venv} is not a folder; ldpsim will not touch it: choose another path")
    if venv.exists() and any(venv.iterdir()):
        if not (venv / MARKER).is_file():
            raise ValueError(f"--peers-venv {venv} exists, is not empty and is not a peers venv ldpsim created "
                             f"(no {MARKER} file in it); ldpsim deletes only what it created: choose a new or "
                             "empty folder")
        log(f"peers: venv {venv} (created by ldpsim) is broken; recreating it")
        shutil.rmtree(venv)  # ours: it holds the marker written when ldpsim created it
    log(f"peers: creating venv {venv} (python -m venv)")
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    (venv / MARKER).write_text("created by ldpsim (scenarios/studies/bench/peers.py); safe to delete\n", encoding="utf-8")
    log(f"peers: pip install {' '.join(REQUIREMENTS)} (first use only; takes a minute)")
    pip = subprocess.run([str(_python(venv)), "-m", "pip", "install", "-q", *REQUIREMENTS],
                         capture_output=True, text=True)
    if pip.returncode:
        raise RuntimeError(f"pip install into {venv} failed:\n{pip.stderr[-2000:]}")
    if not venv_ok(venv):
        raise RuntimeError(f"peers venv {venv} was created but cannot import the peer libraries")
    return _python(venv)


@dataclass(frozen=True)
class PeerJob:
    """One peer run: ``lib`` in {"pure-ldp", "multi-freq-ldpy"}, ``mech`` in {cms, hcms, grr, oue, olh,
    rappor, hr, sue, she, the, blh, flh}; ``k``/``m`` are the sketch shape (CMS/HCMS), the hash count and
    Bloom bits (RAPPOR, ``m`` bits, ``k`` hashes, 8 cohorts) or the pool size ``k`` (FLH); ``d`` the
    number of items when it differs from the bench's (0: the bench's)."""

    lib: str
    mech: str
    epsilon: float
    k: int = 0
    m: int = 0
    d: int = 0

    @property
    def slow(self) -> bool:
        """Peers costing ~1 ms per user or more (D-long vectors, or D hashes per report on the server)."""
        return self.mech in ("oue", "olh", "sue", "she", "the", "blh")

    @property
    def label(self) -> str:
        shape = f" k{self.k}" + (f" m{self.m}" if self.m else "") if self.k else ""
        return f"{self.lib} {self.mech}{shape}{f' d{self.d}' if self.d else ''} ε{self.epsilon:g}"


def run_peers(jobs: list[PeerJob], counts, seed: int = 0, venv: Path | None = None, log=print) -> list[dict]:
    """Run ``jobs`` on the population with true ``counts`` in the peers venv.

    Returns, per job, ``{"seconds", "n", "frequencies"}``; the peer's progress is streamed to stderr.
    """
    python = ensure_venv(venv, log)
    with tempfile.TemporaryDirectory(prefix="ldpsim-peers-") as tmp:
        tmp = Path(tmp)
        np.save(tmp / "counts.npy", np.asarray(counts, dtype=np.int64))
        spec = {"seed": int(seed), "jobs": [{"id": f"j{i}", "lib": j.lib, "mech": j.mech, "epsilon": j.epsilon,
                                              "k": j.k, "m": j.m} for i, j in enumerate(jobs)]}
        (tmp / "jobs.json").write_text(json.dumps(spec))
        subprocess.run([str(python), "-I", str(SCRIPT), str(tmp), str(tmp)], check=True)
        results = json.loads((tmp / "results.json").read_text())
        with np.load(tmp / "estimates.npz") as est:
            return [{**results[f"j{i}"], "frequencies": est[f"j{i}"]} for i in range(len(jobs))]


def run_discovery_peers(jobs: list[dict], workloads: list, repeats: list[int], seed: int = 0,
                        venv: Path | None = None, log=print) -> list[list[dict]]:
    """Run pure-ldp's heavy-hitter ``jobs`` (:meth:`DiscoveryPeerCase.job
    <ldpsim.scenarios.studies.bench.discovery_peers.DiscoveryPeerCase.job>`) on the workloads' true counts.

    Returns, per job, one ``{"seconds", "words", "counts"}`` per repeat.
    """
    python = ensure_venv(venv, log)
    spec = {"seed": int(seed), "discovery": [
        {"id": f"d{i}", **job, "items": [str(x) for x in w.items], "counts": [int(c) for c in w.counts],
         "repeats": int(r)} for i, (job, w, r) in enumerate(zip(jobs, workloads, repeats))]}
    with tempfile.TemporaryDirectory(prefix="ldpsim-peers-") as tmp:
        tmp = Path(tmp)
        (tmp / "jobs.json").write_text(json.dumps(spec))
        subprocess.run([str(python), "-I", str(SCRIPT), str(tmp), str(tmp)], check=True)
        results = json.loads((tmp / "discovery.json").read_text())
    return [results[f"d{i}"] for i in range(len(jobs))]


def mse_comparison(ours, theirs, truth) -> dict:
    """Frequency-scale MSEs over the items and a paired z-test of "equal MSE".

    With per-item squared errors a_x (ours) and b_x (theirs) on the same true frequencies, equal
    expected MSE means E[Σ(a_x − b_x)] = 0. Items are treated as independent (exact for GRR/OUE/
    OLH up to the multinomial's weak negative correlation; approximate for sketches), so
    z = Σ(a_x − b_x)/√Σ(a_x − b_x)² is ≈ N(0, 1) under equality (a self-normalised sum: no theory
    needed, valid for biased and post-processed estimators alike). Two-sided p-value; the caller
    declares "equal" at p ≥ 0.01.
    """
    truth = np.asarray(truth, float)
    a = (np.asarray(ours, float) - truth) ** 2
    b = (np.asarray(theirs, float) - truth) ** 2
    diff = a - b
    scale = np.sqrt(np.sum(diff ** 2))
    z = float(np.sum(diff) / scale) if scale > 0 else 0.0
    return {"mse_ours": float(a.mean()), "mse_theirs": float(b.mean()), "z": z,
            "p": float(2 * stats.norm.sf(abs(z)))}
