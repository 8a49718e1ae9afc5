"""A deployment's numeric use cases: key-tap heat maps and reading distributions, night by night — docs/math.md §9.14.

For each ``[numeric.<name>]`` use case of a deployment scenario the run draws which devices report on each
night (opted in with the fleet's ``opt_in``, online with its ``p_online``, independently of the emoji and
reading use cases), one tap (:func:`~ldpsim.evaluation.workloads.key_taps.key_taps`, all nights' taps in one
draw, so the keys' offsets are the run's) or one reading (:data:`~ldpsim.evaluation.numeric_use.READINGS`)
per reporting device and night, privatizes them with the use case's design and releases one aggregate per
night (per key for heat maps). A device's owner — left- or right-handed, and the habit offset of every tap it
makes — is drawn once for the run from its block's ``"habits"`` stream (:func:`fleet_habits`), so a device
keeps it on every night it taps, and any shard of the fleet draws the same owners. The run's estimate is
the sum of the nights' estimates, compared with the sum of the nights' true counts. A reading's night whose
devices are fewer than its release needs (a secure sum's smallest cohort) publishes nothing: its metrics count
the published nights only, and ``nights_released`` says how many there were (no error metric when none was).
A device reports at most
once a night (a night's releases of different keys hold different devices); the run's accountant charges
each use case's nights (:func:`~ldpsim.evaluation.privacy.accountant.numeric_row`), and the ε and δ per
person over the run in the metrics are the accountant's. The numeric use cases do not go through the
channel, the server's store or the ledger's budget.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.evaluation.numeric_designs import BINS, map_errors, reading_errors
from ldpsim.evaluation.numeric_use import READINGS, estimate_maps, estimate_reading, unit_of
from ldpsim.evaluation.privacy.accountant import numeric_row
from ldpsim.evaluation.workloads.key_taps import KEY_NAMES, KeyTaps, device_habits, key_taps
from ldpsim.simulator.fleet import block_range, stream

#: columns of the metrics table (long: one row per use case, key and metric)
METRIC_COLUMNS = ("use_case", "design", "family", "key", "unit", "metric", "value", "reports", "epsilon_report",
                  "epsilon_person", "delta", "delta_person", "guarantee", "trusts")


def reporting_nights(cfg, rng) -> np.ndarray:
    """(days, devices) bool: device i reports on night d (opted in, and online that night)."""
    opted = rng.random(cfg.n_devices) < cfg.opt_in
    return np.stack([opted & (rng.random(cfg.n_devices) < cfg.p_online) for _ in range(cfg.n_days)])


def fleet_habits(cfg, blocks=None) -> tuple[np.ndarray, np.ndarray]:
    """(left_handed, habit) of the devices of ``blocks`` (default: every block, so all ``cfg.n_devices``), in
    device order: block b's owners from its own stream ``("habits", b)``, one vectorised draw per block
    (:func:`~ldpsim.evaluation.workloads.key_taps.device_habits`)."""
    blocks = range(-(-cfg.n_devices // cfg.block_size)) if blocks is None else blocks
    parts = [device_habits(hi - lo, np.random.default_rng(stream(cfg.seed, "habits", b)))
             for b in blocks for lo, hi in [block_range(cfg, b)]]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def run_taps(cfg, nights: np.ndarray, rng) -> tuple[np.ndarray, KeyTaps]:
    """(device, taps): the run's taps, night by night (device ids in increasing order within a night), one per
    reporting device and night of ``nights`` (:func:`reporting_nights`), each with its device's owner."""
    device = np.nonzero(nights)[1]
    left, habit = fleet_habits(cfg)
    return device, key_taps(max(device.size, 1), rng=rng,
                            habits=(left[device], habit[device]) if device.size else None)


def numeric_run(cfg, uc, index: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(metrics, cells) of numeric use case ``uc`` (the ``index``-th of the run; its streams are the run's
    ``("numeric", index)`` children).

    Returns
    -------
    metrics : pandas.DataFrame
        :data:`METRIC_COLUMNS`: ``heatmap_l1``, ``heatmap_l2``, ``heatmap_max`` per key (shares of the key's
        taps over the run), or a reading's ``nights_released`` and (over those nights) ``range_mse_<s>``,
        ``wasserstein`` and ``quantile_error`` (in ``unit``); ``epsilon_report`` and ``delta`` are ε and δ of one report or release, ``epsilon_person``
        and ``delta_person`` the accountant's per person over the run (:func:`numeric_row`).
    cells : pandas.DataFrame
        ``use_case, key, cell, low, high, true_count, estimate``: the run's true and estimated counts per
        bin (``low``/``high`` its edges in the reading's unit) or per map cell (``cell`` = row · 16 + column,
        row 0 at the bottom of the key).
    """
    g_who, g_data, g_noise = np.random.default_rng(stream(cfg.seed, "numeric", index)).spawn(3)
    nights = reporting_nights(cfg, g_who)
    per_night = nights.sum(axis=1)
    total = int(per_night.sum())
    bounds = np.concatenate([[0], np.cumsum(per_night)])
    design = uc.design
    noise = np.random.SeedSequence(int(g_noise.integers(2 ** 63))).spawn(cfg.n_days)
    if design.family == "heatmap":
        taps = run_taps(cfg, nights, g_data)[1]
        truth, est = 0, 0
        for d in range(cfg.n_days):
            s = slice(bounds[d], bounds[d + 1])
            t, e = estimate_maps(design, taps._replace(keys=taps.keys[s], xy=taps.xy[s]), uc.keys,
                                 np.random.default_rng(noise[d]))
            truth, est = truth + t, est + e
        rows = [(KEY_NAMES[k], "share of the key's taps", m, v, int(truth[j].sum()))
                for j, k in enumerate(uc.keys) if truth[j].sum() > 0 for m, v in map_errors(truth[j], est[j]).items()]
        cells = pd.concat([pd.DataFrame({"use_case": uc.name, "key": KEY_NAMES[k], "cell": np.arange(truth[j].size),
                                         "low": np.nan, "high": np.nan, "true_count": truth[j].ravel(),
                                         "estimate": est[j].ravel()}) for j, k in enumerate(uc.keys)],
                          ignore_index=True)
    else:
        unit, value_range = unit_of(uc.reading)
        values = READINGS[uc.reading](max(total, 1), rng=g_data).values
        truth, est = np.zeros(BINS), np.zeros(BINS)
        published = per_night >= max(design.estimator()[3], 1)   # a night below the release's cohort publishes nothing
        for d in np.flatnonzero(published):
            t, e = estimate_reading(design, values[bounds[d]:bounds[d + 1]], np.random.default_rng(noise[d]))
            truth, est = truth + t, est + e
        counted = int(per_night[published].sum())
        rows = [("", unit, "nights_released", float(published.sum()), total)]
        rows += [("", unit, m, v, counted) for m, v in reading_errors(truth, est, value_range).items()] if counted else []
        edges = np.linspace(*value_range, BINS + 1)
        cells = pd.DataFrame({"use_case": uc.name, "key": "", "cell": np.arange(BINS), "low": edges[:-1],
                              "high": edges[1:], "true_count": truth, "estimate": est})
    _, guarantee, trusts, _ = design.estimator()
    spend = numeric_row(uc, cfg.n_days)
    scope = {"epsilon_report": spend["epsilon_report"], "epsilon_person": spend["epsilon_person"],
             "delta": design.guarantee.delta, "delta_person": spend["delta_device"], "guarantee": guarantee,
             "trusts": trusts}
    metrics = pd.DataFrame([{"use_case": uc.name, "design": design.name, "family": design.family, "key": key,
                             "unit": unit, "metric": m, "value": v, "reports": n, **scope}
                            for key, unit, m, v, n in rows], columns=list(METRIC_COLUMNS))
    return metrics, cells


def numeric_tables(cfg, use_cases) -> dict:
    """``numeric_metrics`` and ``numeric_cells`` of every numeric use case of a run (empty tables for none)."""
    parts = [numeric_run(cfg, uc, i) for i, uc in enumerate(use_cases)]
    if not parts:
        return {"numeric_metrics": pd.DataFrame(), "numeric_cells": pd.DataFrame()}
    return {"numeric_metrics": pd.concat([m for m, _ in parts], ignore_index=True),
            "numeric_cells": pd.concat([c for _, c in parts], ignore_index=True)}
