"""The trend designs run device by device: each device privatizes its own history, the server sums — docs/math.md §12.12.

Every device holds its own T-day history of the tracked item (a 0/1 bit a day, from a workload:
:class:`DailyUse` — the rising word's independent daily draws — or :class:`FavouriteUse` — "today's
favourite is the item", persistent between a device's few changes) and sends, day by day, what its
design prescribes; the server's daily aggregate is the sum of the devices' messages:

* fresh RR: each day a fresh randomized response of the day's bit (P[1 │ 1] = p, P[1 │ 0] = q);
* memoized RR: each device draws, once, a permanent response for each value of its bit (value 0
  → 1 with probability q, value 1 → 1 with probability p) and sends the memo of the day's value;
* a counter, local: each device sends R·b + z with its own z ~ N(0, σ²) per coordinate; distributed:
  R·b + z with its share z ~ N(0, σ²/n) (secure aggregation reveals only the sum). The sum's signal
  Σ R·b_i is computed as R·Σ b_i (linearity; the devices' noise is drawn device by device);
* fresh daily Skellam: each device adds Skellam(μ/n) = Poisson(μ/n) − Poisson(μ/n) to its day's bit.

The released daily estimates are then the design's own decoding of the summed aggregate
(:func:`release`), so each design's estimates have exactly the law its ``sample`` draws from
(:mod:`ldpsim.evaluation.trends.designs`) when the days are independent draws. THRESH is interactive
(the server's refresh decisions feed back into every device's votes), so it has no one-pass block path
here: its devices run in rounds (:meth:`~ldpsim.evaluation.trends.thresh_design.ThreshDesign.device_step`,
over blocks by :func:`ldpsim.scenarios.studies.trends.device_fleet.simulate_thresh_fleet`).

Cost and memory: a block of devices is processed in batches of at most ``batch`` devices; a batch
holds its bits (``batch`` × T bytes) and, one design at a time, ``batch`` × max(T, m) 8-byte draws
(m the counter's noisy coordinates: 90 for each counter of the line-up at T = 90).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldpsim.evaluation.trends.designs import CounterDesign, RRDesign
from ldpsim.evaluation.trends.integer_design import SkellamDailyDesign
from ldpsim.evaluation.trends.skellam_counter_design import SkellamCounterDesign
from ldpsim.evaluation.trends.thresh_design import ThreshDesign
from ldpsim.evaluation.workloads.trends import changing_favourites
from ldpsim.mechanisms._validation import check_int
from ldpsim.runtime.errors import InputError

#: devices privatized together inside a block (memory per batch ≈ batch × (T + 8·max(T, m)) bytes)
BATCH = 2**15


@dataclass(frozen=True, eq=False)
class DailyUse:
    """Each device uses the item on day t independently with probability π_t (the rising word's law).

    Parameters
    ----------
    shares : ndarray, shape (T,)
        π_t in [0, 1].
    """

    shares: np.ndarray

    def __post_init__(self):
        pi = np.asarray(self.shares, dtype=float)
        if pi.ndim != 1 or pi.size == 0 or not np.all((pi >= 0) & (pi <= 1)):
            raise InputError(f"DailyUse: 'shares' must be a 1-D array of daily shares in [0, 1]; got shape {pi.shape}.")
        object.__setattr__(self, "shares", pi)

    @property
    def days(self) -> int:
        """T."""
        return self.shares.size

    def bits(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """The histories of ``size`` devices, bool (size, T)."""
        return rng.random((size, self.days)) < self.shares


@dataclass(frozen=True, eq=False)
class FavouriteUse:
    """The tracked item is the device's favourite of the day
    (:func:`~ldpsim.evaluation.workloads.trends.changing_favourites`).

    Parameters
    ----------
    shares : ndarray, shape (d,)
        The law of a new favourite.
    item : int
        The tracked item's index.
    days : int
    max_changes : int
        The most days a device's favourite changes.
    """

    shares: np.ndarray
    item: int
    days: int
    max_changes: int

    def __post_init__(self):
        check_int("FavouriteUse", "item", self.item, low=0, high=len(self.shares) - 1)
        check_int("FavouriteUse", "days", self.days, low=1)
        check_int("FavouriteUse", "max_changes", self.max_changes, low=0, high=self.days - 1)

    def bits(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """The histories of ``size`` devices, bool (size, T)."""
        return changing_favourites(size, self.days, self.shares, self.max_changes, rng) == self.item


def _rr_messages(design: RRDesign, bits, n: int, rng) -> np.ndarray:
    """Σ over devices of the day's sent bit, int64 (T,)."""
    if design.memoized:
        memo = rng.random((bits.shape[0], 2)) < np.array([design.q, design.p])    # response to value 0, value 1
        sent = np.where(bits, memo[:, 1:], memo[:, :1])
    else:
        sent = rng.random(bits.shape) < np.where(bits, design.p, design.q)
    return sent.sum(axis=0)


def _counter_messages(design: CounterDesign, bits, n: int, rng) -> np.ndarray:
    """Σ over devices of R·b + z, float (m,): z ~ N(0, σ²) (local) or N(0, σ²/n) (distributed) per device."""
    sd = design.sigma if design.placement == "local" else design.sigma / np.sqrt(n)
    noise = rng.normal(0.0, sd, size=(bits.shape[0], design.counter.R.shape[0])).sum(axis=0)
    return design.counter.R @ bits.sum(axis=0) + noise


def _skellam_messages(design: SkellamDailyDesign, bits, n: int, rng) -> np.ndarray:
    """Σ over devices of b + Poisson(μ/n) − Poisson(μ/n), int64 (T,)."""
    lam = design.mu / n
    return bits.sum(axis=0) + rng.poisson(lam, bits.shape).sum(axis=0) - rng.poisson(lam, bits.shape).sum(axis=0)


def _skellam_counter_messages(design: SkellamCounterDesign, bits, n: int, rng) -> np.ndarray:
    """Σ over devices of R·b + Poisson(μ/n) − Poisson(μ/n) per coordinate, int64 (m,): the secure sum holds
    R·x + Skellam(μ) on every coordinate (R a non-negative integer matrix)."""
    lam, shape = design.mu / n, (bits.shape[0], design.counter.R.shape[0])
    noise = rng.poisson(lam, shape).sum(axis=0) - rng.poisson(lam, shape).sum(axis=0)
    return design.counter.R @ bits.sum(axis=0) + noise


def _rr_release(design: RRDesign, total, n: int) -> np.ndarray:
    return design.estimate(total, n)


def _counter_release(design: CounterDesign, total, n: int) -> np.ndarray:
    return np.diff(design.counter.L @ total, prepend=0.0)


def _skellam_release(design: SkellamDailyDesign, total, n: int) -> np.ndarray:
    return np.asarray(total, dtype=float)


#: design class → (the devices' summed messages of a batch, the server's daily estimates from the total)
PATHS = {RRDesign: (_rr_messages, _rr_release), CounterDesign: (_counter_messages, _counter_release),
         SkellamDailyDesign: (_skellam_messages, _skellam_release),
         SkellamCounterDesign: (_skellam_counter_messages, _counter_release)}


def cost_key(design) -> str:
    """The key of ``design``'s CPU cost per device-day in :data:`ldpsim.evaluation.cost.TREND_NS_PER_DEVICE_DAY`."""
    if isinstance(design, RRDesign):
        return design.name
    return {CounterDesign: "counter", SkellamDailyDesign: "Skellam", SkellamCounterDesign: "Skellam counter",
            ThreshDesign: "THRESH"}[type(design)]


def has_device_path(design) -> bool:
    """Whether ``design`` runs device by device in one pass here (every design of the line-up but THRESH)."""
    return type(design) in PATHS


def block_aggregates(designs, workload, size: int, n: int, rng, batch: int = BATCH) -> tuple[np.ndarray, list]:
    """One block of ``size`` devices: their true daily counts and each design's summed messages.

    Each batch of at most ``batch`` devices draws its histories from ``workload`` once and every design
    privatizes the same histories (common random numbers), in order, from ``rng``.

    Parameters
    ----------
    designs : sequence
        Designs with a device path (:func:`has_device_path`).
    workload : DailyUse or FavouriteUse
    size : int
        Devices of the block.
    n : int
        Devices of the whole fleet (a distributed design's noise share is 1/n of the total).
    rng : numpy.random.Generator
    batch : int

    Returns
    -------
    counts : ndarray of int64, shape (T,)
    aggregates : list of ndarray
        Each design's Σ of messages over the block (add over blocks).
    """
    missing = [d.name for d in designs if not has_device_path(d)]
    if missing:
        raise InputError(f"block_aggregates: {', '.join(missing)} has no per-device path (interactive protocol); "
                         f"designs with one: {', '.join(c.__name__ for c in PATHS)}.")
    counts = np.zeros(workload.days, dtype=np.int64)
    totals = [0] * len(designs)
    for start in range(0, size, batch):
        bits = workload.bits(min(batch, size - start), rng)
        counts += bits.sum(axis=0)
        for k, design in enumerate(designs):
            totals[k] = totals[k] + PATHS[type(design)][0](design, bits, n, rng)
    return counts, totals


def block_histories(workload, size: int, rng, batch: int = BATCH) -> np.ndarray:
    """The histories of a block of ``size`` devices, bool (size, T), drawn ``batch`` devices at a time (for a
    protocol that keeps them between rounds: THRESH)."""
    return np.concatenate([workload.bits(min(batch, size - start), rng) for start in range(0, size, batch)])


def release(design, total, n: int) -> np.ndarray:
    """The server's daily estimates (T,) from the fleet's summed messages ``total`` of ``design``."""
    return PATHS[type(design)][1](design, total, n)
