"""``ldpsim sweep SCENARIO``: run a scenario's grid into a folder of Parquet results (resumable)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from ldpsim.evaluation.scenario.schema import ScenarioError
from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", help="a sweep scenario: a TOML file or a shipped name (`ldpsim scenarios`)")
    options.add_seed(parser, "[scenario] seed")
    options.add_workers(parser, "one per core")
    options.add_out(parser, "runs/<scenario name>")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted run (the default when the folder holds the same scenario)")
    parser.add_argument("--force", action="store_true",
                        help="replace the results of a different scenario in --out (default: refuse)")


def run(args) -> int:
    from ldpsim.evaluation.report.html import report_from_run_dir
    from ldpsim.evaluation.scenario.grid import load_scenario
    from ldpsim.evaluation.sweep.runner import run_sweep
    from ldpsim.evaluation.sweep.store import RunExistsError
    from ldpsim.scenarios.catalog import resolve
    try:
        path = resolve(args.scenario)
        scenario = load_scenario(path)
        if args.seed is not None:
            scenario = dataclasses.replace(scenario, seed=args.seed)
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or Path("runs") / scenario.name)
    if args.resume and not (out / "config.json").exists():
        print(f"error: --resume: {out} holds no run to resume", file=sys.stderr)
        return 2
    try:
        report = run_sweep(scenario, path.read_text(encoding="utf-8"), out,
                           serial=args.workers == 1 and args.scheduler is None,
                           scheduler=args.scheduler, n_workers=args.workers, force=args.force,
                           progress=options.show_progress(args))
    except RunExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if report.n_run == 0:
        print(f"{out}: all {report.n_cells} cells already done")
        return 0
    options.say(args, f"{out}: {report.n_cells} cells ({report.n_skipped} already done, {report.n_run} run) in "
          f"{report.wall_s:.1f} s wall, {report.cell_s:.1f} s in cells on {report.n_workers} worker(s); "
          f"overhead {100 * report.overhead:.1f}%")
    print(f"report: {report_from_run_dir(out, title=f'sweep {scenario.name}')} "
          f"(`ldpsim plot {out}` adds the figures)")
    return 0
