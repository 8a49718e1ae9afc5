"""Frequency gain of an attack measured in the population engine — docs/math.md §7.5.

Each repeat draws the genuine users' aggregate from its exact law
(:func:`ldpsim.simulator.population.simulate_aggregate`, direct path), adds the fake users' aggregate
(:func:`.attacks.fake_aggregate`) — aggregates merge by addition — and compares the targets' estimated
frequencies with and without the fakes on the same genuine draw (common random numbers):
gain = Σ_t f̃_t(genuine + fakes) − Σ_t f̃_t(genuine). Its mean is :func:`.gains.expected_gain`.
Optional ``defense(mech, agg, items) -> frequencies`` post-processes both estimates (normalization).
"""

from __future__ import annotations

import numpy as np

from ldpsim.evaluation.poisoning.attacks import fake_aggregate
from ldpsim.evaluation.poisoning.crafted import target_indices
from ldpsim.mechanisms._validation import as_generator, check_int
from ldpsim.simulator.population import items_for, simulate_aggregate


def frequencies(mech, agg, items) -> np.ndarray:
    """Estimated frequencies (count estimates / number of reports) of every item in ``items``."""
    return mech.estimate(agg, items) / agg.n


def measure_gain(mech, attack: str, targets, counts, items, m: int, repeats: int, rng=None,
                 defense=None) -> np.ndarray:
    """``repeats`` measured frequency gains of ``m`` fakes running ``attack`` for ``targets``.

    Parameters
    ----------
    mech : an oracle of :data:`.gains.ORACLES`
    attack : {"rpa", "ria", "mga"}
    targets : sequence
        Target labels, a subset of ``items``.
    counts, items : arrays
        The genuine population: true counts and their labels.
    m : int ≥ 0
        Number of fake users.
    repeats : int ≥ 1
    rng : int, Generator or None
    defense : callable, optional
        ``defense(mech, aggregate, mech_items) -> frequencies`` of every item (e.g. normalization).

    Returns
    -------
    numpy.ndarray
        One gain per repeat: Σ_t f̃_t(genuine + fakes) − Σ_t f̃_t(genuine); mean = :func:`.gains.expected_gain`.
    """
    repeats = check_int("measure_gain", "repeats", repeats, low=1)
    rng = as_generator(rng)
    mech_items = items_for(mech, items)
    idx = target_indices(list(items), targets)
    tgt = mech_items[idx]
    estimate = defense or frequencies
    gains = np.empty(repeats)
    for i in range(repeats):
        genuine = simulate_aggregate(mech, items, counts, rng, path="auto")
        attacked = genuine + fake_aggregate(mech, attack, list(tgt), m, rng, mech_items)
        gains[i] = estimate(mech, attacked, mech_items)[idx].sum() - estimate(mech, genuine, mech_items)[idx].sum()
    return gains


def _concat(a, b):
    """Two batches of reports as one (arrays, or NamedTuples of arrays field by field)."""
    if isinstance(a, tuple):
        return type(a)(*(np.concatenate([x, y]) for x, y in zip(a, b)))
    return np.concatenate([a, b])


def _select(reports, keep: np.ndarray):
    return type(reports)(*(x[keep] for x in reports)) if isinstance(reports, tuple) else reports[keep]


def gain_after_detection(mech, attack: str, targets, counts, items, m: int, repeats: int, rng=None):
    """Gains when the server first removes the users :func:`.defenses.detect_fake_users` flags.

    Per-report path (detection reads individual reports): genuine reports from the client, fakes from
    :func:`.attacks.fake_reports`. Returns (gains, share of fakes flagged, share of genuine users flagged).
    """
    from ldpsim.evaluation.poisoning.attacks import fake_reports
    from ldpsim.evaluation.poisoning.defenses import detect_fake_users

    repeats = check_int("gain_after_detection", "repeats", repeats, low=1)
    rng = as_generator(rng)
    values = np.repeat(np.arange(len(items)), np.asarray(counts, dtype=np.int64))
    idx = target_indices(list(items), targets)
    out = np.empty((repeats, 3))
    for i in range(repeats):
        genuine = mech.perturb(values, rng)
        both = _concat(genuine, fake_reports(mech, attack, list(idx), m, rng))
        flag = detect_fake_users(mech, both)[0]
        after = mech.estimate(mech.aggregate(_select(both, ~flag)), idx).sum() / max(int((~flag).sum()), 1)
        before = mech.estimate(mech.aggregate(genuine), idx).sum() / values.size
        out[i] = after - before, flag[values.size:].mean(), flag[:values.size].mean()
    return out[:, 0], float(out[:, 1].mean()), float(out[:, 2].mean())
