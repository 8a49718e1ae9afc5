"""New words found by the confidential-aggregation (TEE) open-domain histogram, night by night —
docs/math.md §9.13.

Each night the online devices upload the word they type in the clear to the attested enclave; it counts
each word's holders (L0 = 1 word per device a night, L∞ = 1), adds the design's noise and publishes the
words whose noisy count reaches the threshold, ordered by that count. The published list holds no
invented word (a key nobody uploaded has no row); a word held by one device alone is published with
probability p₁ = :meth:`~ldpsim.mechanisms.aggregation.tee.TeeDesign.key_delta`, and the list states
the expected number of such words.
"""

from __future__ import annotations

import numpy as np

from ldpsim.evaluation.discovery.equal_privacy import score_day
from ldpsim.evaluation.discovery.scores import first_reaching
from ldpsim.mechanisms.aggregation.tee import TeeDesign
from ldpsim.simulator.discovery_rounds import online_holders


def tee_nightly_scores(design: TeeDesign, words, online: np.ndarray, top_k: int, slang, rng,
                       truth: np.ndarray | None = None) -> list[dict]:
    """Each night's scores (:func:`~ldpsim.evaluation.discovery.equal_privacy.score_day`) of the list the
    enclave publishes from that night's bounded counts ``online`` (days × words: online holders at
    L0 = L∞ = 1), scored against ``truth`` (days × words: the devices typing each word; default
    ``online``)."""
    words = np.asarray(words, dtype=object)
    online = np.asarray(online, dtype=np.int64)
    truth = online if truth is None else np.asarray(truth, dtype=np.int64)
    rows = []
    for day, holders in enumerate(truth):
        released = design.release_counts(online[day], rng)
        kept = np.flatnonzero(released > 0)
        order = kept[np.argsort(-released[kept], kind="stable")]
        single = float(np.sum(online[day] == 1)) * design.key_delta()  # words of one holder expected in the list
        rows.append(score_day(day, words, holders, words[order], released[order], int(holders.sum()), top_k,
                              slang, single) | {"dropped": 0, "released": int(kept.size)})
    return rows


def tee_days_to_discovery(design: TeeDesign, words, shares: np.ndarray, slang, start_day: int, n_devices: int,
                          p_online: float, top_k: int, seeds=(0,)) -> dict:
    """Median over ``seeds`` of the days from ``start_day`` until the slang word stays in the published
    top ``top_k`` (NaN if it never does), the share of seeds that find it, and the mean number of words
    released per night with the expected single-holder words among them."""
    days, rows = [], []
    for seed in seeds:
        fleet_ss, tee_ss = np.random.SeedSequence(int(seed)).spawn(2)
        online = online_holders(shares, n_devices, p_online, np.random.default_rng(fleet_ss))
        got = tee_nightly_scores(design, words, online, top_k, slang, np.random.default_rng(tee_ss))
        rows += got
        first = first_reaching(np.array([r["day"] for r in got]), np.array([r["found"] for r in got], float), 1.0)
        if first is not None:
            days.append(first - start_day)
    return {"days_to_discovery_median": float(np.median(days)) if days else np.nan,
            "found_share": len(days) / len(seeds), "released_mean": float(np.mean([r["released"] for r in rows])),
            "expected_single_holder": float(np.mean([r["expected_false"] for r in rows]))}
