"""``ldpsim link``: the linking observer over 30 days, fresh reports against memoized ones.

A thin layer over :func:`ldpsim.scenarios.studies.link.linking_study.memo_linking`: prints the linked
observer's accuracy on a few days and writes ``linking.csv`` and ``linking.png`` into ``--out``.
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    options.add_devices(parser, "2000", default=2000)
    parser.add_argument("--epsilon", type=float, default=1.0, help="ε of one report")
    options.add_seed(parser, "0")
    options.add_out(parser, "runs/link")
    parser.add_argument("--force", action="store_true",
                        help="replace another linking study's results in --out (default: refuse)")


def run(args) -> int:
    from pathlib import Path

    from ldpsim.scenarios.studies.link.linking_study import memo_linking
    from ldpsim.evaluation.console_table import console_lines
    result = memo_linking(args.devices, args.epsilon, 0 if args.seed is None else args.seed)
    out = args.out or "runs/link"
    paths = result.to_folder(out, force=args.force)
    summary = result.summary().reset_index()
    summary.columns = [c if isinstance(c, str) else f"day {c}" for c in summary.columns]
    print("\n".join(console_lines(summary, ["mechanism", "memoize", "value", "epsilon_person", "day 1", "day 14",
                                            "day 15", "day 30"],
                                   title="Share of devices whose favourite the linking observer guesses (every day: "
                                         "linking.csv)",
                                   full=str(Path(out) / "linking.csv"), notes=[result.epsilon_note()])))
    for path in paths:
        print(path)
    return 0
