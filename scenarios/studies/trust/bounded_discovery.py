"""One discovery design on the fleet's typed words, each device bounded first, at ε per person over the run —
docs/math.md §8.7, §8.8, §10.4.

The single path both ``ldpsim discover --trust``
(:func:`~ldpsim.scenarios.studies.trust.word_discovery.compare_word_discovery`) and ``ldpsim trust --compare``
(:func:`bounded_days_to_discovery`) run: each online device types ``typed`` words a night
(:func:`~ldpsim.simulator.typed_nights.typed_entries`), a
:class:`~ldpsim.mechanisms.bounding.ContributionBound` keeps some of them
(:func:`~ldpsim.simulator.typed_nights.bounded_nights`), and the design, calibrated by
:func:`bounded_design` for the cells the bounds let a person touch
(:func:`~ldpsim.evaluation.privacy.levels.bounded_cells`), reads the matrix it can see:

* a local design (``ldp_trie``, ``pem``): one pure ε/C-LDP report per kept word a night (reads ``kept``);
* a design amplified by a shuffle or by secure aggregation (:func:`amplified_as`): its L0 kept words a
  round, each at the local ε₀ calibrated as the ``shuffle`` / ``secagg_local`` model over the fleet's
  :attr:`~.trust_fleet.Fleet.word_cohort` (reads ``kept``);
* a sample-and-threshold trie (``triehh``, ``triehh_pp``): one vote a night, one of the kept words
  uniformly (reads ``votes``);
* ``tee_histogram``: the enclave's bounded counts, calibrated over the person's C cells (reads
  ``contributions``).

Each trust model names the design its server side allows (``TrustModel.discovery``): pure LDP → PEM;
shuffle and secure aggregation → LDPTrie, amplified; two servers and trusted hardware with noise →
TrieHH++; sample-and-threshold hardware → TrieHH; confidential aggregation (TEE) → its open-domain
histogram (:mod:`~ldpsim.evaluation.discovery.tee_histogram`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from ldpsim.evaluation.discovery.equal_privacy import ONE_SHOT, equal_privacy_protocols, interactive_scores, score_day
from ldpsim.evaluation.discovery.scores import first_reaching
from ldpsim.evaluation.discovery.tee_histogram import tee_nightly_scores
from ldpsim.evaluation.privacy.levels import bounded_cells
from ldpsim.evaluation.privacy.trust_accounting import TrustModel, calibrate, run_epsilon
from ldpsim.evaluation.privacy.trust_models import DEFAULTS, TRUST_MODELS
from ldpsim.evaluation.workloads.vocabulary import Vocabulary
from ldpsim.mechanisms.aggregation.tee import calibrate_tee
from ldpsim.mechanisms.bounding import ContributionBound
from ldpsim.mechanisms.registry import make
from ldpsim.scenarios.studies.discovery.days import growing_slang
from ldpsim.scenarios.studies.trust.trust_fleet import BOUND, GAMMA, NEW_WORD, TYPED, Fleet
from ldpsim.simulator.discovery_rounds import nightly_one_shot
from ldpsim.simulator.typed_nights import bounded_nights, typed_entries

#: the published list's length in which the new word must stay (the F1 is scored on it too)
LIST = 20
#: the sample-and-threshold tries: a device votes once a round, so it keeps one bounded word a night
VOTING = ("triehh", "triehh_pp")
#: what :func:`bounded_days_to_discovery` measures of each design
MEASURES = ("epsilon_person", "epsilon_item", "delta", "found_share", "days_to_discovery", "slang_error",
            "entries_lost", "occurrences_lost")


def amplified_as(model: str, fleet: Fleet) -> TrustModel | None:
    """The trust model whose local ε₀ the discovery design of trust model ``model`` runs at (its reports
    amplified as that model's, :attr:`~.trust_fleet.Fleet.word_cohort` devices a round), or None: the
    design has its own accounting."""
    return TRUST_MODELS[model].starting().discovery_local(fleet.word_cohort)


def bounded_design(name: str, model: str, epsilon: float, fleet: Fleet, delta: float, codec,
                   bound: ContributionBound = BOUND, per_run: ContributionBound | None = None):
    """(protocol, privacy row, matrix it reads) of discovery design ``name`` under trust model ``model`` at
    ``epsilon`` per person over ``fleet.days`` nights, every device bounded by ``bound`` a night (and
    ``per_run``); the row holds ``epsilon``, ``delta``, ``epsilon_item`` and ``epsilon_person`` by the
    design's accountant over the cells of :func:`~ldpsim.evaluation.privacy.levels.bounded_cells`
    (module docstring; docs/math.md §8.8)."""
    days = fleet.days
    item, person = bounded_cells(days, bound, per_run)
    if name == "tee_histogram":
        tee = calibrate_tee(DEFAULTS[model].tee.noise, epsilon, delta, person, 1, bound.linf, replace=True)
        tee = replace(tee, max_keys=bound.l0)       # calibrated over the person's C cells, released a night at L0
        return tee, {"epsilon": tee.epsilon(person, delta, keys=1, replace=True), "delta": delta,
                     "epsilon_item": tee.epsilon(item, delta, keys=1, replace=True),
                     "epsilon_person": tee.epsilon(person, delta, keys=1, replace=True)}, "contributions"
    if name in VOTING:                              # one vote a night: the run's ε is the person's and the word's
        proto, row = equal_privacy_protocols(codec, epsilon, delta, days, 1, GAMMA, (name,))[name]
        return proto, row | {"epsilon_item": row["epsilon"], "epsilon_person": row["epsilon"]}, "votes"
    amplified = amplified_as(model, fleet)
    if amplified is not None:                       # L0 local reports a round, amplified
        local = calibrate(amplified, epsilon, fleet.word_cohort, days, delta, bound.l0)
        proto = make(TRUST_MODELS[model].discovery, epsilon=local.epsilon_report, length=codec.length,
                     alphabet=codec.alphabet)
        return proto, {"epsilon": epsilon, "delta": delta, "model": local,
                       "epsilon_item": run_epsilon(local, fleet.word_cohort, days, delta),
                       "epsilon_person": run_epsilon(local, fleet.word_cohort, days, delta, bound.l0)}, "kept"
    proto, row = equal_privacy_protocols(codec, epsilon, delta, person, 1, GAMMA, (name,))[name]  # one report a cell
    return proto, row | {"epsilon_item": item * proto.epsilon, "epsilon_person": person * proto.epsilon}, "kept"


def bounded_scores(name: str, protocol, slang, nights, read: str, rng) -> list[dict]:
    """Each night's scores (:func:`~ldpsim.evaluation.discovery.equal_privacy.score_day` rows) of design
    ``name`` reading the matrix ``read`` of the bounded ``nights``
    (:class:`~ldpsim.simulator.typed_nights.BoundedNights`), scored against the devices typing each word
    (a one-shot design: typing it so far)."""
    counts = getattr(nights, read)
    if name == "tee_histogram":
        return tee_nightly_scores(protocol, slang.words, counts, LIST, slang.slang, rng, truth=nights.holders)
    if name not in ONE_SHOT:
        return interactive_scores(protocol, slang.words, counts, 1, LIST, slang.slang, rng, truth=nights.holders)
    so_far = nights.holders.cumsum(axis=0)
    return [score_day(n["day"], slang.words, so_far[n["day"]], n["words"], n["counts"], n["reports"], LIST,
                      slang.slang, n["expected_false"]) for n in nightly_one_shot(protocol, slang.words, counts, LIST, rng)]


def found_days(nights, start_day: int, seeds: int) -> tuple[float, float]:
    """(share of seeds whose list keeps the new word, median days from its first day until it stays listed;
    NaN: never) of one design's nightly rows (``seed``, ``day``, ``found``; none when no pass ends within the run)."""
    if nights.empty:
        return 0.0, math.nan
    firsts = [first_reaching(s["day"], s["found"].astype(float), level=1.0) for _, s in nights.groupby("seed")]
    hit = [f - start_day for f in firsts if f is not None]
    return len(hit) / seeds, float(np.median(hit)) if hit else math.nan


def slang_error(nights) -> float:
    """Mean |estimated − true share| of the new word over the nights its list holds it (NaN: never listed with
    an estimate), from one design's nightly rows (``found``, ``slang_estimate``, ``slang_true``; maybe none)."""
    if nights.empty:
        return math.nan
    listed = nights[nights["found"].astype(bool) & nights["slang_estimate"].notna()]
    return float((listed["slang_estimate"] - listed["slang_true"]).abs().mean()) if len(listed) else math.nan


def typed_and_bounded(slang, fleet: Fleet, typed: int, bound, per_run, seed: int, streams: int):
    """(the seed's bounded nights, ``streams`` further child streams): one draw of the fleet's typing,
    bounded — every design of a seed sees the same draw."""
    typed_ss, bound_ss, *design_ss = np.random.SeedSequence(seed).spawn(2 + streams)
    entries = typed_entries(slang.shares, fleet.word_devices, fleet.p_online, typed, np.random.default_rng(typed_ss))
    return bounded_nights(entries, len(slang.words), bound, per_run, np.random.default_rng(bound_ss)), design_ss


def bounded_days_to_discovery(models, epsilon: float, fleet: Fleet, delta: float, seeds=(0,), typed: int = TYPED,
                              bound: ContributionBound = BOUND) -> dict:
    """model → {discovery, epsilon_person, epsilon_item, delta, found_share, days_to_discovery, slang_error,
    entries_lost, occurrences_lost}: each model's discovery design (``TrustModel.discovery``) on the fleet's
    typed words, ``typed`` a device a night bounded by ``bound``, at ``epsilon`` per person over the run
    (module docstring): its ε per person and per word at its δ (:func:`bounded_design`), the share of
    ``seeds`` that find the new word and the median days until they do (NaN: never), the error of its share
    while listed (:func:`slang_error`), and what the bound drops. NaN but the design where the fleet has no
    words."""
    if fleet.words is None:
        return {m: {"discovery": TRUST_MODELS[m].discovery, **dict.fromkeys(MEASURES, math.nan)} for m in models}
    slang = growing_slang(Vocabulary(fleet.words, fleet.word_shares, "share"), NEW_WORD, n_days=fleet.days,
                          start_day=fleet.slang_start_day, peak_share=fleet.slang_share, ramp_days=1, top=None)
    keys = {m: (TRUST_MODELS[m].discovery, getattr(amplified_as(m, fleet), "kind", None)) for m in models}
    designs = {k: bounded_design(k[0], m, epsilon, fleet, delta, slang.codec, bound) for m, k in keys.items()}
    rows, lost = {k: [] for k in designs}, {k: [] for k in designs}
    for seed in seeds:
        nights, streams = typed_and_bounded(slang, fleet, typed, bound, None, seed, len(designs))
        for (key, (proto, _, read)), ss in zip(designs.items(), streams):
            lost[key].append(nights.lost(read))
            rows[key] += [{"seed": seed, **r} for r in bounded_scores(key[0], proto, slang, nights, read,
                                                                      np.random.default_rng(ss))]
    out = {}
    for m, key in keys.items():
        scored = pd.DataFrame(rows[key])
        share, median = found_days(scored, slang.start_day, len(seeds))
        error = slang_error(scored)
        privacy = designs[key][1]
        out[m] = {"discovery": key[0], "epsilon_person": float(privacy["epsilon_person"]),
                  "epsilon_item": float(privacy["epsilon_item"]), "delta": float(privacy["delta"]),
                  "found_share": share, "days_to_discovery": median, "slang_error": error,
                  **pd.DataFrame(lost[key]).mean().to_dict()}
    return out
