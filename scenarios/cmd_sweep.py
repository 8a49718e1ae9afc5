"""``ldpsim sweep SCENARIO``: run a scenario's grid into a folder of Parquet results (resumable)."""

from __future__ import annotations

import sys
from pathlib import Path

from ldpsim.evaluation.scenario.schema import ScenarioError
from ldpsim.evaluation.report.html import report_from_run_dir
from ldpsim.evaluation.scenario.grid import load_scenario
from ldpsim.evaluation.sweep.store import RunExistsError
from ldpsim.evaluation.sweep.runner import run_sweep


def add_arguments(parser):
    parser.add_argument("scenario", help="scenario file (TOML)")
    parser.add_argument("--out", help="output folder (default: runs/<scenario name>)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--serial", action="store_true", help="run every cell in this process (debugging)")
    how.add_argument("--scheduler", metavar="ADDRESS", help="use an existing Dask cluster, e.g. tcp://host:8786")
    parser.add_argument("--workers", type=int, help="LocalCluster worker processes (default: one per core)")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted run (the default when the folder holds the same scenario)")
    parser.add_argument("--force", action="store_true", help="delete results of a different scenario in --out")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args) -> int:
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or Path("runs") / scenario.name)
    if args.resume and not (out / "config.json").exists():
        print(f"error: --resume: {out} holds no run to resume", file=sys.stderr)
        return 2
    try:
        report = run_sweep(scenario, Path(args.scenario).read_text(encoding="utf-8"), out, serial=args.serial,
                           scheduler=args.scheduler, n_workers=args.workers, force=args.force,
                           progress=not args.no_progress)
    except RunExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if report.n_run == 0:
        print(f"{out}: all {report.n_cells} cells already done")
        return 0
    print(f"{out}: {report.n_cells} cells ({report.n_skipped} already done, {report.n_run} run) in "
          f"{report.wall_s:.1f} s wall, {report.cell_s:.1f} s in cells on {report.n_workers} worker(s); "
          f"overhead {100 * report.overhead:.1f}%")
    print(f"report: {report_from_run_dir(out, title=f'sweep {scenario.name}')} "
          f"(`ldpsim plot {out}` adds the figures)")
    return 0
