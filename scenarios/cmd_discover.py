"""``ldpsim discover SCENARIO``: days until a new slang word is found, interactive against one-shot
discovery, every protocol at the same ε per device over the run.

A thin layer over :func:`ldpsim.scenarios.studies.discovery.days.discovery_days_from_file`: prints the
per-protocol summary and writes its tables and figure into ``--out``.
"""

from __future__ import annotations

from pathlib import Path

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="discovery_days",
                        help="a [discovery_days] scenario: a TOML file or a shipped name (default: discovery_days)")
    parser.add_argument("--seeds", type=options.seed, nargs="+",
                        help="the seeds to run, each in 0 … 2⁶³ − 1; a study beyond an hour of CPU time is refused "
                             "before it starts (default: the scenario's)")
    options.add_out(parser, "runs/discovery-days")
    parser.add_argument("--force", action="store_true",
                        help="replace the results already in --out (default: refuse)")


def run(args) -> int:
    from ldpsim.evaluation.console_table import console_lines
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.api import discover
    make_out_folder(args.out or "runs/discovery-days", create=False)  # a bad --out is refused before the work
    result = discover(args.scenario, seeds=args.seeds)
    out = args.out or "runs/discovery-days"
    paths = result.to_folder(out, force=args.force)
    first = ["protocol", "days_to_discovery_median", "found_share", "first_day_found_median", "f1_last_day"]
    cols = first + [c for c in result.summary.columns if c not in first]   # the answers, then the privacy
    print("\n".join(console_lines(result.summary, cols, title="Days until the new word is found, by protocol",
                                   full=str(Path(out) / "discovery_days_summary.csv"))))
    for path in paths:
        options.say(args, path)
    return 0
