"""Speed benchmark of the mechanisms: a data-driven list of cases, each timed in a fresh process.

A :class:`BenchCase` names a registered mechanism, its parameters, the *path* that is timed and a
target (seconds per 10⁶ units on the 2-core reference machine, from issue 2). Paths:

* ``per-user``: ``perturb`` + ``aggregate`` + ``estimate`` for n users (values drawn beforehand);
* ``direct``: ``sample_aggregate`` + ``estimate`` from the true counts (no per-user reports);
* ``em``: the EM post-processing of n SDPM reports (docs/math.md §2.3);
* ``discover`` / ``discover-direct``: a discovery protocol (SFP, PEM, TreeHist; docs/math.md §7.4) on
  the words-slang workload — ``perturb`` + ``aggregate`` + ``discover`` of the top 20 for n users, or
  ``sample_aggregate`` + ``discover``; the row's note gives the F1 of the discovered top 20.

``RUNNERS`` maps a path to its function ``(case, n, domain_size, seed) -> (seconds, estimates)``.
Hook for a later benchmark (e.g. the simulator's device-days/s): add its runner to ``RUNNERS``
under a new path and a case to ``CASES`` with that path, ``unit="device-days"`` and its target —
the table, the fresh-process measurement and the CSV need nothing else.

Each case runs in a fresh *spawned* worker process: one untimed warm-up call, then the timed call, so
the figure is the steady state a sweep or a simulation sees (allocator warmed — a cold first call
page-faults every large temporary — and per-item-set caches such as a sketch's hashed positions
filled). The worker reports the wall time of the timed call and its peak resident set size (``ru_maxrss`` of the worker, which includes the interpreter, numpy
and the workload: the baseline is reported beside it).
"""

from __future__ import annotations

import concurrent.futures as futures
import dataclasses
import functools
import math
import multiprocessing
import resource
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms import registry
from ldpsim.mechanisms._validation import as_generator
from ldpsim.mechanisms.numeric.em import EM

from ldpsim.evaluation.discovery.scores import run_scores
from ldpsim.evaluation.workloads.slang import words_slang
from ldpsim.evaluation.workloads.synthetic import harmonic

#: the unit the targets are stated for (issue 2: "per 10⁶ users on this 2-core machine")
PER = 1_000_000
GIB = 2 ** 30


@dataclass(frozen=True)
class BenchCase:
    """One benchmark row: mechanism ``name`` built with ``params``, timed along ``path``.

    ``target_s``: seconds allowed per 10⁶ ``unit``s (None: no target); ``target_peak``: bytes of
    peak RSS allowed; ``domain``: number of items (None: the bench's ``--items``); ``numeric``: the
    mechanism takes readings in [−1, 1] and estimates a mean; ``n``: a fixed size overriding the
    bench's ``--users`` (the direct samplers and EM, whose cost is mostly independent of n, so a
    linear extrapolation from a small n would be wrong). A parameter given as a module-level
    function is called with the domain size; ``domain_size`` is filled in where the class takes it.
    """

    label: str
    name: str
    params: dict
    path: str = "per-user"
    target_s: float | None = None
    target_peak: int | None = None
    domain: int | None = None
    numeric: bool = False
    unit: str = "users"
    n: int | None = None
    extra: dict = field(default_factory=dict)

    def items(self, domain_size: int) -> int:
        """The number of items this case uses when the bench's domain is ``domain_size``."""
        return self.domain or domain_size

    def make(self, domain_size: int):
        d = self.items(domain_size)
        params = {k: v(d) if callable(v) else v for k, v in self.params.items()}
        cls = registry.MECHANISMS[self.name]
        if dataclasses.is_dataclass(cls) and any(f.name == "domain_size" and f.init for f in dataclasses.fields(cls)):
            params.setdefault("domain_size", d)
        return cls(**params)

    def target_text(self) -> str:
        parts = []
        if self.target_s is not None:
            rate = PER / self.target_s
            fast = rate >= 1e7 and self.path == "per-user"  # issue 2 states these as a rate
            parts.append(f"≥1e{math.log10(rate):.0f} {self.unit}/s" if fast else f"≤{self.target_s:g} s")
        if self.target_peak is not None:
            parts.append(f"peak≤{self.target_peak / GIB:g}GiB")
        return ", ".join(parts)


FAST = 0.1  # ≥ 10⁷ users/s


def every_tenth(domain_size: int) -> tuple:
    """Sensitive (URR) / high-sensitivity (SDGRR) ids for the bench: every 10th id, frequent and rare."""
    return tuple(range(0, domain_size, 10))


_CMS_SMALL = {"k": 256, "m": 1024}
#: RAPPOR's bench shape: C·k = 1024 regression rows ≥ the 200 candidates (least squares needs full rank)
RAPPOR_BENCH = {"num_bits": 128, "num_hashes": 2, "cohorts": 8}
_CMS_WIDE = {"k": 65535, "m": 32}

#: the benchmark table (issue 2, item 4); order = print order
CASES: list[BenchCase] = [
    BenchCase("rr", "rr", {"epsilon": 1.0}, target_s=FAST, domain=2),
    BenchCase("grr", "grr", {"epsilon": 1.0}, target_s=FAST),
    BenchCase("urr", "urr", {"epsilon": 1.0, "sensitive": every_tenth}, target_s=FAST),
    BenchCase("sdgrr", "sdgrr", {"epsilon": 1.0, "high": every_tenth}, target_s=FAST),
    BenchCase("oue", "oue", {"epsilon": 1.0}, target_s=2.0),
    BenchCase("olh", "olh", {"epsilon": 1.0}, target_s=20.0),
    BenchCase("cms k256 m1024 ε4", "cms", {"epsilon": 4.0, **_CMS_SMALL}, target_s=1.5, target_peak=GIB),
    BenchCase("cms k256 m1024 ε1", "cms", {"epsilon": 1.0, **_CMS_SMALL}, target_s=3.0, target_peak=GIB),
    BenchCase("cms k65535 m32 ε4", "cms", {"epsilon": 4.0, **_CMS_WIDE}, target_s=2.0),
    BenchCase("cms k65535 m32 ε1", "cms", {"epsilon": 1.0, **_CMS_WIDE}, target_s=2.0),
    BenchCase("hcms k256 m1024 ε1", "hcms", {"epsilon": 1.0, **_CMS_SMALL}, target_s=0.5),
    BenchCase("hcms k65535 m32 ε1", "hcms", {"epsilon": 1.0, **_CMS_WIDE}, target_s=0.5),
    BenchCase("pm", "pm", {"epsilon": 1.0}, target_s=FAST, numeric=True),
    BenchCase("sdpm", "sdpm", {"epsilon": 1.0, "low": (-0.5, 0.5)}, target_s=FAST, numeric=True),
    BenchCase("rr", "rr", {"epsilon": 1.0}, "direct", n=PER, domain=2),
    BenchCase("grr", "grr", {"epsilon": 1.0}, "direct", n=PER),
    BenchCase("urr", "urr", {"epsilon": 1.0, "sensitive": every_tenth}, "direct", n=PER),
    BenchCase("sdgrr", "sdgrr", {"epsilon": 1.0, "high": every_tenth}, "direct", n=PER),
    BenchCase("oue", "oue", {"epsilon": 1.0}, "direct", n=PER),
    BenchCase("olh", "olh", {"epsilon": 1.0}, "direct", n=PER),
    BenchCase("cms k256 m1024 ε4", "cms", {"epsilon": 4.0, **_CMS_SMALL}, "direct", n=PER, target_s=0.1),
    BenchCase("cms k65535 m1024 ε4", "cms", {"epsilon": 4.0, "k": 65535, "m": 1024}, "direct", n=PER,
              target_s=3.0),
    BenchCase("hcms k256 m1024 ε1", "hcms", {"epsilon": 1.0, **_CMS_SMALL}, "direct", n=PER),
    BenchCase("sdpm EM d1024", "sdpm", {"epsilon": 1.0, "low": (-0.5, 0.5)}, "em", n=PER, target_s=2.0,
              numeric=True, unit="reports", extra={"bins": 1024}),
    # deployed designs and the peers' oracles (issue 12); no targets: measured, compared with the peers
    *[BenchCase(label, name, params, path, domain=domain, n=n if path == "per-user" else PER)
      for label, name, params, domain, n in [
          ("rappor k128 h2 c8 d200", "rappor", {"epsilon": 4 * math.log(3), **RAPPOR_BENCH}, 200, None),
          # p = 0, q = 1: no instantaneous response, pure-ldp's RAPPOR (its peer row)
          ("rappor no-IRR d200", "rappor", {"epsilon": 4 * math.log(3), "p": 0.0, "q": 1.0, **RAPPOR_BENCH}, 200,
           None),
          ("hr ε1", "hr", {"epsilon": 1.0}, None, None),
          ("hr ε4", "hr", {"epsilon": 4.0}, None, None),
          ("sue", "sue", {"epsilon": 1.0}, None, None),
          ("she", "she", {"epsilon": 1.0}, None, 100_000),
          ("the", "the", {"epsilon": 1.0}, None, None),
          ("blh", "blh", {"epsilon": 1.0}, None, 100_000),
          ("flh k1024", "flh", {"epsilon": 1.0, "pool_size": 1024}, None, None),
          ("dbitflip d1", "dbitflip", {"epsilon": 1.0, "d": 1}, None, None),
          ("dbitflip d8", "dbitflip", {"epsilon": 1.0, "d": 8}, None, None)]
      for path in ("per-user", "direct")],
    BenchCase("onebitmean m100", "onebitmean", {"epsilon": 1.0, "m": 100.0}, "counter", numeric=True),
    BenchCase("onebitmean m100", "onebitmean", {"epsilon": 1.0, "m": 100.0}, "counter-direct", numeric=True,
              n=PER),
    # discovery without a dictionary (issue 11): one run at n = 10⁶, ε = 4, top 20 of words-slang
    *[BenchCase(f"{name} ε4", name, {"epsilon": 4.0}, path, n=PER, target_s=target)
      for path, target in (("discover", 5.0), ("discover-direct", 0.5)) for name in ("sfp", "pem", "treehist")],
    *[BenchCase(f"{name} ε4 n1e7", name, {"epsilon": 4.0}, "discover-direct", n=10 * PER,
                target_peak=4 * GIB) for name in ("sfp", "pem", "treehist")],
]


# ---- the timed work (runs inside the worker) -----------------------------------------------------
def _per_user(case: BenchCase, n: int, domain_size: int, seed) -> tuple[float, np.ndarray]:
    mech = case.make(domain_size)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    if case.numeric:
        values = wl_rng.uniform(-1.0, 1.0, n)
        t0 = time.perf_counter()
        reports = mech.perturb(values, run_rng)
        try:
            est = mech.estimate_mean(mech.aggregate(reports))
        except NotImplementedError:  # SDPM: the mean needs EM (timed by the "em" case)
            est = mech.aggregate(reports).data
        return time.perf_counter() - t0, np.atleast_1d(np.asarray(est, dtype=float))
    d = case.items(domain_size)
    values = harmonic(n, domain_size=d).values(wl_rng)
    items = np.arange(d)
    t0 = time.perf_counter()
    est = mech.estimate(mech.aggregate(mech.perturb(values, run_rng)), items)
    return time.perf_counter() - t0, est


def _direct(case: BenchCase, n: int, domain_size: int, seed) -> tuple[float, np.ndarray]:
    mech = case.make(domain_size)
    d = case.items(domain_size)
    counts = harmonic(n, domain_size=d).counts
    items = np.arange(d)
    rng = as_generator(seed)
    t0 = time.perf_counter()
    est = mech.estimate(mech.sample_aggregate(counts, rng, items), items)
    return time.perf_counter() - t0, est


def _em(case: BenchCase, n: int, domain_size: int, seed) -> tuple[float, np.ndarray]:
    """EM (docs/math.md §2.3) over ``extra['bins']`` bins on n reports; timed: the exact transition matrix,
    the report histogram and the iterations (not the clients)."""
    mech = case.make(domain_size)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    reports = mech.perturb(wl_rng.uniform(-1.0, 1.0, n), run_rng)
    t0 = time.perf_counter()
    em = EM(mech, bins=case.extra["bins"])
    est = em.estimate(em.aggregate(reports))
    return time.perf_counter() - t0, est


def _counters(case: BenchCase, n: int, seed):
    mech = case.make(2)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    return mech, wl_rng.uniform(0.0, mech.m, n), run_rng


def _counter(case: BenchCase, n: int, domain_size: int, seed) -> tuple[float, np.ndarray]:
    """1BitMean on n counters uniform in [0, m]: perturb + aggregate + mean estimate."""
    mech, values, rng = _counters(case, n, seed)
    t0 = time.perf_counter()
    est = mech.estimate_mean(mech.aggregate(mech.perturb(values, rng)))
    return time.perf_counter() - t0, np.array([est])


def _counter_direct(case: BenchCase, n: int, domain_size: int, seed) -> tuple[float, np.ndarray]:
    """1BitMean's direct sampler on n counters (one binomial per distinct value)."""
    mech, values, rng = _counters(case, n, seed)
    values = np.round(values)  # counters: integers, so few distinct values
    t0 = time.perf_counter()
    est = mech.estimate_mean(mech.sample_aggregate(values, rng))
    return time.perf_counter() - t0, np.array([est])


def _discover(case: BenchCase, n: int, domain_size: int, seed, direct: bool = False) -> tuple[float, np.ndarray]:
    """One discovery run of the top 20 on words-slang (its default 2000 words + 3 slang words);
    returns the time and the F1 of the discovered list as a 1-element array."""
    mech = case.make(domain_size)
    wl_rng, run_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    w = words_slang(n, 0)
    values = None if direct else w.values(wl_rng, as_ids=False)
    t0 = time.perf_counter()
    agg = mech.sample_aggregate(w.counts, run_rng, w.items) if direct else mech.aggregate(mech.perturb(values, run_rng))
    res = mech.discover(agg, top_k=20)
    seconds = time.perf_counter() - t0
    return seconds, np.array([run_scores(w.items, w.counts, res.words, res.counts, 20)["f1"]])


#: path → runner ``(case, n, domain_size, seed) -> (seconds, estimates)``; register new paths here
RUNNERS = {"per-user": _per_user, "direct": _direct, "em": _em, "counter": _counter,
           "counter-direct": _counter_direct, "discover": _discover,
           "discover-direct": functools.partial(_discover, direct=True)}


def peak_rss_bytes() -> int:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def _worker(case: BenchCase, n: int, domain_size: int, seed) -> dict:
    baseline = peak_rss_bytes()
    RUNNERS[case.path](case, n, domain_size, seed)  # warm-up (see the module docstring)
    seconds, est = RUNNERS[case.path](case, n, domain_size, seed)
    return {"seconds": seconds, "peak": peak_rss_bytes(), "baseline": baseline, "estimates": est}


def measure(case: BenchCase, n: int, domain_size: int, seed=0) -> dict:
    """Run ``case`` in a fresh spawned process (warm-up, then timed): seconds, peak RSS (bytes),
    baseline, estimates."""
    ctx = multiprocessing.get_context("spawn")
    with futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        return pool.submit(_worker, case, n, domain_size, seed).result()


def skip_reason(case: BenchCase, domain_size: int) -> str | None:
    """Why ``case`` cannot run yet (mechanism not registered, parameters rejected), or None."""
    if case.name not in registry.MECHANISMS:
        return f"{case.name!r} not registered yet"
    try:
        case.make(domain_size)
    except (TypeError, ValueError) as exc:
        return f"parameters rejected: {exc}"
    return None


def bench_row(case: BenchCase, n: int, domain_size: int, seed=0) -> dict:
    """Measure one case (at ``case.n`` users if it fixes one, else ``n``) and return its table row;
    a skipped case (``pass`` = "skip") or a failed one ("ERROR") gets a note instead of numbers."""
    n = case.n or n
    row = {"case": case.label, "path": case.path, "n": n, "unit": case.unit, "target": case.target_text(),
           "seconds": np.nan, "s_per_1e6": np.nan, "rate": np.nan, "peak_mib": np.nan,
           "baseline_mib": np.nan, "pass": "", "note": ""}
    reason = skip_reason(case, domain_size)
    if reason is None:
        try:
            out = measure(case, n, domain_size, seed)
        except Exception as exc:  # a broken mechanism is a row in the table, not a crashed bench
            row.update({"pass": "ERROR", "note": f"{type(exc).__name__}: {exc}"})
            return row
    if reason is not None:
        row.update({"pass": "skip", "note": reason})
        return row
    per = out["seconds"] * PER / n
    ok = (case.target_s is None or per <= case.target_s) and \
         (case.target_peak is None or out["peak"] <= case.target_peak)
    row.update({"seconds": out["seconds"], "s_per_1e6": per, "rate": n / out["seconds"],
                "peak_mib": out["peak"] / 2 ** 20, "baseline_mib": out["baseline"] / 2 ** 20,
                "pass": "" if case.target_s is None and case.target_peak is None else ("PASS" if ok else "FAIL"),
                "note": "" if n == PER else f"extrapolated from n={n:,}"})
    if case.path.startswith("discover"):
        row["note"] = f"F1 of the top 20 = {float(out['estimates'][0]):.2f}" + ("" if n == PER else f"; n={n:,}")
    return row


def select(cases: list[BenchCase], only: list[str] | None) -> list[BenchCase]:
    """Cases whose label or mechanism name is in ``only`` (all when ``only`` is empty)."""
    if not only:
        return list(cases)
    wanted = {w.lower() for w in only}
    return [c for c in cases if c.name in wanted or c.label.lower() in wanted]
