"""Discovery protocols at equal ε per device over the run, and the daily scores of an interactive one —
docs/math.md §10.4, §10.6, §10.9.

* :func:`equal_privacy_protocols`: each protocol set to the same ε per device over the run — TrieHH
  and TrieHH++ over the R rounds of the run with the smallest threshold θ whose δ at ε_total, composed
  through the rounds' privacy-loss distribution (docs/math.md §10.9), is at most ``delta`` (central
  (ε, δ) after the threshold; the basic composition's θ is shown beside it); LDPTrie at ε_total/R per
  round, pure ε-LDP; Gboard's trie (``gboard``) and the prefix tree (``prefix_tree``) at the ε₀ per round
  whose *central* ε per device over the run after secure aggregation is ε_total at ``delta`` (locally
  ε₀-LDP per round); the one-shot ones at ε_total/D per daily report (D days), pure ε-LDP, δ = 0.
  The ε are equal and the δ and kinds are shown; ``epsilon_pld`` is each one's ε over the run at
  δ = ``delta`` by the project's accountant (privacy-loss distributions of the per-step guarantees),
  tighter than the basic sum.
* :func:`interactive_scores`: each day's scores of the list an interactive protocol has published.

A measurement the discovery-days study (:mod:`ldpsim.scenarios.studies.discovery.days`) and a
deployment's nightly discovery job (:mod:`ldpsim.evaluation.discovery.fleet_rounds`) share.
"""

from __future__ import annotations

import numpy as np

from ldpsim.evaluation.discovery.scores import run_scores
from ldpsim.evaluation.privacy.composition import compose
from ldpsim.evaluation.privacy.secagg_rounds import epsilon_report_for, round_guarantees
from ldpsim.evaluation.privacy.threshold_composition import threshold_run
from ldpsim.mechanisms._validation import check_real
from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie
from ldpsim.mechanisms.discovery.ldp_trie import LDPTrie
from ldpsim.mechanisms.discovery.prefix_tree import PrefixTree
from ldpsim.mechanisms.discovery.words import WordCodec
from ldpsim.mechanisms.registry import INTERACTIVE, make
from ldpsim.simulator.discovery_rounds import interactive_passes

ONE_SHOT = ("sfp", "pem", "treehist")


def equal_privacy_protocols(codec: WordCodec, epsilon_device: float, delta: float, n_days: int,
                            rounds_per_day: int, gamma: float, names=(*INTERACTIVE, *ONE_SHOT),
                            one_shot_params: dict | None = None, cohort: int | None = None) -> dict[str, tuple]:
    """name → (protocol, privacy row) at equal ε per device over the run (module docstring); ``cohort``
    is the fewest devices a round of Gboard's trie or the prefix tree aggregates (:func:`round_cohort`)."""
    epsilon_device = check_real("equal_privacy_protocols", "epsilon_device", epsilon_device, 0.0, np.inf)
    rounds = n_days * rounds_per_day
    out = {}
    for name in names:
        if name in INTERACTIVE and issubclass(INTERACTIVE[name], (GboardTrie, PrefixTree)):
            proto, row = _under_secure_aggregation(name, codec, epsilon_device, delta, rounds, cohort)
            steps = None
        elif name in INTERACTIVE and issubclass(INTERACTIVE[name], LDPTrie):
            proto = make(name, epsilon=epsilon_device / rounds, length=codec.length, alphabet=codec.alphabet)
            row = {"kind": "pure ε-LDP", "guarantee": "pure ε-LDP, composed over the rounds", "epsilon": epsilon_device,
                   "delta": 0.0, "per_step": f"ε={epsilon_device / rounds:.3g}/round"}
            steps = [(epsilon_device / rounds, 0.0)] * rounds
        elif name in INTERACTIVE:
            probe = make(name, gamma=gamma, theta=1, length=codec.length, alphabet=codec.alphabet)
            run = threshold_run(probe, epsilon_device, delta, rounds)
            proto = make(name, gamma=gamma, theta=run["theta"], length=codec.length, alphabet=codec.alphabet)
            row = {"kind": "central (ε, δ)", "guarantee": "central (ε, δ) after the threshold, per device over the run",
                   "epsilon": epsilon_device, "delta": run["delta"], "epsilon_pld": run["epsilon_pld"],
                   "per_step": f"θ={run['theta']} (basic composition: θ={run['theta_basic']}), γ={gamma:g}"}
            steps = None  # composed exactly above (docs/math.md §10.9)
        elif name in ONE_SHOT:
            eps = epsilon_device / n_days
            proto = make(name, epsilon=eps, length=codec.length, alphabet=codec.alphabet,
                         **(one_shot_params or {}).get(name, {}))
            row = {"kind": "pure ε-LDP", "guarantee": "pure ε-LDP, composed over the daily reports", "epsilon": epsilon_device,
                   "delta": 0.0, "per_step": f"ε={eps:.3g}/daily report"}
            steps = [(eps, 0.0)] * n_days
        else:
            raise ValueError(f"equal_privacy_protocols: unknown protocol {name!r}; choose from "
                             f"{sorted((*INTERACTIVE, *ONE_SHOT))}.")
        if steps is not None:
            row["epsilon_pld"] = _pld_epsilon(steps, delta)
        out[name] = (proto, row)
    return out


def round_cohort(n_devices: int, p_online: float) -> int:
    """The cohort a day's rounds can count on: ⌊μ − 5σ⌋ of the online devices, Bin(n_devices, p_online)."""
    mu = n_devices * p_online
    return max(2, int(mu - 5 * np.sqrt(mu * (1 - p_online))))


def _under_secure_aggregation(name: str, codec: WordCodec, epsilon_device: float, delta: float, rounds: int,
                              cohort: int | None):
    """A trie of local reports summed by secure aggregation (Gboard's, the prefix tree) at the ε₀ per round
    whose central ε per device over the run, after aggregation of at least ``cohort`` reports a round, is
    ``epsilon_device`` at ``delta`` (docs/math.md §10.6)."""
    if cohort is None:
        raise ValueError(f"equal_privacy_protocols: {name!r} needs the 'cohort' of its rounds (round_cohort).")
    eps0 = epsilon_report_for(epsilon_device, delta, cohort, rounds)
    extra = {"min_cohort": cohort} if issubclass(INTERACTIVE[name], GboardTrie) else {}
    proto = make(name, epsilon=eps0, length=codec.length, alphabet=codec.alphabet, **extra)
    run = round_guarantees(proto, cohort, delta, rounds).set_index("scope").loc["run, central"]
    return proto, {"kind": "central (ε, δ) after secure aggregation",
                   "guarantee": f"central (ε, δ) per device over the run, secure aggregation of ≥ {cohort} "
                                f"reports a round; locally ε₀-LDP per round ({rounds * eps0:.3g} over the run)",
                   "epsilon": float(run["epsilon"]), "delta": delta, "epsilon_pld": float(run["epsilon"]),
                   "per_step": f"ε₀={eps0:.3g}/round (local)"}


def _pld_epsilon(steps, delta: float) -> float:
    """ε per device over the run at total ``delta`` by the project's accountant (privacy-loss
    distributions, :func:`~ldpsim.evaluation.privacy.composition.compose`); NaN if the steps' δ
    already exceed it."""
    try:
        return float(compose(steps, delta).epsilon)
    except ValueError:
        return float("nan")


def score_day(day, words, holders, found, counts, n, top_k, slang, expected_false) -> dict:
    """One day's scores of a published list (``found`` words with their ``counts`` of ``n`` reports)
    against the true ``holders`` of each word: found, F1 of the top-k, the slang word's estimated and true share,
    the list's ``invented`` words (in no device's vocabulary) beside the ``expected_false`` it states."""
    order = np.argsort(-holders, kind="stable")
    s = run_scores(np.asarray(words, dtype=object)[order], holders[order], found, counts, top_k, planted=slang)
    est = dict(zip(np.asarray(found).tolist(), (np.asarray(counts, float) / max(n, 1)).tolist()))
    typed = set(np.asarray(words, dtype=object).tolist())
    return {"day": day, "found": bool(s["found"]), "f1": s["f1"], "slang_estimate": est.get(slang, np.nan),
            "slang_true": holders[-1] / max(holders.sum(), 1),
            "invented": sum(w not in typed for w in np.asarray(found).tolist()), "expected_false": expected_false}


def interactive_scores(protocol, words, online: np.ndarray, rounds_per_day: int, top_k: int, slang, rng,
                       truth: np.ndarray | None = None) -> list[dict]:
    """Each day's scores of the list published by the latest completed pass (rows: day, found, f1,
    slang_estimate, slang_true, invented, expected_false, dropped), scored against ``truth`` (days × words,
    default ``online``: the devices answering) of the day that pass ended."""
    truth = online if truth is None else truth
    published = {p["day"]: p for p in interactive_passes(protocol, words, online, rounds_per_day, rng)}
    rows, last = [], None
    for day in range(online.shape[0]):
        last = published.get(day, last)
        if last is None:
            continue
        order = np.argsort(-last["votes"], kind="stable")  # most votes first, as one-shot lists
        rows.append(score_day(day, words, truth[last["day"]], last["words"][order], last["counts"][order],
                           last["online"], top_k, slang, last["expected_false"]) | {"dropped": last["dropped"]})
    return rows

