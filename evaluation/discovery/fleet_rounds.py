"""Interactive discovery on a deployment's own fleet: rounds over the devices that answer each night —
docs/math.md §10.4 and §10.8.

A deployment decides, with its fleet model, which devices answer on each day and about which word
(``result.truth["word_donated"]``: days × words). With an interactive words use case
(``[use_case.words] mechanism = "triehh"``, …) those are the opted-in devices with a word that are
online that night, charged one day of rounds by their ledger (``simulator/device.py``); with a
one-shot use case (PEM, …) they are the day's donors. :func:`rounds_table` runs the protocol's rounds
over them — ``rounds_per_day`` a day, one after the other, each round's tally drawn exactly
(:func:`~ldpsim.simulator.discovery_rounds.interactive_passes`) — and scores each day's published
list as the nightly discovery job does: whether the slang word is in it, F1 against the true top-k of
the devices of the day the pass ended, the slang word's estimated and true share.

:func:`fleet_word_rounds` lets the donors of a run with a one-shot words use case answer an
interactive protocol after the run instead, set as the days comparison sets it
(:func:`~ldpsim.evaluation.discovery.equal_privacy.equal_privacy_protocols`: ε per device over the run; θ the
smallest threshold whose δ over all the run's rounds, composed through their privacy-loss distribution,
is ≤ ``delta`` — docs/math.md §10.9; Gboard's trie and the prefix tree central after secure aggregation
of the smallest day's devices).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.evaluation.discovery.equal_privacy import equal_privacy_protocols, interactive_scores
from ldpsim.evaluation.discovery.scores import first_reaching
from ldpsim.mechanisms.discovery.words import WordCodec
from ldpsim.mechanisms.registry import INTERACTIVE
from ldpsim.runtime.errors import InputError
from ldpsim.mechanisms.deltas import DELTA_RELEASE


def rounds_table(cfg, result, protocol, rounds_per_day: int, top_k: int, rng=None) -> pd.DataFrame:
    """One row per day from the first published pass: ``day``, ``answering`` (devices answering that
    day), ``slang_found``, ``f1``, ``slang_estimate``, ``slang_true`` (module docstring).

    Parameters
    ----------
    cfg, result
        A deployment's config (its ``words``, the slang word last) and run result.
    protocol, rounds_per_day
        The interactive protocol and its rounds a day (a deployment's: its use case's
        :func:`~ldpsim.mechanisms.discovery.run_budget.run_rounds` plan).
    top_k : int
        Length of the true top list F1 is scored against.
    rng : seed, SeedSequence or Generator
        Drives the rounds' tallies.
    """
    online = np.asarray(result.truth["word_donated"], dtype=np.int64)
    rows = interactive_scores(protocol, tuple(cfg.words), online, rounds_per_day, top_k, cfg.words[-1],
                              np.random.default_rng(rng))
    table = pd.DataFrame(rows, columns=["day", "found", "f1", "slang_estimate", "slang_true"])
    table.insert(1, "answering", online.sum(axis=1)[table["day"].to_numpy(dtype=int)])
    return table.rename(columns={"found": "slang_found"})


def first_found(table: pd.DataFrame) -> tuple[int | None, float, float]:
    """(the first day from which the slang word stays found, its estimated and true share that day)."""
    first = first_reaching(table["day"], table["slang_found"].astype(float), level=1.0) if len(table) else None
    if first is None:
        return None, np.nan, np.nan
    hit = table[table["day"] == first].iloc[0]
    return int(first), float(hit["slang_estimate"]), float(hit["slang_true"])


def fleet_word_rounds(cfg, result, name: str = "triehh", gamma: float = 0.05, epsilon_device: float = 4.0,
                      delta: float = DELTA_RELEASE, rounds_per_day: int | None = None, rng=None) -> tuple[pd.DataFrame, dict]:
    """(one row per day: found, f1, slang_estimate, slang_true; summary dict) — module docstring.

    Parameters
    ----------
    cfg, result
        A deployment's config and :func:`~ldpsim.simulator.deployment.run` result, with a words use case.
    name : str
        A key of :data:`~ldpsim.mechanisms.registry.INTERACTIVE`.
    gamma, epsilon_device, delta
        Sampling rate per round (threshold protocols); ε per device over the run; the largest δ allowed.
    rounds_per_day : int, optional
        Rounds a day (default L, one pass a day).
    rng : seed or Generator
        Drives the rounds' sampling.
    """
    uc = cfg.use_case("word")
    if uc is None:
        raise InputError("fleet_word_rounds: the deployment has no [use_case.words] table.")
    if uc.daily_limit != 1:
        raise InputError(f"fleet_word_rounds: use_case.words.daily_limit must be 1 (one word per device and "
                         f"day, one vote per round); got {uc.daily_limit}.")
    if name not in INTERACTIVE:
        raise InputError(f"fleet_word_rounds: 'name' must be one of {sorted(INTERACTIVE)}; got {name!r}.")
    codec = WordCodec.for_words(tuple(cfg.words))
    per_day = codec.length if rounds_per_day is None else rounds_per_day
    daily = np.asarray(result.truth["word_donated"], dtype=np.int64).sum(axis=1)
    cohort = max(2, int(daily[daily > 0].min())) if (daily > 0).any() else 2  # the smallest day's devices
    (proto, privacy), = equal_privacy_protocols(codec, epsilon_device, delta, cfg.n_days, per_day, gamma,
                                                names=(name,), cohort=cohort).values()
    table = rounds_table(cfg, result, proto, per_day, uc.top_k, rng)
    first, estimate, true = first_found(table)
    table = table.drop(columns="answering").rename(columns={"slang_found": "found"})
    summary = {"words_interactive": name, "words_interactive_kind": privacy["kind"],
               "words_interactive_epsilon": privacy["epsilon"], "words_interactive_delta": privacy["delta"],
               "words_interactive_theta": proto.theta, "slang_first_day_found": first,
               "slang_days_after_start": None if first is None else first - cfg.slang_start_day,
               "slang_estimated_share": estimate, "slang_true_share": true,
               "words_f1_last_day": float(table["f1"].iloc[-1]) if len(table) else np.nan}
    return table, summary
