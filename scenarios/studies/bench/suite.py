"""``ldpsim.bench(...)``: the speed benchmark as a library call returning a :class:`BenchResult`.

Scenario: n users on a harmonic workload over ``items`` items. Each case of
:data:`ldpsim.scenarios.studies.bench.cases.CASES` runs in a fresh process (:func:`~ldpsim.scenarios.studies.bench.cases.bench_row`):
wall and CPU time, users/s, peak RSS and, for hot paths, the ratio to the path's physical floor
(:mod:`ldpsim.scenarios.studies.bench.floors`). With ``peers`` the peer libraries run the same true counts in
their own venv; the peer table gives the speed ratio (peer CPU time / ours, both per 10⁶ users) and both
frequency-scale MSEs with a paired z-test (:func:`ldpsim.scenarios.studies.bench.peers.mse_comparison`;
"equal" at p ≥ 0.01). A second table puts the discovery protocols beside pure-ldp's heavy hitters
(:mod:`ldpsim.scenarios.studies.bench.discovery_peers`).

:func:`check` compares the floor ratios with a baseline (:func:`load_baseline`; the package ships one,
:data:`BASELINE`) and fails a path whose ratio grew by more than a factor.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ldpsim.scenarios.studies.bench import cases as bench_cases
from ldpsim.scenarios.studies.bench import discovery_peers, peers
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.runfolder import Layout, RunFolder

#: ``ldpsim bench --out``: the measured tables and their floor ratios as a baseline for --check
LAYOUT = Layout("bench", ("bench.csv", "baseline.json"))

EQUAL_P = 0.01
#: the floor ratios shipped with the package (``ldpsim bench --check`` without a file)
BASELINE = Path(__file__).with_name("baseline.json")
BASELINE_FORMAT = "ldpsim-bench-baseline/1"
#: ``--check`` fails a path whose floor ratio grew past this factor of the baseline's
#: (the noise it allows for: docs/explanation/benchmarks.md)
CHECK_FACTOR = 3.0
#: the largest ``--factor``: the spread of a ratio under load is 1.3× (docs/explanation/benchmarks.md); a gate
#: that lets a path grow 100× past its baseline catches nothing a user would call a regression
MAX_FACTOR = 100.0
#: the largest floor ratio a baseline may hold: ours are 1.1 to 14; a per-user Python loop is about 10³ times its
#: floor, so a larger baseline ratio (1e308 would let every path pass) is no baseline for a gate
MAX_RATIO = 1000.0


def peer_pairs() -> list[tuple]:
    """(our case label, our path, peer job, required speed-up or None): every peer comparison."""
    return [
        ("cms k256 m1024 ε4", "per-user", peers.PeerJob("pure-ldp", "cms", 4.0, 256, 1024), 36),
        ("cms k256 m1024 ε4", "direct", peers.PeerJob("pure-ldp", "cms", 4.0, 256, 1024), 300),
        ("cms k256 m1024 ε1", "per-user", peers.PeerJob("pure-ldp", "cms", 1.0, 256, 1024), 10),
        ("hcms k256 m1024 ε1", "per-user", peers.PeerJob("pure-ldp", "hcms", 1.0, 256, 1024), None),
        ("grr", "per-user", peers.PeerJob("pure-ldp", "grr", 1.0), None),
        ("grr", "per-user", peers.PeerJob("multi-freq-ldpy", "grr", 1.0), None),
        ("oue", "per-user", peers.PeerJob("pure-ldp", "oue", 1.0), None),
        ("oue", "per-user", peers.PeerJob("multi-freq-ldpy", "oue", 1.0), None),
        ("olh", "per-user", peers.PeerJob("pure-ldp", "olh", 1.0), None),
        ("olh", "per-user", peers.PeerJob("multi-freq-ldpy", "olh", 1.0), None),
        # pure-ldp's RAPPOR has no instantaneous response: compared with ours at p = 0, q = 1; it
        # estimates by non-negative ridge regression, ours by least squares
        ("rappor no-IRR d200", "per-user", peers.PeerJob("pure-ldp", "rappor", 4 * math.log(3), 2, 128, d=200), None),
        ("hr ε1", "per-user", peers.PeerJob("pure-ldp", "hr", 1.0), None),
        ("hr ε4", "per-user", peers.PeerJob("pure-ldp", "hr", 4.0), None),
        ("sue", "per-user", peers.PeerJob("pure-ldp", "sue", 1.0), None),
        ("sue", "per-user", peers.PeerJob("multi-freq-ldpy", "sue", 1.0), None),
        ("she", "per-user", peers.PeerJob("pure-ldp", "she", 1.0), 5),
        ("the", "per-user", peers.PeerJob("pure-ldp", "the", 1.0), None),
        ("blh", "per-user", peers.PeerJob("pure-ldp", "blh", 1.0), None),
        ("blh", "per-user", peers.PeerJob("multi-freq-ldpy", "blh", 1.0), None),
        ("flh k1024", "per-user", peers.PeerJob("pure-ldp", "flh", 1.0, 1024), None),
    ]


def _theory_mse(case: bench_cases.BenchCase, counts, n: int) -> float:
    """Mean over items of the mechanism's own count-scale MSE, on the frequency scale."""
    import numpy as np
    try:
        mech = case.make(counts.size)
        return float(np.mean(mech.mse(counts, np.arange(counts.size)))) / n ** 2
    except Exception:  # a mechanism without exact theory for this workload: no theory column
        return math.nan


def _compare(need, job: peers.PeerJob, res: dict, case, ours_row: dict, counts, seed: int) -> dict:
    """One peer row: our same path rerun in-process at the peer's n on the same counts, for the MSEs."""
    n = res["n"]
    _, ours_est = bench_cases.RUNNERS[case.path](case, n, counts.size, seed)
    cmp = peers.mse_comparison(ours_est / n, res["frequencies"], counts / n)
    peer_per = res["seconds"] * bench_cases.PER / n  # the peer script reports CPU seconds
    ours_per = ours_row["cpu_min_s"] * bench_cases.PER / ours_row["n"]  # least over the repeats: load only adds
    speedup = peer_per / ours_per
    verdict = "equal MSE" if cmp["p"] >= EQUAL_P else "MSE differs"
    if need is not None:
        verdict = f"{'PASS' if speedup >= need and cmp['p'] >= EQUAL_P else 'FAIL'}: {verdict}"
    notes = [f"peer time extrapolated from n={n:,}"] if n != bench_cases.PER else []
    if ours_row["n"] != bench_cases.PER:
        notes.append(f"ours extrapolated from n={ours_row['n']:,}")
    if job.lib == "multi-freq-ldpy":
        notes.append("peer MI clips at 0 and renormalises")
    return {"peer": job.label, "ours": case.path, "n_peer": n, "peer_s_per_1e6": peer_per,
            "ours_s_per_1e6": ours_per, "speedup": speedup, "target": f"≥{need}×" if need else "",
            **cmp, "mse_theory": _theory_mse(case, counts, n), "verdict": "; ".join([verdict, *notes])}


def peer_rows(bench_rows: dict, cases: dict, n_fast: int, n_slow: int, items: int, seed: int, venv,
              log=print) -> list[dict]:
    """Run every peer job whose counterpart was measured (the slow peers at ``n_slow`` users, the
    others at ``n_fast``) and compare speed and MSE on the same true counts."""
    from ldpsim.evaluation.workloads.synthetic import harmonic
    pairs = [p for p in peer_pairs() if bench_rows.get(p[:2], {}).get("status") == "ok"]
    if not pairs:
        log("peers: none of the compared frequency-oracle cases ran; no frequency-oracle peers")
        return []
    results = {}
    for n, d in dict.fromkeys((n_slow if job.slow else n_fast, job.d or items) for *_, job, _ in pairs):
        jobs = list(dict.fromkeys(job for *_, job, _ in pairs
                                  if (n_slow if job.slow else n_fast) == n and (job.d or items) == d))
        log(f"peers: {len(jobs)} peer runs at n={n:,} (the same harmonic counts over {d} items)")
        counts = harmonic(n, domain_size=d).counts
        for job, res in zip(jobs, peers.run_peers(jobs, counts, seed, venv, log)):
            results[job] = (res, counts)
    return [_compare(need, job, results[job][0], cases[(label, path)], bench_rows[(label, path)], results[job][1],
                     seed) for label, path, job, need in pairs]


def discovery_peer_rows(cases: list, seed: int, venv, run_peer=None, log=print) -> list[dict]:
    """Ours and pure-ldp's heavy hitters on each case (:mod:`ldpsim.scenarios.studies.bench.discovery_peers`);
    ``run_peer`` defaults to :func:`ldpsim.scenarios.studies.bench.peers.run_discovery_peers`."""
    run_peer = run_peer or peers.run_discovery_peers
    log(f"peers: {len(cases)} discovery cases, pure-ldp beside ours "
        f"({', '.join(f'{c.name} n={c.n:,} ×{c.repeats}' for c in cases)})")
    runs = run_peer([c.job() for c in cases], [c.workload() for c in cases], [c.repeats for c in cases], seed, venv)
    return [discovery_peers.compare(c, discovery_peers.run_ours(c, seed), discovery_peers.peer_scores(c, r))
            for c, r in zip(cases, runs)]


def machine_load() -> dict:
    """The machine the numbers come from: CPUs and the 1-minute load average (NaN where unknown)."""
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        load = math.nan
    return {"cpus": os.cpu_count(), "load_1min": load, "machine": platform.machine(),
            "python": platform.python_version()}


@dataclass(repr=False)
class BenchResult(BriefRepr):
    """What :func:`bench` measured: ``table`` (one row per case), ``peers`` and ``discovery`` (empty
    without ``peers``), the settings and the machine's load before and after (:func:`machine_load`)."""

    table: pd.DataFrame
    peers: pd.DataFrame = field(default_factory=pd.DataFrame)
    discovery: pd.DataFrame = field(default_factory=pd.DataFrame)
    settings: dict = field(default_factory=dict)
    errors: list = field(default_factory=list)

    def baseline(self) -> dict:
        """The measured floor ratios in the baseline format :func:`check` reads."""
        ok = self.table[(self.table["status"] == "ok") & self.table["floor_ratio"].notna()]
        return {"format": BASELINE_FORMAT, "settings": self.settings,
                "ratios": {f"{r.case}|{r.path}": float(r.floor_ratio) for r in ok.itertuples()}}

    def to_folder(self, out, force: bool = False) -> Path:
        """Write ``bench.csv`` (every table, a ``table`` column naming it) and ``baseline.json`` into ``out``,
        a bench run folder (:mod:`ldpsim.runtime.runfolder`: new, empty or an earlier bench's; a
        finished bench result is replaced only with ``force``). Returns the CSV's path."""
        from ldpsim.runtime.durable import write_file, write_text
        from ldpsim.runtime.runfolder import RunFolder
        out = Path(out)
        frames = [df.assign(table=name) for name, df in (("bench", self.table), ("peers", self.peers),
                                                         ("discovery-peers", self.discovery)) if len(df)]
        rows = pd.concat(frames, ignore_index=True)
        rows = rows[["table", *[c for c in rows.columns if c != "table"]]]
        with RunFolder.open(out, LAYOUT, _identity(self.settings.get("seed")), replace=force,
                            keep_finished=True) as folder:
            write_file(out / "bench.csv", lambda tmp: rows.to_csv(tmp, index=False))
            write_text(out / "baseline.json", json.dumps(self.baseline(), indent=1, default=str) + "\n")
            folder.finalize(adopt=True)
        return out / "bench.csv"


def _identity(seed) -> dict:
    return {"fingerprint": "bench", "seed": seed}


def claim_folder(out, seed: int, force: bool = False) -> Path:
    """Take ``out`` for a benchmark of ``seed`` before its work, refusing it
    (:class:`~ldpsim.runtime.runfolder.RunFolderError`) as :meth:`BenchResult.to_folder` would after it: a
    folder with other files, another kind's, or a finished bench result without ``force`` (with ``force``
    that result is cleared now). Returns the folder."""
    with RunFolder.open(out, LAYOUT, _identity(seed), replace=force, keep_finished=True) as folder:
        return folder.root


def bench(users: int = bench_cases.PER, items: int = 2000, only=None, *, quick: bool = False, peers: bool = False,
          peer_users: int | None = None, peers_venv=None, seed: int = 0, repeats: int = 3,
          on_row=None, log=print) -> BenchResult:
    """Time the benchmark cases (``only``: mechanism names or case labels; ``quick``: the ``--check``
    subset :data:`~ldpsim.scenarios.studies.bench.cases.QUICK` at its own user counts).

    Parameters
    ----------
    users, items : int
        Users per case (cases that fix their n keep it) and items of the harmonic workload.
    only : list of str, optional
        Mechanism names or case labels.
    quick : bool
        Run the ``--check`` subset instead.
    peers : bool
        Also run pure-ldp and multi-freq-ldpy (their own venv, ``peers_venv``), the slowest at ``peer_users``.
    seed : int
        Seed of the workloads and the mechanisms' randomness.
    repeats : int
        Pairs of (floor, path) timed per case after a warm-up; medians are reported.
    on_row : callable, optional
        Called with each bench row as it is measured (progress).

    Returns
    -------
    BenchResult
    """
    if repeats < 1:
        raise InputError(f"repeats must be an integer >= 1; got {repeats}")
    pool_of_cases = bench_cases.quick_cases() if quick else bench_cases.CASES
    selected = bench_cases.select(pool_of_cases, only)
    if not selected:
        names = sorted({c.name for c in pool_of_cases})
        raise InputError(f"--only {' '.join(only)}: no {'--check subset ' if quick else ''}case has that mechanism "
                         f"name or label; mechanisms: {', '.join(names)}")
    settings = {"users": users, "items": items, "seed": seed, "repeats": repeats, "quick": quick,
                "cases": [f"{c.label}|{c.path}" for c in selected], "load_before": machine_load()}
    rows = []
    with contextlib.ExitStack() as stack:  # the quick subset shares one worker: its start-up dominates
        pool = stack.enter_context(bench_cases.worker_pool()) if quick else None
        for case in selected:
            row = bench_cases.bench_row(case, users, items, seed, repeats, pool)
            rows.append(row)
            if on_row:
                on_row(row)
    result = BenchResult(pd.DataFrame(rows, columns=list(rows[0]) if rows else None), settings=settings)
    if peers:
        by_key = {(r["case"], r["path"]): r for r in rows}
        case_by_key = {(c.label, c.path): c for c in selected}
        import subprocess
        try:
            result.peers = pd.DataFrame(peer_rows(by_key, case_by_key, users, peer_users or users, items, seed,
                                                  peers_venv, log))
        except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
            result.errors.append(f"peers: failed ({exc})")
        dcases = discovery_peers.select(only)
        if dcases:
            try:
                result.discovery = pd.DataFrame(discovery_peer_rows(dcases, seed, peers_venv, log=log))
            except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
                result.errors.append(f"peers: discovery failed ({exc})")
    settings["load_after"] = machine_load()
    return result


def load_baseline(path=None) -> dict:
    """A baseline written by :meth:`BenchResult.to_folder` (``baseline.json``); default :data:`BASELINE`."""
    path = Path(path or BASELINE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"--check {path}: cannot read the baseline ({exc.strerror})") from None
    except ValueError:
        raise InputError(f"--check {path}: not a JSON file") from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT or not isinstance(data.get("ratios"), dict):
        raise InputError(f"--check {path}: not a bench baseline (expected format {BASELINE_FORMAT!r} with 'ratios')")
    known = {f"{c.label}|{c.path}" for c in bench_cases.CASES}
    quick = {f"{c.label}|{c.path}" for c in bench_cases.quick_cases()}
    unknown = sorted(set(data["ratios"]) - known)
    if unknown:
        raise InputError(f"--check {path}: 'ratios' names paths the bench does not have: {', '.join(map(repr, unknown))}"
                         f" (a path is 'case|path', e.g. {sorted(quick)[0]!r})")
    if not set(data["ratios"]) & quick:
        raise InputError(f"--check {path}: 'ratios' holds none of the paths --check runs ({', '.join(sorted(quick))}): "
                         "a gate that compares nothing cannot fail")
    for key, ratio in data["ratios"].items():
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= MAX_RATIO:
            raise InputError(f"--check {path}: the floor ratio of {key!r} must be a number in (0, {MAX_RATIO:g}] "
                             f"(a path's CPU time ÷ its floor's); got {ratio!r}")
    return data


def check_factor(factor) -> float:
    """``--factor``: a number in (1, :data:`MAX_FACTOR`]; a larger one (or inf) makes a gate that cannot fail."""
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 1 < factor <= MAX_FACTOR:
        raise InputError(f"--factor must be a number in (1, {MAX_FACTOR:g}]; got "
                         f"{format(factor, 'g') if isinstance(factor, (int, float)) else repr(factor)}")
    return float(factor)


def check(result: BenchResult, baseline: dict, factor: float = CHECK_FACTOR) -> pd.DataFrame:
    """Each baseline path's floor ratio now and then: ``growth`` = now ÷ baseline, ``ok`` = growth ≤
    ``factor``. Paths the run did not select (``--only``) are left out; a selected path that the run
    could not measure is not ok."""
    check_factor(factor)
    now = {f"{r.case}|{r.path}": r for r in result.table.itertuples()}
    selected = set(result.settings.get("cases", baseline["ratios"]))
    rows = []
    for key, base in baseline["ratios"].items():
        if key not in selected:
            continue
        case, path = key.split("|", 1)
        row = now.get(key)
        ratio = float(row.floor_ratio) if row is not None and row.status == "ok" else math.nan
        growth = ratio / base
        rows.append({"case": case, "path": path, "baseline_ratio": base, "floor_ratio": ratio, "growth": growth,
                     "ok": bool(growth <= factor),
                     "note": "" if row is not None else "not measured in this run"})
    if not rows:
        raise InputError(f"--check: no path of the baseline ({', '.join(baseline['ratios'])}) was run (--only selects "
                         "others): a gate that compares nothing cannot fail")
    return pd.DataFrame(rows, columns=["case", "path", "baseline_ratio", "floor_ratio", "growth", "ok", "note"])
