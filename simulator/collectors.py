"""The collectors of the trust models over one simulated day (SimPy) — docs/math.md §9.2, §9.3.

*Scenario*: n devices each hold one item for the day and come online in an upload window (start
~ N(window_start_mean_h, window_start_sd_h) hours, ``window_length_h`` long, as in the fleet). Their
messages cross the :class:`~ldpsim.simulator.channel.UploadChannel` (loss, latency). The device side is
vectorized (arrays of check-in times and fates); the collectors are SimPy processes:

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

The released vector's noise comes from the same mechanisms code as the count-level path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
        collector of the other models.
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
            check_real("CollectorSetup", "crash hour", at_h, 0.0, 48.0, low_open=False)
            check_real("CollectorSetup", "crash hours down", down_h, 0.0, 48.0)


@dataclass
class Collection:
    """What a simulated day produced: the release, the counts it estimates, and the collectors' log."""

    estimate: np.ndarray
    counted: np.ndarray
    records: list
    counters: dict


class _Day:
    """Shared state of one simulated day: devices' windows, the channel, the collectors' up/down state."""

    def __init__(self, env, items, d, setup: CollectorSetup, rng):
        self.env, self.items, self.d, self.setup, self.rng = env, items, d, setup, rng
        n = items.size
        start = rng.normal(setup.window_start_mean_h, setup.window_start_sd_h, n) * HOUR_S
        self.open_s = start
        self.close_s = start + setup.window_length_h * HOUR_S
        self.checkin_s = start + rng.random(n) * setup.window_length_h * HOUR_S
        self.channel = UploadChannel(env, setup.latency_median_s, setup.latency_sigma, setup.loss, 0.0, 1)
        self.up = {c: True for c in COLLECTORS}
        self.records: list[dict] = []
        self.result: dict | None = None        # set by the collectors' process when the day is over
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
        return float(self.close_s.max()) + self.setup.round_s + self.setup.job_s + self.setup.round_length_s


def _secagg(day: _Day, protocol: SecureSum):
    """Process: rounds of cohorts over the devices online and not yet counted."""
    env, s = day.env, day.setup
    done = np.zeros(day.items.size, bool)
    out = {"noise": np.zeros(day.d, np.int64), "counted": np.zeros(day.d, np.int64)}
    while env.now < day.end_s():
        yield env.timeout(s.round_s)
        t = env.now
        if not day.up["leader"]:
            day.records.append({"t_s": t, "event": "round skipped (server down)"})
            continue
        waiting = np.flatnonzero(~done & (day.checkin_s <= t) & (day.close_s > t))
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
                out["counted"] += np.bincount(day.items[arrived], minlength=day.d)
                if protocol.target is not None:
                    out["noise"] += protocol.cohort_noise(int(size), int(arrived.size)).sample(day.d, day.rng)
                done[arrived] = True
    day.result = {"estimate": protocol.finish(out["counted"], out["noise"], day.rng), "counted": out["counted"]}


def _uploads(day: _Day, who: str):
    """Vectorized device side: each device's accepted upload time (inf if never accepted), with retries
    while its window is open when the message is lost or ``who`` is down at arrival."""
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
    return accepted


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
    """Process: the leader's aggregation jobs; a job runs only while the helper is up."""
    env, s = day.env, day.setup
    arrival = _uploads(day, "leader")
    invalid = day.rng.random(day.items.size) < s.invalid_share
    counted = np.zeros(day.items.size, bool)
    while env.now < day.end_s():
        yield env.timeout(s.job_s)
        if not (day.up["leader"] and day.up["helper"]):
            day.records.append({"t_s": env.now, "event": "job waits (collector down)"})
            continue
        batch = np.flatnonzero(~counted & (arrival <= env.now))
        counted[batch] = True
        day.records.append({"t_s": env.now, "event": "job", "reports": int(batch.size),
                            "rejected": int(invalid[batch].sum())})
    valid = counted & ~invalid
    counts = np.bincount(day.items[valid], minlength=day.d)
    day.result = {"estimate": protocol.release(counts, day.rng), "counted": counts,
                  "rejected": int((counted & invalid).sum())}


def _single(day: _Day, release):
    """Process: one collector takes uploads all day and releases at the end."""
    arrival = _uploads(day, "leader")
    yield day.env.timeout(day.end_s())
    got = np.isfinite(arrival)
    counts = np.bincount(day.items[got], minlength=day.d)
    day.records.append({"t_s": day.env.now, "event": "release", "reports": int(got.sum())})
    day.result = {"estimate": release(counts, day.rng), "counted": counts}


def simulate_collection(protocol, items, domain_size: int, setup: CollectorSetup = CollectorSetup(),
                        rng=None) -> Collection:
    """Simulate one day of collection under a trust model's protocol.

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
    env = simpy.Environment()
    day = _Day(env, x, d, setup, rng)
    if isinstance(protocol, SecureSum):
        env.process(_secagg(day, protocol))
    elif isinstance(protocol, TwoServer):
        env.process(_two_server(day, protocol))
    elif callable(protocol):
        env.process(_single(day, protocol))
    else:
        raise InputError(f"The 'protocol' parameter of simulate_collection must be a SecureSum, a TwoServer or a "
                         f"release function. Got {type(protocol).__name__} instead.")
    env.run()
    res = day.result
    counters = {"devices": int(x.size), "counted": int(res["counted"].sum()), "rejected": res.get("rejected", 0)}
    return Collection(res["estimate"].astype(float), res["counted"], day.records, counters)
