"""Speed benchmark of the mechanisms: a data-driven list of cases, each timed in a fresh process.

A :class:`BenchCase` names a registered mechanism, its parameters, the *path* that is timed and,
for the hot paths, its physical *floor* (:mod:`ldpsim.scenarios.studies.bench.floors`). Paths:

* ``per-user``: ``perturb_aggregate`` + ``estimate`` for n users (values drawn beforehand; the
  population engine's path: ``aggregate(perturb(…))`` unless the mechanism fuses them, as SHE and
  the unary encodings do to bound memory);
* ``direct``: ``sample_aggregate`` + ``estimate`` from the true counts (no per-user reports);
* ``em``: the EM post-processing of n SDPM reports (docs/math.md §2.3);
* ``discover`` / ``discover-direct``: a discovery protocol (SFP, PEM, TreeHist; docs/math.md §7.4) on
  the words-slang workload — ``perturb`` + ``aggregate`` + ``discover`` of the top 20 for n users, or
  ``sample_aggregate`` + ``discover``; the row's note gives the F1 of the discovered top 20;
* ``discover-big`` / ``gboard-round``: discovery on words of eight scripts over a 1 335-symbol
  alphabet, and one round of Gboard's trie there (:mod:`ldpsim.scenarios.studies.bench.big_alphabet`);
* ``trust-cell``: one cell of the trust-model comparison (docs/math.md §9.6): one day's count-level
  estimate of a Zipf(1.1) histogram by trust model ``name`` calibrated (untimed) to ε per device over 30
  days, with its MSE and top-10 precision
  (:func:`~ldpsim.scenarios.studies.trust.trust_compare.measure_cell`).

``RUNNERS`` maps a path to its function ``(case, n, domain_size, seed) -> (Stopwatch, estimates)``.
Hook for a later benchmark (e.g. the simulator's device-days/s): add its runner to ``RUNNERS``
under a new path and a case to ``CASES`` with that path and ``unit="device-days"`` — the table,
the fresh-process measurement and the CSV need nothing else.

Each case runs in a fresh *spawned* worker process: one untimed warm-up call, then ``repeats`` pairs
of (floor, path), so the figure is the steady state a sweep or a simulation sees (allocator warmed —
a cold first call page-faults every large temporary — and per-item-set caches such as a sketch's
hashed positions filled). The worker reports the median wall and CPU time of the path, the *floor
ratio* = least path CPU time ÷ least floor CPU time over the pairs (floor and path run back to back,
so the ratio holds on a busy machine where absolute times do not; load only adds time, so the least
time is the robust one), and its peak resident set size (``ru_maxrss`` of
the worker, which includes the interpreter, numpy and the workload: the baseline is reported beside
it). Absolute times are reported, never graded: they say as much about the machine's load as about
the code.
"""

from __future__ import annotations

import concurrent.futures as futures
import dataclasses
import functools
import math
import multiprocessing
import resource
import sys
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms import registry
from ldpsim.mechanisms._validation import as_generator
from ldpsim.mechanisms.numeric.em import EM
from ldpsim.mechanisms.aggregation.secagg_quadtree import SecAggQuadtree
from ldpsim.mechanisms.numeric.hdg import HDG
from ldpsim.mechanisms.numeric.tree_histogram import TreeHistogram

from ldpsim.scenarios.studies.bench.big_alphabet import LENGTH, big_alphabet, discover_big, gboard_round
from ldpsim.scenarios.studies.bench.floors import FLOORS, Stopwatch
from ldpsim.evaluation.discovery.scores import run_scores
from ldpsim.evaluation.privacy.trust_models import TRUST_MODELS
from ldpsim.evaluation.workloads.slang import words_slang
from ldpsim.evaluation.workloads.synthetic import harmonic

#: the unit times are stated for (seconds per 10⁶ users)
PER = 1_000_000


@dataclass(frozen=True)
class BenchCase:
    """One benchmark row: mechanism ``name`` built with ``params``, timed along ``path``.

    ``floor``: the name of the path's physical floor in
    :data:`~ldpsim.scenarios.studies.bench.floors.FLOORS` (None: no floor, no ratio);
    ``domain``: number of items (None: the bench's ``--items``); ``numeric``: the
    mechanism takes readings in [−1, 1] and estimates a mean; ``n``: a fixed size overriding the
    bench's ``--users`` (the direct samplers and EM, whose cost is mostly independent of n, so a
    linear extrapolation from a small n would be wrong). A parameter given as a module-level
    function is called with the domain size; ``domain_size`` is filled in where the class takes it.
    """

    label: str
    name: str
    params: dict
    path: str = "per-user"
    floor: str | None = None
    domain: int | None = None
    numeric: bool = False
    unit: str = "users"
    n: int | None = None
    extra: dict = field(default_factory=dict)

    def items(self, domain_size: int) -> int:
        """The number of items this case uses when the bench's domain is ``domain_size``."""
        return self.domain or domain_size

    def make(self, domain_size: int):
        """The case's mechanism over :meth:`items` items (the registry's one builder)."""
        d = self.items(domain_size)
        params = {k: v(d) if callable(v) else v for k, v in self.params.items()}
        if self.name in UNREGISTERED:
            return UNREGISTERED[self.name](**params)
        return registry.make(self.name, domain_size=d, **params)


#: benchmarked classes outside the mechanism registry (no single-report interface: a tree's reports go
#: to one of its levels)
UNREGISTERED = {"tree-histogram": TreeHistogram, "hdg": HDG, "secagg-quadtree": SecAggQuadtree}


def every_tenth(domain_size: int) -> tuple:
    """Sensitive (URR) / high-sensitivity (SDGRR) ids for the bench: every 10th id, frequent and rare."""
    return tuple(range(0, domain_size, 10))


_CMS_SMALL = {"k": 256, "m": 1024}
#: RAPPOR's bench shape, as deployed: C·k = 1024 regression rows ≥ the 200 candidates (least squares needs
#: full rank)
RAPPOR_BENCH = registry.typical("rappor", "deployed")
_CMS_WIDE = {"k": 65535, "m": 32}

#: the benchmark table; order = print order. Hot paths carry their floor (module docstring of floors).
CASES: list[BenchCase] = [
    BenchCase("rr", "rr", {"epsilon": 1.0}, floor="user-draws", domain=2),
    BenchCase("grr", "grr", {"epsilon": 1.0}, floor="user-draws"),
    BenchCase("urr", "urr", {"epsilon": 1.0, "sensitive": every_tenth}, floor="user-draws"),
    BenchCase("sdgrr", "sdgrr", {"epsilon": 1.0, "high": every_tenth}, floor="user-draws"),
    BenchCase("oue", "oue", {"epsilon": 1.0}, floor="report-bits"),
    BenchCase("olh", "olh", {"epsilon": 1.0}, floor="user-draws"),
    BenchCase("cms k256 m1024 ε4", "cms", {"epsilon": 4.0, **_CMS_SMALL}, floor="report-bits"),
    BenchCase("cms k256 m1024 ε1", "cms", {"epsilon": 1.0, **_CMS_SMALL}, floor="report-bits"),
    BenchCase("cms k65535 m32 ε4", "cms", {"epsilon": 4.0, **_CMS_WIDE}, floor="report-bits"),
    BenchCase("cms k65535 m32 ε1", "cms", {"epsilon": 1.0, **_CMS_WIDE}, floor="report-bits"),
    BenchCase("hcms k256 m1024 ε1", "hcms", {"epsilon": 1.0, **_CMS_SMALL}, floor="user-draws"),
    BenchCase("hcms k65535 m32 ε1", "hcms", {"epsilon": 1.0, **_CMS_WIDE}, floor="user-draws"),
    BenchCase("pm", "pm", {"epsilon": 1.0}, floor="user-draws", numeric=True),
    BenchCase("sdpm", "sdpm", {"epsilon": 1.0, "low": (-0.5, 0.5)}, floor="user-draws", numeric=True),
    BenchCase("rr", "rr", {"epsilon": 1.0}, "direct", n=PER, domain=2),
    BenchCase("grr", "grr", {"epsilon": 1.0}, "direct", n=PER),
    BenchCase("urr", "urr", {"epsilon": 1.0, "sensitive": every_tenth}, "direct", n=PER),
    BenchCase("sdgrr", "sdgrr", {"epsilon": 1.0, "high": every_tenth}, "direct", n=PER),
    BenchCase("oue", "oue", {"epsilon": 1.0}, "direct", n=PER),
    BenchCase("olh", "olh", {"epsilon": 1.0}, "direct", n=PER),
    BenchCase("cms k256 m1024 ε4", "cms", {"epsilon": 4.0, **_CMS_SMALL}, "direct", floor="sketch-cells", n=PER),
    BenchCase("cms k65535 m1024 ε4", "cms", {"epsilon": 4.0, "k": 65535, "m": 1024}, "direct",
              floor="sketch-cells", n=PER),
    BenchCase("hcms k256 m1024 ε1", "hcms", {"epsilon": 1.0, **_CMS_SMALL}, "direct", n=PER),
    BenchCase("sdpm EM d1024", "sdpm", {"epsilon": 1.0, "low": (-0.5, 0.5)}, "em", n=PER,
              numeric=True, unit="reports", extra={"bins": 1024}),
    # distributions of one reading (docs/math.md §2.5, §2.6): SW's client, SW + EMS over 256 bins, and the
    # tree histogram (β = 4, 1024 leaves) per user and from its exact sampler, each with its consistency
    BenchCase("sw", "sw", {"epsilon": 1.0}, floor="user-draws", numeric=True),
    BenchCase("sw EMS d256", "sw", {"epsilon": 1.0}, "em", n=PER, numeric=True, unit="reports",
              extra={"bins": 256, "smoothing": True}),
    BenchCase("tree b4 h5", "tree-histogram", {"epsilon": 1.0, "branching": 4, "height": 5}, "tree",
              floor="level-bits", numeric=True),
    BenchCase("tree b4 h5", "tree-histogram", {"epsilon": 1.0, "branching": 4, "height": 5}, "tree-direct",
              numeric=True, n=PER),
    # heat maps of taps (docs/math.md §2.8, §9.11): HDG per user (beside its groups' report bits) and from its
    # exact sampler; the SecAgg quadtree per device (each device's own noise shares) and at count level
    BenchCase("hdg 16×16", "hdg", {"epsilon": 1.0, "n": PER, "side": 16}, "heatmap", floor="level-bits",
              numeric=True),
    BenchCase("hdg 16×16", "hdg", {"epsilon": 1.0, "n": PER, "side": 16}, "heatmap-direct", numeric=True, n=PER),
    BenchCase("secagg quadtree 16×16", "secagg-quadtree", {"epsilon": 1.0, "side": 16}, "heatmap",
              floor="cell-shares", numeric=True, n=100_000),
    BenchCase("secagg quadtree 16×16", "secagg-quadtree", {"epsilon": 1.0, "side": 16}, "heatmap-direct",
              numeric=True, n=PER),
    # deployed designs and the peers' oracles: measured, compared with the peers
    *[BenchCase(label, name, params, path, floor=floor if path == "per-user" else None, domain=domain,
                n=n if path == "per-user" else PER)
      for label, name, params, floor, domain, n in [
          ("rappor k128 h2 c8 d200", "rappor", {"epsilon": 4 * math.log(3), **RAPPOR_BENCH}, None, 200, None),
          # p = 0, q = 1: no instantaneous response, pure-ldp's RAPPOR (its peer row)
          ("rappor no-IRR d200", "rappor", {"epsilon": 4 * math.log(3), "p": 0.0, "q": 1.0, **RAPPOR_BENCH}, None,
           200, None),
          ("hr ε1", "hr", {"epsilon": 1.0}, "user-draws", None, None),
          ("hr ε4", "hr", {"epsilon": 4.0}, "user-draws", None, None),
          ("sue", "sue", {"epsilon": 1.0}, "report-bits", None, None),
          ("she", "she", {"epsilon": 1.0}, "exponentials", None, 100_000),
          ("the", "the", {"epsilon": 1.0}, "report-bits", None, None),
          ("blh", "blh", {"epsilon": 1.0}, "user-draws", None, 100_000),
          ("flh k1024", "flh", {"epsilon": 1.0, **registry.typical("flh", "deployed")}, "user-draws", None, None),
          ("dbitflip d1", "dbitflip", {"epsilon": 1.0, "d": 1}, "user-draws", None, None),
          ("dbitflip d8", "dbitflip", {"epsilon": 1.0, "d": 8}, "user-draws", None, None)]
      for path in ("per-user", "direct")],
    BenchCase("onebitmean m100", "onebitmean", {"epsilon": 1.0, "m": 100.0}, "counter", floor="user-draws",
              numeric=True),
    BenchCase("onebitmean m100", "onebitmean", {"epsilon": 1.0, "m": 100.0}, "counter-direct", numeric=True,
              n=PER),
    # discovery without a dictionary: one run at n = 10⁶, ε = 4, top 20 of words-slang
    *[BenchCase(f"{name} ε4", name, {"epsilon": 4.0}, path, floor="user-draws" if path == "discover" else None, n=PER)
      for path in ("discover", "discover-direct") for name in ("sfp", "pem", "treehist")],
    *[BenchCase(f"{name} ε4 n1e7", name, {"epsilon": 4.0}, "discover-direct", n=10 * PER)
      for name in ("sfp", "pem", "treehist")],
    # the same on words of eight scripts over 1 335 graphemes (:mod:`.big_alphabet`), and one round of
    # Gboard's trie at ε₀ = 2.9 over devices holding 3 words each
    *[BenchCase(f"{name} ε4 1335 symbols", name, {"epsilon": 4.0, "length": LENGTH, "alphabet": big_alphabet},
                "discover-big", floor="user-draws", n=PER) for name in ("sfp", "pem", "treehist")],
    BenchCase("gboard ε2.9 1335 symbols", "gboard", {"epsilon": 2.9, "length": LENGTH, "alphabet": big_alphabet},
              "gboard-round", floor="user-draws", n=PER, unit="devices"),
    # the trust models' comparison cell: n = 10⁶ devices, D = 2 000 items, one day, ε = 2 over 30 days
    *[BenchCase(f"trust {name} ε2", name, {"epsilon": 2.0}, "trust-cell", n=PER, domain=2000)
      for name in TRUST_MODELS],
]

#: ``--check``'s subset: (label, path) → users, each path a fraction of a second; they share one worker
#: process (the whole check takes well under a minute)
QUICK = {("grr", "per-user"): PER, ("oue", "per-user"): 20_000, ("cms k256 m1024 ε4", "per-user"): 200_000,
         ("cms k256 m1024 ε4", "direct"): PER, ("she", "per-user"): 20_000}


def quick_cases() -> list[BenchCase]:
    """The cases of :data:`QUICK`, each at its user count."""
    return [dataclasses.replace(c, n=QUICK[(c.label, c.path)]) for c in CASES if (c.label, c.path) in QUICK]


# ---- the timed work (runs inside the worker) -----------------------------------------------------
def _per_user(case: BenchCase, n: int, domain_size: int, seed) -> tuple[Stopwatch, np.ndarray]:
    mech = case.make(domain_size)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    if case.numeric:
        values = wl_rng.uniform(-1.0, 1.0, n)
        with Stopwatch() as sw:
            agg = mech.aggregate(mech.perturb(values, run_rng))  # numeric mechanisms have no fused path
            try:
                est = mech.estimate_mean(agg)
            except NotImplementedError:  # SDPM: the mean needs EM (timed by the "em" case)
                est = agg.data
        return sw, np.atleast_1d(np.asarray(est, dtype=float))
    d = case.items(domain_size)
    values = harmonic(n, domain_size=d).values(wl_rng)
    items = np.arange(d)
    with Stopwatch() as sw:
        est = mech.estimate(mech.perturb_aggregate(values, run_rng), items)
    return sw, est


def _direct(case: BenchCase, n: int, domain_size: int, seed) -> tuple[Stopwatch, np.ndarray]:
    mech = case.make(domain_size)
    d = case.items(domain_size)
    counts = harmonic(n, domain_size=d).counts
    items = np.arange(d)
    rng = as_generator(seed)
    with Stopwatch() as sw:
        est = mech.estimate(mech.sample_aggregate(counts, rng, items), items)
    return sw, est


def _em(case: BenchCase, n: int, domain_size: int, seed) -> tuple[Stopwatch, np.ndarray]:
    """EM (docs/math.md §2.3) over ``extra['bins']`` bins on n reports; timed: the exact transition matrix,
    the report histogram and the iterations (not the clients)."""
    mech = case.make(domain_size)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    reports = mech.perturb(wl_rng.uniform(-1.0, 1.0, n), run_rng)
    with Stopwatch() as sw:
        em = EM(mech, bins=case.extra["bins"], smoothing=case.extra.get("smoothing", False))
        est = em.estimate(em.aggregate(reports))
    return sw, est


def _tree(case: BenchCase, n: int, domain_size: int, seed, direct: bool = False) -> tuple[Stopwatch, np.ndarray]:
    """A tree histogram (docs/math.md §2.6) of n readings uniform in [−1, 1]: per user (perturb + aggregate)
    or from the leaf counts by its exact sampler, then the consistent leaves."""
    mech = case.make(domain_size)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    values = wl_rng.uniform(-1.0, 1.0, n)
    counts = np.bincount(mech.leaf_of(values), minlength=mech.leaves)
    with Stopwatch() as sw:
        agg = mech.sample_aggregate(counts, run_rng) if direct else mech.perturb_aggregate(values, run_rng)
        est = mech.estimate(agg)
    return sw, est


def _heatmap(case: BenchCase, n: int, domain_size: int, seed, direct: bool = False) -> tuple[Stopwatch, np.ndarray]:
    """A 16 × 16 heat map of n points uniform in [−1, 1]² (every quadtree cell splits: the worst case): per
    device (HDG: perturb + aggregate; SecAgg quadtree: each device's level, one-hot vector and noise shares)
    or from the cell counts by the exact samplers, then the map."""
    mech = case.make(domain_size)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    points = wl_rng.uniform(-1.0, 1.0, (n, 2))
    if isinstance(mech, SecAggQuadtree):
        grid = mech.layout.cell_grid(points)
        with Stopwatch() as sw:
            est = (mech.release(grid, run_rng) if direct else mech.release_points(points, run_rng)).estimate
        return sw, est.ravel()
    grid = mech.cell_grid(points)
    with Stopwatch() as sw:
        est = mech.estimate(mech.sample_aggregate(grid, run_rng) if direct else mech.perturb_aggregate(points, run_rng))
    return sw, est.ravel()


def _counters(case: BenchCase, n: int, seed):
    mech = case.make(2)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    return mech, wl_rng.uniform(0.0, mech.m, n), run_rng


def _counter(case: BenchCase, n: int, domain_size: int, seed) -> tuple[Stopwatch, np.ndarray]:
    """1BitMean on n counters uniform in [0, m]: perturb + aggregate + mean estimate."""
    mech, values, rng = _counters(case, n, seed)
    with Stopwatch() as sw:
        est = mech.estimate_mean(mech.aggregate(mech.perturb(values, rng)))
    return sw, np.array([est])


def _counter_direct(case: BenchCase, n: int, domain_size: int, seed) -> tuple[Stopwatch, np.ndarray]:
    """1BitMean's direct sampler on n counters (one binomial per distinct value)."""
    mech, values, rng = _counters(case, n, seed)
    values = np.round(values)  # counters: integers, so few distinct values
    with Stopwatch() as sw:
        est = mech.estimate_mean(mech.sample_aggregate(values, rng))
    return sw, np.array([est])


def _discover(case: BenchCase, n: int, domain_size: int, seed, direct: bool = False) -> tuple[Stopwatch, np.ndarray]:
    """One discovery run of the top 20 on words-slang (its default 2000 words + 3 slang words);
    returns the time and the F1 of the discovered list as a 1-element array."""
    mech = case.make(domain_size)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    w = words_slang(n, 0)
    values = None if direct else w.values(wl_rng, as_ids=False)
    with Stopwatch() as sw:
        agg = (mech.sample_aggregate(w.counts, run_rng, w.items) if direct
               else mech.aggregate(mech.perturb(values, run_rng)))
        res = mech.discover(agg, top_k=20)
    return sw, np.array([run_scores(w.items, w.counts, res.words, res.counts, 20)["f1"]])


@functools.lru_cache(maxsize=16)
def _trust_setup(name: str, epsilon: float, n: int, d: int):
    """The calibrated trust model and the Zipf(1.1) day it estimates (untimed, once per worker)."""
    from ldpsim.scenarios.studies.trust.trust_compare import comparison_model
    from ldpsim.scenarios.studies.trust.trust_fleet import zipf_fleet

    fleet = zipf_fleet(n, d)
    return comparison_model(name, epsilon, fleet, 1e-9), fleet.counts


def _trust_cell(case: BenchCase, n: int, domain_size: int, seed) -> tuple[Stopwatch, np.ndarray]:
    """One comparison cell: a day's draw of the calibrated model, its MSE and top-10 precision."""
    from ldpsim.scenarios.studies.trust.trust_compare import measure_cell

    model, counts = _trust_setup(case.name, case.params["epsilon"], n, case.items(domain_size))
    rng = as_generator(seed)
    with Stopwatch() as sw:
        cell = measure_cell(model, counts, 1, 10, rng)
    return sw, np.array([cell["mse_measured"], cell["top_k_precision"]])


#: path → runner ``(case, n, domain_size, seed) -> (Stopwatch, estimates)``; register new paths here
RUNNERS = {"per-user": _per_user, "direct": _direct, "em": _em, "counter": _counter,
           "counter-direct": _counter_direct, "discover": _discover,
           "discover-direct": functools.partial(_discover, direct=True), "trust-cell": _trust_cell,
           "tree": _tree, "tree-direct": functools.partial(_tree, direct=True),
           "heatmap": _heatmap, "heatmap-direct": functools.partial(_heatmap, direct=True),
           "discover-big": discover_big, "gboard-round": gboard_round}


def peak_rss_bytes() -> int:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


#: a floor's work is repeated until it has taken this much CPU time (then averaged): short floors are noisy
FLOOR_MIN_CPU = 0.05


def _floor_cpu(fn, mech, n: int, domain_size: int, rng) -> float:
    """CPU seconds of one run of floor ``fn``: the mean over as many runs as take ``FLOOR_MIN_CPU``."""
    total, runs = 0.0, 0
    while total < FLOOR_MIN_CPU and runs < 100:
        total += fn(mech, n, domain_size, rng).cpu
        runs += 1
    return total / runs


def _worker(case: BenchCase, n: int, domain_size: int, seed, repeats: int) -> dict:
    baseline = peak_rss_bytes()
    RUNNERS[case.path](case, n, domain_size, seed)  # warm-up (see the module docstring)
    floor_fn = FLOORS[case.floor] if case.floor else None
    mech = case.make(domain_size) if floor_fn else None
    floor_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])
    walls, cpus, floor_cpus = [], [], []
    for _ in range(repeats):
        if floor_fn:
            floor_cpus.append(_floor_cpu(floor_fn, mech, n, case.items(domain_size), floor_rng))
        sw, est = RUNNERS[case.path](case, n, domain_size, seed)
        walls.append(sw.wall)
        cpus.append(sw.cpu)
    # load only adds time: the least CPU time of path and floor over the pairs is the robust figure
    ratio = min(cpus) / max(min(floor_cpus), 1e-9) if floor_cpus else math.nan
    return {"seconds": float(np.median(walls)), "cpu": float(np.median(cpus)), "cpu_min": min(cpus),
            "floor_ratio": ratio,
            "floor_cpu": min(floor_cpus) if floor_cpus else math.nan, "peak": peak_rss_bytes(),
            "baseline": baseline, "estimates": est}


def measure(case: BenchCase, n: int, domain_size: int, seed=0, repeats: int = 3, pool=None) -> dict:
    """Run ``case`` in a fresh spawned process (warm-up, then ``repeats`` pairs of floor and path):
    median wall and CPU seconds of the path, its least CPU seconds, the floor ratio and the floor's CPU
    seconds, peak RSS (bytes),
    baseline, estimates. ``pool``: a one-worker process pool to reuse instead (peak RSS then
    accumulates over the cases it ran)."""
    if pool is not None:
        return pool.submit(_worker, case, n, domain_size, seed, repeats).result()
    with worker_pool() as fresh:
        return fresh.submit(_worker, case, n, domain_size, seed, repeats).result()


def worker_pool() -> futures.ProcessPoolExecutor:
    """A pool of one spawned worker process (use as a context manager)."""
    return futures.ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))


def skip_reason(case: BenchCase, domain_size: int) -> str | None:
    """Why ``case`` cannot run yet (mechanism not registered, parameters rejected), or None."""
    if case.path == "trust-cell":
        return None if case.name in TRUST_MODELS else f"{case.name!r} is not a trust model"
    if case.name not in registry.MECHANISMS and case.name not in registry.INTERACTIVE and case.name not in UNREGISTERED:
        return f"{case.name!r} not registered yet"
    try:
        case.make(domain_size)
    except (TypeError, ValueError) as exc:
        return f"parameters rejected: {exc}"
    return None


def bench_row(case: BenchCase, n: int, domain_size: int, seed=0, repeats: int = 3, pool=None) -> dict:
    """Measure one case (at ``case.n`` users if it fixes one, else ``n``; in ``pool`` if given, see
    :func:`measure`) and return its table row; a skipped case (``status`` = "skip") or a failed one
    ("ERROR") gets a note instead of numbers."""
    n = case.n or n
    row = {"case": case.label, "path": case.path, "n": n, "unit": case.unit, "seconds": np.nan, "cpu_s": np.nan,
           "cpu_min_s": np.nan, "s_per_1e6": np.nan, "rate": np.nan, "floor": case.floor or "", "floor_ratio": np.nan,
           "peak_mib": np.nan, "baseline_mib": np.nan, "status": "ok", "note": ""}
    reason = skip_reason(case, domain_size)
    if reason is not None:
        row.update({"status": "skip", "note": reason})
        return row
    try:
        out = measure(case, n, domain_size, seed, repeats, pool)
    except Exception as exc:  # a broken mechanism is a row in the table, not a crashed bench
        row.update({"status": "ERROR", "note": f"{type(exc).__name__}: {exc}"})
        return row
    row.update({"seconds": out["seconds"], "cpu_s": out["cpu"], "cpu_min_s": out["cpu_min"],
                "s_per_1e6": out["seconds"] * PER / n,
                "rate": n / out["seconds"], "floor_ratio": out["floor_ratio"],
                "peak_mib": out["peak"] / 2 ** 20, "baseline_mib": out["baseline"] / 2 ** 20,
                "note": "" if n == PER else f"extrapolated from n={n:,}"})
    if case.path.startswith("discover"):
        row["note"] = f"F1 of the top 20 = {float(out['estimates'][0]):.2f}" + ("" if n == PER else f"; n={n:,}")
    if case.path == "gboard-round":
        row["note"] = f"{int(out['estimates'][0])} prefixes kept"
    return row


def select(cases: list[BenchCase], only: list[str] | None) -> list[BenchCase]:
    """Cases whose label or mechanism name is in ``only`` (all when ``only`` is empty)."""
    if not only:
        return list(cases)
    wanted = {w.lower() for w in only}
    return [c for c in cases if c.name in wanted or c.label.lower() in wanted]
