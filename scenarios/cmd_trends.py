"""``ldpsim trends``: each continual-release design's detection of a rising word at one ε per person.

A thin layer over :func:`ldpsim.scenarios.studies.trends.rising_word.rising_word`: prints the table and
writes ``trends.csv`` and ``trajectory.png`` into ``--out``. ``--engine devices`` runs every device's
history through its design (on a local Dask cluster with ``--workers`` > 1, or at ``--scheduler``); its
cost estimate is printed first, and a run that cannot fit this machine is refused before it starts.
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("--item", default="sus", help="the rising word or emoji (one wordfreq lists)")
    options.add_devices(parser, "10000000", default=10_000_000)
    parser.add_argument("--days", type=int, default=90, help="days of the run")
    parser.add_argument("--epsilon", type=float, default=2.0, help="ε per person over the run")
    parser.add_argument("--window", type=int, default=7, help="days summed by the detector")
    parser.add_argument("--false-alarms", type=float, default=0.05, help="expected false alarms per month")
    parser.add_argument("--replicates", type=int, default=None,
                        help="runs of the rising word per design (default: 200 with --engine exact, 1 with devices)")
    parser.add_argument("--engine", default="exact",
                        help="exact: draw each day's release from its exact aggregate law (cost independent of "
                             "--devices); devices: every device privatizes its own history and the server sums")
    options.add_workers(parser, "1 (in this process)")
    options.add_seed(parser, "0")
    options.add_out(parser, "runs/trends")
    parser.add_argument("--force", action="store_true",
                        help="replace another trends study's results in --out (default: refuse)")
    options.add_dry_run(parser)
    for flag in ("--workers", "--scheduler"):
        options.only_with(parser, flag, "--engine", why="the exact engine's cost does not depend on the devices")


def run(args) -> int:
    import sys
    from pathlib import Path

    from ldpsim.evaluation.console_table import console_lines
    from ldpsim.evaluation.trends.skellam_counter_design import BOUND_NOTE
    from ldpsim.evaluation.trends.thresh_delay import THEORY_NOTE
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.studies.trends.rising_word import plan_rising_word, rising_word
    out = args.out or "runs/trends"
    make_out_folder(out, create=False)          # a bad --out is refused before the work
    plan = plan_rising_word(args.devices, args.days, args.replicates, args.engine, args.workers, args.epsilon)
    if args.dry_run:
        print(f"{plan.describe()}\n(dry run: nothing was run or written)")
        return 0
    options.say(args, plan.describe(), file=sys.stderr)
    progress = options.ProgressCallback("device blocks", options.show_progress(args))
    try:
        result = rising_word(args.item, args.devices, args.days, args.epsilon, args.window, args.false_alarms,
                             args.replicates, 0 if args.seed is None else args.seed, engine=args.engine,
                             workers=args.workers, scheduler=args.scheduler, progress=progress)
    finally:
        progress.close()
    paths = result.to_folder(out, force=args.force)
    shown = result.table.drop(columns=["guarantee"])
    notes = ["epsilon: the design's stated ε (memoized: per value, same repetition pattern); epsilon_item: one "
             "person's daily use of the item over the run (the only item tracked, so the same number); "
             "epsilon_person: between arbitrary histories (inf: pure memoization reveals a change of use)", THEORY_NOTE, BOUND_NOTE]
    print("\n".join(console_lines(shown, title=result.title, full=str(Path(out) / "trends.csv"), notes=notes)))
    for path in paths:
        print(path)
    return 0
