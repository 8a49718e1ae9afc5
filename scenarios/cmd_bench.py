"""``ldpsim bench``: time every mechanism against its target; ``--peers`` adds pure-ldp and multi-freq-ldpy.

Scenario: n users on a harmonic workload over ``--items`` items (seed 003's shape). Each case of
:data:`ldpsim.evaluation.bench.cases.CASES` runs once in a fresh process (wall time, users/s, peak RSS); targets
are per 10⁶ users on the 2-core reference machine (issue 2), extrapolated linearly when n ≠ 10⁶.
With ``--peers`` the peer libraries run the same true counts in their own venv; the table gives the
speed ratio (peer time / ours, both per 10⁶ users) and both frequency-scale MSEs with a paired
z-test (:func:`ldpsim.evaluation.bench.peers.mse_comparison`; "equal" at p ≥ 0.01). A second table
puts the discovery protocols beside pure-ldp's heavy hitters on a configuration both can run
(:mod:`ldpsim.evaluation.bench.discovery_peers`: time and F1 over paired repeats).
"""

from __future__ import annotations

import argparse
import csv
import math
import subprocess
import sys
from pathlib import Path

from ldpsim.scenarios import options

EQUAL_P = 0.01


def peer_pairs() -> list[tuple]:
    """(our case label, our path, peer job, required speed-up) — issue 2's peer targets, then issue 12's."""
    from ldpsim.evaluation.bench import peers
    return [
        ("cms k256 m1024 ε4", "per-user", peers.PeerJob("pure-ldp", "cms", 4.0, 256, 1024), 10),
        ("cms k256 m1024 ε4", "direct", peers.PeerJob("pure-ldp", "cms", 4.0, 256, 1024), 300),
        ("cms k256 m1024 ε1", "per-user", peers.PeerJob("pure-ldp", "cms", 1.0, 256, 1024), 10),
        ("hcms k256 m1024 ε1", "per-user", peers.PeerJob("pure-ldp", "hcms", 1.0, 256, 1024), None),
        ("grr", "per-user", peers.PeerJob("pure-ldp", "grr", 1.0), None),
        ("grr", "per-user", peers.PeerJob("multi-freq-ldpy", "grr", 1.0), None),
        ("oue", "per-user", peers.PeerJob("pure-ldp", "oue", 1.0), None),
        ("oue", "per-user", peers.PeerJob("multi-freq-ldpy", "oue", 1.0), None),
        ("olh", "per-user", peers.PeerJob("pure-ldp", "olh", 1.0), None),
        ("olh", "per-user", peers.PeerJob("multi-freq-ldpy", "olh", 1.0), None),
        # issue 12: the peers' other oracles (pure-ldp's RAPPOR has no instantaneous response: compared with ours
        # at p = 0, q = 1; it estimates by non-negative ridge regression, ours by least squares)
        ("rappor no-IRR d200", "per-user", peers.PeerJob("pure-ldp", "rappor", 4 * math.log(3), 2, 128, d=200), None),
        ("hr ε1", "per-user", peers.PeerJob("pure-ldp", "hr", 1.0), None),
        ("hr ε4", "per-user", peers.PeerJob("pure-ldp", "hr", 4.0), None),
        ("sue", "per-user", peers.PeerJob("pure-ldp", "sue", 1.0), None),
        ("sue", "per-user", peers.PeerJob("multi-freq-ldpy", "sue", 1.0), None),
        ("she", "per-user", peers.PeerJob("pure-ldp", "she", 1.0), None),
        ("the", "per-user", peers.PeerJob("pure-ldp", "the", 1.0), None),
        ("blh", "per-user", peers.PeerJob("pure-ldp", "blh", 1.0), None),
        ("blh", "per-user", peers.PeerJob("multi-freq-ldpy", "blh", 1.0), None),
        ("flh k1024", "per-user", peers.PeerJob("pure-ldp", "flh", 1.0, 1024), None),
    ]


def add_arguments(parser):
    options.add_devices(parser, "10⁶ (users per case)", default=10**6)
    parser.add_argument("--items", type=_two_or_more, default=2000,
                        help="items of the harmonic workload (default: 2000)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these mechanisms or case labels (default: all)")
    parser.add_argument("--peers", action="store_true", help="also run pure-ldp and multi-freq-ldpy (default: off)")
    parser.add_argument("--peer-users", type=options.positive_int, help="users for the slowest peer runs, OUE and "
                        "OLH (default: --devices; their per-10⁶ time is then extrapolated)")
    parser.add_argument("--peers-venv", metavar="DIR", help="the peers' venv (default: ~/.cache/ldpsim/peers-venv)")
    options.add_seed(parser, "0")
    options.add_out(parser, "none; with a folder, every row is also written to DIR/bench.csv")


def _two_or_more(text: str) -> int:
    value = options.positive_int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be an integer >= 2; got {value}")
    return value


def _fmt(value, spec: str) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "-"
    return format(value, spec) if spec else str(value)


def _line(cells, columns) -> str:
    """First and last columns left-aligned (label, free-text note), the others right-aligned."""
    last = len(columns) - 1
    return "".join(f"{c:<{w}}" if i == 0 else f"  {c}" if i == last else f"{c:>{w}}"
                   for i, (c, (_, _, w, _)) in enumerate(zip(cells, columns)))


def print_header(columns: list[tuple[str, str, int, str]]) -> None:
    """Columns as (key, header, width, format spec); the first column is left-aligned."""
    print(_line([h for _, h, _, _ in columns], columns))


def print_row(row: dict, columns) -> None:
    print(_line([_fmt(row[k], f) for k, _, _, f in columns], columns), flush=True)


BENCH_COLUMNS = [("case", "case", 22, ""), ("path", "path", 9, ""), ("n", "n", 11, ","),
                 ("seconds", "wall s", 9, ".3f"), ("s_per_1e6", "s/10⁶", 9, ".3f"), ("rate", "units/s", 10, ".2e"),
                 ("peak_mib", "peak MiB", 10, ".0f"), ("target", "target (per 10⁶)", 26, ""),
                 ("pass", "result", 7, ""), ("note", "note", 0, "")]
PEER_COLUMNS = [("peer", "peer", 32, ""), ("ours", "ours", 10, ""), ("n_peer", "n", 10, ","),
                ("peer_s_per_1e6", "peer s/10⁶", 12, ".2f"), ("ours_s_per_1e6", "ours s/10⁶", 12, ".4f"),
                ("speedup", "speed-up", 10, ".0f"), ("target", "target", 8, ""),
                ("mse_ours", "MSE ours", 11, ".3e"), ("mse_theirs", "MSE peer", 11, ".3e"),
                ("mse_theory", "MSE theory", 11, ".3e"), ("p", "p(equal)", 9, ".3f"), ("verdict", "verdict", 0, "")]


DISCOVERY_COLUMNS = [("case", "case", 20, ""), ("n", "n", 9, ","), ("repeats", "reps", 5, ""),
                     ("peer_s", "peer s", 9, ".2f"), ("ours_user_s", "ours s", 9, ".3f"),
                     ("ours_direct_s", "direct s", 9, ".3f"), ("speedup", "speed-up", 9, ".0f"),
                     ("speedup_direct", "direct ×", 9, ".0f"), ("f1_peer", "F1 peer", 8, ".2f"),
                     ("f1_ours", "F1 ours", 8, ".2f"), ("f1_direct", "F1 dir.", 8, ".2f"), ("diff", "ΔF1", 7, "+.2f"),
                     ("p", "p(equal)", 9, ".3f"), ("verdict", "verdict", 0, "")]


def discovery_peer_rows(cases: list, seed: int, venv, run_peer=None) -> list[dict]:
    """Ours and pure-ldp's heavy hitters on each case (:mod:`ldpsim.evaluation.bench.discovery_peers`);
    ``run_peer`` defaults to :func:`ldpsim.evaluation.bench.peers.run_discovery_peers`."""
    from ldpsim.evaluation.bench import discovery_peers, peers
    run_peer = run_peer or peers.run_discovery_peers
    print(f"\npeers: {len(cases)} discovery cases, pure-ldp beside ours "
          f"({', '.join(f'{c.name} n={c.n:,} ×{c.repeats}' for c in cases)})")
    runs = run_peer([c.job() for c in cases], [c.workload() for c in cases], [c.repeats for c in cases], seed, venv)
    return [discovery_peers.compare(c, discovery_peers.run_ours(c, seed), discovery_peers.peer_scores(c, r))
            for c, r in zip(cases, runs)]


def _theory_mse(case: bench.BenchCase, counts, n: int) -> float:
    """Mean over items of the mechanism's own count-scale MSE, on the frequency scale."""
    import numpy as np
    try:
        mech = case.make(counts.size)
        return float(np.mean(mech.mse(counts, np.arange(counts.size)))) / n ** 2
    except Exception:  # a mechanism without exact theory for this workload: no theory column
        return math.nan


def _compare(label: str, path: str, need, job: peers.PeerJob, res: dict, case, ours_row: dict, counts,
             seed: int) -> dict:
    """One peer row: our same path rerun in-process at the peer's n on the same counts, for the MSEs."""
    from ldpsim.evaluation.bench import cases as bench, peers
    n = res["n"]
    _, ours_est = bench.RUNNERS[path](case, n, counts.size, seed)
    cmp = peers.mse_comparison(ours_est / n, res["frequencies"], counts / n)
    peer_per = res["seconds"] * bench.PER / n
    speedup = peer_per / ours_row["s_per_1e6"]
    verdict = "equal MSE" if cmp["p"] >= EQUAL_P else "MSE differs"
    if need is not None:
        verdict = f"{'PASS' if speedup >= need and cmp['p'] >= EQUAL_P else 'FAIL'}: {verdict}"
    notes = [f"peer time extrapolated from n={n:,}"] if n != bench.PER else []
    if ours_row["n"] != bench.PER:
        notes.append(f"ours extrapolated from n={ours_row['n']:,}")
    if job.lib == "multi-freq-ldpy":
        notes.append("peer MI clips at 0 and renormalises")
    return {"peer": job.label, "ours": path, "n_peer": n, "peer_s_per_1e6": peer_per,
            "ours_s_per_1e6": ours_row["s_per_1e6"], "speedup": speedup, "target": f"≥{need}×" if need else "",
            **cmp, "mse_theory": _theory_mse(case, counts, n), "verdict": "; ".join([verdict, *notes])}


def peer_rows(bench_rows: dict, cases: dict, n_fast: int, n_slow: int, items: int, seed: int, venv) -> list[dict]:
    """Run every peer job whose counterpart was measured (OUE/OLH peers at ``n_slow`` users, the
    others at ``n_fast``) and compare speed and MSE on the same true counts."""
    from ldpsim.evaluation.bench import peers
    from ldpsim.evaluation.workloads.synthetic import harmonic
    pairs = [p for p in peer_pairs() if bench_rows.get(p[:2], {}).get("pass", "skip") not in ("skip", "ERROR")]
    if not pairs:
        print("peers: none of the compared frequency-oracle cases ran; no frequency-oracle peers")
        return []
    results = {}
    for n, d in dict.fromkeys((n_slow if job.slow else n_fast, job.d or items) for *_, job, _ in pairs):
        jobs = list(dict.fromkeys(job for *_, job, _ in pairs
                                  if (n_slow if job.slow else n_fast) == n and (job.d or items) == d))
        print(f"\npeers: {len(jobs)} peer runs at n={n:,} (the same harmonic counts over {d} items)")
        counts = harmonic(n, domain_size=d).counts
        for job, res in zip(jobs, peers.run_peers(jobs, counts, seed, venv)):
            results[job] = (res, counts)
    return [_compare(label, path, need, job, *results[job][:1], cases[(label, path)], bench_rows[(label, path)],
                     results[job][1], seed) for label, path, job, need in pairs]


def run(args) -> int:
    from ldpsim.evaluation.bench import cases as bench, discovery_peers
    if args.seed is None:
        args.seed = 0
    cases = bench.select(bench.CASES, args.only)
    print(f"ldpsim bench: n={args.devices:,} users, harmonic workload over {args.items} items, seed {args.seed}")
    print("timed: perturb+aggregate+estimate (per-user), sample_aggregate+estimate (direct), EM (em); "
          "each case in a fresh spawned process, timed after one warm-up call (steady state).\npeak = ru_maxrss of that process (includes the "
          "interpreter, numpy and the workload: see baseline).")
    rows, status = [], 0
    print_header(BENCH_COLUMNS)
    for case in cases:
        row = bench.bench_row(case, args.devices, args.items, args.seed)
        rows.append(row)
        print_row(row, BENCH_COLUMNS)
    baselines = [r["baseline_mib"] for r in rows if not math.isnan(r["baseline_mib"])]
    if baselines:
        print(f"baseline RSS of a worker before its timed section: {min(baselines):.0f}–{max(baselines):.0f} MiB")
    all_rows = [{"table": "bench", **r} for r in rows]
    if args.peers:
        by_key = {(r["case"], r["path"]): r for r in rows}
        case_by_key = {(c.label, c.path): c for c in cases}
        try:
            prows = peer_rows(by_key, case_by_key, args.devices, args.peer_users or args.devices, args.items,
                              args.seed, args.peers_venv)
        except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
            print(f"peers: failed ({exc}); our table above stands", file=sys.stderr)
            status, prows = 1, []
        if prows:
            print(f"\nspeed-up = peer s/10⁶ ÷ ours s/10⁶; MSE on the frequency scale over {args.items} items; "
                  f"p(equal) = paired z-test of the per-item squared errors (equal at p ≥ {EQUAL_P})")
            print_header(PEER_COLUMNS)
            for row in prows:
                print_row(row, PEER_COLUMNS)
        all_rows += [{"table": "peers", **r} for r in prows]
        dcases = discovery_peers.select(args.only)
        drows = []
        if dcases:
            try:
                drows = discovery_peer_rows(dcases, args.seed, args.peers_venv)
            except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
                print(f"peers: discovery failed ({exc}); the tables above stand", file=sys.stderr)
                status = 1
        if drows:
            print(f"\ntimes: medians over the repeats (ours in this process after a warm-up; the peer from building "
                  f"its server to find_heavy_hitters); speed-up = peer ÷ ours per-user (direct ×: ÷ ours direct); "
                  f"F1 of the top {dcases[0].top_k}, mean over repeats; ΔF1 = ours per-user − peer, p(equal) = "
                  f"exact paired sign-flip test (equal at p ≥ {discovery_peers.EQUAL_P})")
            print_header(DISCOVERY_COLUMNS)
            for row in drows:
                print_row(row, DISCOVERY_COLUMNS)
        all_rows += [{"table": "discovery-peers", **r} for r in drows]
    if args.out:
        from ldpsim.runtime.durable import write_file
        from ldpsim.runtime.runfolder import make_out_folder
        out = make_out_folder(args.out)
        fields = list(dict.fromkeys(k for r in all_rows for k in r))

        def write_csv(tmp):
            with open(tmp, "w", newline="") as fh:
                writer = csv.DictWriter(fh, fieldnames=fields)
                writer.writeheader()
                writer.writerows(all_rows)
        write_file(out / "bench.csv", write_csv)
        print(f"wrote {len(all_rows)} rows to {out / 'bench.csv'}")
    return status
