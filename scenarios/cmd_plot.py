"""``ldpsim plot RUN_DIR``: figures of a stored sweep run into ``RUN_DIR/plots`` (PNG and SVG)."""

from __future__ import annotations

import sys

from evaluation.plots import plot_run


def add_arguments(parser):
    parser.add_argument("run_dir", help="output folder of `ldpsim sweep`")


def run(args) -> int:
    try:
        written = plot_run(args.run_dir)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0
