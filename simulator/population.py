"""The population engine: every user of a categorical population at once, vectorized (no SimPy).

Two paths to the server's aggregate, which agree in distribution (tests prove it):

* ``"reports"`` — users in a uniformly random order, perturbed by the mechanism's client code and
  aggregated batch by batch (at most ``batch_size`` users in memory at a time, default 200 000);
* ``"direct"`` — ``mechanism.sample_aggregate``, the aggregate drawn from its exact distribution;
* ``"auto"`` — direct, unless the mechanism's ``sample_aggregate`` raises ``NotImplementedError``.

Random streams (common random numbers): ``rng`` is split by :func:`streams` into a *population*
stream (the users' order and batch composition) and a *mechanism* stream. The same int seed or an
equal ``SeedSequence`` gives the same population order for every mechanism, so mechanisms compared
at one replicate see the same simulated users. A ``Generator`` is treated as a running stream: each
call spawns fresh children from it (successive calls are independent replicates).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ldpsim.mechanisms._validation import check_counts, check_int

#: largest number of users perturbed at once on the reports path
BATCH_SIZE = 200_000
#: users the reports path can deal out (numpy's multivariate hypergeometric needs a total below 10⁹)
MAX_USERS = 10**9
PATHS = ("auto", "direct", "reports")


def streams(rng, n_streams: int = 2) -> list[np.random.Generator]:
    """Independent child generators (population, mechanism, ...) derived from ``rng`` by spawning.

    An int, None or ``SeedSequence`` is used as a value (its spawn counter is not advanced, so the
    same value always gives the same children); a ``Generator`` spawns new children each call.
    """
    if isinstance(rng, np.random.Generator):
        return list(rng.spawn(n_streams))
    ss = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    children = [np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key + (i,), pool_size=ss.pool_size)
                for i in range(n_streams)]
    return [np.random.default_rng(c) for c in children]


def items_for(mechanism, items) -> np.ndarray:
    """What the mechanism is given as items: the tokens for sketches (``takes_tokens``), else ids 0..D−1."""
    items = np.asarray(items)
    return items if getattr(mechanism, "takes_tokens", False) else np.arange(items.size)


def population_batches(counts, rng, batch_size: int = BATCH_SIZE) -> Iterator[np.ndarray]:
    """Item ids of all users in a uniformly random order, cut into batches of at most ``batch_size``.

    Each batch's composition is a multivariate hypergeometric draw from the users not yet dealt,
    then shuffled: the concatenation is a uniform random permutation of the population, but only
    one batch is ever in memory.
    """
    left = check_counts("population_batches", counts, name="counts").copy()
    batch_size = check_int("population_batches", "batch_size", batch_size, low=1)
    if int(left.sum()) >= MAX_USERS:
        raise ValueError(f"population_batches: 'counts' sum to {int(left.sum()):,} users; the reports path deals at "
                         f"most {MAX_USERS - 1:,} (numpy's hypergeometric sampler); use path='direct'.")
    ids = np.arange(left.size)
    while (remaining := int(left.sum())) > 0:
        take = min(batch_size, remaining)
        drawn = left if take == remaining else rng.multivariate_hypergeometric(left, take)
        batch = np.repeat(ids, drawn)
        rng.shuffle(batch)
        left = left - drawn
        yield batch


def simulate_aggregate(mechanism, items, counts, rng=None, path: str = "auto", batch_size: int = BATCH_SIZE):
    """The server's aggregate for a population with true ``counts`` of ``items``.

    Parameters
    ----------
    mechanism : FrequencyOracle
        Any frequency oracle (e.g. from :func:`ldpsim.make`).
    items : array_like
        Item labels aligned with ``counts`` (see :func:`items_for` for what the mechanism sees:
        the tokens for sketches, ids 0 … D−1 otherwise).
    counts : array_like of non-negative int
        True count of each item; n = their sum.
    rng : int, SeedSequence, Generator or None
        Split into population and mechanism streams by :func:`streams`.
    path : {"auto", "direct", "reports"}, default "auto"
        "direct": the mechanism's exact direct sampler; "reports": per-user reports in batches;
        "auto": direct where the mechanism has one (module docstring).
    batch_size : int, default 200 000
        Users perturbed at once on the reports path (≥ 1).

    Returns
    -------
    Aggregate
        The mechanism's aggregate of the n users (same law on both paths).

    Examples
    --------
    >>> from ldpsim.mechanisms import GRR
    >>> agg = simulate_aggregate(GRR(2.0, 3), ["a", "b", "c"], [60, 30, 10], rng=1)
    >>> agg.n, agg.data.shape
    (100, (3,))
    """
    if path not in PATHS:
        raise ValueError(f"The 'path' parameter of simulate_aggregate must be one of {PATHS}. Got {path!r} instead.")
    counts = check_counts("simulate_aggregate", counts, name="counts")
    if np.shape(items) != counts.shape:
        raise ValueError(f"simulate_aggregate: 'items' and 'counts' must have the same length; "
                         f"got {np.shape(items)} and {counts.shape}.")
    pop_rng, mech_rng = streams(rng)
    mech_items = items_for(mechanism, items)
    if path in ("auto", "direct"):
        try:
            return mechanism.sample_aggregate(counts, mech_rng, mech_items)
        except NotImplementedError:
            if path == "direct":
                raise
    total = None
    for batch in population_batches(counts, pop_rng, batch_size):
        agg = mechanism.perturb_aggregate(mech_items[batch], mech_rng)
        total = agg if total is None else total + agg
    return total if total is not None else mechanism.perturb_aggregate(mech_items[:0], mech_rng)


def estimate_counts(mechanism, items, counts, rng=None, path: str = "auto",
                    batch_size: int = BATCH_SIZE) -> np.ndarray:
    """Estimated counts of ``items`` from one simulated aggregate (:func:`simulate_aggregate`).

    Parameters are those of :func:`simulate_aggregate`.

    Returns
    -------
    numpy.ndarray of float, shape (len(items),)
        ``mechanism.estimate`` of the simulated aggregate, aligned with ``items``.

    Examples
    --------
    >>> from ldpsim.mechanisms import OUE
    >>> estimate_counts(OUE(1.0, 3), [0, 1, 2], [500, 300, 200], rng=0).shape
    (3,)
    """
    agg = simulate_aggregate(mechanism, items, counts, rng, path, batch_size)
    return mechanism.estimate(agg, items_for(mechanism, items))
