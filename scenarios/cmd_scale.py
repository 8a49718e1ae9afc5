"""``ldpsim scale``: device-days per second and peak memory of a deployment run on a local Dask cluster.

A thin layer over :func:`ldpsim.scenarios.studies.bench.fleet_scale.measure_scale`; prints one JSON line.
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="keyboard",
                        help="a deployment scenario: a TOML file or a shipped name (default: keyboard)")
    options.add_devices(parser, "[deployment] devices")
    parser.add_argument("--days", type=options.positive_int, help="simulated days (default: the scenario's)")
    parser.add_argument("--shards", type=options.positive_int, default=2,
                        help="shards (each a SimPy environment; Dask tasks)")
    parser.add_argument("--workers", type=options.positive_int, default=2, metavar="N",
                        help="worker processes of a local Dask cluster; 1 runs in this process (default: 2)")
    options.add_out(parser, "a temporary folder, deleted afterwards")
    parser.add_argument("--no-fsync", action="store_true", help="do not fsync store parts (default: the scenario's)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary run folder (default: off)")
    options.not_with(parser, "--keep", "--out", "an --out folder is always kept")


def run(args) -> int:
    import json

    from ldpsim.scenarios.studies.bench.fleet_scale import measure_scale
    from ldpsim.scenarios.api import _resolved
    print(json.dumps(measure_scale(str(_resolved(args.scenario)), args.devices, args.days, args.shards,
                                   args.workers, args.out, False if args.no_fsync else None, args.keep)))
    return 0
