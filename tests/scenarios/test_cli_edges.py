"""The newer commands at their edges: options that do not apply, cost guards before the work, gates that can
fail, one spelling of the trust comparison, ``compare --dry-run`` and the command of every scenario kind.

Every case runs in-process and ends before any simulation (a refusal or a dry run), so the file is fast.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from ldpsim.scenarios.studies.bench import suite
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios import options
from ldpsim.scenarios.cli import COMMANDS, build_parser, main
from tests.tree import own_files
from tests.cli_cases import command_parser as _parser, expect_clear_refusal


# ---- options that apply only with (or without) another: every declared rule, generated -------------------
def _value(action) -> list[str]:
    if action.nargs == 0:
        return []
    if action.choices:
        return [str(next(iter(action.choices)))]
    sample = {options.positive_float: "2", options.positive_int: "3", float: "2", int: "3", options.seed: "3",
              options.delta: "1e-6", options.name_list: "olh", options.scheduler: "local"}.get(action.type, "x")
    return [sample]


#: what a command needs to parse at all
REQUIRED = {"audit": ["--mechanism", "grr"]}


def _rules():
    out = []
    for command in COMMANDS:
        for action, others, together, _ in _parser(command).get_default("_applicable") or ():
            out.append(pytest.param(command, action, others, together,
                                    id=f"{command}{action.option_strings[-1]}-{'without' if together else 'with'}-"
                                       f"{others[0].option_strings[-1]}"))
    return out


@pytest.mark.parametrize("command, action, others, together", _rules())
def test_an_option_where_it_does_not_apply_is_refused(tmp_path, capsys, command, action, others, together):
    flag, other = action.option_strings[-1], others[0]
    argv = [command, *REQUIRED.get(command, []), flag, *_value(action)]
    if not together:
        argv += [other.option_strings[-1]] + ([] if other.nargs in (0, "?") else [str(tmp_path / "o")])
    expect_clear_refusal(argv, [flag, other.option_strings[-1], "appl"], capsys)
    assert not (tmp_path / "o").exists()


def test_the_rules_cover_the_reported_cases():
    """The cases the fault pass found accepted silently are among the declared rules."""
    declared = {(c, a.option_strings[-1], o[0].option_strings[-1]) for c in COMMANDS
                for a, o, _, _ in _parser(c).get_default("_applicable") or ()}
    assert {("compare", "--designs", "--trust"), ("scale", "--keep", "--out"), ("bench", "--factor", "--check"),
            ("bench", "--peer-users", "--peers")} <= declared


def test_an_option_given_with_its_mode_passes_the_rules():
    parser = build_parser("bench")
    args = parser.parse_args(["bench", "--check", "--factor", "2", "--peers", "--peer-users", "5"])
    options.check_applicable(args)  # no error
    with pytest.raises(InputError, match="--factor applies only with --check; got --factor 2.0 without it"):
        options.check_applicable(parser.parse_args(["bench", "--factor", "2"]))


def test_a_rule_on_an_option_with_a_default_cannot_be_declared():
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", type=int, default=3)
    parser.add_argument("--b", action="store_true")
    with pytest.raises(ValueError, match="--a"):  # its default would hide it being given
        options.only_with(parser, "--a", "--b")


# ---- plain values ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, names", [
    (["compare", "--designs", "olh,olh", "--dry-run"], ["--designs", "'olh'", "once"]),
    (["compare", "--designs", "olh,", "--dry-run"], ["--designs", "none empty"]),
    (["compare", "--delta", "0.5", "--dry-run"], ["--delta", "0.5", "0.001"]),
    (["trust", "--compare", "--delta", "0.01", "--dry-run"], ["--delta", "0.01"]),
    (["discover", "--seeds", str(2**63)], ["--seeds", str(2**63)]),
    (["discover", "--seeds", "1", "1"], ["seeds", "distinct"]),
    (["scale", "--devices", "100", "--shards", "5", "--workers", "1"], ["shards", "--shards", "5", "block"]),
])
def test_values_that_are_not_plain_are_refused(capsys, argv, names):
    expect_clear_refusal(argv, names, capsys)


def test_check_delta_bounds_the_chosen_delta():
    from ldpsim.mechanisms._validation import DELTA_MAX, check_delta
    assert check_delta("f", DELTA_MAX) == DELTA_MAX and check_delta("f", 1e-12) == 1e-12
    for bad in (0.0, 0.5, DELTA_MAX * (1 + 1e-9), float("nan")):
        with pytest.raises(InputError, match="'delta'"):
            check_delta("f", bad)


# ---- cost guards before the work ---------------------------------------------------------------------------
@pytest.mark.parametrize("argv, names", [
    (["compare", "--days", "100000"], ["days = 100,000", "at most about"]),
    (["compare", "--devices", str(10**12)], ["devices = 1,000,000,000,000", "at most about"]),
    (["compare", "--trust", "--days", str(10**6)], ["1,000,000 days", "days fit", "--days"]),
    (["trust", "--compare", "--days", str(10**6), "--dry-run"], ["1,000,000 days", "days fit", "--days"]),
    (["discover", "--seeds", *map(str, range(2000))], ["2,000 seed(s)", "seeds fit", "--seeds"]),
    (["scale", "--devices", str(10**12)], ["devices = 1,000,000,000,000", "at most about"]),
    (["accuracy", "--repeats", str(10**9)], ["repeats", "1,000,000,000", "100,000,000"]),
])
def test_work_that_cannot_fit_is_refused_before_it_starts(tmp_path, capsys, monkeypatch, argv, names):
    monkeypatch.chdir(tmp_path)
    expect_clear_refusal([*argv, "--out", str(tmp_path / "o")] if argv[0] not in ("accuracy",) else argv, names,
                         capsys)
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())


def test_accuracy_prints_no_table_head_when_refused(capsys):
    assert main(["accuracy", "--repeats", str(10**9)]) == 2
    assert capsys.readouterr().out == ""


def test_a_study_plan_states_its_cpu_time_and_memory():
    from ldpsim.evaluation.cost import MAX_STUDY_SECONDS, CostError, discovery_plan
    plan = discovery_plan(8, 14, 5)
    assert 0 < plan.seconds < MAX_STUDY_SECONDS and "estimated CPU time" in plan.describe()
    with pytest.raises(CostError, match="seeds fit"):
        discovery_plan(8, 14, 10**4)


# ---- compare --dry-run and the one spelling of the trust comparison --------------------------------------
def test_compare_dry_run_prints_the_plan_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "--dry-run", "--designs", "olh,hr", "--days", "3"]) == 0
    out = capsys.readouterr().out
    assert "2 design(s)" in out and "olh, hr" in out and "estimated peak memory" in out and "dry run" in out
    assert not any(tmp_path.iterdir())


def test_compare_trust_is_the_trust_comparison_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "--trust", "--epsilon-device", "4", "--days", "5", "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "`ldpsim trust --compare`" in captured.err and "--epsilons 4 --days 5" in captured.err
    assert "5 days" in captured.out and "dry run" in captured.out and not any(tmp_path.iterdir())


def test_the_trust_comparison_is_spelt_one_way_in_the_docs():
    root = Path(__file__).resolve().parents[2]  # the checkout: README and docs are not installed
    texts = [root / "README.md", *own_files(root / "docs", ".md")]
    for path in texts:
        assert "compare --trust" not in path.read_text(encoding="utf-8").replace(
            "`ldpsim compare --trust` is", ""), path


# ---- gates that can fail ------------------------------------------------------------------------------------
def _baseline(tmp_path, ratios) -> str:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"format": suite.BASELINE_FORMAT, "ratios": ratios}), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("ratios, names", [
    ({"grr|per-user": -1.0}, ["grr|per-user", "-1"]),
    ({"grr|per-user": 0.0}, ["grr|per-user", "0.0"]),
    ({"grr|per-user": 1e308}, ["grr|per-user", "1e+308"]),
    ({"grr|per-user": float("nan")}, ["grr|per-user", "nan"]),
    ({"grr|per-user": "2"}, ["grr|per-user", "'2'"]),
    ({}, ["none of the paths"]),
    ({"no such|path": 2.0}, ["'no such|path'"]),
    ({"hr ε1|per-user": 2.0}, ["none of the paths"]),  # a known path, outside what --check runs
])
def test_a_baseline_that_would_let_every_path_pass_is_a_bad_file(tmp_path, capsys, ratios, names):
    expect_clear_refusal(["bench", "--check", _baseline(tmp_path, ratios)], ["--check", *names], capsys)


@pytest.mark.parametrize("factor, shown", [("inf", "inf"), ("nan", "nan"), ("1e9", "1e+09"), ("1", "1")])
def test_a_factor_that_cannot_fail_is_refused(capsys, factor, shown):
    expect_clear_refusal(["bench", "--check", "--factor", factor], ["--factor", shown], capsys)


def test_check_refuses_a_run_that_compares_nothing():
    result = suite.BenchResult(suite.pd.DataFrame(columns=["case", "path", "floor_ratio", "status"]))
    result.settings["cases"] = ["hr ε1|per-user"]
    with pytest.raises(InputError, match="compares nothing"):
        suite.check(result, {"format": suite.BASELINE_FORMAT, "ratios": {"grr|per-user": 2.0}})


# ---- ldpsim scenarios --------------------------------------------------------------------------------------
def test_scenarios_names_the_command_of_every_kind(capsys):
    from ldpsim.scenarios.studies.scenario.schema import KIND_COMMANDS
    from ldpsim.scenarios.api import scenarios_table
    assert main(["scenarios"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for kind in set(scenarios_table()["kind"]):
        assert f"`{KIND_COMMANDS[kind]} NAME` ({kind})" in out, kind


def test_a_discovery_file_with_a_large_delta_is_refused(tmp_path, capsys):
    file = tmp_path / "d.toml"
    file.write_text("[discovery_days]\ndelta = 0.5\nseeds = [0]\n", encoding="utf-8")
    expect_clear_refusal(["discover", str(file), "--out", str(tmp_path / "o")], ["discovery_days.delta", "0.5",
                                                                                 "0.001"], capsys)
