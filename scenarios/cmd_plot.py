"""``ldpsim plot RUN_DIR``: figures of a stored sweep run into ``RUN_DIR/plots`` (PNG and SVG)."""

from __future__ import annotations

import sys



def add_arguments(parser):
    parser.add_argument("run_dir", help="output folder of `ldpsim sweep`")
    parser.add_argument("--mark", nargs="+", metavar="KEY=VALUE",
                        help="cell to highlight, e.g. --mark k=65535 m=32 (default: the scenario's [plots] mark)")


def _mark(pairs):
    if pairs is None:
        return None
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--mark takes KEY=VALUE pairs; got {pair!r}")
        try:
            out[key] = int(value)
        except ValueError:
            try:
                out[key] = float(value)
            except ValueError:
                out[key] = value
    return out


def run(args) -> int:
    from ldpsim.scenarios.studies.sweep.sweep_report import plot_run, report_sweep
    from ldpsim.runtime.runfolder import hold, read_manifest
    try:
        mark = _mark(args.mark)
        folder = hold(args.run_dir) if read_manifest(args.run_dir) is not None else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        written = plot_run(args.run_dir, mark)
        for path in written:
            print(path)
        print(report_sweep(args.run_dir))
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if folder is not None:
            folder.release()
    return 0
