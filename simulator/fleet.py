"""The fleet: per-device traits in numpy arrays and one day of typing, drawn per device block.

Randomness is keyed by ``(role, block, day)`` (:func:`block_rng`), never by shard, so splitting the
fleet into shards of whole blocks draws exactly the same numbers as one process.

Device model (per device i):

* preference over the event domain p_i ~ Dirichlet(concentration · f), f the workload frequencies;
  drawn by stick-breaking of the Dirichlet process DP(concentration, f) — restricted to the finite
  domain this is exactly that Dirichlet (Ferguson 1973), truncated at ``n_atoms`` atoms (the leftover
  mass, E = (α/(1+α))^n_atoms, goes to the last atom);
* activity a_i ~ LogNormal(−σ²/2, σ) (mean 1): heavy and light typists; or, with
  ``activity_levels``, one of those levels (mean 1) drawn with probabilities ``activity_weights``
  (a measured fleet's distribution of events per device-day);
* sessions per day ~ Poisson(a_i · sessions_per_day), start hours from the daily rhythm; emoji per
  session ~ Poisson(events_per_session); per session one typing-speed reading
  N(μ_i, session sd) with μ_i ~ N(speed_mean, device sd), and one session length
  LogNormal(log s_i, session_sigma) with s_i = session_median · LogNormal(0, session_device_sigma);
* opted in w.p. ``opt_in``; online on a given day w.p. ``p_online``; upload window start hour
  ~ N(window_start_mean_h, window_start_sd_h) mod 24.
* drift: from ``trend_start_day`` each event is replaced by the trend item w.p.
  peak_share · min(1, (day − start + 1)/ramp_days).
* words (only with a word use case): per session Poisson(words_per_session) words, each drawn from the
  word weights (no personal preference), and from ``slang_start_day`` replaced by the new slang word
  (the last of ``words``) w.p. ``slang_share``. Drawn after everything else, so the other draws do
  not change when words are added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ldpsim.simulator.config import DeploymentConfig

#: the run's random-stream roles (the first spawn-key entry of every stream of a run's root seed): the
#: simulation's draws by block and day, and the evaluation's measurement (the EM bootstrap), the slang
#: word of the words use case, the rounds of an interactive words protocol, the numeric use cases' devices and
#: readings, the devices' tap habits by block (evaluation/deployment/numeric_runs.py) and the adversary's tap
ROLES = {"traits": 0, "day": 1, "donate": 2, "online": 3, "server": 4, "memo": 5, "policy": 6, "fakes": 7,
         "measure": 9, "slang": 11, "rounds": 13, "collect": 15, "numeric": 17, "habits": 19, "adversary": 0x0B5E}


def stream(seed: int, role: str, *key: int) -> np.random.SeedSequence:
    """Stream ``(role, *key)`` of the run's root ``seed``: a SeedSequence child keyed by :data:`ROLES`."""
    return np.random.SeedSequence(seed, spawn_key=(ROLES[role], *key))


def block_rng(seed: int, role: str, block: int, day: int = 0) -> np.random.Generator:
    """Generator of stream ``(role, block, day)`` of the run's root seed (a SeedSequence child)."""
    return np.random.default_rng(stream(seed, role, block, day))


def memo_base(seed: int, use_case: int) -> int:
    """Base key of the memoized reports of use case number ``use_case`` (``simulator/memoization.py``)."""
    return int(stream(seed, "memo", use_case).generate_state(1, np.uint64)[0])


def block_range(cfg: DeploymentConfig, block: int) -> tuple[int, int]:
    """Global device ids [lo, hi) of ``block``."""
    lo = block * cfg.block_size
    return lo, min(lo + cfg.block_size, cfg.n_devices)


@dataclass
class Traits:
    """Per-device state of one block (arrays of length n, ``atoms`` and ``cum`` n × n_atoms)."""

    device: np.ndarray      # global ids
    atoms: np.ndarray       # item ids of the preference atoms (the smallest unsigned dtype that fits)
    cum: np.ndarray         # cumulative atom weights (float32: 4 bytes a weight; last column 1)
    activity: np.ndarray
    speed_wpm: np.ndarray
    session_median_s: np.ndarray
    opt_in: np.ndarray
    window_start_h: np.ndarray

    @property
    def favourite(self) -> np.ndarray:
        """The item each device uses most (largest total preference weight)."""
        w = np.diff(self.cum, axis=1, prepend=0.0)
        n, d = self.atoms.shape[0], int(self.atoms.max()) + 1
        pref = np.zeros((n, d))
        np.add.at(pref, (np.repeat(np.arange(n), self.atoms.shape[1]), self.atoms.ravel()), w.ravel())
        return pref.argmax(axis=1)


def draw_traits(cfg: DeploymentConfig, block: int) -> Traits:
    """Traits of the devices of ``block`` (stream ``traits``)."""
    rng = block_rng(cfg.seed, "traits", block)
    lo, hi = block_range(cfg, block)
    n, k, alpha = hi - lo, cfg.n_atoms, cfg.concentration
    beta = rng.beta(1.0, alpha, size=(n, k))
    beta[:, -1] = 1.0  # the last atom takes the remaining mass
    rest = np.cumprod(np.hstack([np.ones((n, 1)), 1.0 - beta[:, :-1]]), axis=1)
    cum = np.cumsum(beta * rest, axis=1).astype(np.float32)  # per-device memory: float32, small ids
    cum[:, -1] = 1.0
    cdf = np.cumsum(cfg.item_weights)
    atoms = np.minimum(np.searchsorted(cdf, rng.random((n, k)), side="right"), len(cdf) - 1)
    s = cfg.activity_sigma
    activity = (np.asarray(cfg.activity_levels)[rng.choice(len(cfg.activity_levels), size=n, p=cfg.activity_weights)]
                if cfg.activity_levels else rng.lognormal(-s * s / 2, s, size=n))
    return Traits(
        device=np.arange(lo, hi),
        atoms=atoms.astype(np.min_scalar_type(len(cdf) - 1)),
        cum=cum,
        activity=activity,
        speed_wpm=rng.normal(cfg.speed_mean_wpm, cfg.speed_device_sd_wpm, size=n),
        session_median_s=cfg.session_median_s * np.exp(cfg.session_device_sigma * rng.standard_normal(n)),
        opt_in=rng.random(n) < cfg.opt_in,
        window_start_h=np.mod(rng.normal(cfg.window_start_mean_h, cfg.window_start_sd_h, size=n), 24.0),
    )


class Day(NamedTuple):
    """One day of one block: events and readings (device = index within the block, sorted)."""

    event_device: np.ndarray
    event_item: np.ndarray
    reading_device: np.ndarray  # the device of each session
    readings: dict              # reading name → one value per session
    session_hours: np.ndarray   # 24 counts of session starts
    word_device: np.ndarray | None = None  # the device of each typed word (word use cases only)
    word_item: np.ndarray | None = None    # index into cfg.words


def trend_share(cfg: DeploymentConfig, day: int) -> float:
    """Share of events replaced by the trend item on ``day`` (0 before the start)."""
    if cfg.trend_item is None or day < cfg.trend_start_day:
        return 0.0
    return cfg.trend_peak_share * min(1.0, (day - cfg.trend_start_day + 1) / cfg.trend_ramp_days)


def draw_day(cfg: DeploymentConfig, traits: Traits, block: int, day: int) -> Day:
    """Sessions, emoji events and readings (typing speed, session length) of every device of ``block``."""
    rng = block_rng(cfg.seed, "day", block, day)
    n = traits.device.size
    sessions = rng.poisson(traits.activity * cfg.sessions_per_day)
    hours = rng.choice(24, size=int(sessions.sum()), p=cfg.rhythm)
    per_session = rng.poisson(cfg.events_per_session, size=hours.size)
    session_device = np.repeat(np.arange(n), sessions)
    event_device = np.repeat(session_device, per_session)
    u = rng.random(event_device.size)
    atom = (traits.cum[event_device] < u[:, None]).sum(axis=1)
    item = traits.atoms[event_device, np.minimum(atom, cfg.n_atoms - 1)].astype(np.int64)
    share = trend_share(cfg, day)
    if share > 0:
        item = np.where(rng.random(item.size) < share, cfg.trend_item, item)
    speed = traits.speed_wpm[session_device] + rng.normal(0.0, cfg.speed_session_sd_wpm, size=hours.size)
    length = traits.session_median_s[session_device] * np.exp(cfg.session_sigma * rng.standard_normal(hours.size))
    word_device = word_item = None
    if cfg.words:
        per = rng.poisson(cfg.words_per_session, size=hours.size)
        word_device = np.repeat(session_device, per)
        cdf = np.cumsum(cfg.word_weights)
        word_item = np.minimum(np.searchsorted(cdf, rng.random(word_device.size), side="right"), len(cdf) - 1)
        if day >= cfg.slang_start_day and cfg.slang_share > 0:
            word_item = np.where(rng.random(word_item.size) < cfg.slang_share, len(cfg.words) - 1, word_item)
    return Day(event_device, item, session_device, {"typing_speed": speed, "session_length": length},
               np.bincount(hours, minlength=24), word_device, word_item)


def draw_online(cfg: DeploymentConfig, block: int, day: int) -> np.ndarray:
    """Which devices of ``block`` are available (online, charging) on ``day``."""
    lo, hi = block_range(cfg, block)
    return block_rng(cfg.seed, "online", block, day).random(hi - lo) < cfg.p_online
