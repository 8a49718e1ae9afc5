"""Fake users' reports for the three attacks of Cao, Jia, Gong (USENIX Security 2021) — docs/math.md §7.5.

* RPA (random perturbed-value attack): a report drawn uniformly from the oracle's report space (SHE:
  from the box [−B, 1 + B]^D of :func:`.crafted.she_cap`);
* RIA (random item attack): the honest client run on a target drawn uniformly from T;
* MGA (maximal gain attack): a report of largest contribution to the targets (:mod:`.crafted`).

:func:`fake_reports` builds the reports in each oracle's own format (what a fake device would upload);
:func:`fake_aggregate` gives their aggregate, drawn directly from its exact law where it is simple
(RIA: the oracle's direct sampler for the fake population; one-output oracles and FLH: multinomials
over the chosen outputs; unary encodings' RPA: binomial bit counts; RAPPOR: binomial bit counts per
cohort, or the one crafted report m times; SHE's MGA: m(1 + B) on the targets and gamma-difference noise
elsewhere) and from the reports otherwise (OLH/BLH, sketches, dBitFlip, unary MGA, SHE RPA).
"""

from __future__ import annotations

import numpy as np

from ldpsim.evaluation.poisoning.crafted import (best_outputs, flh_best_cells, olh_seed_pool, output_weights,
                                                 rappor_best, she_cap, target_indices)
from ldpsim.evaluation.poisoning.gains import check_attack, check_oracle, default_items
from ldpsim.mechanisms import (CMS, FLH, HCMS, HR, OLH, RAPPOR, SHE, Aggregate, CMSReports, DBitFlip,
                               DBitFlipReports, FLHReports, HCMSReports, OLHReports, RAPPORReports)
from ldpsim.mechanisms._validation import as_generator, check_int
from ldpsim.mechanisms.bitsampling import bernoulli_words
from ldpsim.mechanisms.frequency.mixture import KeepOrUniform
from ldpsim.mechanisms.frequency.unary import UnaryEncoding


def _ria_values(targets, m: int, rng) -> np.ndarray:
    arr = np.empty(len(targets), dtype=object)
    arr[:] = list(targets)
    picks = arr[rng.integers(0, len(targets), size=m)]
    return picks if any(isinstance(t, str) for t in targets) else picks.astype(np.int64)


def random_subsets(pool, size: int, m: int, rng) -> np.ndarray:
    """``m`` uniform ``size``-subsets of ``pool`` (one per row, unsorted), by the smallest random keys."""
    pool = np.asarray(pool)
    if size == 0:
        return np.empty((m, 0), dtype=pool.dtype)
    keys = rng.random((m, pool.size))
    return pool[np.argpartition(keys, size - 1, axis=1)[:, :size]]


def _n_outputs(mech) -> int:
    return mech.n_outputs if isinstance(mech, HR) else mech.domain_size


def _unary_mga(mech: UnaryEncoding, targets, m: int, rng) -> np.ndarray:
    """Target bits set; random other bits so that each report has ⌊p + (D−1)q⌉ ones like a genuine one."""
    d = mech.domain_size
    bits = np.zeros((m, d), dtype=bool)
    t = np.asarray(targets, dtype=np.int64)
    bits[:, t] = True
    others = np.setdiff1d(np.arange(d), t)
    extra = min(max(0, int(round(mech.p + (d - 1) * mech.q)) - t.size), others.size)
    bits[np.arange(m)[:, None], random_subsets(others, extra, m, rng)] = True
    return np.packbits(bits, axis=1)


def _unary_rpa(mech: UnaryEncoding, m: int, rng) -> np.ndarray:
    n_words = -(-mech.domain_size // 16)
    rows = bernoulli_words(0.5, m * n_words, rng).view(np.uint8).reshape(m, 2 * n_words)
    rows = np.ascontiguousarray(rows[:, :mech.report_bytes])
    if mech.domain_size % 8:
        rows[:, -1] &= np.uint8((0xFF << (8 * mech.report_bytes - mech.domain_size)) & 0xFF)
    return rows


def _dbitflip(mech: DBitFlip, attack: str, targets, m: int, rng) -> DBitFlipReports:
    """RPA: a uniform d-subset with uniform bits. MGA: min(d, r) targets (a uniform subset of them) with
    bit 1, the rest uniform non-targets with bits as a non-holder's (1 w.p. b)."""
    k, d = mech.domain_size, mech.d
    if attack == "rpa":
        buckets = random_subsets(np.arange(k), d, m, rng)
        bits = rng.integers(0, 2, size=(m, d))
    else:
        t = np.asarray(targets, dtype=np.int64)
        chosen = random_subsets(t, min(d, t.size), m, rng)
        rest = random_subsets(np.setdiff1d(np.arange(k), t), d - chosen.shape[1], m, rng)
        buckets = np.concatenate([chosen, rest], axis=1)
        bits = np.concatenate([np.ones(chosen.shape, dtype=np.int64),
                               (rng.random(rest.shape) < mech.b).astype(np.int64)], axis=1)
    order = np.argsort(buckets, axis=1)
    return DBitFlipReports(np.take_along_axis(buckets, order, axis=1).astype(np.int64),
                           np.take_along_axis(bits, order, axis=1).astype(np.uint8))


def _sketch(mech, attack: str, targets, m: int, rng):
    rows = rng.integers(0, mech.k, size=m)
    if isinstance(mech, CMS):
        width = -(-mech.m // 8)
        bits = np.zeros((m, mech.m), dtype=bool)
        if attack == "rpa":
            bits[:] = rng.random((m, mech.m)) < 0.5
        else:
            keys = mech.value_keys(np.asarray(list(targets), dtype=object))  # the sketch's own keys (CodeCMS: codes)
            bits[np.arange(m)[:, None], mech.family.evaluate(rows[:, None], keys[None, :])] = True
        return CMSReports(np.packbits(bits, axis=1)[:, :width], rows)
    if attack == "rpa":
        return HCMSReports(rng.integers(0, 2, size=m).astype(np.uint8), rows, rng.integers(0, mech.m, size=m))
    return HCMSReports(np.ones(m, dtype=np.uint8), rows, np.zeros(m, dtype=np.int64))


def _rappor(mech: RAPPOR, attack: str, targets, m: int, rng, items) -> RAPPORReports:
    if attack == "rpa":
        bits = rng.random((m, mech.num_bits)) < 0.5
        return RAPPORReports(rng.integers(0, mech.cohorts, size=m), np.packbits(bits, axis=1))
    c, best, _ = rappor_best(mech, targets, items)
    return RAPPORReports(np.full(m, c, dtype=np.int64), np.tile(np.packbits(best), (m, 1)))


def _checked(mech, attack: str, targets, m: int, rng, items, owner: str):
    """Validate the oracle, attack, targets (items of the oracle) and m; return (m, Generator)."""
    check_oracle(mech)
    check_attack(attack)
    target_indices(default_items(mech, targets, items), list(targets))
    return check_int(owner, "m", m, low=0), as_generator(rng)


def fake_reports(mech, attack: str, targets, m: int, rng=None, items=None):
    """Reports of ``m`` fake users running ``attack`` for ``targets``, in ``mech``'s report format.

    ``items`` is the server's item list (RAPPOR's candidates; default :func:`.gains.default_items`).
    """
    m, rng = _checked(mech, attack, targets, m, rng, items, "fake_reports")
    if attack == "ria":
        return mech.perturb(_ria_values(targets, m, rng), rng)
    t = list(targets)
    if isinstance(mech, (KeepOrUniform, HR)):
        choices = np.arange(_n_outputs(mech)) if attack == "rpa" else best_outputs(output_weights(mech, t))
        return choices[rng.integers(0, choices.size, size=m)]
    if isinstance(mech, UnaryEncoding):
        return _unary_rpa(mech, m, rng) if attack == "rpa" else _unary_mga(mech, t, m, rng)
    if isinstance(mech, OLH):
        if attack == "rpa":
            return OLHReports(rng.integers(0, 1 << 32, size=m, dtype=np.uint32), rng.integers(0, mech.g, size=m))
        seeds, ys, _ = olh_seed_pool(mech, tuple(int(v) for v in t))
        which = rng.integers(0, seeds.size, size=m)
        return OLHReports(seeds[which], ys[which])
    if isinstance(mech, FLH):
        if attack == "rpa":
            return FLHReports(rng.integers(0, mech.pool_size, size=m), rng.integers(0, mech.g, size=m))
        j, y, _ = flh_best_cells(mech, t)
        which = rng.integers(0, j.size, size=m)
        return FLHReports(j[which].astype(np.int64), y[which].astype(np.int64))
    if isinstance(mech, DBitFlip):
        return _dbitflip(mech, attack, t, m, rng)
    if isinstance(mech, SHE):
        cap = she_cap(mech)
        if attack == "rpa":
            return rng.uniform(-cap, 1 + cap, size=(m, mech.domain_size))
        y = rng.laplace(0.0, mech.scale, size=(m, mech.domain_size))
        y[:, t] = 1 + cap
        return y
    if isinstance(mech, RAPPOR):
        return _rappor(mech, attack, t, m, rng, default_items(mech, t, items))
    return _sketch(mech, attack, t, m, rng)


def fake_aggregate(mech, attack: str, targets, m: int, rng=None, items=None) -> Aggregate:
    """The aggregate of ``m`` fake reports: exact direct draws where the law is simple, else the reports'."""
    m, rng = _checked(mech, attack, targets, m, rng, items, "fake_aggregate")
    if attack == "ria":
        counts = rng.multinomial(m, np.full(len(targets), 1 / len(targets)))
        if mech.takes_tokens:
            return mech.sample_aggregate(counts, rng, list(targets))
        full = np.zeros(mech.domain_size, dtype=np.int64)  # integer-id oracles take counts over the whole domain
        np.add.at(full, np.asarray(targets, dtype=np.int64), counts)
        return mech.sample_aggregate(full, rng)
    rpa = attack == "rpa"
    if isinstance(mech, (KeepOrUniform, HR)):
        k = _n_outputs(mech)
        choices = np.arange(k) if rpa else best_outputs(output_weights(mech, targets))
        data = np.zeros(k, dtype=np.int64)
        data[choices] = rng.multinomial(m, np.full(choices.size, 1 / choices.size))
        return Aggregate(m, data, mech.kind)
    if isinstance(mech, UnaryEncoding) and rpa:
        return Aggregate(m, rng.binomial(m, 0.5, size=mech.domain_size), mech.kind)
    if isinstance(mech, FLH):
        data = np.zeros((mech.pool_size, mech.g), dtype=np.int64)
        j, y = np.divmod(np.arange(data.size), mech.g) if rpa else flh_best_cells(mech, targets)[:2]
        data[j, y] = rng.multinomial(m, np.full(j.size, 1 / j.size))
        return Aggregate(m, data, mech.kind)
    if isinstance(mech, SHE) and not rpa:
        data = rng.gamma(m, mech.scale, mech.domain_size) - rng.gamma(m, mech.scale, mech.domain_size) \
            if m else np.zeros(mech.domain_size)
        data[list(targets)] = m * (1 + she_cap(mech))
        return Aggregate(m, data, mech.kind)
    if isinstance(mech, RAPPOR):
        data = np.zeros((mech.cohorts, mech.num_bits + 1), dtype=np.int64)
        if rpa:
            data[:, -1] = rng.multinomial(m, np.full(mech.cohorts, 1 / mech.cohorts))
            data[:, :-1] = rng.binomial(data[:, -1:], 0.5, size=(mech.cohorts, mech.num_bits))
        else:
            c, best, _ = rappor_best(mech, targets, default_items(mech, targets, items))
            data[c, :-1], data[c, -1] = m * best, m
        return Aggregate(m, data, mech.kind)
    return mech.aggregate(fake_reports(mech, attack, targets, m, rng, items))
