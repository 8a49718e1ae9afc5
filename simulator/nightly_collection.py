"""A deployment's trust collection: the fleet's exact donations through a trust model's collectors, night by
night — docs/math.md §9.9.

*Scenario*: a use case whose ``aggregation`` is collected (``UseCase.collected``: secagg, two_server,
threshold, …) keeps its donations out of the server's LDP path: each device-day's exact item is handed to
the collectors of :mod:`~ldpsim.simulator.collectors`. The device uploads in the fleet's nightly windows:
night t opens at the device's window start (slotted like its LDP uploads), lasts ``window_length_h`` and
is available only when the device is online that night (the fleet's own ``draw_online``). A donation made
at midnight of day d + 1 is tried on nights d + 1, d + 2, … until it expires (``retention_days``); the
collectors count it at most once. The channel's loss and latency are the fleet's; rounds, jobs, retries,
crashes and invalid reports are ``cfg.collectors``. One release per night (noon to noon).

The collection runs once over the whole fleet, after the shards, from the stream ``("collect", use case)``
of the run's seed, on donations in (day, device) order: the same for any sharding.
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.simulator.collectors import HOUR_S, CollectorSetup, Collection, Opportunities, collect
from ldpsim.simulator.config import DeploymentConfig
from ldpsim.simulator.fleet import block_range, draw_online, stream

DAY_S = 24 * HOUR_S


def collector_setup(cfg: DeploymentConfig) -> CollectorSetup:
    """The collectors' settings of a deployment: its channel, and ``cfg.collectors`` (rounds, jobs, crash)."""
    return CollectorSetup(**{"loss": cfg.loss, "latency_median_s": cfg.latency_median_s,
                             "latency_sigma": cfg.latency_sigma, **dict(cfg.collectors)})


def opportunities(cfg: DeploymentConfig, day: np.ndarray, device: np.ndarray, window_start_h: np.ndarray) -> Opportunities:
    """Upload windows of every donation: the nights its device is online before the donation expires.

    Parameters
    ----------
    cfg : DeploymentConfig
    day, device, window_start_h : numpy.ndarray
        Collection day, global device id and window start hour of each donation.

    Returns
    -------
    Opportunities
    """
    nights = max(1, math.ceil(cfg.retention_days))
    report, open_s, close_s = [], [], []
    block = device // cfg.block_size
    for j in range(nights):
        night = day + 1 + j
        online = np.zeros(device.size, bool)
        key = night * cfg.n_blocks + block
        order = np.argsort(key, kind="stable")
        keys, first = np.unique(key[order], return_index=True)
        for k, sel in zip(keys.tolist(), np.split(order, first[1:])):
            t, b = divmod(k, cfg.n_blocks)
            online[sel] = draw_online(cfg, b, t)[device[sel] - block_range(cfg, b)[0]]
        start = np.floor((night * DAY_S + window_start_h * HOUR_S) / cfg.slot_s) * cfg.slot_s
        expiry = (day + 1 + cfg.retention_days) * DAY_S
        close = np.minimum(start + cfg.window_length_h * HOUR_S, expiry)
        keep = online & (close > start)
        report.append(np.flatnonzero(keep))
        open_s.append(start[keep])
        close_s.append(close[keep])
    return Opportunities(np.concatenate(report), np.concatenate(open_s), np.concatenate(close_s))


def collect_nights(cfg: DeploymentConfig, name: str, protocol, donations: tuple, per_device: bool = False) -> Collection:
    """Run the collectors of the use case ``name`` over a deployment's donations (one release per night).

    Parameters
    ----------
    cfg : DeploymentConfig
    name : str
        A collected use case of ``cfg``.
    protocol : SecureSum, TwoServer or callable
        Its trust model's protocol (:func:`~ldpsim.simulator.collectors.collect`).
    donations : (day, device, item, window_start_h) arrays
        The fleet's exact donations in (day, device) order (``DeploymentResult.donations[name]``).
    per_device : bool
        secagg: draw every device's noise share (the per-device path) instead of each cohort's law.

    Returns
    -------
    Collection
        ``periods``: one release per night (period p is the night after collection day p − 1).
    """
    index = [uc.name for uc in cfg.use_cases].index(name)
    day, device, item, start_h = donations
    rng = np.random.default_rng(stream(cfg.seed, "collect", index))
    opp = opportunities(cfg, day.astype(np.int64), device.astype(np.int64), start_h.astype(float))
    return collect(protocol, item.astype(np.int64), len(cfg.items), opp, collector_setup(cfg), rng, nightly=True,
                   per_device=per_device)
