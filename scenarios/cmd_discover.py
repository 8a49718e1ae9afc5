"""``ldpsim discover SCENARIO``: days until a new slang word is found, interactive against one-shot
discovery, every protocol at the same ε per device over the run.

A thin layer over :func:`ldpsim.scenarios.studies.discovery.days.discovery_days_from_file`: prints the
per-protocol summary and writes its tables and figure into ``--out``.
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="discovery_days",
                        help="a [discovery_days] scenario: a TOML file or a shipped name (default: discovery_days)")
    parser.add_argument("--seeds", type=options.non_negative_int, nargs="+",
                        help="the seeds to run (default: the scenario's)")
    options.add_out(parser, "runs/discovery-days")
    parser.add_argument("--force", action="store_true",
                        help="replace the results already in --out (default: refuse)")


def run(args) -> int:
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.api import discover
    make_out_folder(args.out or "runs/discovery-days", create=False)  # a bad --out is refused before the work
    result = discover(args.scenario, seeds=args.seeds)
    print(result.summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for path in result.to_folder(args.out or "runs/discovery-days", force=args.force):
        options.say(args, path)
    return 0
