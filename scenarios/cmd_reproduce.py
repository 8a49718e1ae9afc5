"""``ldpsim reproduce NAME``: re-run a published figure (tidy CSV table, PNG and SVG figure, runtime).

``ldpsim reproduce --list`` names the reproductions (the names ``ldpsim scenarios`` lists); ``NAME``
may also be ``all`` or a reproduction scenario file. A thin layer over
:func:`ldpsim.scenarios.api.reproduce` (``ldpsim.reproduce``).
"""

from __future__ import annotations

import sys

from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("name", nargs="?", help="reproduction name (see --list), 'all', or a reproduction .toml file")
    parser.add_argument("--list", action="store_true", help="list the reproductions and exit")
    options.add_seed(parser, "the reproduction file's seed")
    options.add_out(parser, "runs/reproduce")
    parser.add_argument("--repeats", type=options.positive_int, help="repeats per setting (default: the file's repeats)")
    parser.add_argument("--quick", action="store_true",
                        help="tiny repeats, n, EM bins and ε grid: a smoke run (default: off)")


def _list() -> int:
    from ldpsim.scenarios.reproductions import KINDS, available
    from ldpsim.scenarios.reproductions.sdldp import load_reproduction
    for name, path in available().items():
        try:
            config = load_reproduction(path, KINDS)
            print(f"{name:16s} {config['title']}")
        except ScenarioError as exc:
            print(f"{name:16s} BROKEN: {exc}")
    return 0


def run(args) -> int:
    from ldpsim.scenarios.api import reproduce
    if args.list:
        return _list()
    if not args.name:
        print("error: give a reproduction NAME (see `ldpsim reproduce --list`)", file=sys.stderr)
        return 2
    result = reproduce(args.name, out=args.out, repeats=args.repeats, quick=args.quick, seed=args.seed)
    print(result.describe())
    return 0
