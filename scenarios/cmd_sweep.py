"""``ldpsim sweep SCENARIO``: run a scenario's grid into a folder of Parquet results (resumable).

The folder is a locked run folder of kind ``"sweep"`` (:mod:`ldpsim.evaluation.sweep.store`): the same
scenario and seed resume from their verified cells, another scenario or seed is refused unless
``--force`` (which deletes only files ldpsim wrote), an unrelated non-empty folder is always refused.
``--dry-run`` prints the cell count and memory estimate; an absurd grid is refused before any cell is
built.
"""

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
    options.add_vocabulary(parser)
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted run (the default when the folder holds the same scenario)")
    parser.add_argument("--force", action="store_true",
                        help="replace the results of a different scenario or seed in --out (only files ldpsim "
                             "wrote are deleted; default: refuse)")
    options.add_dry_run(parser)


def run(args) -> int:
    import os

    from ldpsim.evaluation.cost import CostError, sweep_plan
    from ldpsim.evaluation.report.html import report_from_run_dir
    from ldpsim.runtime.runfolder import RunFolderError, make_out_folder, read_manifest
    from ldpsim.evaluation.scenario.grid import load_scenario
    from ldpsim.evaluation.sweep.runner import run_sweep
    from ldpsim.scenarios.catalog import resolve
    from ldpsim.runtime.cluster import ClusterError
    try:
        path = resolve(args.scenario)
        scenario = load_scenario(path, args.vocabulary)
        for note in scenario.notices:
            options.say(args, f"note: {note}", file=sys.stderr)
        if args.seed is not None:
            scenario = dataclasses.replace(scenario, seed=args.seed)
        serial = args.workers == 1 and args.scheduler is None
        plan = sweep_plan(scenario, scenario.cells(), 1 if serial else (args.workers or os.cpu_count() or 1))
    except (ScenarioError, CostError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or Path("runs") / scenario.name)
    if args.dry_run:
        make_out_folder(out, create=False)
        manifest = read_manifest(out)
        state = ("new folder" if not out.exists() else "resumes its verified cells"
                 if manifest and manifest.get("fingerprint") == scenario.fingerprint() else "an existing folder")
        print(f"{scenario.name}: {plan.describe()}\nrun folder: {out} ({state})\n(dry run: nothing was run or written)")
        return 0
    if args.resume and read_manifest(out) is None:
        print(f"error: --resume: {out} holds no run to resume", file=sys.stderr)
        return 2
    try:
        report = run_sweep(scenario, path.read_text(encoding="utf-8"), out, serial=serial,
                           scheduler=args.scheduler, n_workers=args.workers, force=args.force,
                           progress=options.show_progress(args))
    except (RunFolderError, ClusterError) as exc:
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
