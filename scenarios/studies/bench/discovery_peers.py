"""Discovery protocols (SFP, PEM, TreeHist) beside pure-ldp's, on a configuration both can run.

pure-ldp 1.2.0's heavy-hitter servers cannot run on ldpsim's words-slang workload (README, "Discovering
new words"): with their default oracles PEM and TreeHist allocate a dense array over all |Σ|^L strings
and SFP queries 256·|Σ|² fragments per position one Python call at a time. A :class:`DiscoveryPeerCase`
is the largest configuration where each runs in minutes: the top ``top`` lowercase a–z words of wordfreq
with at most ``length`` letters, n users, ε = 4, the top 20, and each library's parameters matched to
the other's (same alphabet and length; the same hash pool or sketch shape; PEM and TreeHist keep the
top-k prefixes per round like pure-ldp, SFP splits ε 50/50 like pure-ldp). The words go to pure-ldp
padded with ``_`` (in its alphabet) to exactly L symbols — ldpsim's ∅ padding.

Each case runs ``repeats`` times for each side; repeat r of both sides uses the same true counts and
child r of one ``SeedSequence``. Timed: ours per-user (``perturb`` + ``aggregate`` + ``discover``) and
direct (``sample_aggregate`` + ``discover``), in this process after one warm-up; pure-ldp's run from
building its server and clients to ``find_heavy_hitters``. Medians over the repeats are compared.
F1 of the top 20 is compared by :func:`paired_f1`.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from ldpsim.evaluation.discovery.scores import run_scores
from ldpsim.evaluation.workloads.slang import carried_words
from ldpsim.evaluation.workloads.types import Workload
from ldpsim.mechanisms import registry

AZ = "abcdefghijklmnopqrstuvwxyz"
#: the issue's target: ours at least this many times faster, at equal or better F1
SPEEDUP_TARGET = 20
#: "equal F1" when the paired test's p-value is at least this
EQUAL_P = 0.01


@dataclass(frozen=True)
class DiscoveryPeerCase:
    """Our protocol ``name`` (``params``, ``discover`` keyword arguments) against pure-ldp's with an
    oracle of ``k`` hashes (FLH pool for PEM; sketch rows for SFP, TreeHist) and ``m`` columns."""

    name: str
    params: dict
    discover: dict
    k: int
    m: int = 0
    epsilon: float = 4.0
    length: int = 4
    alphabet: str = AZ
    n: int = 100_000
    top: int = 2000
    top_k: int = 20
    repeats: int = 10
    note: str = field(default="", compare=False)

    @property
    def label(self) -> str:
        return f"{self.name} ε{self.epsilon:g} a–z L{self.length}"

    def make(self):
        return registry.make(self.name, epsilon=self.epsilon, length=self.length, alphabet=self.alphabet,
                             **self.params)

    def workload(self, n: int | None = None) -> Workload:
        """The ``top`` most frequent a–z words of ≤ ``length`` letters, in wordfreq proportions, n users."""
        words, freqs = carried_words(self.alphabet, self.length, self.top)
        return Workload.from_frequencies("words-az", np.array(words, dtype=object), np.asarray(freqs),
                                         n or self.n, {"length": self.length})

    def job(self) -> dict:
        """The pure-ldp run, as the peers script reads it."""
        return {"lib": "pure-ldp", "mech": self.name, "epsilon": self.epsilon, "k": self.k, "m": self.m,
                "length": self.length, "alphabet": self.alphabet, "top_k": self.top_k}


#: one line per protocol in ``ldpsim bench --peers`` (README, "Discovering new words")
DISCOVERY_PEER_CASES = [
    # L = 3: pure-ldp's FLH server builds a pool × |Σ|^ℓ hash table per group in Python (256 × 27³ = 5·10⁶
    # hashes); at L = 4 only a pool of 16 fits in minutes, and its collision bias caps both libraries' F1
    DiscoveryPeerCase("pem", {"start": 2, "pool": 256}, {"survivors": 20}, k=256, length=3),
    # pure-ldp's TreeHist: each user sends a random prefix and the word, each at ε/2, one CMS per part
    DiscoveryPeerCase("treehist", {"k": 128, "m": 1024}, {"threshold": 0.0, "survivors": 20}, k=128, m=1024),
    # sketch rows 16: pure-ldp's server makes one Python call per (fragment, row): 2·256·28² fragments
    DiscoveryPeerCase("sfp", {"word_share": 0.5, "hash_bits": 8, "word_k": 16, "word_m": 1024, "fragment_k": 16,
                              "fragment_m": 1024}, {}, k=16, m=1024),
]


def select(only: list[str] | None) -> list[DiscoveryPeerCase]:
    """Cases whose protocol name or label is in ``only`` (all when empty)."""
    if not only:
        return list(DISCOVERY_PEER_CASES)
    wanted = {w.lower() for w in only}
    return [c for c in DISCOVERY_PEER_CASES if c.name in wanted or c.label.lower() in wanted]


def repeat_seeds(seed: int, repeats: int) -> list[np.random.SeedSequence]:
    """Child r is repeat r of both sides (ours spawns its workload and run streams from it)."""
    return np.random.SeedSequence(seed).spawn(repeats)


def _f1(w: Workload, words, counts, top_k: int) -> float:
    return run_scores(w.items, w.counts, words, counts, top_k)["f1"]


def run_ours(case: DiscoveryPeerCase, seed: int = 0, n: int | None = None, repeats: int | None = None) -> dict:
    """Per repeat: seconds and F1 of our per-user and direct paths (after one untimed warm-up of each)."""
    mech, w = case.make(), case.workload(n)
    out = {"per-user": ([], []), "direct": ([], [])}
    seeds = repeat_seeds(seed, repeats or case.repeats)
    for r, child in enumerate([seeds[0], *seeds]):  # the first is the warm-up
        for path, (secs, f1s) in out.items():
            wl_rng, run_rng = (np.random.default_rng(s) for s in child.spawn(2))
            values = w.values(wl_rng, as_ids=False) if path == "per-user" else None
            t0 = time.perf_counter()
            agg = (mech.aggregate(mech.perturb(values, run_rng)) if path == "per-user"
                   else mech.sample_aggregate(w.counts, run_rng, w.items))
            res = mech.discover(agg, top_k=case.top_k, **case.discover)
            seconds = time.perf_counter() - t0
            if r:
                secs.append(seconds)
                f1s.append(_f1(w, res.words, res.counts, case.top_k))
    return {path: {"seconds": np.array(s), "f1": np.array(f)} for path, (s, f) in out.items()}


def peer_scores(case: DiscoveryPeerCase, runs: list[dict]) -> dict:
    """Seconds and F1 per repeat of the peer's runs (``{"seconds", "words", "counts"}`` each)."""
    w = case.workload()
    return {"seconds": np.array([r["seconds"] for r in runs]),
            "f1": np.array([_f1(w, r["words"], r["counts"], case.top_k) for r in runs])}


def paired_f1(ours, theirs) -> dict:
    """Exact paired sign-flip test of "equal F1" over repeats.

    With d_r = F1_ours,r − F1_peer,r from repeat r (same counts, independent runs), equal laws make each
    d_r symmetric about 0, so every one of the 2^R sign patterns of (|d_r|) is equally likely; the
    two-sided p-value is the share of patterns whose |mean| is at least the observed one (exact, no
    normal approximation; R ≤ 20). Returns mean difference, its standard error and p.
    """
    d = np.asarray(ours, float) - np.asarray(theirs, float)
    if d.size > 20:
        raise ValueError(f"paired_f1: at most 20 repeats (2^R sign patterns); got {d.size}.")
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
    observed = abs(d.mean())
    p = float(np.mean(np.abs(signs @ np.abs(d)) / d.size >= observed - 1e-12))
    se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")
    return {"diff": float(d.mean()), "se": se, "p": p}


def compare(case: DiscoveryPeerCase, ours: dict, peer: dict) -> dict:
    """One table row from :func:`run_ours` and the peer's per-repeat ``seconds`` and ``f1``."""
    peer_s = float(np.median(peer["seconds"]))
    user_s = float(np.median(ours["per-user"]["seconds"]))
    direct_s = float(np.median(ours["direct"]["seconds"]))
    test = paired_f1(ours["per-user"]["f1"], peer["f1"])
    speedup = peer_s / user_s
    if test["p"] >= EQUAL_P:
        f1_verdict = "equal F1"
    else:
        f1_verdict = "better F1" if test["diff"] > 0 else "worse F1"
    passed = speedup >= SPEEDUP_TARGET and f1_verdict != "worse F1"
    return {"case": case.label, "n": case.n, "repeats": len(peer["f1"]), "peer_s": peer_s, "ours_user_s": user_s,
            "ours_direct_s": direct_s, "speedup": speedup, "speedup_direct": peer_s / direct_s,
            "f1_peer": float(np.mean(peer["f1"])), "f1_ours": float(np.mean(ours["per-user"]["f1"])),
            "f1_direct": float(np.mean(ours["direct"]["f1"])), **test,
            "verdict": f"{'PASS' if passed else 'FAIL'} (≥{SPEEDUP_TARGET}×, F1 not worse): {f1_verdict}"}
