"""Generated bad values for every free-string option and positional argument of every command.

The options are listed from the commands' own parsers (:func:`ldpsim.scenarios.cli.build_parser`): every
argument without a numeric type (``type`` None, :func:`ldpsim.scenarios.options.out_dir`, no ``choices``), so a
new option is covered when it is added. Each gets an empty string, whitespace, a NUL byte, a newline, an escape
character, 10⁵ characters, a
path with ``..`` that leads nowhere, a symbolic link out of the test's folder (to a folder), an undecodable
byte as ``sys.argv`` carries it (surrogateescape) and an unknown name. Each must exit 2 with a message naming
the option (or the positional's metavar), never a traceback, never run; the few accepted by design are listed
in :data:`ACCEPTED` with the reason. Everything runs in-process (``--dry-run`` where the command has it); a
SIGALRM of 60 s guards against a hang only (no timing is asserted).
"""

from __future__ import annotations

import argparse
import os
import signal

import pytest

from ldpsim.scenarios import options
from ldpsim.scenarios.cli import COMMANDS, build_parser, main
from tests.cli_cases import command_parser as _parser, fill_placeholders as _fill

#: a valid, cheap command line per command: (options, positional's default); the bad value replaces the
#: positional or is appended (and so overrides the option given here)
BASES = {
    "run": (["--dry-run", "--out", "{OUT}"], "{RUN}"),
    "sweep": (["--dry-run", "--out", "{OUT}"], "{SWEEP}"),
    "plot": ([], "{DIR}"),
    "audit": (["--mechanism", "grr", "--trials", "1000", "--out", "{OUT}"], None),
    "poison": (["--repeats", "2", "--fakes", "0", "--epsilons", "1", "--out", "{OUT}"], None),
    "check": (["--baseline", "{DIR}/baseline.json"], "{SWEEP}"),
    "tune": (["--target", "mse<=0.01", "--repeats", "2"], None),
    "reproduce": (["--quick", "--out", "{OUT}"], "sdldp-fig2"),
    "bench": (["--users", "1000", "--only", "grr", "--out", "{OUT}"], None),
    "accuracy": (["--devices", "100", "--repeats", "2"], None),
    "scale": (["--devices", "100", "--days", "1", "--workers", "1", "--shards", "1"], None),
    "link": (["--devices", "100"], None),
    "discover": (["--out", "{OUT}"], None),
    "trust": (["--out", "{OUT}"], None),
    "compare": (["--dry-run", "--devices", "100", "--days", "1", "--out", "{OUT}"], None),
    "scenarios": ([], None),
    "trends": (["--devices", "10000", "--replicates", "1", "--out", "{OUT}"], None),
}
VALUES = {"empty": "", "blank": "  \t", "nul": "a\x00b", "newline": "runs/a\nb", "escape": "runs/a\x1b[2Jb",
          "long": "x" * 100_000, "dotdot": "../../no/such/../x",
          "symlink": "{DIR}/link", "undecodable": b"\xff\xfe.toml".decode("utf-8", "surrogateescape"),
          "unknown": "no-such-name-zz"}
#: (option, value kind) → why it is accepted (the test then checks only: no traceback, no hang, nothing written
#: through the link); an accepted --out would run the whole command, so it is tried only where --dry-run is
#: (every --out has the same type, :func:`ldpsim.scenarios.options.out_dir`)
ACCEPTED = {("--out", "dotdot"): "a relative path is the user's to choose",
            ("--out", "undecodable"): "a Linux file name is bytes: the folder gets exactly that name",
            ("--out", "unknown"): "a new folder's name"}
DRY_RUN = {"run", "sweep", "compare"}
STRING_TYPES = (None, options.text, options.out_dir, options.scheduler, options.name_list)


def _string_arguments(command: str):
    for action in _parser(command)._actions:
        if isinstance(action, argparse._HelpAction) or action.nargs == 0 or action.choices:
            continue
        if action.type not in STRING_TYPES:
            continue
        yield action


def _cases():
    out = []
    for command in COMMANDS:
        assert command in BASES, f"add a cheap command line for `ldpsim {command}` to BASES"
        for action in _string_arguments(command):
            flag = action.option_strings[-1] if action.option_strings else None
            name = flag or action.dest
            for kind in VALUES:
                if (flag, kind) in ACCEPTED and command not in DRY_RUN:
                    continue
                out.append(pytest.param(command, flag, kind, id=f"{command}-{name}-{kind}"))
    return out


def _argv(command, flag, value, tmp_path):
    rest, positional = BASES[command]
    if flag is None:
        return [command, value, *_fill(rest, tmp_path)]
    head = [command] + ([_fill([positional], tmp_path)[0]] if positional else [])
    return head + _fill(rest, tmp_path) + [flag, value]


def _alarm(signum, frame):
    raise TimeoutError("hang guard: the command ran for 60 s")


@pytest.mark.parametrize("command, flag, kind", _cases())
def test_bad_strings(tmp_path, tmp_path_factory, capsys, monkeypatch, command, flag, kind):
    monkeypatch.chdir(tmp_path)  # relative values land in the test's folder
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    os.symlink(elsewhere, tmp_path / "link")
    value = VALUES[kind].replace("{DIR}", str(tmp_path))
    argv = _argv(command, flag, value, tmp_path)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)
    try:
        code = main(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    assert not any(elsewhere.iterdir()), f"wrote through a symbolic link out of its folder: {list(elsewhere.iterdir())}"
    if (flag, kind) in ACCEPTED:
        return
    assert code == 2, f"exit {code} for {command} {flag} {kind}: {err[-600:]}"
    action = next(a for a in _string_arguments(command) if (a.option_strings[-1:] or [None])[0] == flag)
    names = set(action.option_strings) | {action.dest, str(action.metavar)}
    if flag is None:  # a positional is named by its value (an undecodable byte shown as \\xff)
        names |= {value[:40], repr(value)[:40], value.encode("utf-8", "backslashreplace").decode()[:40]}
    assert any(n and n in err for n in names), f"{names} not named in: {err[-600:]}"
