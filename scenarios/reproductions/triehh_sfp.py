"""TrieHH vs SFP: top-K F1 of discovered words against K, as in Zhu et al. (AISTATS 2020), Fig. 4
(docs/math.md §10.1, §7.4).

The paper's workload is one word per Sentiment140 user (each user's most frequent valid word); it
is not shipped here, so the population is the wordfreq English list (which mixes Twitter among its
sources) kept to the paper's word rule — lower case, at least 3 and at most ``length`` characters of
a–z and the apostrophe — as an exact population of ``n`` devices (largest remainder), one word each.

* **TrieHH** (:class:`~ldpsim.mechanisms.discovery.triehh.TrieHH`, direct path): θ and γ from the
  paper's closed form at the central (ε, δ) over L = ``length`` rounds
  (:func:`~ldpsim.mechanisms.discovery.threshold_privacy.paper_parameters`: θ = 15, γ = 0.022 at
  ε = 4, δ = 2.3e-12, L = 10), and ``TrieHH exact γ``: the largest γ whose *exact* δ (§10.2) is still
  the closed form's δ at that θ.
* **SFP** (:class:`~ldpsim.mechanisms.discovery.sfp.SFP`, direct path): the authors' comparison gives
  SFP the same central (ε, δ) through shuffling, i.e. the local ε₀ whose n shuffled reports are
  (ε, δ)-DP — here by Feldman–McMillan–Talwar's numerical bound
  (:func:`~ldpsim.evaluation.privacy.amplification.shuffle_delta`), tighter than the bound the
  authors' code uses, so SFP gets at least the ε₀ it had there. ``SFP ε-LDP`` runs SFP at local ε
  itself. SFP returns at most ``k_max`` of its best-estimated candidates, those whose count clears
  its invented-words bar (docs/math.md §10.10).

F1 as the paper computes it: recall@K = share of the true top-K words among *all* the words found;
precision = share of the found words that any device holds (TrieHH's are all held: its votes are
true prefixes); F1 = 2PR/(P + R). Mean ± se over ``repeats`` runs per (method, ε).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldpsim.evaluation.metrics import with_standard_error
from ldpsim.evaluation.privacy.amplification import shuffle_delta
from ldpsim.evaluation.legend import quiet_corner
from ldpsim.scenarios.studies.scenario.schema import Field
from ldpsim.evaluation.workloads.slang import carried_words
from ldpsim.evaluation.workloads.types import Workload
from ldpsim.mechanisms.discovery.sfp import SFP
from ldpsim.mechanisms.discovery.threshold_privacy import paper_parameters, run_privacy
from ldpsim.mechanisms.discovery.triehh import TrieHH
from ldpsim.scenarios.reproductions.sdldp import Kind, epsilons, new_figure, one_of_each, positive

ALPHABET = "abcdefghijklmnopqrstuvwxyz'"
METHODS = ("TrieHH", "TrieHH exact γ", "SFP shuffled", "SFP ε-LDP")


def paper_words(n: int, top: int, length: int) -> Workload:
    """``n`` devices over the ``top`` most frequent wordfreq English words of a–z and the apostrophe
    with at most ``length`` characters, less those under 3 characters (the paper's word rule), one
    word each, in rank order."""
    words, freqs = carried_words(ALPHABET, length, top)
    keep = np.array([len(w) >= 3 for w in words])
    return Workload.from_frequencies("paper-words", np.array(words, dtype=object)[keep], np.asarray(freqs)[keep], n,
                                     {"top": top, "length": length, "source": "wordfreq en"})


def shuffled_epsilon_report(epsilon: float, delta: float, n: int, tol: float = 1e-3) -> float:
    """The largest local ε₀ (within ``tol``, rounded down) whose ``n`` shuffled reports are (ε, δ)-DP
    by FMT21's numerical bound; ε itself when shuffling cannot raise it."""
    if n < 2 or shuffle_delta(epsilon, epsilon, n) > delta:
        return epsilon
    low, high = epsilon, max(epsilon, math.log(n)) + 1.0
    while high - low > tol:
        mid = (low + high) / 2
        low, high = (mid, high) if shuffle_delta(epsilon, mid, n) <= delta else (low, mid)
    return low


def exact_gamma(epsilon: float, theta: int, rounds: int, delta: float, tol: float = 1e-5) -> float:
    """The largest γ (within ``tol``, rounded down) whose exact δ over ``rounds`` rounds (§10.2) is ≤ δ."""
    low, high = 0.0, 1.0
    while high - low > tol:
        mid = (low + high) / 2
        low, high = (mid, high) if run_privacy(epsilon, mid, theta, rounds)["delta"] <= delta else (low, mid)
    return low


def paper_f1(found, top_words, held: set, ks) -> tuple[np.ndarray, np.ndarray, float]:
    """(F1, recall) at every K of ``ks`` and the precision, by the paper's definition (module docstring)."""
    found = set(map(str, found))
    precision = len(found & held) / len(found) if found else 0.0
    hits = np.cumsum([w in found for w in top_words[:max(ks)]])
    recall = np.array([hits[k - 1] / k for k in ks])
    total = precision + recall
    f1 = np.divide(2 * precision * recall, total, out=np.zeros_like(recall), where=total > 0)
    return f1, recall, precision


def _found(method: str, eps: float, config: dict, work: Workload, rng) -> list:
    length, n = config["length"], work.n
    items, counts = work.items.tolist(), work.counts
    if method.startswith("TrieHH"):
        paper = paper_parameters(eps, config["delta"], length)
        gamma = paper["gamma"] if method == "TrieHH" else exact_gamma(eps, paper["theta"], length, paper["delta"])
        protocol = TrieHH(gamma=gamma, theta=paper["theta"], length=length, alphabet=ALPHABET)
        return protocol.run(items=items, true_counts=counts, rng=rng).words.tolist()
    local = shuffled_epsilon_report(eps, config["delta"], n) if method == "SFP shuffled" else eps
    sfp = SFP(epsilon=local, length=length, alphabet=ALPHABET)
    return sfp.discover(sfp.sample_aggregate(counts, rng, items), top_k=config["k_max"]).words.tolist()


def compute(config: dict) -> pd.DataFrame:
    """One row per (method, ε, K): mean F1, recall and precision ± se over the repeats."""
    work = paper_words(config["n"], config["top"], config["length"])
    held, top_words = set(map(str, work.items)), [str(w) for w in work.items]
    ks = list(range(config["k_min"], min(config["k_max"], work.domain_size) + 1, config["k_step"]))
    cells = [(m, e) for m in config["methods"] for e in config["epsilon"]]
    seeds = np.random.SeedSequence(config["seed"]).spawn(len(cells))
    rows = []
    for (method, eps), seed in zip(cells, seeds):
        rng = np.random.default_rng(seed)
        runs = [paper_f1(_found(method, eps, config, work, rng), top_words, held, ks) for _ in range(config["repeats"])]
        f1 = np.stack([r[0] for r in runs])
        recall = np.stack([r[1] for r in runs])
        precision = np.array([r[2] for r in runs])
        p_mean, p_se = with_standard_error(precision)
        for j, k in enumerate(ks):
            mean, se = with_standard_error(f1[:, j])
            rows.append({"method": method, "epsilon": eps, "delta": config["delta"], "k": k, "f1": float(mean),
                         "se": float(se), "recall": float(recall[:, j].mean()), "precision": float(p_mean),
                         "precision_se": float(p_se), "n": work.n, "words": work.domain_size,
                         "repeats": config["repeats"]})
    return pd.DataFrame(rows)


def figure(table: pd.DataFrame, config: dict):
    """F1 against K, one panel per ε (line: mean; band: ± 2 se)."""
    eps_list = list(dict.fromkeys(table["epsilon"]))
    fig, axes = new_figure(len(eps_list), 5.2, 3.8)
    for ax, eps in zip(axes, eps_list):
        for j, (method, rows) in enumerate(table[table["epsilon"] == eps].groupby("method", sort=False)):
            ax.plot(rows["k"], rows["f1"], color=f"C{j}", lw=1, label=method)
            ax.fill_between(rows["k"], rows["f1"] - 2 * rows["se"], rows["f1"] + 2 * rows["se"], color=f"C{j}",
                            alpha=0.2, lw=0)
        ax.set(xlabel="K", ylabel="F1 (paper's definition)", ylim=(0, 1.02),
               title=f"central ε = {eps:g}, δ = {config['delta']:g}, n = {table['n'].iat[0]:,}")
        ax.legend(fontsize=7, loc=quiet_corner(ax))
    fig.suptitle(f"{config['title']}\nSFP shuffled: local ε₀ amplified to the same central (ε, δ)", fontsize=9)
    return fig


def summary(table: pd.DataFrame, config: dict) -> pd.DataFrame:
    """F1 per method and ε at a few K (the smallest, 50, 100 and the largest on the grid)."""
    ks = sorted(set(table["k"]))
    picks = sorted({ks[0], ks[-1], *(k for k in (50, 100) if k in ks)})
    wide = table[table["k"].isin(picks)].pivot_table(index=["method", "epsilon"], columns="k", values="f1", sort=False)
    wide.columns = [f"F1@K={k}" for k in wide.columns]
    wide["precision"] = table.groupby(["method", "epsilon"], sort=False)["precision"].first()
    return wide


def _check(config: dict):
    if config["k_min"] > config["k_max"]:
        return "k_min", f"must be at most k_max ({config['k_max']}); got {config['k_min']}"
    if config["length"] % 2:
        return "length", f"must be even (SFP's fragments are pairs of symbols); got {config['length']}"
    return None


KIND = Kind(
    spec={"epsilon": Field(list, check=epsilons),
          "delta": Field((int, float), 2.3e-12, lambda v: None if 0 < v < 1 else "must be in (0, 1)"),
          "length": Field(int, 10, lambda v: None if 4 <= v <= 12 else "must be in [4, 12]"),
          "n": Field(int, 1_000_000, positive), "top": Field(int, 20_000, positive),
          "repeats": Field(int, 5, positive), "k_min": Field(int, 10, positive), "k_max": Field(int, 300, positive),
          "k_step": Field(int, 10, positive),
          "methods": Field(list, list(METHODS), one_of_each(METHODS))},
    compute=compute, figure=figure, summary=summary, check=_check,
    doc="TrieHH vs SFP: top-K F1 against K at one central (ε, δ), Zhu et al. 2020 Fig. 4",
)
