"""Fake users' reports for the three attacks of Cao, Jia, Gong (USENIX Security 2021) — docs/math.md §7.5.

* RPA (random perturbed-value attack): a report drawn uniformly from the oracle's report space;
* RIA (random item attack): the honest client run on a target drawn uniformly from T;
* MGA (maximal gain attack): the report that supports every target (see :mod:`.gains` for each oracle).

:func:`fake_reports` builds the reports in each oracle's own format (what a fake device would upload);
:func:`fake_aggregate` gives their aggregate, drawn directly from its exact law where it is known
(RIA: the oracle's direct sampler for the fake population; GRR's RPA/MGA: a multinomial; OUE's RPA:
binomial bit counts) and from the reports otherwise.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ldpsim.evaluation.poisoning.gains import check_attack, check_oracle
from ldpsim.mechanisms import CMS, GRR, HCMS, OLH, OUE, Aggregate, CMSReports, HCMSReports, OLHReports
from ldpsim.mechanisms._validation import as_generator, check_int
from ldpsim.mechanisms.bitsampling import bernoulli_words

#: seeds tried per pooled seed when OLH's MGA looks for a hash that sends every target to one value
OLH_SEED_TRIES = 1 << 15


def _ria_values(targets, m: int, rng) -> np.ndarray:
    arr = np.empty(len(targets), dtype=object)
    arr[:] = list(targets)
    picks = arr[rng.integers(0, len(targets), size=m)]
    return picks if any(isinstance(t, str) for t in targets) else picks.astype(np.int64)


def _olh_mga(mech: OLH, targets, m: int, rng) -> OLHReports:
    """Each fake user sends one of the attacker's precomputed (seed, y) pairs (:func:`olh_seed_pool`)."""
    seeds, ys, _ = olh_seed_pool(mech, tuple(int(t) for t in targets))
    which = rng.integers(0, seeds.size, size=m)
    return OLHReports(seeds[which], ys[which])


@lru_cache(maxsize=64)
def olh_seed_pool(mech: OLH, targets: tuple, size: int = 64):
    """The attacker's pool of ``size`` seeds, each the best of up to OLH_SEED_TRIES random tries at hashing
    every target to one value (computed once, from a generator seeded by the targets).

    Returns (seeds, values y, number of targets each supports): all r when a full collision was found
    (about g^(r−1) tries are needed; the gain formula assumes it).
    """
    rng = np.random.default_rng([mech.g, *targets])
    t = np.asarray(targets, dtype=np.int64)
    best_seed = rng.integers(0, 1 << 32, size=size, dtype=np.uint32)
    best_y = np.zeros(size, dtype=np.int64)
    best_n = np.zeros(size, dtype=np.int64)
    tried = 0
    while tried < OLH_SEED_TRIES and (best_n < t.size).any():
        cand = rng.integers(0, 1 << 32, size=(size, 32), dtype=np.uint32)
        h = mech.hash_items(cand[:, :, None], t[None, None, :]).astype(np.int64)  # size × 32 × r
        support = (h[..., :, None] == h[..., None, :]).sum(axis=-1)   # targets sharing each target's value
        n_best = support.max(axis=-1)
        pick = n_best.argmax(axis=1)
        rows = np.arange(size)
        better = n_best[rows, pick] > best_n
        best_seed[better] = cand[rows, pick][better]
        best_y[better] = h[rows, pick, support[rows, pick].argmax(axis=-1)][better]
        best_n[better] = n_best[rows, pick][better]
        tried += 32
    return best_seed, best_y, best_n


def _oue_mga(mech: OUE, targets, m: int, rng) -> np.ndarray:
    """Target bits set; random other bits so that each report has ⌊p + (D−1)q⌉ ones like a genuine one."""
    d = mech.domain_size
    bits = np.zeros((m, d), dtype=bool)
    t = np.asarray(targets, dtype=np.int64)
    bits[:, t] = True
    others = np.setdiff1d(np.arange(d), t)
    extra = max(0, int(round(mech.p + (d - 1) * mech.q)) - t.size)
    if extra and others.size:
        keys = rng.random((m, others.size))
        chosen = np.argpartition(keys, min(extra, others.size) - 1, axis=1)[:, :extra]
        bits[np.arange(m)[:, None], others[chosen]] = True
    return np.packbits(bits, axis=1)


def fake_reports(mech, attack: str, targets, m: int, rng=None):
    """Reports of ``m`` fake users running ``attack`` for ``targets``, in ``mech``'s report format."""
    check_oracle(mech)
    check_attack(attack)
    m = check_int("fake_reports", "m", m, low=0)
    rng = as_generator(rng)
    if attack == "ria":
        return mech.perturb(_ria_values(targets, m, rng), rng)
    t = list(targets)
    if isinstance(mech, GRR):
        if attack == "rpa":
            return rng.integers(0, mech.domain_size, size=m)
        return np.asarray(t, dtype=np.int64)[rng.integers(0, len(t), size=m)]
    if isinstance(mech, OUE):
        if attack == "rpa":
            n_words = -(-mech.domain_size // 16)
            rows = bernoulli_words(0.5, m * n_words, rng).view(np.uint8).reshape(m, 2 * n_words)
            rows = np.ascontiguousarray(rows[:, :mech.report_bytes])
            if mech.domain_size % 8:
                rows[:, -1] &= np.uint8((0xFF << (8 * mech.report_bytes - mech.domain_size)) & 0xFF)
            return rows
        return _oue_mga(mech, t, m, rng)
    if isinstance(mech, OLH):
        if attack == "rpa":
            return OLHReports(rng.integers(0, 1 << 32, size=m, dtype=np.uint32), rng.integers(0, mech.g, size=m))
        return _olh_mga(mech, t, m, rng)
    rows = rng.integers(0, mech.k, size=m)
    if isinstance(mech, CMS):
        width = -(-mech.m // 8)
        if attack == "rpa":
            bits = np.zeros((m, mech.m), dtype=bool)
            bits[:] = rng.random((m, mech.m)) < 0.5
        else:
            bits = np.zeros((m, mech.m), dtype=bool)
            keys = mech._value_keys(np.asarray(t, dtype=object))  # the sketch's own keys (CodeCMS: the codes)
            bits[np.arange(m)[:, None], mech.family.evaluate(rows[:, None], keys[None, :])] = True
        return CMSReports(np.packbits(bits, axis=1)[:, :width], rows)
    if attack == "rpa":
        return HCMSReports(rng.integers(0, 2, size=m).astype(np.uint8), rows, rng.integers(0, mech.m, size=m))
    return HCMSReports(np.ones(m, dtype=np.uint8), rows, np.zeros(m, dtype=np.int64))


def fake_aggregate(mech, attack: str, targets, m: int, rng=None) -> Aggregate:
    """The aggregate of ``m`` fake reports: exact direct draws where the law is known, else the reports'."""
    check_oracle(mech)
    check_attack(attack)
    rng = as_generator(rng)
    if attack == "ria":
        counts = rng.multinomial(m, np.full(len(targets), 1 / len(targets)))
        items = list(targets) if mech.takes_tokens else None
        if items is None:  # integer-id oracles take counts over the whole domain
            full = np.zeros(mech.domain_size, dtype=np.int64)
            np.add.at(full, np.asarray(targets, dtype=np.int64), counts)
            return mech.sample_aggregate(full, rng)
        return mech.sample_aggregate(counts, rng, items)
    if isinstance(mech, GRR):
        if attack == "rpa":
            data = rng.multinomial(m, np.full(mech.domain_size, 1 / mech.domain_size))
        else:
            data = np.zeros(mech.domain_size, dtype=np.int64)
            np.add.at(data, np.asarray(targets, dtype=np.int64), rng.multinomial(m, np.full(len(targets), 1 / len(targets))))
        return Aggregate(m, data, mech.kind)
    if isinstance(mech, OUE) and attack == "rpa":
        return Aggregate(m, rng.binomial(m, 0.5, size=mech.domain_size), mech.kind)
    return mech.aggregate(fake_reports(mech, attack, targets, m, rng))
