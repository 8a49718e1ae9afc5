"""New words found by the confidential-aggregation (TEE) open-domain histogram, night by night —
docs/math.md §9.13.

Each night the online devices upload the words they type in the clear to the attested enclave; it bounds
each device (at most L0 distinct words a night, L∞ each: a
:class:`~ldpsim.mechanisms.bounding.ContributionBound`), counts, adds the design's noise and publishes the
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
from ldpsim.mechanisms.bounding import ContributionBound
from ldpsim.simulator.typed_nights import bounded_nights, typed_entries


def tee_nightly_scores(design: TeeDesign, words, online: np.ndarray, top_k: int, slang, rng,
                       truth: np.ndarray | None = None) -> list[dict]:
    """Each night's scores (:func:`~ldpsim.evaluation.discovery.equal_privacy.score_day`) of the list the
    enclave publishes from that night's bounded counts ``online`` (days × words: online holders at
    L0 = L∞ = 1), scored against ``truth`` (days × words: the devices typing each word; default
    ``online``). A listed word's share is its released count over the night's counted contributions."""
    words = np.asarray(words, dtype=object)
    online = np.asarray(online, dtype=np.int64)
    truth = online if truth is None else np.asarray(truth, dtype=np.int64)
    rows = []
    for day, holders in enumerate(truth):
        released = design.release_counts(online[day], rng)
        kept = np.flatnonzero(released > 0)
        order = kept[np.argsort(-released[kept], kind="stable")]
        single = float(np.sum(online[day] == 1)) * design.key_delta()  # words of one holder expected in the list
        rows.append(score_day(day, words, holders, words[order], released[order], int(online[day].sum()), top_k,
                              slang, single) | {"dropped": 0, "released": int(kept.size)})
    return rows


def tee_days_to_discovery(design: TeeDesign, words, shares: np.ndarray, slang, start_day: int, n_devices: int,
                          p_online: float, top_k: int, seeds=(0,), typed: int = 1,
                          bound: ContributionBound | None = None) -> dict:
    """Median over ``seeds`` of the days from ``start_day`` until the slang word stays in the published
    top ``top_k`` (NaN if it never does), the share of seeds that find it, the mean number of words
    released per night with the expected single-holder words among them, and the share of the typed
    (night, device, word) entries the bound drops.

    Each online device types ``typed`` words a night (:func:`~ldpsim.simulator.typed_nights.typed_entries`)
    and the enclave keeps ``bound`` of them (default: the design's L0 words, uniformly, L∞ each); the
    design must be calibrated for that bound (docs/math.md §8.8)."""
    bound = bound or ContributionBound(l0=design.max_keys, linf=design.max_per_key, sampler="uniform")
    days, rows, lost = [], [], []
    for seed in seeds:
        fleet_ss, bound_ss, tee_ss = np.random.SeedSequence(int(seed)).spawn(3)
        entries = typed_entries(shares, n_devices, p_online, typed, np.random.default_rng(fleet_ss))
        kept = bounded_nights(entries, len(words), bound, rng=np.random.default_rng(bound_ss))
        lost.append(kept.lost("contributions")["entries_lost"])
        got = tee_nightly_scores(design, words, kept.contributions, top_k, slang, np.random.default_rng(tee_ss),
                                 truth=kept.holders)
        rows += got
        first = first_reaching(np.array([r["day"] for r in got]), np.array([r["found"] for r in got], float), 1.0)
        if first is not None:
            days.append(first - start_day)
    return {"days_to_discovery_median": float(np.median(days)) if days else np.nan,
            "found_share": len(days) / len(seeds), "released_mean": float(np.mean([r["released"] for r in rows])),
            "expected_single_holder": float(np.mean([r["expected_false"] for r in rows])),
            "entries_lost": float(np.mean(lost))}
