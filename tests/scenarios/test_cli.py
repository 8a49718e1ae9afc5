"""The command line's manners: help and defaults, shared options, exit codes, shipped scenarios by
name, wrong-kind advice, progress off a terminal, the short Python API, and no fixed port."""

from __future__ import annotations

import argparse
import socket
import os
import subprocess
import sys
import warnings

import pytest

import ldpsim
from ldpsim.scenarios import cli, options
from ldpsim.scenarios.catalog import listing, resolve, shipped
from ldpsim.scenarios.cli import COMMANDS, build_parser, main

SHARED = {"--seed", "--workers", "--scheduler", "--out", "--quiet", "--verbose", "--dry-run", "--devices"}


def _options(name: str) -> dict[str, argparse.Action]:
    parser = build_parser(name)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return {s: a for a in sub._actions for s in a.option_strings if s.startswith("--")}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help_that_states_its_default(name):
    parser = build_parser(name)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    formatter = sub._get_formatter()
    for action in sub._actions:
        if not action.option_strings or action.help is argparse.SUPPRESS or "--help" in action.option_strings:
            continue
        assert action.help, f"{name} {action.option_strings} has no help"
        text = formatter._get_help_string(action)
        assert "default" in text or action.required, f"{name} {action.option_strings}: no default stated"


@pytest.mark.parametrize("flag", sorted(SHARED))
def test_shared_options_mean_the_same_everywhere(flag):
    helps = {name: _options(name)[flag].help for name in COMMANDS if flag in _options(name)}
    stems = {h.split("(default")[0] for h in helps.values()}
    assert len(stems) <= 1, f"{flag} means different things: {helps}"


def test_drawing_commands_take_seed_and_folders_take_out():
    for name in ("run", "sweep", "check", "tune", "reproduce", "bench"):
        assert "--seed" in _options(name), name
    for name in ("run", "sweep", "check", "reproduce", "bench"):
        assert _options(name)["--out"].metavar == "DIR", name
    for name in ("run", "sweep"):
        assert {"--workers", "--scheduler"} <= set(_options(name)), name


@pytest.mark.parametrize("command", [[]] + [[name] for name in sorted(COMMANDS)])
def test_help_imports_no_heavy_library(command):
    code = (f"import sys; from ldpsim.scenarios.cli import main; main({command + ['--help']!r}); "
            "print(sorted(m for m in ('pandas', 'matplotlib', 'scipy', 'dask', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"ldpsim {ldpsim.__version__}"


def test_exit_codes(monkeypatch, capsys, tmp_path):
    assert main([]) == 2                                        # no command: usage
    assert main(["sweep"]) == 2                                 # missing argument: usage
    assert main(["run", "--devices", "0"]) == 2                 # invalid value
    assert main(["run", str(tmp_path / "nope.toml")]) == 2      # no such scenario
    import ldpsim.scenarios.cmd_scenarios as mod

    def boom(args):
        raise RuntimeError("planted")
    monkeypatch.setattr(mod, "run", boom)
    assert main(["scenarios"]) == 3
    assert "internal error: RuntimeError: planted" in capsys.readouterr().err
    with pytest.raises(RuntimeError):
        main(["scenarios", "-v"])                               # -v shows the traceback


@pytest.mark.slow
def test_shipped_scenarios_by_name_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert resolve("smoke") == shipped()["smoke"] == resolve("smoke.toml")
    assert main(["sweep", "smoke", "--workers", "1", "-q"]) == 0
    assert (tmp_path / "runs" / "smoke" / "report.html").is_file()
    assert main(["run", "keyboard", "--devices", "2000", "--days", "3", "-q"]) == 0
    assert (tmp_path / "runs" / "keyboard-2000x3d-seed2026" / "summary.json").is_file()
    assert main(["check", "smoke", "--baseline", "smoke", "-q"]) == 0
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out
    assert "keyboard" in out and "deployment" in out and "smoke" in out


def test_listing_names_every_kind():
    kinds = {kind for _, kind, _ in listing()}
    assert kinds == {"deployment", "sweep", "reproduction", "poisoning", "discovery", "trust"}
    assert all(text for _, _, text in listing())


def test_wrong_kind_names_the_right_command(capsys):
    assert main(["sweep", "keyboard"]) == 2
    err = capsys.readouterr().err
    assert "deployment scenario" in err and "`ldpsim run`" in err
    assert main(["run", "smoke"]) == 2
    assert "`ldpsim sweep`" in capsys.readouterr().err


def test_progress_off_a_terminal_has_no_carriage_returns(capsys):
    bar = options.Progress(16, "simulated days", enabled=True, lines=4)
    for day in range(1, 17):
        bar.update_to(day)
    bar.close()
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.strip().splitlines()
    assert 2 <= len(lines) <= 5 and lines[-1] == "simulated days: 16/16 done"


@pytest.mark.slow
def test_python_api(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = ldpsim.run("keyboard", devices=2000, days=2)
    assert result.out == tmp_path / "runs" / "keyboard-2000x2d-seed2026" and result.summary["days"] == 2
    assert not result.daily.empty
    table = ldpsim.sweep("smoke", out=tmp_path / "s").summary
    assert {"mechanism", "metric", "mean"} <= set(table.columns)
    with pytest.raises(ValueError, match="devices"):
        ldpsim.run("keyboard", devices=0)


@pytest.mark.slow  # starts a Dask cluster
def test_local_cluster_needs_no_fixed_port():
    """Port 8787 taken (a Jupyter Dask dashboard, say): a local cluster starts without a warning."""
    from ldpsim.runtime.cluster import local_cluster
    blocker = socket.socket()
    try:
        blocker.bind(("127.0.0.1", 8787))
        blocker.listen()
    except OSError:
        pass  # already taken by someone else: the same situation
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cluster = local_cluster(1)
            try:
                assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
                assert ":8787" not in (cluster.dashboard_link or "")
            finally:
                cluster.close()
    finally:
        blocker.close()


def test_cli_module_exposes_exit_codes():
    assert options.EXIT == {"ok": 0, "regression": 1, "usage": 2, "internal": 3, "interrupted": 130}
    assert "exit codes" in cli.EPILOG


def test_a_reader_that_closes_early_ends_the_command_quietly():
    """``ldpsim scenarios | head -1``: the reader closes the pipe before the listing is written; the command ends
    with 141 (128 + SIGPIPE, as a shell reports it) and writes no error to stderr."""
    read, write = os.pipe()
    os.close(read)                       # closed before the command starts: its first write fails, whatever the load
    try:
        done = subprocess.run([sys.executable, "-m", "ldpsim", "scenarios"], stdout=write, stderr=subprocess.PIPE,
                              timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == b""
