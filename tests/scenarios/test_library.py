"""The study commands as library functions (ldpsim.sweep, .tune, .check, .reproduce, .scenarios_table):
the same numbers and messages from a notebook and the command line, and the names, flags and outputs
that used to disagree between commands."""

from __future__ import annotations

import argparse
import math
import re
import shutil
from pathlib import Path

import pytest

import ldpsim
from ldpsim.scenarios.studies.sweep import grid_run, runner
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.catalog import listing, lookup, shipped
from ldpsim.scenarios.cli import COMMANDS, build_parser, main
from ldpsim.scenarios.reproductions import available
from tests.tree import own_files

PACKAGE = Path(ldpsim.__file__).resolve().parent


def _options(name: str) -> dict[str, argparse.Action]:
    parser = build_parser(name)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return {s: a for a in sub._actions for s in a.option_strings if s.startswith("--")}


# ---- one name per thing -----------------------------------------------------------------------------
def test_every_listed_reproduction_is_accepted_by_reproduce_under_the_same_name():
    listed = {name for name, kind, _ in listing() if kind == "reproduction"}
    assert listed == set(available())  # was: seed001_rr listed, rr-survey accepted
    assert {"rr-survey", "sdldp-fig5"} <= listed


def test_old_file_stems_are_accepted_with_a_note():
    path, note = lookup("seed001_rr")
    assert path == shipped()["rr-survey"] and "'rr-survey'" in note
    assert lookup("rr-survey") == (path, None)


def test_descriptions_are_whole_first_sentences_and_wrapped(capsys, monkeypatch):
    for name, _, text in listing():
        assert re.search(r"[.?!)]$", text), f"{name}: {text!r} is cut mid-sentence"
    monkeypatch.setenv("COLUMNS", "90")
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 90 for line in out.splitlines()), "lines longer than the terminal"
    table = ldpsim.scenarios_table()
    assert set(table.columns) >= {"name", "kind", "command", "description", "path"}
    assert (table.loc[table["name"] == "rr-survey", "command"] == "ldpsim reproduce").all()


# ---- one flag for one meaning -------------------------------------------------------------------------
def test_the_population_size_is_devices_on_every_command_and_old_spellings_still_work():
    having = [name for name in COMMANDS if "--devices" in _options(name)]
    assert {"run", "tune", "bench", "link", "scale", "accuracy"} <= set(having)
    helps = {_options(name)["--devices"].help.split("(default")[0] for name in having}
    assert len(helps) == 1, helps
    for name in COMMANDS:
        shown = {s for s, a in _options(name).items() if a.help is not argparse.SUPPRESS}
        assert not shown & {"--n", "--users"}, f"{name} shows an older spelling"
    parser = build_parser("tune")
    for spelling in ("--devices", "--n", "--users"):
        args = parser.parse_args(["tune", "--target", "mse<=1", spelling, "1234"])
        assert args.devices == 1234, spelling
    assert parser.parse_args(["tune", "--target", "mse<=1"]).devices == 1_000_000


# ---- sweep: in process when small, plain progress lines off a terminal ---------------------------------
def test_small_sweep_runs_in_process_and_writes_plain_progress_lines(tmp_path, capsys, monkeypatch):
    def no_cluster(*args, **kwargs):
        raise AssertionError("a small sweep started a Dask cluster")
    monkeypatch.setattr(runner, "_run_dask", no_cluster)
    assert main(["sweep", "smoke", "--out", str(tmp_path / "cli")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "cells: 8/8 done" in err.splitlines()
    result = ldpsim.sweep("smoke", out=tmp_path / "lib")
    assert result.placement.serial and result.report.n_workers == 1 and result.report.n_run == 8
    cli_table = ldpsim.sweep("smoke", out=tmp_path / "cli").summary  # resumes: nothing reruns
    drop = ["elapsed_s"]
    assert cli_table.drop(columns=drop).equals(result.summary.drop(columns=drop))


def test_placement_follows_the_cost_estimate_unless_workers_are_given(tmp_path):
    dry = ldpsim.sweep("smoke", dry_run=True, out=tmp_path / "unused")
    assert dry.report is None and dry.placement.serial and not (tmp_path / "unused").exists()
    assert "runs in this process" in dry.describe()
    assert not grid_run.placement([], 2, None).serial and grid_run.placement([], 1, None).serial
    assert not grid_run.placement([], None, "tcp://h:8786").serial


# ---- tune: refusals with exit 2, the same message from the library ------------------------------------
TUNE = ["tune", "--target", "rank_deviation<=1", "--k", "16", "--m", "8", "--repeats", "2", "--domain-size", "20",
        "--devices", "2000"]


@pytest.mark.parametrize("extra, words", [
    (["--confidence", "0"], "confidence"), (["--confidence", "1"], "confidence"),
    (["--confidence", "2"], "confidence"), (["--confidence", "nan"], "confidence"),
    (["--domain-size", "1"], "--domain-size"), (["--devices", str(10**15)], "--devices"),
    (["--domain-size", str(2**40)], "--domain-size"), (["--repeats", "1"], "--repeats"),
])
def test_tune_refuses_bad_and_unaffordable_input_with_exit_2(extra, words, capsys):
    assert main(TUNE + extra) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: tune: ") and words in err


def test_tune_library_raises_the_cli_message(capsys):
    assert main(TUNE + ["--confidence", "2"]) == 2
    cli = capsys.readouterr().err.strip().removeprefix("error: ")
    with pytest.raises(InputError) as info:
        ldpsim.tune("rank_deviation<=1", devices=2000, domain_size=20, ks=[16], ms=[8], repeats=2, confidence=2.0)
    assert str(info.value) == cli
    with pytest.raises(InputError, match="confidence"):
        ldpsim.tune("rank_deviation<=1", confidence=math.nan)


def test_tune_library_and_cli_give_the_same_table(capsys):
    result = ldpsim.tune("rank_deviation<=50", devices=2000, domain_size=20, ks=[16], ms=[8], repeats=2, top=5)
    assert main(TUNE[:2] + ["rank_deviation<=50"] + TUNE[3:] + ["--top", "5", "-q"]) == 0
    out = capsys.readouterr().out
    assert result.describe().splitlines()[-1] in out
    assert result.best is not None and result.best["k"] == 16


# ---- check ----------------------------------------------------------------------------------------------
def test_check_library_and_cli_agree(capsys):
    result = ldpsim.check("smoke", "smoke")
    assert result.passed and result.result is not None
    assert main(["check", "smoke", "--baseline", "smoke"]) == 0
    out = capsys.readouterr().out
    assert result.describe().splitlines()[-1] in out  # the same verdict line
    with pytest.raises(InputError, match="alpha"):
        ldpsim.check("smoke", "smoke", alpha=float("nan"))


# ---- reproduce --------------------------------------------------------------------------------------------
def test_reproduce_accepts_a_toml_file_and_old_names(tmp_path, capsys):
    mine = tmp_path / "my_fig2.toml"
    shutil.copy(shipped()["sdldp-fig2"], mine)
    assert main(["reproduce", str(mine), "--quick", "--out", str(tmp_path / "a")]) == 0  # was: refused
    assert (tmp_path / "a" / "sdldp-fig2.csv").is_file()
    capsys.readouterr()
    result = ldpsim.reproduce("sdldp_fig2", out=tmp_path / "b", quick=True)  # the file's stem, as listed before
    assert "note: 'sdldp_fig2'" in capsys.readouterr().err
    assert [r.config["name"] for r in result.runs] == ["sdldp-fig2"] and result.html.is_file()


@pytest.mark.parametrize("name", ["../../x", "a/b", "..", ".hidden", "x" * 101])
def test_reproduction_name_must_be_a_plain_name(name, tmp_path, capsys):
    text = shipped()["sdldp-fig2"].read_text(encoding="utf-8").replace('name = "sdldp-fig2"', f'name = "{name}"')
    evil = tmp_path / "deep" / "er" / "evil.toml"
    evil.parent.mkdir(parents=True)
    evil.write_text(text, encoding="utf-8")
    out = tmp_path / "deep" / "er" / "out"
    assert main(["reproduce", str(evil), "--quick", "--out", str(out)]) == 2
    assert "[reproduction.name] must be a plain name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["evil.toml"]


# ---- no hidden python -m entry points -------------------------------------------------------------------
#: modules that keep a __main__ block: scripts run inside a peer library's (or a reference implementation's)
#: own interpreter, and the
#: deployment comparison that `ldpsim compare` replaces
SCRIPT_MODULES = {"scenarios/studies/audit/peers_audit_script.py", "scenarios/studies/bench/peers_script.py",
                  "scenarios/studies/bench/vdaf_poc_script.py",
                  "scenarios/studies/bench/triehh_reference_script.py",
                  "scenarios/studies/deployment/compare.py", "scenarios/cli.py"}


def test_no_python_m_entry_point_outside_the_command_table():
    found = {p.relative_to(PACKAGE).as_posix() for p in own_files(PACKAGE, ".py", skip=("tests",))
             if '__name__ == "__main__"' in p.read_text(encoding="utf-8")}
    assert found <= SCRIPT_MODULES, sorted(found - SCRIPT_MODULES)


def test_link_writes_its_table_and_figure_into_a_run_folder(tmp_path, capsys):
    assert main(["link", "--devices", "60", "--out", str(tmp_path / "l"), "-q"]) == 0
    assert {p.name for p in (tmp_path / "l").iterdir()} >= {"linking.csv", "linking.png", "manifest.json"}
    assert main(["link", "--devices", "61", "--out", str(tmp_path / "l"), "-q"]) == 2  # another study: refused
    assert main(["link", "--devices", "0"]) == 2


@pytest.mark.slow
def test_rerunning_a_finished_sweep_keeps_its_figures(tmp_path):
    out = tmp_path / "s"
    ldpsim.sweep("smoke", out=out)
    assert main(["plot", str(out), "-q"]) == 0
    figures = sorted(p.name for p in (out / "plots").iterdir())
    assert figures
    again = ldpsim.sweep("smoke", out=out)  # was: reopening the folder pruned the figures
    assert again.report.n_run == 0 and sorted(p.name for p in (out / "plots").iterdir()) == figures
