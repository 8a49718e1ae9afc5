"""Which design answers a stated numeric question best, at equal ε per person — docs/math.md §9.12.

A query is one of

* ``quantile:α`` — the α-quantile of a reading (typing speed, words/min), error in the reading's unit;
* ``range:lo,hi`` — the share of devices whose reading lies in [lo, hi) (``inf`` allowed), error in share;
* ``heatmap:KEY`` — a key's 16 × 16 tap map (KEY a name of :data:`KEY_NAMES` or an id), error
  √Σ(p̂ − p)² on the cell shares of the key's devices.

Each design runs ``repeats`` times on one synthetic population (common random numbers: every design sees
the same devices) and is ranked by its root-mean-square error. ε is per person over the run in every
row; what it protects, and whom the design trusts, is in the row:

* local (ε-LDP per device, one report; trusts nobody): SW + EMS on 64 bins, the tree histogram
  (4-ary, 64 leaves), the LDP quadtree, HDG;
* distributed ((ε, δ) per device for add/remove neighbours; trusts the secure-aggregation protocol):
  a flat histogram summed in cohorts with calibrated Skellam noise, the adaptive SecAgg quadtree;
* central (ε-DP per device; trusts the server): seed 004's quadtree with the geometric budget split read
  at its leaves (heat maps), and a flat Laplace histogram.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.distribution_metrics import heatmap_error, quantile_error, range_query_mse, wasserstein1
from ldpsim.evaluation.workloads.key_taps import KEY_NAMES, key_taps
from ldpsim.evaluation.workloads.readings import typing_speed
from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_int
from ldpsim.mechanisms.aggregation.secagg_quadtree import SecAggQuadtree, skellam_for
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum
from ldpsim.mechanisms.central.quadtree import NoisyQuadtree, geometric_allocation
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.mechanisms.numeric.em import EM
from ldpsim.mechanisms.numeric.hdg import HDG
from ldpsim.mechanisms.numeric.quadtree_heatmap import QuadtreeHeatmap
from ldpsim.mechanisms.numeric.square_wave import SW
from ldpsim.mechanisms.numeric.tree_histogram import TreeHistogram, quantile_from_cdf
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.errors import InputError

#: the query forms :func:`parse_query` accepts
QUERY_FORMS = "quantile:ALPHA (0 < ALPHA < 1), range:LO,HI (words/min, HI may be inf) or heatmap:KEY"
#: bins of the 1-D designs (64 leaves of [0, 100] words/min) and cells per side of the heat maps
BINS, SIDE = 64, 16
#: smallest secure-aggregation cohort of the heat-map designs (a key's devices are a thirtieth of the fleet)
HEATMAP_COHORT = 200
#: the reading's public range (typing speed, words/min)
WPM = (0.0, 100.0)


@dataclass(frozen=True)
class Query:
    """A parsed query: ``kind`` in {"quantile", "range", "heatmap"} and its arguments."""

    kind: str
    alpha: float = math.nan
    low: float = math.nan
    high: float = math.nan
    key: int = -1

    @property
    def unit(self) -> str:
        return {"quantile": "words/min", "range": "share of devices", "heatmap": "L2 of cell shares"}[self.kind]


def parse_query(text: str) -> Query:
    """``quantile:0.95``, ``range:30,inf`` or ``heatmap:space`` → :class:`Query` (``InputError`` otherwise)."""
    kind, _, arg = str(text).partition(":")

    def bad():
        return InputError(f"The 'query' parameter must be {QUERY_FORMS} (KEY one of {', '.join(KEY_NAMES)} "
                          f"or an id 0–{len(KEY_NAMES) - 1}). Got {text!r} instead.")
    try:
        if kind == "quantile":
            alpha = float(arg)
            if not 0 < alpha < 1:
                raise bad()
            return Query("quantile", alpha=alpha)
        if kind == "range":
            low, high = (float(v) for v in arg.split(","))
            if not (math.isfinite(low) and low < high):
                raise bad()
            return Query("range", low=low, high=high)
        if kind == "heatmap":
            key = KEY_NAMES.index(arg) if arg in KEY_NAMES else int(arg)
            if not 0 <= key < len(KEY_NAMES):
                raise bad()
            return Query("heatmap", key=key)
    except ValueError:
        raise bad() from None
    raise bad()


@dataclass(repr=False)
class DesignRanking(BriefRepr):
    """The designs ranked for one query: ``table`` has one row per design (``design``, ``rmse`` in
    ``unit``, ``guarantee``, ``trusts``, ``note``), best first; ``truth`` is the query's true answer (for a
    heat map, the number of devices on the key, whose map is the truth)."""

    query: str
    unit: str
    epsilon: float
    devices: int
    repeats: int
    truth: float
    table: pd.DataFrame


def _answer(query: Query, edges: np.ndarray, masses: np.ndarray) -> float:
    """The query's answer from estimated bin masses (uniform inside a bin): a range's share is linear in the
    masses (unbiased for an unbiased design); a quantile reads the monotone CDF (running maximum of the
    prefix shares, clipped to [0, 1]), as :meth:`TreeHistogram.quantile` does."""
    m = np.asarray(masses, np.float64)
    cdf = np.concatenate([[0.0], np.cumsum(m)]) / m.sum()
    if query.kind == "quantile":
        cdf = np.clip(np.maximum.accumulate(cdf), 0.0, 1.0)
        cdf[-1] = 1.0
        return float(quantile_from_cdf(edges, cdf, np.array([query.alpha]))[0])
    lo, hi = np.clip([query.low, query.high], edges[0], edges[-1])
    return float(np.diff(np.interp([lo, hi], edges, cdf))[0])


def reading_estimators(epsilon: float, delta: float):
    """The 1-D designs at ε per person: name → (estimator of the 64 bin counts from (values on [−1, 1], true bin counts, rng), guarantee, trusts, devices
    a release needs)."""
    em = EM(SW(epsilon), bins=BINS, smoothing=True)
    tree = TreeHistogram(epsilon, 4, 3)
    secagg = SecureSum(skellam_for(epsilon, delta), min_cohort=1000, min_arrival=1.0)
    local = f"ε = {epsilon:g}-LDP per device (one report)"
    return {
        "ldp-sw-ems": (lambda v, c, r: v.size * em.estimate(em.aggregate(em.mechanism.perturb(v, r))), local, "nobody", 0),
        "ldp-tree": (lambda v, c, r: tree.estimate(tree.sample_aggregate(c, r)), local, "nobody", 0),
        "secagg-flat": (lambda v, c, r: secagg.release(c, r)[0],
                        f"(ε = {epsilon:g}, δ = {delta:g}) per device, add/remove", "the secure-aggregation protocol",
                        secagg.min_cohort),
        "central-flat": (lambda v, c, r: c + r.laplace(0.0, 1.0 / epsilon, c.size),
                         f"ε = {epsilon:g}-DP per device, add/remove", "the server", 0),
    }


def map_estimators(epsilon: float, delta: float, n_key: int):
    """The heat-map designs at ε per person: name → (estimator of the side × side counts from (points, true grid, rng), guarantee, trusts, devices a release
    needs: one cohort, per level for the adaptive quadtree, whose devices split over its levels)."""
    quad, hdg = QuadtreeHeatmap(epsilon, SIDE), HDG(epsilon, n_key, SIDE)
    secagg_tree = SecAggQuadtree(epsilon, delta, SIDE, min_cohort=HEATMAP_COHORT)
    secagg = SecureSum(secagg_tree.noise, min_cohort=HEATMAP_COHORT, min_arrival=1.0)
    budgets = geometric_allocation(epsilon, int(math.log2(SIDE)), 2 ** (1 / 3))
    local = f"ε = {epsilon:g}-LDP per device (one report)"
    distributed = f"(ε = {epsilon:g}, δ = {delta:g}) per device, add/remove; cohorts ≥ {HEATMAP_COHORT}"
    return {
        "ldp-quadtree": (lambda p, g, r: quad.estimate(quad.sample_aggregate(g, r)), local, "nobody", 0),
        "ldp-hdg": (lambda p, g, r: hdg.estimate(hdg.sample_aggregate(g, r)), f"{local}; g1 = {hdg.g1}, g2 = {hdg.g2}",
                    "nobody", 0),
        "secagg-quadtree": (lambda p, g, r: secagg_tree.release(g, r).estimate, distributed,
                            "the secure-aggregation protocol", HEATMAP_COHORT * secagg_tree.height),
        "secagg-flat": (lambda p, g, r: secagg.release(g.ravel(), r)[0].reshape(SIDE, SIDE), distributed,
                        "the secure-aggregation protocol", HEATMAP_COHORT),
        "central-quadtree": (lambda p, g, r: NoisyQuadtree.build(p, budgets, r).noisy[0].T,
                             f"ε = {epsilon:g}-DP per device (seed 004's geometric split, leaves ε₀ = {budgets[0]:.3g})",
                             "the server", 0),
        "central-flat": (lambda p, g, r: g + r.laplace(0.0, 1.0 / epsilon, g.shape),
                         f"ε = {epsilon:g}-DP per device, add/remove", "the server", 0),
    }


def rank_designs(query: str, epsilon: float = 1.0, devices: int = 100_000, repeats: int = 20,
                 delta: float = DELTA_RELEASE, rng=None) -> DesignRanking:
    """Rank the numeric designs by their error on ``query`` at ε per person (docs/math.md §9.12).

    Parameters
    ----------
    query : str
        ``quantile:α``, ``range:lo,hi`` (words/min) or ``heatmap:KEY`` (:func:`parse_query`).
    epsilon : float, default 1
        ε per person over the run (one report for the local designs; the release's for the others).
    devices : int, default 100 000
        Devices in the fleet; a heat map uses the devices that tapped the key (one tap each on one of 30 keys).
    repeats : int, default 20
        Runs per design (the RMSE is over them).
    delta : float, default 1e-9
        δ of the distributed designs.
    rng : numpy.random.Generator, int or None

    Returns
    -------
    DesignRanking
    """
    q = parse_query(query)
    epsilon = check_epsilon("rank_designs", epsilon)
    devices = check_int("rank_designs", "devices", devices, low=100)
    repeats = check_int("rank_designs", "repeats", repeats, low=2)
    g_data, g_runs = as_generator(rng).spawn(2)
    if q.kind == "heatmap":
        taps = key_taps(devices, rng=g_data)
        points = taps.xy[taps.keys == q.key]
        grid = taps.grid_counts(SIDE)[q.key]
        n = int(grid.sum())
        designs = map_estimators(epsilon, delta, max(n, 1))
        truth = float(n)

        def error(est):
            return math.sqrt(float((((np.asarray(est) - grid) / n) ** 2).sum()))
        data = (points, grid)
    else:
        speed, n = typing_speed(devices, rng=g_data), devices
        edges = np.linspace(*WPM, BINS + 1)
        counts = bin_counts(speed.values)
        truth = _answer(q, edges, counts)
        designs = reading_estimators(epsilon, delta)

        def error(est):
            return _answer(q, edges, est) - truth
        data = (speed.values, counts)
    rows = []
    for name, (estimate, guarantee, trusts, needs) in designs.items():
        streams = np.random.SeedSequence(g_runs.integers(2 ** 63)).spawn(repeats)
        errs = np.array([error(estimate(*data, np.random.default_rng(s))) for s in streams])
        rows.append({"design": name, "rmse": float(np.sqrt(np.mean(errs ** 2))), "guarantee": guarantee,
                     "trusts": trusts, "note": f"fewer than {needs} devices expected: nothing published"
                     if n < needs else ""})
    table = pd.DataFrame(rows).sort_values("rmse", kind="stable").reset_index(drop=True)
    return DesignRanking(query, q.unit, epsilon, devices, repeats, truth, table)


#: range sizes (in the 64 bins) the sweep measures, the quantiles it reads and the keys whose maps it scores
SWEEP_SIZES, SWEEP_ALPHAS, SWEEP_KEYS = (1, 4, 16, 48), (0.5, 0.9, 0.95), ("e", "space", "q")
#: the sweep's names of the errors in words/min (:func:`reading_errors`)
IN_WPM = {"wasserstein": "wasserstein_wpm", "quantile_error": "quantile_error_wpm"}


def design_sweep(epsilons=(0.5, 1.0, 2.0, 4.0), devices: int = 100_000, repeats: int = 10,
                 delta: float = DELTA_RELEASE, rng=None) -> pd.DataFrame:
    """Every design's errors over a grid of ε per person, on one population (docs/math.md §4.2, §9.12).

    The 1-D designs (typing speed on 64 bins of [0, 100] words/min) give the range-query MSE of range shares
    for ranges of 1, 4, 16 and 48 bins (``range_mse_<s>``), the Wasserstein-1 distance in words/min (estimate
    clipped at 0 and normalised) and the mean |error| of the 50th, 90th and 95th percentiles in words/min;
    the heat-map designs give √Σ(p̂ − p)² of the cell shares of the keys e, space and q (``heatmap_l2``,
    one row per key). Means over ``repeats`` runs, with their standard errors (``*_se``).

    Parameters
    ----------
    epsilons : sequence of float
        ε per person over the run.
    devices : int, default 100 000
    repeats : int, default 10
    delta : float, default 1e-9
        δ of the distributed designs.
    rng : numpy.random.Generator, int or None

    Returns
    -------
    pandas.DataFrame
        Long table: ``epsilon, design, family ("reading" or "heatmap"), key, metric, mean, se``.
    """
    devices = check_int("design_sweep", "devices", devices, low=100)
    repeats = check_int("design_sweep", "repeats", repeats, low=2)
    epsilons = [check_epsilon("design_sweep", e) for e in epsilons]
    g_data, g_runs = as_generator(rng).spawn(2)
    g_speed, g_taps = g_data.spawn(2)
    speed = typing_speed(devices, rng=g_speed)
    counts = bin_counts(speed.values)
    taps = key_taps(devices, rng=g_taps)
    grids = taps.grid_counts(SIDE)
    rows = []

    def add(eps, design, family, key, metric, values):
        v = np.asarray(values, np.float64)
        rows.append({"epsilon": eps, "design": design, "family": family, "key": key, "metric": metric,
                     "mean": float(v.mean()), "se": float(v.std(ddof=1) / math.sqrt(v.size))})

    for eps in epsilons:
        for name, (estimate, *_rest) in reading_estimators(eps, delta).items():
            streams = np.random.SeedSequence(g_runs.integers(2 ** 63)).spawn(repeats)
            errors = pd.DataFrame([reading_errors(counts, estimate(speed.values, counts, np.random.default_rng(s)), WPM)
                                   for s in streams])
            for metric in errors:
                add(eps, name, "reading", "", IN_WPM.get(metric, metric), errors[metric])
        for key in SWEEP_KEYS:
            k = KEY_NAMES.index(key)
            grid, points = grids[k], taps.xy[taps.keys == k]
            for name, (estimate, *_rest) in map_estimators(eps, delta, int(grid.sum())).items():
                streams = np.random.SeedSequence(g_runs.integers(2 ** 63)).spawn(repeats)
                est = np.array([estimate(points, grid, np.random.default_rng(s)) for s in streams])
                add(eps, name, "heatmap", key, "heatmap_l2",
                    np.sqrt(heatmap_error(np.broadcast_to(grid, est.shape), est).l2sq))
    return pd.DataFrame(rows)


def _simplex(masses: np.ndarray) -> np.ndarray:
    """Signed masses clipped at 0 (all-zero → uniform), for the distances that need a distribution."""
    m = np.clip(masses, 0.0, None)
    return m if m.sum() > 0 else np.ones_like(m)


def bin_counts(values) -> np.ndarray:
    """Counts of readings on [−1, 1] over the :data:`BINS` equal bins the 1-D designs estimate."""
    v = np.asarray(values, np.float64)
    return np.bincount(np.minimum(((v + 1) / 2 * BINS).astype(np.int64), BINS - 1), minlength=BINS)


def reading_errors(counts, est, value_range=(-1.0, 1.0)) -> dict:
    """The errors of one estimate of a reading's :data:`BINS` bin counts (docs/math.md §4.2): the range-query MSE
    of range shares for ranges of :data:`SWEEP_SIZES` bins (``range_mse_<s>``), the Wasserstein-1 distance in
    the reading's unit (the estimate clipped at 0 and normalised) and the mean |error| of the
    :data:`SWEEP_ALPHAS` quantiles in the reading's unit (``quantile_error``).

    Parameters
    ----------
    counts : array_like, shape (BINS,)
        True counts per bin (positive total).
    est : array_like, shape (BINS,)
        Estimated counts per bin (signed allowed).
    value_range : (float, float)
        The public range the bins cover, in the reading's unit.

    Returns
    -------
    dict
        ``range_mse_1``, …, ``wasserstein``, ``quantile_error``.
    """
    counts, est = np.asarray(counts, np.float64), np.asarray(est, np.float64)
    edges = np.linspace(*value_range, BINS + 1)
    true_q = quantile_from_cdf(edges, np.concatenate([[0.0], np.cumsum(counts)]) / counts.sum(),
                               np.array(SWEEP_ALPHAS))
    values = [*range_query_mse(counts, est, SWEEP_SIZES).tolist(), wasserstein1(counts, _simplex(est), *value_range),
              float(quantile_error(true_q, [_answer(Query("quantile", alpha=a), edges, est) for a in SWEEP_ALPHAS]).mean())]
    return dict(zip(READING_METRICS, values))


#: the names of :func:`reading_errors` and of :func:`map_errors`, in their order
READING_METRICS = tuple(f"range_mse_{s}" for s in SWEEP_SIZES) + ("wasserstein", "quantile_error")
MAP_METRICS = ("heatmap_l1", "heatmap_l2", "heatmap_max")


def map_errors(grid, est) -> dict:
    """The errors of one key's estimated map of tap counts (docs/math.md §4.2, :func:`heatmap_error`):
    ``heatmap_l1`` = Σ|p̂ − p|, ``heatmap_l2`` = √Σ(p̂ − p)², ``heatmap_max`` = max |p̂ − p| over the cells'
    shares of the key's true taps."""
    err = heatmap_error(np.asarray(grid)[None], np.asarray(est)[None])
    return dict(zip(MAP_METRICS, (float(err.l1[0]), float(np.sqrt(err.l2sq[0])), float(err.max_abs[0]))))


def rank_sweep(query: str, epsilons=(0.5, 1.0, 2.0, 4.0), devices: int = 100_000, repeats: int = 20,
               delta: float = DELTA_RELEASE, rng=0) -> pd.DataFrame:
    """:func:`rank_designs` at each ε per person, on the same population (``rng`` is an integer seed reused
    for every ε, so the devices are the same and only the designs' noise differs).

    Returns
    -------
    pandas.DataFrame
        ``epsilon, rank`` and the ranking's columns (``design, rmse, guarantee, trusts, note``).
    """
    seed = check_int("rank_sweep", "rng", rng, low=0)
    frames = [rank_designs(query, e, devices, repeats, delta, seed).table.rename_axis("rank").reset_index()
              .assign(epsilon=e, rank=lambda t: t["rank"] + 1) for e in epsilons]
    out = pd.concat(frames, ignore_index=True)
    return out[["epsilon", "rank"] + [c for c in out.columns if c not in ("epsilon", "rank")]]
