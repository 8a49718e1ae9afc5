"""The options every command shares, defined once so that a flag means the same thing everywhere.

| option | meaning |
|---|---|
| ``--seed INT`` | root entropy of the run's ``SeedSequence`` (default: the scenario's ``seed``) |
| ``--workers N`` | worker processes of a local Dask cluster (1 = in this process) |
| ``--scheduler ADDRESS`` | an existing Dask scheduler instead of a local cluster |
| ``--out DIR`` | the output folder (always a folder) |
| ``--devices N`` | the population size: devices (users) simulated; ``--n`` and ``--users`` are older spellings |
| ``-q/--quiet`` | only errors and the final result lines; no progress |
| ``-v/--verbose`` | tracebacks of internal errors and Dask's log |

Exit codes (:data:`EXIT`): 0 ok, 1 a check found a problem (``ldpsim check``: a regression; ``ldpsim
audit``: a FAIL), 2 usage or invalid
input, 3 internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys

#: exit codes of every command
EXIT = {"ok": 0, "regression": 1, "usage": 2, "internal": 3, "interrupted": 130}


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    return _int_at_least(text, 0)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    return _int_at_least(text, 1)


def _int_at_least(text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= {low}; got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be an integer >= {low}; got {value}")
    return value


def add_seed(parser, default_text: str = "the scenario's seed") -> None:
    parser.add_argument("--seed", type=non_negative_int,
                        help=f"root entropy of the run's SeedSequence; one seed reproduces the run "
                             f"(default: {default_text})")


def add_out(parser, default_text: str) -> None:
    parser.add_argument("--out", metavar="DIR", help=f"output folder (default: {default_text})")


def add_devices(parser, default_text: str, default: int | None = None) -> None:
    """``--devices N``, the population size, under one name on every command.

    ``--n`` and ``--users``, its older spellings on some commands, still work but are not shown.
    """
    parser.add_argument("--devices", type=positive_int, metavar="N", default=default,
                        help=f"number of simulated devices (users) in the population (default: {default_text})")
    parser.add_argument("--n", "--users", dest="devices", type=positive_int, default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS)


def add_workers(parser, default_text: str) -> None:
    parser.add_argument("--workers", type=positive_int, metavar="N",
                        help=f"worker processes of a local Dask cluster; 1 runs in this process "
                             f"(default: {default_text})")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on an existing Dask cluster (e.g. tcp://host:8786) instead of a local one; "
                             "a scheduler without TLS runs code for anyone who can reach it (default: none)")


def add_dry_run(parser) -> None:
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan and its cost estimate, then exit without running (default: off)")


def verbosity_parent() -> argparse.ArgumentParser:
    """A parent parser with ``-q/--quiet`` and ``-v/--verbose``, added to every command."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", action="store_true",
                       help="print only errors and the final result lines, no progress (default: off)")
    group.add_argument("-v", "--verbose", action="store_true",
                       help="show tracebacks of internal errors and Dask's log (default: off)")
    return parent


def say(args, *parts, **kw) -> None:
    """Print an informational line unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        print(*parts, **kw)


def show_progress(args) -> bool:
    """Whether to show progress: not with ``--quiet``."""
    return not getattr(args, "quiet", False)


class Progress:
    """Progress on stderr: a tqdm bar on a terminal, else at most ``lines`` plain lines (no carriage returns).

    Parameters
    ----------
    total : int
        The number of units of the whole job.
    unit : str
        The unit's name in the plural (``"days"``, ``"cells"``).
    enabled : bool
        ``False`` shows nothing.
    lines : int
        The most plain lines written when stderr is not a terminal.
    """

    def __init__(self, total: int, unit: str, enabled: bool = True, lines: int = 10):
        self.total, self.unit, self.n = max(int(total), 1), unit, 0
        self._bar = None
        self._next = 0.0
        self._step = 1.0 / max(lines, 1)
        self.enabled = enabled
        if enabled and sys.stderr.isatty():
            from tqdm import tqdm
            self._bar = tqdm(total=self.total, unit=unit.rstrip("s") or unit, leave=False)

    def update_to(self, n: float) -> None:
        """Record that ``n`` units are done."""
        self.n = n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n - self._bar.n)
        elif n / self.total >= self._next - 1e-12:
            print(f"{self.unit}: {int(n)}/{self.total} done", file=sys.stderr, flush=True)
            while self._next <= n / self.total:
                self._next += self._step

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
