"""The maximal-gain reports, derived from each oracle's estimator — docs/math.md §7.5.

Every count estimator here is linear in the reports, so one report adds a fixed amount to Σ_{t∈T} ĉ_t;
the maximal gain attack (MGA) sends a report that maximises that amount over the report space.
This module finds those reports (and the weights they are read from); :mod:`.gains` turns them into
closed forms and :mod:`.attacks` into fake reports.

* one-output oracles (GRR, RR, URR, SDGRR: ĉ = A·counts; HR: ĉ_x = κ(2S_x − T_j)): the weight of output
  y is w_y = Σ_t A[t, y]; MGA reports an output of largest weight (:func:`output_weights`, :func:`best_outputs`);
* OLH, BLH: a hash seed under which all targets share one value (:func:`olh_seed_pool`: a vectorized
  search over up to :data:`OLH_SEED_BUDGET` seeds; where that cannot find one, the best seeds found);
* FLH: the pool function and value shared by most targets (:func:`flh_best_cells`);
* RAPPOR (least-squares estimator): per cohort the bit pattern S_i = [W_ci > 0] of the weights
  W = C·Σ_t A[t, ·]/(q* − p*), in the cohort where it is worth most (:func:`rappor_best`);
* SHE: the estimate is a column sum, unbounded; the attacker's values are capped at what a genuine
  entry exceeds with probability ½·10⁻⁶ (:func:`she_cap`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ldpsim.mechanisms import HR, RAPPOR
from ldpsim.mechanisms.frequency.hadamard_response import parity

#: seeds the OLH attacker tries at most (vectorized, 2^18 at a time): finds a full collision of r
#: targets when g^(r−1) ≲ 10⁷
OLH_SEED_BUDGET = 1 << 26
_SEED_CHUNK = 1 << 18
#: SHE's cap: a genuine entry 1[x=i] + Lap(2/ε) exceeds 1 + B with probability ½·SHE_TAIL
SHE_TAIL = 1e-6


def target_indices(items, targets) -> np.ndarray:
    """Positions of ``targets`` in ``items``; ``ValueError`` unless they are distinct members of ``items``."""
    where = {item: i for i, item in enumerate(items)}
    missing = [t for t in targets if t not in where]
    if not len(targets) or missing or len(set(targets)) != len(targets):
        raise ValueError(f"The 'targets' parameter must be a non-empty list of distinct items of the oracle "
                         f"({len(where)} items). Got {list(targets)[:10]!r}"
                         + (f" ({missing[:5]!r} not among the items)." if missing else "."))
    return np.array([where[t] for t in targets], dtype=np.int64)


def output_weights(mech, targets) -> np.ndarray:
    """w_y = Σ_{t∈T} (contribution of one report y to ĉ_t), over the K outputs of a one-output oracle."""
    t = np.asarray(targets, dtype=np.int64)
    if isinstance(mech, HR):
        o = np.arange(mech.n_outputs)
        in_block = (o[None, :] // mech.block_size) == (t[:, None] // (mech.block_size - 1))
        sign = 1 - 2 * parity((t[:, None] % (mech.block_size - 1) + 1) & (o[None, :] % mech.block_size))
        return mech.kappa * (in_block * sign).sum(axis=0)   # κ(2·[o ∈ C_t] − [o in t's block])
    return mech.estimator_matrix()[t].sum(axis=0)


def best_outputs(weights: np.ndarray) -> np.ndarray:
    """The outputs of largest weight (ties to within 1e-9 relative): MGA sends one of them uniformly."""
    top = weights.max()
    return np.flatnonzero(weights >= top - 1e-9 * max(1.0, abs(top)))


@lru_cache(maxsize=64)
def olh_seed_pool(mech, targets: tuple, size: int = 64, budget: int | None = None):
    """The attacker's seeds for OLH/BLH: up to ``size`` seeds hashing every target to one value.

    Random seeds (a generator seeded by g and the targets) are hashed 2^18 at a time until ``size``
    full collisions are found or ``budget`` (default :data:`OLH_SEED_BUDGET`) seeds were tried (about
    g^(r−1) tries per collision). The pool keeps only the seeds of the largest support found (all r
    when a full collision was found). Returns (seeds, values y, number of targets each supports);
    :mod:`.gains` evaluates the closed form at that support.
    """
    budget = OLH_SEED_BUDGET if budget is None else budget
    rng = np.random.default_rng([mech.g, *targets])
    t = np.asarray(targets, dtype=np.int64)
    seeds, ys, support = [], [], []
    tried = full = 0
    floor = 1                                                                       # best support so far
    while tried < budget and full < size:
        cand = rng.integers(0, 1 << 32, size=_SEED_CHUNK, dtype=np.uint32)
        h = mech.hash_items(cand[:, None], t[None, :])                              # chunk × r
        share = (h[:, :, None] == h[:, None, :]).sum(axis=2, dtype=np.uint8)        # targets sharing each value
        most = share.max(axis=1)
        floor = max(floor, int(most.max()))
        top = np.flatnonzero(most >= floor)[:size]                                  # only seeds as good as the best
        best = share[top].argmax(axis=1)
        seeds.append(cand[top])
        ys.append(h[top, best].astype(np.int64))
        support.append(most[top].astype(np.int64))
        full += int((most[top] == t.size).sum())
        tried += cand.size
    seeds, ys, support = (np.concatenate(a) for a in (seeds, ys, support))
    keep = np.argsort(-support, kind="stable")[:size]
    keep = keep[support[keep] == support[keep[0]]]                                 # only the best support
    return seeds[keep], ys[keep], support[keep]


def flh_best_cells(mech, targets) -> tuple[np.ndarray, np.ndarray, int]:
    """(pool indices j, values y, N*): the cells (j, y) where the most targets hash, N* of them."""
    H = mech.hash_table(np.asarray(targets, dtype=np.int64))                        # k′ × r
    counts = np.zeros((mech.pool_size, mech.g), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(mech.pool_size), H.shape[1]), H.ravel()), 1)
    j, y = np.nonzero(counts == counts.max())
    return j, y, int(counts.max())


def rappor_weights(mech: RAPPOR, targets, items) -> np.ndarray:
    """W (C × k): one report (c, S) adds Σ_i W[c, i]·(S_i − p*) to Σ_t ĉ_t (least squares, C·A·t)."""
    items = list(items)
    _, A = mech.design(items)
    idx = target_indices(items, targets)
    qs, ps = mech.bit_probabilities()
    return mech.cohorts * A[idx].sum(axis=0).reshape(mech.cohorts, mech.num_bits) / (qs - ps)


def rappor_best(mech: RAPPOR, targets, items) -> tuple[int, np.ndarray, float]:
    """(cohort, bits, gain): S_i = [W_ci > 0] in the cohort maximising Σ_i max(W(1 − p*), −W·p*)."""
    W = rappor_weights(mech, targets, items)
    _, ps = mech.bit_probabilities()
    value = np.maximum(W * (1 - ps), -W * ps).sum(axis=1)
    c = int(value.argmax())
    return c, W[c] > 0, float(value[c])


def she_cap(mech) -> float:
    """B = b·ln(1/SHE_TAIL), b = 2/ε: MGA's value on each target entry is 1 + B."""
    return mech.scale * math.log(1 / SHE_TAIL)
