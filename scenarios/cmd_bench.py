"""``ldpsim bench``: time the mechanisms' paths and their physical floors; ``--peers`` adds pure-ldp and
multi-freq-ldpy; ``--check`` compares the floor ratios with a baseline.

A thin layer over :func:`ldpsim.scenarios.studies.bench.suite.bench` (``ldpsim.bench`` in a notebook): it parses
the options, prints the tables and writes ``--out`` through the result's ``to_folder``. Times are
reported, never graded; the exit status is 1 only when ``--check`` finds a floor ratio grown past
``--factor`` times the baseline's, or a peer run failed.
"""

from __future__ import annotations

import math
import sys

from ldpsim.scenarios import options


def add_arguments(parser):
    options.add_devices(parser, "10⁶ (users per case)", default=10**6)
    parser.add_argument("--items", type=_two_or_more, default=2000,
                        help="items of the harmonic workload (default: 2000)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these mechanisms or case labels (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="only the --check subset, each case at its own small n (default: off)")
    parser.add_argument("--repeats", type=options.positive_int, default=3,
                        help="timed pairs of floor and path per case, after a warm-up (default: 3)")
    parser.add_argument("--check", nargs="?", const=True, metavar="BASELINE",  # True: the shipped baseline
                        help="run the --check subset and exit 1 when a path's floor ratio exceeds --factor times "
                             "BASELINE's (a baseline.json written by --out; default: the one shipped with ldpsim)")
    parser.add_argument("--factor", type=options.positive_float, default=None,
                        help="growth of a floor ratio that --check tolerates, in (1, 100] (default: 3)")
    parser.add_argument("--peers", action="store_true", help="also run pure-ldp and multi-freq-ldpy (default: off)")
    parser.add_argument("--peer-users", type=options.positive_int, help="users for the slowest peer runs, OUE, "
                        "OLH, SUE, SHE, THE, BLH (default: --devices; their per-10⁶ time is then extrapolated)")
    parser.add_argument("--calibrate", action="store_true",
                        help="measure the memory and arithmetic limits of `ldpsim run` instead (a few minutes; "
                             "JSON; ldpsim.scenarios.studies.bench.cost_calibration)")
    parser.add_argument("--peers-venv", metavar="DIR", help="the peers' venv (default: ~/.cache/ldpsim/peers-venv)")
    parser.add_argument("--force", action="store_true",
                        help="replace a finished bench result in --out (default: refuse)")
    options.add_seed(parser, "0")
    options.add_out(parser, "none; with a folder of its own, the bench writes bench.csv and baseline.json there")
    options.only_with(parser, "--factor", "--check")
    options.only_with(parser, "--peer-users", "--peers")
    options.only_with(parser, "--peers-venv", "--peers")
    for option in ("--check", "--peers", "--only", "--quick", "--out"):
        options.not_with(parser, option, "--calibrate", "it measures the limits of `ldpsim run` only")


def _two_or_more(text: str) -> int:
    import argparse
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


def print_table(table, columns) -> None:
    print_header(columns)
    for row in table.to_dict("records"):
        print_row(row, columns)


BENCH_COLUMNS = [("case", "case", 22, ""), ("path", "path", 15, ""), ("n", "n", 11, ","),
                 ("seconds", "wall s", 9, ".3f"), ("cpu_s", "cpu s", 9, ".3f"), ("s_per_1e6", "s/10⁶", 9, ".3f"),
                 ("rate", "units/s", 10, ".2e"), ("floor", "floor", 13, ""), ("floor_ratio", "÷ floor", 8, ".2f"),
                 ("peak_mib", "peak MiB", 10, ".0f"), ("status", "status", 7, ""), ("note", "note", 0, "")]
PEER_COLUMNS = [("peer", "peer", 32, ""), ("ours", "ours", 10, ""), ("n_peer", "n", 10, ","),
                ("peer_s_per_1e6", "peer cpu s/10⁶", 15, ".2f"), ("ours_s_per_1e6", "ours cpu s/10⁶", 15, ".4f"),
                ("speedup", "speed-up", 10, ".1f"), ("target", "target", 8, ""),
                ("mse_ours", "MSE ours", 11, ".3e"), ("mse_theirs", "MSE peer", 11, ".3e"),
                ("mse_theory", "MSE theory", 11, ".3e"), ("p", "p(equal)", 9, ".3f"), ("verdict", "verdict", 0, "")]
DISCOVERY_COLUMNS = [("case", "case", 20, ""), ("n", "n", 9, ","), ("repeats", "reps", 5, ""),
                     ("peer_s", "peer s", 9, ".2f"), ("ours_user_s", "ours s", 9, ".3f"),
                     ("ours_direct_s", "direct s", 9, ".3f"), ("speedup", "speed-up", 9, ".0f"),
                     ("speedup_direct", "direct ×", 9, ".0f"), ("f1_peer", "F1 peer", 8, ".2f"),
                     ("f1_ours", "F1 ours", 8, ".2f"), ("f1_direct", "F1 dir.", 8, ".2f"), ("diff", "ΔF1", 7, "+.2f"),
                     ("p", "p(equal)", 9, ".3f"), ("verdict", "verdict", 0, "")]
CHECK_COLUMNS = [("case", "case", 22, ""), ("path", "path", 15, ""), ("baseline_ratio", "baseline", 9, ".2f"),
                 ("floor_ratio", "now", 8, ".2f"), ("growth", "growth", 8, ".2f"), ("verdict", "result", 7, ""),
                 ("note", "note", 0, "")]


def _load_text(load: dict) -> str:
    return f"{load['cpus']} CPUs, load average {_fmt(load['load_1min'], '.2f')}"


def run(args) -> int:
    from ldpsim.scenarios.studies.bench import suite
    seed = 0 if args.seed is None else args.seed
    checking = args.check is not None
    factor = suite.CHECK_FACTOR if args.factor is None else args.factor
    if args.calibrate:
        import json

        from ldpsim.scenarios.studies.bench.cost_calibration import calibrate
        print(json.dumps(calibrate(), indent=1))
        return 0
    if args.out:
        from ldpsim.runtime.runfolder import make_out_folder
        make_out_folder(args.out, create=False)  # a bad --out is refused before the work
    suite.check_factor(factor)  # before the run: a bad option costs nothing
    shipped = args.check is True
    baseline = suite.load_baseline(None if shipped else args.check) if checking else None
    quick = args.quick or checking
    if args.out:  # a folder the result could not be written into is refused before the work
        suite.claim_folder(args.out, seed, args.force)
    print(f"ldpsim bench: {'the --check subset (each case at its own n)' if quick else f'n={args.devices:,} users'}, "
          f"harmonic workload over {args.items} items, seed {seed}, {args.repeats} timed pairs per case")
    print("timed: perturb_aggregate+estimate (per-user), sample_aggregate+estimate (direct), EM (em), discovery; "
          "each case in a fresh process after a warm-up call; times are medians; ÷ floor = least path CPU time ÷ "
          "least floor CPU time over back-to-back pairs (floors: ldpsim.scenarios.studies.bench.floors)")
    print_header(BENCH_COLUMNS)
    result = suite.bench(args.devices, args.items, args.only, quick=quick, peers=args.peers, peer_users=args.peer_users,
                         peers_venv=args.peers_venv, seed=seed, repeats=args.repeats,
                         on_row=lambda row: print_row(row, BENCH_COLUMNS), log=print)
    table = result.table
    if len(table) and table["baseline_mib"].notna().any():
        print(f"baseline RSS of a worker before its timed section: {table['baseline_mib'].min():.0f}–"
              f"{table['baseline_mib'].max():.0f} MiB")
    print(f"machine: {_load_text(result.settings['load_before'])} before, "
          f"{_fmt(result.settings['load_after']['load_1min'], '.2f')} after")
    status = 0
    for message in result.errors:
        print(f"{message}; the tables above stand", file=sys.stderr)
        status = 1
    if len(result.peers):
        print(f"\nspeed-up = peer CPU s/10⁶ ÷ ours CPU s/10⁶ (ours: the least over the repeats); MSE on the "
              f"frequency scale over {args.items} items; p(equal) = paired z-test of the per-item squared errors "
              f"(equal at p ≥ {suite.EQUAL_P})")
        print_table(result.peers, PEER_COLUMNS)
    if len(result.discovery):
        print("\ntimes: medians over the repeats (ours in this process after a warm-up; the peer from building "
              "its server to find_heavy_hitters); speed-up = peer ÷ ours per-user (direct ×: ÷ ours direct); "
              "F1 of the top 20, mean over repeats; ΔF1 = ours per-user − peer, "
              "p(equal) = exact paired sign-flip test")
        print_table(result.discovery, DISCOVERY_COLUMNS)
    if checking:
        verdicts = suite.check(result, baseline, factor)
        verdicts["verdict"] = verdicts["ok"].map({True: "ok", False: "SLOWER"})
        print(f"\ncheck against {suite.BASELINE if shipped else args.check}: a path fails when its floor ratio exceeds "
              f"{factor:g} × the baseline's")
        print_table(verdicts, CHECK_COLUMNS)
        bad = int((~verdicts["ok"]).sum())
        print(f"check: {'FAILED, ' + str(bad) + ' of ' if bad else 'passed, all '}{len(verdicts)} paths"
              f"{' slower than ' + format(factor, 'g') + ' × their baseline ratio' if bad else ' within the factor'}")
        status = max(status, 1 if bad else 0)
    if args.out:
        path = result.to_folder(args.out, force=args.force)
        print(f"wrote {path} and {path.with_name('baseline.json')}")
    return status
