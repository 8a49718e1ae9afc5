"""The collectors of the trust models (SimPy) over one day or a deployment's nights — docs/math.md §9.2, §9.3, §9.9.

*Scenario*: devices hold one item a day each and come online in their upload windows — *opportunities*
(:class:`Opportunities`): one window a device on one simulated day (:func:`simulate_collection`: start ~
N(window_start_mean_h, window_start_sd_h) hours, ``window_length_h`` long), or every night the device is
online until its donation expires in a deployment (:mod:`~ldpsim.simulator.nightly_collection`). Their
messages cross the :class:`~ldpsim.simulator.channel.UploadChannel` (loss, latency). The device side is
vectorized (arrays of check-in times and fates); the collectors are SimPy processes, and a report is
counted at most once:

* ``secagg`` — a round opens every ``round_s``: the devices online and not yet counted are cut into
  cohorts (:meth:`SecureSum.cohort_sizes`); a device drops out of its round when its message is lost
  or its window closes before the round ends (``round_length_s``). A cohort whose arrivals reach the
  quorum publishes its noisy sum; devices of an aborted cohort, and dropped ones still online, wait
  for the next round.
* ``two_server`` — each device uploads its shares once in its window (retrying after ``retry_s`` while
  its window is open if the leader is down or the message is lost); the leader batches the reports into
  an aggregation job every ``job_s``, which needs the helper up: while the helper is down, jobs wait.
  Either collector can crash (``crash``: which one, at which hour, for how long). Invalid reports
  (``invalid_share`` of devices) are rejected by the validity check.
  With a client randomizer (``secagg_local``) the cohorts sum the devices' local reports instead.
* ``threshold``, ``ldp``, ``shuffle``, ``sample_threshold`` — one collector receives the uploads
  (retrying as above) and releases at the end of the day.

:func:`collect` releases once at the end, or once per night (noon to noon) with the exact variance of each
release's noise.

The released vector's noise comes from the same mechanisms code as the count-level path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import simpy

from ldpsim.mechanisms._validation import as_generator, check_int, check_item_ids, check_real
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum
from ldpsim.mechanisms.aggregation.two_server import TwoServer
from ldpsim.runtime.errors import InputError
from ldpsim.simulator.channel import UploadChannel

HOUR_S = 3600.0
COLLECTORS = ("leader", "helper")


@dataclass(frozen=True)
class CollectorSetup:
    """The day's timing, channel and failure settings of :func:`simulate_collection`.

    Parameters
    ----------
    window_start_mean_h, window_start_sd_h, window_length_h : float
        Upload windows (hours), as in the fleet scenario.
    loss, latency_median_s, latency_sigma : float
        The channel (one message per attempt).
    round_s, round_length_s : float
        secagg: a round opens every ``round_s`` and lasts ``round_length_s`` seconds.
    job_s : float
        two_server: the leader's aggregation-job interval.
    retry_s : float
        Wait before an upload is retried (while the device's window is open).
    crash : (str, float, float) or None
        (collector, hour, hours down): "leader" or "helper" (two_server), or "leader" for the single
        collector of the other models; the hour counts from the start of the simulation (of the run,
        in a deployment: 24·d + h is hour h of day d).
    invalid_share : float
        two_server: share of devices that submit an out-of-range vector.
    """

    window_start_mean_h: float = 22.0
    window_start_sd_h: float = 2.0
    window_length_h: float = 6.0
    loss: float = 0.05
    latency_median_s: float = 2.0
    latency_sigma: float = 1.0
    round_s: float = 1800.0
    round_length_s: float = 600.0
    job_s: float = 900.0
    retry_s: float = 600.0
    crash: tuple | None = None
    invalid_share: float = 0.0

    def __post_init__(self):
        for name in ("window_length_h", "latency_median_s", "round_s", "round_length_s", "job_s", "retry_s"):
            check_real("CollectorSetup", name, getattr(self, name), 0.0, math.inf)
        check_real("CollectorSetup", "loss", self.loss, 0.0, 1.0, low_open=False, high_open=True)
        check_real("CollectorSetup", "invalid_share", self.invalid_share, 0.0, 1.0, low_open=False)
        if self.crash is not None:
            who, at_h, down_h = self.crash
            if who not in COLLECTORS:
                raise InputError(f"The 'crash' setting names a collector: one of {', '.join(COLLECTORS)}. "
                                 f"Got {who!r} instead.")
            check_real("CollectorSetup", "crash hour", at_h, 0.0, math.inf, low_open=False)
            check_real("CollectorSetup", "crash hours down", down_h, 0.0, math.inf)


@dataclass
class Collection:
    """What a simulated collection produced: the release, the counts it estimates, the collectors' log, and
    one row per release period (``periods``: period, estimate, counted, variance — the exact variance of
    the release's noise given the cohorts, NaN for a single collector's release function)."""

    estimate: np.ndarray
    counted: np.ndarray
    records: list
    counters: dict
    periods: list = field(default_factory=list)


#: a release period runs from noon to noon, so one night's upload windows (22:00 ± 2 h, 6 h long) fall in one
NIGHT_START_S = 12 * HOUR_S


@dataclass(frozen=True)
class Opportunities:
    """The devices' upload opportunities: one row per (report, window in which its device is online).

    A report not counted in one window (lost, dropped out of its cohort, turned away) is tried again in
    its next one; the collectors count every report at most once.

    Parameters
    ----------
    report : numpy.ndarray of int
        Index of the report (into the items) each opportunity carries.
    open_s, close_s : numpy.ndarray of float
        The window (seconds since the start of the run): the device checks in at ``open_s`` and is
        offline from ``close_s``.
    """

    report: np.ndarray
    open_s: np.ndarray
    close_s: np.ndarray


class _Day:
    """Shared state of a collection: the opportunities, the channel, the collectors' up/down state and the
    per-period accumulators (one period a day from noon when ``nightly``, else one for the whole run)."""

    def __init__(self, env, items, d, setup: CollectorSetup, rng, opportunities: Opportunities, nightly: bool,
                 per_device: bool = False):
        self.env, self.items, self.d, self.setup, self.rng = env, items, d, setup, rng
        self.report, self.open_s, self.close_s = opportunities.report, opportunities.open_s, opportunities.close_s
        self.checkin_s = self.open_s
        self.nightly, self.per_device = nightly, per_device
        self.channel = UploadChannel(env, setup.latency_median_s, setup.latency_sigma, setup.loss, 0.0, 1)
        self.up = {c: True for c in COLLECTORS}
        self.records: list[dict] = []
        self.periods: dict[int, dict] = {}
        if setup.crash is not None:
            env.process(self._crash(*setup.crash))

    def _crash(self, who, at_h, down_h):
        yield self.env.timeout(at_h * HOUR_S - self.env.now)
        self.up[who] = False
        self.records.append({"t_s": self.env.now, "event": f"{who} down"})
        yield self.env.timeout(down_h * HOUR_S)
        self.up[who] = True
        self.records.append({"t_s": self.env.now, "event": f"{who} up"})

    def lost(self, n: int) -> np.ndarray:
        """Channel losses of ``n`` messages (one attempt each)."""
        return self.channel.fates(n, self.rng).lost[:, 0]

    def end_s(self) -> float:
        last = float(self.close_s.max()) if self.close_s.size else 0.0
        return last + self.setup.round_s + self.setup.job_s + self.setup.round_length_s

    def period(self, t: float) -> int:
        """The release period of time ``t``: its night p (noon of day p to noon of day p + 1; the first one,
        p = 1, also takes the windows that wrapped past midnight into day 1), or 0 for a single release."""
        return max(1, int((t - NIGHT_START_S) // (24 * HOUR_S))) if self.nightly else 0

    def book(self, t: float, reports: np.ndarray, noise=None, variance: float = 0.0) -> None:
        """Add the counts of ``reports`` (and a cohort's noise with its variance) to the period of ``t``."""
        p = self.periods.setdefault(self.period(t), {"counted": np.zeros(self.d, np.int64),
                                                      "noise": np.zeros(self.d, np.int64), "variance": 0.0})
        p["counted"] += np.bincount(self.items[reports], minlength=self.d)
        if noise is not None:
            p["noise"] += noise
            p["variance"] += variance

    def waiting(self, t: float, done: np.ndarray) -> np.ndarray:
        """One open opportunity (the first) of every report not counted yet and online at ``t``."""
        opp = np.flatnonzero((self.checkin_s <= t) & (self.close_s > t) & ~done[self.report])
        _, first = np.unique(self.report[opp], return_index=True)
        return opp[np.sort(first)]


def _secagg(day: _Day, protocol: SecureSum):
    """Process: rounds of cohorts over the devices online and not yet counted."""
    env, s = day.env, day.setup
    done = np.zeros(day.items.size, bool)
    while env.now < day.end_s():
        yield env.timeout(s.round_s)
        t = env.now
        if not day.up["leader"]:
            day.records.append({"t_s": t, "event": "round skipped (server down)"})
            continue
        waiting = day.waiting(t, done)
        sizes = protocol.cohort_sizes(waiting.size)
        waiting = waiting[day.rng.permutation(waiting.size)]
        starts = np.r_[0, np.cumsum(sizes)]
        for j, size in enumerate(sizes):
            members = waiting[starts[j]: starts[j + 1]]
            arrived = members[(day.close_s[members] >= t + s.round_length_s) & ~day.lost(members.size)]
            published = arrived.size >= protocol.quorum(int(size))
            day.records.append({"t_s": t, "event": "cohort", "size": int(size), "arrived": int(arrived.size),
                                "published": bool(published)})
            if published:
                reports = day.report[arrived]
                if protocol.target is None:
                    day.book(t, reports)
                else:
                    day.book(t, reports, *_cohort_noise(day, protocol, int(size), int(arrived.size)))
                done[reports] = True


def _cohort_noise(day: _Day, protocol: SecureSum, size: int, arrived: int):
    """(noise vector, its variance) of a published cohort: one draw of the cohort's law (count level), or
    ``per_device``: every arrived device's own share, summed (the same law)."""
    law = protocol.cohort_noise(size, arrived)
    if day.per_device:
        return protocol.device_share(size).sample((arrived, day.d), day.rng).sum(axis=0), law.variance()
    return law.sample(day.d, day.rng), law.variance()


def _uploads(day: _Day, who: str):
    """Vectorized device side: each report's accepted upload time (inf if never accepted), with retries
    every ``retry_s`` while its window is open when the message is lost or ``who`` is down at arrival;
    a report is uploaded in its first window that gets it through."""
    s = day.setup
    t = day.checkin_s.copy()
    accepted = np.full(t.size, np.inf)
    pending = np.ones(t.size, bool)
    down = _down_intervals(s, who)
    while pending.any():
        idx = np.flatnonzero(pending)
        ok = ~day.lost(idx.size) & ~_inside(t[idx], down)
        accepted[idx[ok]] = t[idx[ok]]
        pending[idx[ok]] = False
        t[idx[~ok]] += s.retry_s
        pending[idx[~ok]] &= t[idx[~ok]] < day.close_s[idx[~ok]]
    first = np.full(day.items.size, np.inf)
    np.minimum.at(first, day.report, accepted)
    return first


def _down_intervals(s: CollectorSetup, who: str):
    if s.crash is None or s.crash[0] != who:
        return []
    return [(s.crash[1] * HOUR_S, (s.crash[1] + s.crash[2]) * HOUR_S)]


def _inside(t: np.ndarray, intervals) -> np.ndarray:
    out = np.zeros(t.size, bool)
    for a, b in intervals:
        out |= (t >= a) & (t < b)
    return out


def _two_server(day: _Day, protocol: TwoServer):
    """Process: the leader's aggregation jobs; a job runs only while the helper is up. Invalid reports
    are rejected by the validity check; the valid ones of a period are released with the aggregators' noise."""
    env, s = day.env, day.setup
    arrival = _uploads(day, "leader")
    invalid = day.rng.random(day.items.size) < s.invalid_share
    counted = np.zeros(day.items.size, bool)
    day.rejected = 0
    while env.now < day.end_s():
        yield env.timeout(s.job_s)
        if not (day.up["leader"] and day.up["helper"]):
            day.records.append({"t_s": env.now, "event": "job waits (collector down)"})
            continue
        batch = np.flatnonzero(~counted & (arrival <= env.now))
        counted[batch] = True
        day.rejected += int(invalid[batch].sum())
        day.records.append({"t_s": env.now, "event": "job", "reports": int(batch.size),
                            "rejected": int(invalid[batch].sum())})
        if batch.size:
            day.book(env.now, batch[~invalid[batch]])


def _single(day: _Day):
    """Process: one collector takes the uploads and releases each period's counts when the run is over."""
    arrival = _uploads(day, "leader")
    yield day.env.timeout(day.end_s())
    got = np.flatnonzero(np.isfinite(arrival))
    nights = np.maximum(1, (arrival[got] - NIGHT_START_S) // (24 * HOUR_S)).astype(np.int64)
    for p in np.unique(nights) if day.nightly else [0]:
        day.book(p * 24 * HOUR_S + NIGHT_START_S, got[nights == p] if day.nightly else got)
    day.records.append({"t_s": day.env.now, "event": "release", "reports": int(got.size)})


def simulate_collection(protocol, items, domain_size: int, setup: CollectorSetup = CollectorSetup(),
                        rng=None) -> Collection:
    """Simulate one day of collection under a trust model's protocol.

    Each device comes online once, at a uniform time of its upload window (start ~
    N(window_start_mean_h, window_start_sd_h) hours, ``window_length_h`` long), and the release is made
    once, when the day is over (:func:`collect` with those opportunities).

    Parameters
    ----------
    protocol : SecureSum, TwoServer, or a callable ``release(counts, rng) -> estimate``
        The collectors' protocol (a callable stands for a single trusted collector: LDP oracle,
        shuffler, trusted hardware).
    items : array_like of ints in [0, domain_size)
        The item each device reports today.
    domain_size : int
    setup : CollectorSetup
    rng : numpy.random.Generator, int or None

    Returns
    -------
    Collection
        ``estimate`` (the released vector), ``counted`` (true counts of the reports it includes),
        ``records`` (the collectors' log), ``counters`` (devices, counted, rejected).
    """
    rng = as_generator(rng)
    d = check_int("simulate_collection", "domain_size", domain_size, low=2)
    x = check_item_ids("simulate_collection", items, d, name="items")
    start = rng.normal(setup.window_start_mean_h, setup.window_start_sd_h, x.size) * HOUR_S
    checkin = start + rng.random(x.size) * setup.window_length_h * HOUR_S
    opportunities = Opportunities(np.arange(x.size), checkin, start + setup.window_length_h * HOUR_S)
    return collect(protocol, x, d, opportunities, setup, rng, nightly=False)


def collect(protocol, items, domain_size: int, opportunities: Opportunities, setup: CollectorSetup = CollectorSetup(),
            rng=None, nightly: bool = True, per_device: bool = False) -> Collection:
    """Simulate the collectors over the devices' upload opportunities, one release per night or one in all.

    Parameters
    ----------
    protocol : SecureSum, TwoServer, or a callable ``release(counts, rng) -> estimate``
        As in :func:`simulate_collection`.
    items : numpy.ndarray of ints in [0, domain_size)
        The item of each report (one report per device and day).
    domain_size : int
    opportunities : Opportunities
        When each report's device is online (several windows when it is retried on later nights).
    setup : CollectorSetup
        Rounds, jobs, retries, crash (hours since the start of the run), invalid reports, channel.
    rng : numpy.random.Generator, int or None
    nightly : bool
        One release per period from noon to noon (a deployment's nights), else one at the end.
    per_device : bool
        secagg: draw every arrived device's noise share (per-device path) instead of the cohort's
        summed law (count level); the same law (docs/math.md §9.2).

    Returns
    -------
    Collection
        The total release and counts, the log, the counters, and ``periods`` (one row per release).
    """
    rng = as_generator(rng)
    env = simpy.Environment()
    day = _Day(env, items, domain_size, setup, rng, opportunities, nightly, per_device)
    if isinstance(protocol, SecureSum):
        env.process(_secagg(day, protocol))
    elif isinstance(protocol, TwoServer):
        env.process(_two_server(day, protocol))
    elif callable(protocol):
        env.process(_single(day))
    else:
        raise InputError(f"The 'protocol' parameter of simulate_collection must be a SecureSum, a TwoServer or a "
                         f"release function. Got {type(protocol).__name__} instead.")
    env.run()
    periods = [{"period": p, **_release(protocol, day.periods[p], rng)} for p in sorted(day.periods)]
    counted = sum((p["counted"] for p in periods), np.zeros(domain_size, np.int64))
    estimate = sum((p["estimate"] for p in periods), np.zeros(domain_size))
    counters = {"devices": int(np.unique(opportunities.report).size), "counted": int(counted.sum()),
                "rejected": getattr(day, "rejected", 0)}
    return Collection(estimate, counted, day.records, counters, periods)


def _release(protocol, booked: dict, rng) -> dict:
    """A period's release from its booked counts (and secagg's cohort noise), with its exact noise variance."""
    c = booked["counted"]
    if isinstance(protocol, SecureSum):
        est = protocol.finish(c, booked["noise"], rng)
        var = booked["variance"] if protocol.client is None else protocol.client.variance(c)
    elif isinstance(protocol, TwoServer):
        est, var = protocol.release(c, rng), protocol.variance(c)
    else:
        est, var = protocol(c, rng), np.nan
    return {"estimate": np.asarray(est, float), "counted": c, "variance": np.broadcast_to(var, c.shape).astype(float)}
