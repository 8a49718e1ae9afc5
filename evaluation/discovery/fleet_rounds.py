"""Interactive discovery on a deployment's own fleet: TrieHH rounds over the devices that are online
and donate a word each day — docs/math.md §10.4.

The deployment (``ldpsim run`` with a ``[use_case.words]`` table) decides, with its fleet model,
which devices are online, opted in and uploading on each day, and which word each of them donates
(``result.truth["word_donated"]``: days × words). :func:`fleet_word_rounds` lets those same
devices answer an interactive protocol instead of sending one-shot reports: each day's donors are
that day's online holders (one word per device: the use case's ``daily_limit`` must be 1), the server
runs ``rounds_per_day`` rounds a day (default: one pass of L rounds), and the result is scored as
the deployment's nightly discovery job is: when the slang word is first found (and stays found), its
estimated and true share, and F1 of the published list against the true top-k of the same devices.
The privacy row is per device over the run (θ the smallest threshold whose δ over all rounds of the
run, composed through their privacy-loss distribution, is ≤ ``delta`` — docs/math.md §10.9; central
(ε, δ) after the threshold).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.evaluation.discovery.days import equal_privacy_protocols, interactive_scores
from ldpsim.evaluation.discovery.scores import first_reaching
from ldpsim.mechanisms.discovery.words import WordCodec
from ldpsim.mechanisms.registry import INTERACTIVE
from ldpsim.runtime.errors import InputError


def fleet_word_rounds(cfg, result, name: str = "triehh", gamma: float = 0.05, epsilon_total: float = 4.0,
                      delta: float = 1e-9, rounds_per_day: int | None = None, rng=None) -> tuple[pd.DataFrame, dict]:
    """(one row per day: found, f1, slang_estimate, slang_true; summary dict) — module docstring.

    Parameters
    ----------
    cfg, result
        A deployment's config and :func:`~ldpsim.simulator.deployment.run` result, with a words use case.
    name : {"triehh", "triehh_pp", "ldp_trie", "gboard"}
    gamma, epsilon_total, delta
        Sampling rate per round; ε per device over the run; the largest δ allowed.
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
    words, slang = tuple(cfg.words), cfg.words[-1]
    codec = WordCodec.for_words(words)
    per_day = codec.length if rounds_per_day is None else rounds_per_day
    online = np.asarray(result.truth["word_donated"], dtype=np.int64)
    daily = online.sum(axis=1)
    cohort = max(2, int(daily[daily > 0].min())) if (daily > 0).any() else 2   # gboard: the smallest day's devices
    (proto, privacy), = equal_privacy_protocols(codec, epsilon_total, delta, cfg.n_days, per_day, gamma,
                                                names=(name,), cohort=cohort).values()
    table = pd.DataFrame(interactive_scores(proto, words, online, per_day, uc.top_k, slang, np.random.default_rng(rng)),
                         columns=["day", "found", "f1", "slang_estimate", "slang_true"])
    first = first_reaching(table["day"], table["found"].astype(float), level=1.0) if len(table) else None
    hit = table[table["day"] == first].iloc[0] if first is not None else None
    summary = {"words_interactive": name, "words_interactive_kind": privacy["kind"],
               "words_interactive_epsilon": privacy["epsilon"], "words_interactive_delta": privacy["delta"],
               "words_interactive_theta": proto.theta, "slang_first_day_found": first,
               "slang_days_after_start": None if first is None else first - cfg.slang_start_day,
               "slang_estimated_share": np.nan if hit is None else float(hit["slang_estimate"]),
               "slang_true_share": np.nan if hit is None else float(hit["slang_true"]),
               "words_f1_last_day": float(table["f1"].iloc[-1]) if len(table) else np.nan}
    return table, summary
