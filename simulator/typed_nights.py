"""Several words typed per device per night, and what a contribution bound keeps of them —
docs/math.md §8.7, §8.8.

*Scenario.* A fleet of ``n_devices`` phones; each night each device is online with probability
``p_online`` and, when online, types ``typed`` word occurrences, each word w independently with that
night's share π_d(w). :func:`typed_entries` draws the night's (day, device, word, count) entries —
one per distinct word a device typed that night. :func:`bounded_nights` applies a
:class:`~ldpsim.mechanisms.bounding.ContributionBound` per night (and optionally one per run,
:func:`~ldpsim.mechanisms.bounding.bound_run`) and returns the per-night matrices a discovery design
reads. Everything is vectorized over devices and entries; the loop is over the nights.

>>> import numpy as np
>>> from ldpsim.mechanisms.bounding import ContributionBound
>>> e = typed_entries(np.full((2, 5), 0.2), 50, 1.0, 4, rng=0)
>>> b = bounded_nights(e, 5, ContributionBound(l0=2, linf=1, sampler="uniform"), rng=1)
>>> int(b.typed.sum()), bool((b.kept <= b.holders).all()), int(b.kept.sum()) <= 2 * 50 * 2
(400, True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.mechanisms.bounding import ContributionBound, bound_run


@dataclass(frozen=True)
class TypedEntries:
    """One row per (night, device, word typed that night): ``day``, ``device``, ``item``, ``count``."""

    day: np.ndarray
    device: np.ndarray
    item: np.ndarray
    count: np.ndarray
    days: int


def typed_entries(shares, n_devices: int, p_online: float, typed: int, rng=None) -> TypedEntries:
    """The fleet's typed words night by night (module docstring).

    Parameters
    ----------
    shares : array (days × words)
        π_d(w), each row non-negative and summing to 1.
    n_devices : int ≥ 1
    p_online : float in (0, 1]
    typed : int ≥ 1
        Word occurrences an online device types a night.
    rng : seed or Generator
    """
    rng = as_generator(rng)
    n = check_int("typed_entries", "n_devices", n_devices, low=1)
    p_online = check_real("typed_entries", "p_online", p_online, 0.0, 1.0, high_open=False)
    typed = check_int("typed_entries", "typed", typed, low=1)
    shares = np.asarray(shares, dtype=float)
    if shares.ndim != 2 or (shares < 0).any() or not np.allclose(shares.sum(axis=1), 1.0):
        raise ValueError("typed_entries: 'shares' must be a days × words array of non-negative rows summing to 1.")
    words = shares.shape[1]
    parts = []
    for day, row in enumerate(shares):
        online = np.flatnonzero(rng.random(n) < p_online)
        cdf = np.cumsum(row / row.sum())
        drawn = np.minimum(np.searchsorted(cdf, rng.random((online.size, typed)), side="right"), words - 1)
        key, count = np.unique(np.repeat(online, typed) * words + drawn.ravel(), return_counts=True)
        parts.append((np.full(key.size, day), key // words, key % words, count))
    day, device, item, count = (np.concatenate(a).astype(np.int64) for a in zip(*parts))
    return TypedEntries(day, device, item, count, shares.shape[0])


@dataclass(frozen=True)
class BoundedNights:
    """What a bound keeps of the typed words, each a days × words int64 matrix.

    Attributes
    ----------
    typed : occurrences typed.
    holders : devices typing the word that night.
    kept : devices contributing the word that night (at most L0 words a device a night).
    contributions : the kept entries' bounded counts summed (at most L∞ a device, per night and word).
    votes : devices voting for the word when each keeps one of its kept words a night, uniformly.
    """

    typed: np.ndarray
    holders: np.ndarray
    kept: np.ndarray
    contributions: np.ndarray
    votes: np.ndarray

    def lost(self, read: str = "contributions") -> dict:
        """Shares of what was typed that a design reading the matrix ``read`` (``"kept"``, ``"votes"`` or
        ``"contributions"``) never sees (the utility the bound costs): ``entries_lost`` of the (night,
        device, word) entries, ``occurrences_lost`` of the typed occurrences."""
        entries = self.votes if read == "votes" else self.kept
        counted = getattr(self, read)
        return {"entries_lost": 1 - entries.sum() / max(int(self.holders.sum()), 1),
                "occurrences_lost": 1 - counted.sum() / max(int(self.typed.sum()), 1)}


def bounded_nights(entries: TypedEntries, words: int, per_day: ContributionBound,
                   per_run: ContributionBound | None = None, rng=None) -> BoundedNights:
    """Apply ``per_day`` each night (and ``per_run`` over the run) to ``entries``; the matrices of
    :class:`BoundedNights` over ``words`` words."""
    rng = as_generator(rng)
    e = entries
    got = bound_run(e.day, e.device, e.item, e.count, per_day, per_run, rng)
    on = got > 0
    one = np.zeros(e.day.size, np.int64)
    order = np.lexsort((e.item[on], e.device[on], e.day[on]))
    kept_idx = np.flatnonzero(on)[order]
    group = np.unique(np.stack([e.day[kept_idx], e.device[kept_idx]]), axis=1, return_inverse=True)[1].ravel()
    one[kept_idx] = ContributionBound(l0=1, sampler="uniform").select(group, np.ones(kept_idx.size, np.int64), rng=rng)

    def matrix(weights) -> np.ndarray:
        flat = np.bincount(e.day * words + e.item, weights=weights, minlength=e.days * words)
        return flat.reshape(e.days, words).astype(np.int64)

    return BoundedNights(matrix(e.count), matrix(np.ones(e.day.size)), matrix(on), matrix(got), matrix(one))
