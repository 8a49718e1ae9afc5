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
from ldpsim.mechanisms.aggregation.tee import TeeDesign


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
