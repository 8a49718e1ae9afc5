"""The ``ldpsim`` command line: one subcommand per module, listed in ``COMMANDS``.

Each subcommand module defines ``add_arguments(parser)`` and ``run(args) -> int`` (the exit code) and
imports its heavy libraries inside ``run``; only the chosen command's module is imported, so
``ldpsim --help`` stays fast. Exit codes: see :mod:`ldpsim.scenarios.options`.
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
    "run": ("ldpsim.scenarios.cmd_run", "simulate a keyboard deployment (default scenario: keyboard) and report"),
    "sweep": ("ldpsim.scenarios.cmd_sweep", "run a sweep scenario's parameter grid into Parquet results (resumable)"),
    "plot": ("ldpsim.scenarios.cmd_plot", "draw the figures of a stored sweep or deployment run into RUN_DIR/plots"),
    "audit": ("ldpsim.scenarios.cmd_audit", "an empirical lower bound on ε of our mechanisms or any client: PASS/FAIL"),
    "poison": ("ldpsim.scenarios.cmd_poison", "data-poisoning sweep: fake users vs every frequency oracle, gains beside closed forms"),
    "check": ("ldpsim.scenarios.cmd_check", "rerun a small scenario and compare its metrics with a stored baseline"),
    "tune": ("ldpsim.scenarios.cmd_tune", "find the cheapest sketch (k, m[, ε]) meeting an accuracy target"),
    "reproduce": ("ldpsim.scenarios.cmd_reproduce", "re-run a figure of a seed paper (--list names them)"),
    "bench": ("ldpsim.scenarios.cmd_bench", "every hot path against its physical floor (--check: a CI gate; --peers: beside pure-ldp)"),
    "accuracy": ("ldpsim.scenarios.cmd_accuracy", "measured MSE of the deployed designs beside their theory"),
    "scale": ("ldpsim.scenarios.cmd_scale", "device-days per second and peak memory of a deployment on Dask"),
    "link": ("ldpsim.scenarios.cmd_link", "the linking observer over 30 days: fresh against memoized reports"),
    "discover": ("ldpsim.scenarios.cmd_discover", "days until a new word is found: interactive vs one-shot discovery at equal ε"),
    "trust": ("ldpsim.scenarios.cmd_trust", "trust models side by side: LDP, shuffle, secure aggregation, two servers, thresholds"),
    "scenarios": ("ldpsim.scenarios.cmd_scenarios", "list the shipped scenarios with their kind and description"),
    "compare": ("ldpsim.scenarios.cmd_compare", "several designs on one fleet at the same privacy budget, side by side"),
    "trends": ("ldpsim.scenarios.cmd_trends", "when each continual-release design detects a rising word, at one ε per person"),
}

EPILOG = ("exit codes: 0 ok, 1 a check found a problem (check: regression; audit: FAIL), 2 usage or invalid "
          "input, 3 internal error, "
          "130 interrupted. `ldpsim COMMAND --help` describes a command.")


class _DefaultsFormatter(argparse.HelpFormatter):
    """Help that ends every option's text with its default, unless the text already states it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if not action.option_strings or "default" in text or action.default is argparse.SUPPRESS:
            return text
        if action.default is None:
            return text
        shown = "off" if action.default is False else "%(default)s"
        return f"{text} (default: {shown})"


def _version() -> str:
    from ldpsim import __version__
    return __version__


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported to add its arguments (``"*"``: every command's)."""
    from ldpsim.scenarios.options import text, verbosity_parent
    parser = argparse.ArgumentParser(prog="ldpsim", description="Simulate and evaluate LDP keyboard telemetry.",
                                     epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"ldpsim {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parent = verbosity_parent()
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, parents=[parent], epilog=EPILOG,
                           formatter_class=_DefaultsFormatter)
        if command in ("*", name):
            importlib.import_module(module).add_arguments(p)
            for action in p._actions:  # every free string: not empty, blank, NUL or absurdly long
                if action.type is None and action.nargs != 0 and not action.choices and \
                        not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                    action.type = text
        p.set_defaults(_module=module)
    return parser


def _chosen(argv: list[str]) -> str | None:
    return next((a for a in argv if a in COMMANDS), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    for stream in (sys.stdout, sys.stderr):  # an undecodable byte of argv (surrogateescape) is shown as \xff
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser(_chosen(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) and usage errors (2) return their code
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 2
    from ldpsim.runtime.errors import LdpsimError
    from ldpsim.scenarios.options import check_applicable
    try:
        check_applicable(args)  # an option given where it does not apply: refused before the command's work
        return int(importlib.import_module(args._module).run(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted: finished work is kept; rerun the same command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader closed early (``ldpsim … | head``): finished work is kept, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # no second error when stdout is flushed
        return 141                                                        # 128 + SIGPIPE, as a shell reports it
    except LdpsimError as exc:  # invalid input, a refused cost, a locked folder: the library's own message
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError) as exc:  # invalid input that a command did not catch itself
        if getattr(args, "verbose", False):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a clear message and exit 3
        if getattr(args, "verbose", False):
            raise
        print(f"internal error: {type(exc).__name__}: {exc}\n(a bug in ldpsim {_version()}; rerun with -v for "
              "the traceback and report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
