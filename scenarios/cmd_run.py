"""``ldpsim run [SCENARIO]``: simulate a deployment (default: the keyboard fleet), measure it, write a run folder.

A thin layer over :func:`ldpsim.scenarios.studies.deployment.study.run_deployment` (the folder, its files and
its rules are described there): parse the options, show progress, print the summary and where the run
went. Errors are the library's (:mod:`ldpsim.runtime.errors`); the command line prints them and exits 2.
"""

from __future__ import annotations

import sys

from ldpsim.scenarios import options
from ldpsim.scenarios.studies.deployment.run_figures import AUTO_FIGURES_DEVICE_DAYS, FIGURES


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="keyboard",
                        help="a deployment scenario: a TOML file or a shipped name (default: keyboard; "
                             "`ldpsim scenarios` lists them)")
    options.add_devices(parser, "[deployment] devices")
    parser.add_argument("--days", type=options.positive_int, help="number of simulated days (default: [deployment] days)")
    options.add_seed(parser, "[deployment] seed")
    options.add_workers(parser, "[deployment] workers; each worker simulates a shard of the fleet")
    options.add_out(parser, "runs/<name>-<devices>x<days>d-seed<seed>")
    parser.add_argument("--force", action="store_true",
                        help="replace a finished run of another configuration or seed in --out (default: off)")
    options.add_vocabulary(parser)
    parser.add_argument("--figures", choices=FIGURES,
                        help="draw the run's figures: auto when the run has at least "
                             f"{AUTO_FIGURES_DEVICE_DAYS:,} device-days (devices × days), all, or none; figures not "
                             "drawn are drawn later by `ldpsim plot RUN_DIR` (default: [deployment] figures, auto)")
    options.add_dry_run(parser)


def run(args) -> int:
    from ldpsim.scenarios.studies.deployment.study import plan_deployment, run_deployment
    from ldpsim.runtime.phases import describe_phases
    from ldpsim.scenarios.catalog import resolve
    scenario = resolve(args.scenario)
    chosen = dict(devices=args.devices, days=args.days, seed=args.seed, workers=args.workers, out=args.out,
                  vocabulary=args.vocabulary)
    if args.dry_run:
        plan = plan_deployment(scenario, **chosen)
        for note in plan.notices:
            options.say(args, f"note: {note}", file=sys.stderr)
        print(f"{plan.describe()}\n(dry run: nothing was run or written)")
        return 0
    progress = options.ProgressCallback("simulated days (incl. drain days)", options.show_progress(args))
    try:
        study = run_deployment(scenario, **chosen, scheduler=args.scheduler, force=args.force, figures=args.figures,
                               progress=progress, log=lambda line: options.say(
                                   args, line, file=sys.stderr if line.startswith("note: ") else sys.stdout))
    finally:
        progress.close()
    print(study.text)
    if study.figures_note:
        print(f"\n{study.figures_note}")
    options.say(args, f"\n{describe_phases(study.timings)}")
    print(f"\nrun folder: {study.out}  (open report.html in a browser)")
    return 0
