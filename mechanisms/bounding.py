"""Contribution bounding: what each device may contribute, chosen by a sampler — docs/math.md §8.7.

Every device holds *entries* (device, item, count): the items it typed in a period (a day, or the
whole run) and how often. A :class:`ContributionBound` keeps at most ``l0`` distinct items per device
and at most ``linf`` contributions per kept item; which items stay is the sampler's choice:

* ``"uniform"``: ``l0`` of the device's distinct items uniformly at random (every subset of that size
  equally likely);
* ``"occurrence"``: distinct items drawn one after the other without replacement, each with chance
  proportional to how often it was typed (successive sampling) — with ``l0 = 1`` one typed occurrence
  uniformly, Gboard's *RandomSampling*;
* ``"top"``: the ``l0`` most typed items, **ties broken uniformly at random** (the family's one tie
  rule) — with ``l0 = 1`` Gboard's *TopSampling*;
* ``"events"``: ``l0`` typed occurrences uniformly without replacement, an item contributing the
  occurrences drawn (capped at ``linf``) — with ``l0 = 1`` Apple-style data selection (one of the day's
  events uniformly), and the deployment's daily limit (:func:`sample_records` on its raw records).

An entry may be marked not ``eligible`` (a word whose prefix left the trie, a word on the deny list):
it is never chosen and the sampler picks among the others. :meth:`ContributionBound.inclusion` gives
each entry's chance of being kept, in closed form (docs/math.md §8.7), which the tests check the
samplers against. Everything is vectorized over devices: no loop over devices or entries.

>>> b = ContributionBound(l0=1, linf=1, sampler="top")
>>> b.inclusion(device=[0, 0, 0, 1], counts=[5, 5, 1, 2]).tolist()
[0.5, 0.5, 0.0, 1.0]
>>> b.select(device=[0, 0, 0, 1], counts=[5, 5, 1, 2], rng=3).tolist()
[0, 1, 0, 1]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from ldpsim.mechanisms._validation import as_generator, check_int
from ldpsim.runtime.errors import InputError

#: the samplers of the family (module docstring)
SAMPLERS = ("uniform", "occurrence", "top", "events")
#: Gboard's sampler names (and the prefix tree's ``selection``) → the family's sampler, one item per device
BOUNDING = {"random": "occurrence", "top": "top"}


def sample_records(device: np.ndarray, quota: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices of a uniform sample without replacement of ``quota[i]`` of the records of each device i
    (the ``"events"`` sampler on raw records: one record per typed occurrence).

    ``device`` holds the (local, 0-based) device of each record. Returns the chosen indices grouped by
    device in increasing device order.
    """
    order = np.argsort(device + rng.random(device.size))  # random order within each device
    dev = device[order]
    first = np.searchsorted(dev, dev, side="left")
    rank = np.arange(dev.size) - first
    return order[rank < quota[dev]]


def _starts(device: np.ndarray) -> np.ndarray:
    """First entry of each device's run of contiguous entries."""
    return np.flatnonzero(np.r_[True, device[1:] != device[:-1]])


def _per_entry(values: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    """A per-device value repeated over that device's entries."""
    return np.repeat(values, np.diff(np.r_[starts, size]))


@dataclass(frozen=True)
class ContributionBound:
    """At most ``l0`` distinct items per device and ``linf`` contributions per item (module docstring).

    Parameters
    ----------
    l0 : int ≥ 1
        Most distinct items a device contributes in the period (``"events"``: most occurrences).
    linf : int ≥ 1, optional
        Most contributions per kept item (default: no cap beyond the typed count).
    sampler : {"uniform", "occurrence", "top", "events"}
        Which items a device keeps.
    """

    l0: int = 1
    linf: int | None = None
    sampler: str = "occurrence"

    def __post_init__(self):
        object.__setattr__(self, "l0", check_int("ContributionBound", "l0", self.l0, low=1))
        if self.linf is not None:
            object.__setattr__(self, "linf", check_int("ContributionBound", "linf", self.linf, low=1))
        if self.sampler not in SAMPLERS:
            raise InputError(f"ContributionBound: 'sampler' must be one of {list(SAMPLERS)}; got {self.sampler!r}.")

    # input ------------------------------------------------------------------------------------------
    @staticmethod
    def _entries(device, counts, eligible, whole: bool):
        """(device, counts as weights with 0 where not eligible) as arrays, checked."""
        device, counts = np.asarray(device), np.asarray(counts)
        if device.ndim != 1 or counts.shape != device.shape or (device.size and (np.diff(device) < 0).any()):
            raise InputError(f"ContributionBound: 'device' must be a non-decreasing 1-D array and 'counts' one "
                             f"count per entry; got shapes {device.shape} and {counts.shape}.")
        if counts.size and counts.dtype.kind not in "iuf":
            raise InputError(f"ContributionBound: 'counts' must be numbers; got dtype {counts.dtype}.")
        if counts.size and (not np.all(np.isfinite(counts)) or counts.min() < 0
                            or (whole and np.any(counts != np.round(counts)))):
            raise InputError(f"ContributionBound: 'counts' must be finite, non-negative"
                             f"{' whole numbers' if whole else ''}; got {counts[:5].tolist()}…")
        ok = np.ones(device.size, bool) if eligible is None else np.asarray(eligible, dtype=bool)
        if ok.shape != device.shape:
            raise InputError(f"ContributionBound: 'eligible' must have one flag per entry; got shape {ok.shape}.")
        return device, np.where(ok, counts, 0).astype(np.int64 if whole else float)

    # the law --------------------------------------------------------------------------------------------
    def inclusion(self, device, counts, eligible=None) -> np.ndarray:
        """Each entry's chance of being kept (docs/math.md §8.7).

        Closed forms, with k the device's eligible items, c its typed count and N = Σ c: uniform
        min(l0, k)/k; occurrence c/N for ``l0 = 1`` and 1 for ``l0 ≥ k`` (in between successive sampling
        has no closed form: an ``InputError``); top 1 above the l0-th largest count, the free places over
        the tied entries at it; events 1 − C(N − c, q)/C(N, q), q = min(l0, N). ``counts`` may be real
        weights except for ``"events"``.
        """
        device, w = self._entries(device, counts, eligible, whole=self.sampler == "events")
        out = np.zeros(device.size)
        if not device.size:
            return out
        starts = _starts(device)
        has = w > 0
        k = _per_entry(np.add.reduceat(has.astype(np.int64), starts), starts, w.size)
        total = _per_entry(np.add.reduceat(w, starts), starts, w.size)
        if self.sampler == "uniform":
            out[has] = np.minimum(self.l0, k[has]) / k[has]
        elif self.sampler == "occurrence":
            if self.l0 == 1:
                out[has] = w[has] / total[has]
            elif (k[has] <= self.l0).all():
                out[has] = 1.0
            else:
                raise InputError(f"ContributionBound.inclusion: successive sampling ('occurrence') with 1 < l0 "
                                 f"< the device's items has no closed form; got l0 = {self.l0}, "
                                 f"{int(k.max())} items.")
        elif self.sampler == "top":
            cut = self._top_cut(device, w, starts)
            above = _per_entry(np.add.reduceat((w > cut) & has, starts), starts, w.size)
            tied = _per_entry(np.add.reduceat((w == cut) & has, starts), starts, w.size)
            out[has & (w > cut)] = 1.0
            at = has & (w == cut)
            out[at] = (self.l0 - above[at]) / tied[at]
        else:
            q = np.minimum(self.l0, total)
            rest = total - w
            ok = has & (rest >= q)
            log_none = (gammaln(rest[ok] + 1) - gammaln(rest[ok] - q[ok] + 1) - gammaln(total[ok] + 1)
                        + gammaln(total[ok] - q[ok] + 1))
            out[has] = 1.0
            out[ok] = -np.expm1(log_none)
        return out

    def _top_cut(self, device, w, starts) -> np.ndarray:
        """Per entry, its device's l0-th largest eligible count (0 when the device has at most l0 eligible items)."""
        order = np.lexsort((-w, device))
        k = np.add.reduceat((w > 0).astype(np.int64), starts)
        at = starts + np.minimum(self.l0, np.diff(np.r_[starts, w.size])) - 1
        return _per_entry(np.where(k > self.l0, w[order][at], 0), starts, w.size)

    # the draw -------------------------------------------------------------------------------------------
    def select(self, device, counts, eligible=None, rng=None) -> np.ndarray:
        """Each entry's contributions after bounding: 0 for entries not kept, else min(count, linf)
        (``"events"``: the occurrences drawn, capped at linf). At most ``l0`` entries of a device are
        non-zero; their law is :meth:`inclusion`.

        Parameters
        ----------
        device : int array, non-decreasing
            The device of each entry (a device's entries are contiguous).
        counts : int array ≥ 0
            How often the device typed the entry's item in the period.
        eligible : bool array, optional
            Entries the sampler may pick (default all).
        rng : seed or numpy.random.Generator
        """
        device, w = self._entries(device, counts, eligible, whole=True)
        rng = as_generator(rng)
        out = np.zeros(w.size, np.int64)
        if not w.size:
            return out
        if self.sampler == "events":
            rec = np.repeat(np.arange(w.size), w)
            local = np.unique(device, return_inverse=True)[1]
            chosen = sample_records(local[rec], np.full(local.max() + 1, self.l0), rng)
            out = np.bincount(rec[chosen], minlength=w.size)
        else:
            kept = self.picks(device, w, rng)
            out[kept] = w[kept]
        return out if self.linf is None else np.minimum(out, self.linf)

    def picks(self, device: np.ndarray, weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Indices of the kept entries (``"uniform"``, ``"occurrence"``, ``"top"``), in device order;
        ``weights`` are the eligible counts (0: not eligible).

        ``l0 = 1``: entry e gets a whole weight ω_e (uniform: 1, occurrence: its count, top: 1 if its count
        is the device's largest) and is picked w.p. ω_e/W: one uniform integer per device and a binary
        search in the running sum of the weights (docs/math.md §10.5). ``l0 > 1``: the l0 smallest keys
        per device — uniform: U; occurrence: E/c, E ~ Exp(1) (successive sampling); top: by decreasing
        count, a uniform key breaking ties — one draw per entry.
        """
        has = weights > 0
        starts = _starts(device)
        if self.l0 == 1:
            weight = has.astype(np.int64) if self.sampler == "uniform" else weights.astype(np.int64)
            if self.sampler == "top":
                best = np.maximum.reduceat(weight, starts)
                weight = ((weight == _per_entry(best, starts, weight.size)) & has).astype(np.int64)
            running = np.cumsum(weight)
            before = np.r_[0, running][starts]
            total = np.r_[running[starts[1:] - 1], running[-1]] - before
            ok = total > 0
            idx = np.searchsorted(running, before[ok] + rng.integers(0, total[ok]), side="right")
        else:
            u = rng.random(weights.size)
            if self.sampler == "uniform":
                keys = (u, device)
            elif self.sampler == "occurrence":
                keys = (-np.log1p(-u) / np.where(has, weights, 1), device)
            else:
                keys = (u, -weights, device)
            order = np.lexsort(keys)
            order = order[has[order]]
            dev = device[order]
            rank = np.arange(dev.size) - np.searchsorted(dev, dev, side="left")
            idx = np.sort(order[rank < self.l0])
        return idx


def bound_run(day, device, item, count, per_day: ContributionBound, per_run: ContributionBound | None = None,
              rng=None) -> np.ndarray:
    """Contributions of each (day, device, item, count) entry — one per day, device and item — under a
    bound per day and one per run.

    First ``per_run`` picks, from each device's totals over the run, the items it may ever contribute
    (at most its ``l0``); then, each day, ``per_day`` picks among those (at most its ``l0`` a day, at
    most its ``linf`` each); last, an item's contributions over the run stop at ``per_run.linf``
    (earlier days first). Vectorized over devices and days (docs/math.md §8.7).

    Returns
    -------
    int64 array
        The contributions of each entry, in the order given.
    """
    rng = as_generator(rng)
    day, device, item, count = (np.asarray(a, dtype=np.int64) for a in (day, device, item, count))
    if not (day.shape == device.shape == item.shape == count.shape) or day.ndim != 1:
        raise InputError(f"bound_run: 'day', 'device', 'item' and 'count' must be 1-D arrays of one length; got "
                         f"shapes {day.shape}, {device.shape}, {item.shape}, {count.shape}.")
    if np.unique(np.stack([day, device, item]), axis=1).shape[1] != day.size:
        raise InputError("bound_run: each (day, device, item) must appear once (sum its counts first).")
    allowed = np.ones(day.size, bool)
    if per_run is not None:
        pairs, pair = np.unique(np.stack([device, item]), axis=1, return_inverse=True)
        pair = pair.ravel()
        totals = np.bincount(pair, weights=count, minlength=pairs.shape[1]).astype(np.int64)
        allowed = (ContributionBound(per_run.l0, None, per_run.sampler).select(pairs[0], totals, rng=rng) > 0)[pair]
    order = np.lexsort((item, device, day))
    group = np.unique(np.stack([day[order], device[order]]), axis=1, return_inverse=True)[1].ravel()
    got = np.zeros(day.size, np.int64)
    got[order] = per_day.select(group, count[order], allowed[order], rng)
    if per_run is not None and per_run.linf is not None:   # the run's cap, earlier days first
        by = np.lexsort((day, item, device))
        key = device[by] * (item.max() + 1) + item[by]
        cum = np.cumsum(got[by])
        start = np.r_[0, cum][np.searchsorted(key, key, side="left")]
        within = cum - start
        got[by] = np.minimum(within, per_run.linf) - np.minimum(within - got[by], per_run.linf)
    return got
