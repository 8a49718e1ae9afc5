"""``ldpsim trends``: each continual-release design's detection of a rising word at one ε per person.

A thin layer over :func:`ldpsim.scenarios.studies.trends.rising_word.rising_word`: prints the table and
writes ``trends.csv`` and ``trajectory.png`` into ``--out``.
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
    parser.add_argument("--replicates", type=int, default=200, help="runs of the rising word per design")
    options.add_seed(parser, "0")
    options.add_out(parser, "runs/trends")
    parser.add_argument("--force", action="store_true",
                        help="replace another trends study's results in --out (default: refuse)")


def run(args) -> int:
    from pathlib import Path

    from ldpsim.evaluation.console_table import console_lines
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.studies.trends.rising_word import rising_word
    out = args.out or "runs/trends"
    make_out_folder(out, create=False)          # a bad --out is refused before the work
    result = rising_word(args.item, args.devices, args.days, args.epsilon, args.window, args.false_alarms,
                         args.replicates, 0 if args.seed is None else args.seed)
    paths = result.to_folder(out, force=args.force)
    shown = result.table.drop(columns=["guarantee"])
    notes = ["epsilon: the design's stated ε (memoized: per value, same repetition pattern); epsilon_item: one "
             "person's daily use of the item over the run (the only item tracked, so the same number); "
             "epsilon_person: between arbitrary histories (inf: pure memoization reveals a change of use)"]
    print("\n".join(console_lines(shown, title=result.title, full=str(Path(out) / "trends.csv"), notes=notes)))
    for path in paths:
        print(path)
    return 0
