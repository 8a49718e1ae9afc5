"""The ``ldpsim`` command line: one subcommand per module, listed in ``COMMANDS``.

Each subcommand module defines ``add_arguments(parser)`` and ``run(args) -> int`` (the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# One BLAS thread per process: sweeps and shards parallelize over processes already, and
# oversubscribed OpenBLAS threads made EM 100× slower on a loaded 2-core machine. Set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

#: subcommand → (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "bench": ("ldpsim.scenarios.cmd_bench", "time every mechanism against its target (--peers: vs pure-ldp, multi-freq-ldpy)"),
    "sweep": ("ldpsim.scenarios.cmd_sweep", "run a scenario's parameter grid into Parquet results (resumable)"),
    "plot": ("ldpsim.scenarios.cmd_plot", "draw the figures of a stored sweep run into RUN_DIR/plots"),
    "tune": ("ldpsim.scenarios.cmd_tune", "find the cheapest sketch (k, m[, ε]) meeting an accuracy target"),
    "run": ("ldpsim.scenarios.cmd_run", "simulate a keyboard deployment (default scenario: keyboard.toml) and report"),
    "reproduce": ("ldpsim.scenarios.cmd_reproduce", "re-run a figure of the SDLDP paper (--list names them)"),
    "check": ("ldpsim.scenarios.cmd_check", "rerun a small scenario and compare its metrics with a stored baseline"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ldpsim", description="Simulate and evaluate LDP keyboard telemetry.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(module).add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(importlib.import_module(args._module).run(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted: finished work is kept; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
