"""``ldpsim sweep SCENARIO``: run a scenario's grid into a folder of Parquet results (resumable).

The folder is a locked run folder of kind ``"sweep"`` (:mod:`ldpsim.scenarios.studies.sweep.store`): the same
scenario and seed resume from their verified cells, another scenario or seed is refused unless
``--force`` (which deletes only files ldpsim wrote), an unrelated non-empty folder is always refused.
``--dry-run`` prints the cell count, memory estimate and where the cells would run; an absurd grid is
refused before any cell is built. A thin layer over :func:`ldpsim.scenarios.api.sweep` (``ldpsim.sweep``).
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", help="a sweep scenario: a TOML file or a shipped name (`ldpsim scenarios`)")
    options.add_seed(parser, "[scenario] seed")
    options.add_workers(parser, "in this process when the cost estimate is under a minute, else one per core")
    options.add_out(parser, "runs/<scenario name>")
    options.add_vocabulary(parser)
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted run (the default when the folder holds the same scenario)")
    parser.add_argument("--force", action="store_true",
                        help="replace the results of a different scenario or seed in --out (only files ldpsim "
                             "wrote are deleted; default: refuse)")
    options.add_dry_run(parser)


def run(args) -> int:
    from ldpsim.scenarios.api import sweep
    result = sweep(args.scenario, seed=args.seed, workers=args.workers, scheduler=args.scheduler, out=args.out,
                   force=args.force, resume=args.resume, dry_run=args.dry_run, progress=options.show_progress(args),
                   vocabulary=args.vocabulary)
    if result.report is None:
        print(f"{result.describe()}\n(dry run: nothing was run or written)")
        return 0
    if result.report.n_run == 0:
        print(result.describe())
        return 0
    options.say(args, result.describe())
    print(f"report: {result.html} (`ldpsim plot {result.out}` adds the figures)")
    return 0
