"""``ldpsim reproduce NAME``: re-run a published figure (tidy CSV table, PNG and SVG figure, runtime).

``ldpsim reproduce --list`` names the reproductions; ``NAME`` may also be ``all`` or a scenario file.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ldpsim.evaluation.scenario.schema import ScenarioError
from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("name", nargs="?", help="reproduction name (see --list), 'all', or a scenario .toml file")
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
            print(f"{name:14s} {config['title']}  [{path.name}]")
        except ScenarioError as exc:
            print(f"{name:14s} BROKEN: {exc}")
    return 0


def run(args) -> int:
    import pandas as pd

    from ldpsim.evaluation.report.html import report_from_run_dir
    from ldpsim.runtime.runfolder import RunFolder, RunFolderError
    from ldpsim.scenarios.reproductions import available, reproduce
    if args.list:
        return _list()
    if not args.name:
        print("error: give a reproduction NAME (see `ldpsim reproduce --list`)", file=sys.stderr)
        return 2
    if args.repeats is not None and args.repeats < 1:
        print(f"error: --repeats must be >= 1; got {args.repeats}", file=sys.stderr)
        return 2
    names = list(available()) if args.name == "all" else [args.name]
    unknown = [n for n in names if n not in available()]
    if unknown:
        print(f"error: Unknown reproduction {unknown[0]!r}; choose one of {', '.join(available())} or all",
              file=sys.stderr)
        return 2
    out = Path(args.out or Path("runs") / "reproduce")
    try:  # a locked folder of reproductions (new, empty or earlier reproductions); figures accumulate by name
        folder = RunFolder.open(out, "reproduce", {"fingerprint": "reproductions"}, resume=True)
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with folder:
        for name in names:
            try:
                result = reproduce(name, out, repeats=args.repeats, quick=args.quick, seed=args.seed)
            except (ScenarioError, ValueError) as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            with pd.option_context("display.width", 160, "display.max_columns", 20, "display.precision", 4):
                print(f"== {result.config['name']}: {result.config['title']}")
                print(result.summary)
            print(f"runtime {result.runtime_s:.1f} s{' (--quick)' if args.quick else ''}; wrote "
                  + ", ".join(str(p) for p in result.paths))
        print(f"report: {report_from_run_dir(out, title='ldpsim reproductions')}")
        folder.finalize(adopt=True)
    return 0
