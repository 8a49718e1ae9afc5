"""The options every command shares, defined once so that a flag means the same thing everywhere.

| option | meaning |
|---|---|
| ``--seed INT`` | root entropy of the run's ``SeedSequence`` (default: the scenario's ``seed``) |
| ``--workers N`` | worker processes of a local Dask cluster (1 = in this process) |
| ``--scheduler ADDRESS`` | an existing Dask scheduler instead of a local cluster |
| ``--out DIR`` | the output folder (always a folder) |
| ``--vocabulary FILE`` | your own items (a table, a list or a text corpus) instead of the scenario's workload |
| ``--devices N`` | the population size: devices (users) simulated; ``--n`` and ``--users`` are older spellings |
| ``-q/--quiet`` | only errors and the final result lines; no progress |
| ``-v/--verbose`` | tracebacks of internal errors and Dask's log |

An option that applies only in one mode is declared with :func:`only_with` or :func:`not_with` where the
command adds it; :func:`check_applicable` (called by :func:`ldpsim.scenarios.cli.main` before any command's
work) refuses it elsewhere. A free string holds no control character (:func:`text`).

Exit codes (:data:`EXIT`): 0 ok, 1 a check found a problem (``ldpsim check``: a regression; ``ldpsim
audit``: a FAIL), 2 usage or invalid
input, 3 internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import re
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


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (NaN, inf and overflowing text such as ``1e999`` are refused)."""
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0; got {text!r}")
    return value


def fraction(text: str) -> float:
    """argparse type: a number strictly between 0 and 1 (a confidence or a false-alarm rate)."""
    value = _finite(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}")
    return value


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number; got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number; got {text!r}")
    return value


def delta(text: str) -> float:
    """argparse type: a δ of an (ε, δ) guarantee, in (0, 10⁻³] (:func:`ldpsim.mechanisms._validation.check_delta`)."""
    from ldpsim.mechanisms._validation import DELTA_MAX
    value = _finite(text)
    if not 0 < value <= DELTA_MAX:
        raise argparse.ArgumentTypeError(f"must be a δ in (0, {DELTA_MAX:g}]: the chance the ε bound fails for a "
                                         f"person stays far below 1/devices; got {text!r}")
    return value


def name_list(value: str) -> list[str]:
    """argparse type: comma-separated names (``olh,hr``), each named once, none empty."""
    names = text(value).split(",")
    if not all(n.strip() for n in names):
        raise argparse.ArgumentTypeError(f"must be comma-separated names, none empty; got {_shown(value)}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"must name each once; {', '.join(map(repr, twice))} is named more than "
                                         f"once in {_shown(value)}")
    return names


def seed(text: str) -> int:
    """argparse type: a seed, an integer in 0 … 2⁶³ − 1 (seeds are stored as int64)."""
    from ldpsim.scenarios.studies.scenario.schema import MAX_SEED
    value = non_negative_int(text)
    if value > MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**63 - 1] (stored as int64); got {value}")
    return value


def add_seed(parser, default_text: str = "the scenario's seed") -> None:
    parser.add_argument("--seed", type=seed,
                        help=f"root entropy of the run's SeedSequence; one seed reproduces the run "
                             f"(default: {default_text})")


#: the longest free-string value (Linux's PATH_MAX): no name, path or address of ours is longer
MAX_TEXT = 4096


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 80 else f"{value[:60]!r}… ({len(value):,} characters)"


def text(value: str) -> str:
    """argparse type of every free-string argument (:func:`ldpsim.scenarios.cli.build_parser` sets it on those
    without a type): not empty or blank, no NUL byte or other control character (a newline, a tab, an escape:
    :func:`ldpsim.runtime.plain.control_character`), at most :data:`MAX_TEXT` characters. What the string
    names (a file, a mechanism, a parameter) is checked where it is used, with the option's name."""
    from ldpsim.runtime.plain import control_character
    if not value.strip():
        raise argparse.ArgumentTypeError(f"must not be empty or blank; got {value!r}")
    if "\0" in value:
        raise argparse.ArgumentTypeError(f"must not contain a NUL byte; got {_shown(value)}")
    if control_character(value):
        raise argparse.ArgumentTypeError(f"must not contain a control character ({control_character(value)}); "
                                         f"got {_shown(value)}")
    if len(value) > MAX_TEXT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_TEXT} characters; got {_shown(value)}")
    return value


def out_dir(value: str) -> str:
    """argparse type: a folder path, not empty (an empty ``--out`` would silently mean the default folder)."""
    if not value.strip():
        raise argparse.ArgumentTypeError(f"must name a folder; got {value!r} (leave out --out for the default)")
    return text(value)


def scheduler(value: str) -> str:
    """argparse type: ``local`` or a Dask scheduler's address (``tcp://host:8786``, ``tls://…``, ``host:8786``)."""
    text(value)
    if value != "local" and not re.fullmatch(r"(tcp|tls|ucx|ws|wss|inproc)://\S+|[A-Za-z0-9.-]+:\d+|\[[0-9A-Fa-f:]+\]:\d+",
                                             value):
        raise argparse.ArgumentTypeError(f"must be local or a scheduler address such as tcp://host:8786; "
                                         f"got {_shown(value)}")
    return value


def add_out(parser, default_text: str) -> None:
    parser.add_argument("--out", metavar="DIR", type=out_dir, help=f"output folder (default: {default_text})")


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
    parser.add_argument("--scheduler", metavar="ADDRESS", type=scheduler,
                        help="run on an existing Dask cluster (e.g. tcp://host:8786) instead of a local one; "
                             "a scheduler without TLS runs code for anyone who can reach it (default: none)")


def add_vocabulary(parser) -> None:
    parser.add_argument("--vocabulary", metavar="FILE",
                        help="your own items instead of the scenario's workload: a CSV/TSV/Parquet table (item and "
                             "count or share), a .txt list (one item a line, optional count) or a .corpus.txt text "
                             "to count words and emoji in (default: the scenario's [workload])")


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


class ProgressCallback:
    """A library's ``progress(done, total)`` callback shown as a :class:`Progress` of ``unit``, created at the
    first call (when the total is known); :meth:`close` ends it."""

    def __init__(self, unit: str, enabled: bool = True):
        self.unit, self.enabled, self.bar = unit, enabled, None

    def __call__(self, done: float, total: int) -> None:
        if self.bar is None:
            self.bar = Progress(total, self.unit, self.enabled)
        self.bar.update_to(done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---- options that apply only in some modes -----------------------------------------------------------
def only_with(parser, option: str, *others: str, why: str = "") -> None:
    """Declare that ``option`` applies only when one of ``others`` is given (``--factor`` only with
    ``--check``); :func:`check_applicable` refuses it otherwise. Call after both are added; ``option``'s
    default must be None, False or an empty list (its value is how it is seen to be given)."""
    _rule(parser, option, others, True, why)


def not_with(parser, option: str, other: str, why: str = "") -> None:
    """Declare that ``option`` does not apply when ``other`` is given (``--keep`` with ``--out``: ``why``
    says what it would have done); :func:`check_applicable` refuses the pair."""
    _rule(parser, option, (other,), False, why)


def _rule(parser, option, others, together, why) -> None:
    actions = parser._option_string_actions
    action = actions[option]
    if action.default not in (None, False, []):
        raise ValueError(f"{option}: an option that applies only in some modes needs a default of None, False "
                         f"or []; got {action.default!r}")
    rules = parser.get_default("_applicable") or []
    parser.set_defaults(_applicable=[*rules, (action, tuple(actions[o] for o in others), together, why)])


def _given(args, action) -> bool:
    value = getattr(args, action.dest, None)
    return value is not None and value is not False and value != [] and value != action.default


def _flag(args, action) -> str:
    value = getattr(args, action.dest)
    flag = action.option_strings[-1]
    if action.nargs == 0 or value is True:
        return flag
    shown = " ".join(map(str, value)) if isinstance(value, list) else str(value)
    return f"{flag} {shown!r}" if isinstance(value, str) else f"{flag} {shown}"


def check_applicable(args) -> None:
    """Refuse an option given where it does not apply (rules of :func:`only_with` and :func:`not_with`), with
    an :class:`~ldpsim.runtime.errors.InputError` naming both options and the value: an option that changes
    nothing is a mistake to report, not to ignore."""
    from ldpsim.runtime.errors import InputError
    for action, others, together, why in getattr(args, "_applicable", None) or ():
        if not _given(args, action):
            continue
        if together and not any(_given(args, o) for o in others):
            names = " or ".join(o.option_strings[-1] for o in others)
            raise InputError(f"{action.option_strings[-1]} applies only with {names}{why and f' ({why})'}; "
                             f"got {_flag(args, action)} without it")
        if not together and _given(args, others[0]):
            raise InputError(f"{action.option_strings[-1]} does not apply with {others[0].option_strings[-1]}"
                             f"{why and f' ({why})'}; got {_flag(args, action)} with {_flag(args, others[0])}")
