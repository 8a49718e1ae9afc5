"""Generated bad inputs for every command: each must end in exit 2 with a message naming the option or key and
the value, never a traceback, never exit 0 or 3.

The options come from the commands' own parsers (:func:`ldpsim.scenarios.cli.build_parser`): every option with a
numeric or folder type gets non-numbers, empty strings, negatives, 0, NaN, inf and huge values as they apply;
scenario keys get the values the fault-injection pass found accepted ([variants.*], int64 seeds, limits,
sizes). Everything runs in-process with ``--dry-run`` where the command has it.
"""

from __future__ import annotations

import math
import tomllib

import pytest

from ldpsim.scenarios.cli import main
from ldpsim.scenarios import options
from tests.cli_cases import command_parser as _parser, expect_clear_refusal, fill_placeholders as _fill
from tests.fleets import SWEEP, TINY
from tests.scenario_text import set_key as _set, to_toml

#: a valid command line per command ({RUN}, {SWEEP}, {DIR}, {OUT} are filled in per test); the bad option is
#: appended, so it overrides a value given here
#: the tiny deployment scenario as a dict (each bad scenario edits one key of it)
BASE_RUN = tomllib.loads(TINY)

BASE = {
    "run": ["run", "{RUN}", "--dry-run"],
    "sweep": ["sweep", "{SWEEP}", "--dry-run"],
    "poison": ["poison", "--repeats", "2", "--fakes", "0", "--epsilons", "1", "--out", "{OUT}"],
    "tune": ["tune", "--target", "mse<=0.01", "--repeats", "2"],
    "audit": ["audit", "--mechanism", "grr", "--trials", "1000", "--out", "{OUT}"],
    "bench": ["bench", "--users", "1000", "--only", "grr", "--out", "{OUT}"],
    "reproduce": ["reproduce", "sdldp-fig2", "--quick", "--out", "{OUT}"],
    "check": ["check", "{SWEEP}", "--baseline", "{DIR}/baseline.json"],
    "plot": ["plot", "{DIR}"],
    "compare": ["compare", "--dry-run", "--out", "{OUT}"],
    "trust": ["trust", "--compare", "--dry-run", "--out", "{OUT}"],
    "discover": ["discover", "--seeds", "0", "--out", "{OUT}"],
    "scale": ["scale", "--devices", "100", "--days", "1", "--workers", "1", "--shards", "1"],
}
NUMERIC = {options.positive_int: ("x", "", "1.5", "-1", "0", "nan"),
           options.non_negative_int: ("x", "", "1.5", "-1", "nan"),
           options.seed: ("x", "", "-1", str(2**64), "1e3"),
           int: ("x", "", "1.5", "nan", "1e999"),
           options.positive_float: ("x", "", "nan", "inf", "-inf", "1e999", "-1", "0"),
           options.fraction: ("x", "", "nan", "inf", "-1", "0", "1", "1.5"),
           options.delta: ("x", "", "nan", "inf", "-1", "0", "0.5", "0.0011")}


def _option_cases():
    out = []
    for command in BASE:
        for action in _parser(command)._actions:
            if not action.option_strings or action.nargs == 0:
                continue
            flag = action.option_strings[-1]
            kind = action.type if action.type in NUMERIC else None
            values = NUMERIC.get(kind, ()) if kind is not None else \
                ("",) if action.type is options.out_dir else ()
            if getattr(action.type, "__name__", "") in ("_trials", "_two_or_more"):
                values = ("x", "", "-1", "0", "nan")
            for value in values:
                out.append(pytest.param(command, flag, value, id=f"{command}{flag}={value or 'empty'}"))
    return out


@pytest.mark.parametrize("command, flag, value", _option_cases())
def test_bad_option_values(tmp_path, capsys, command, flag, value):
    pair = _parser(command)._option_string_actions[flag].nargs == 2
    argv = _fill(BASE[command], tmp_path) + ([flag, value, "1"] if pair else [f"{flag}={value}"])  # = keeps "-inf"
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, f"exit {code} for {argv}: {err[-600:]}"
    assert "Traceback" not in err and "internal error" not in err, err
    assert flag in err or flag.lstrip("-").replace("-", "_") in err, f"{flag} not named in: {err}"
    try:
        shown = {repr(value), value, repr(float(value)), f"{float(value):g}"}
    except ValueError:
        shown = {repr(value), value}
    assert any(v and v in err for v in shown), f"{value!r} not named in: {err}"


# ---- scenario keys ------------------------------------------------------------------------------
def _variant(table: dict) -> dict:
    data = _set(BASE_RUN, ("variants", "alt"), table)
    return data


RUN_KEYS = [
    # [variants.*]: checked like [use_case.emoji], with the same messages
    ("variants-eps-0", _variant({"mechanism": "grr", "epsilon": 0.0}), ["variants.alt.epsilon", "0.0"]),
    ("variants-eps-neg", _variant({"mechanism": "grr", "epsilon": -1.0}), ["variants.alt.epsilon", "-1.0"]),
    ("variants-eps-nan", _variant({"mechanism": "grr", "epsilon": math.nan}), ["variants.alt.epsilon", "nan"]),
    ("variants-eps-huge", _variant({"mechanism": "grr", "epsilon": 1e9}), ["variants.alt", "epsilon", "1000000000"]),
    ("variants-k-0", _variant({"mechanism": "cms", "epsilon": 4.0, "k": 0, "m": 64}), ["variants.alt", "'k'", "0"]),
    ("variants-m-2^20", _variant({"mechanism": "cms", "epsilon": 4.0, "k": 16, "m": 2**20}),
     ["variants.alt", "'m'", "1048576"]),
    ("variants-unknown-key", _variant({"mechanism": "grr", "epsilon": 4.0, "bogus": 1}), ["variants.alt", "bogus"]),
    ("variants-memoize-str", _variant({"mechanism": "grr", "epsilon": 4.0, "memoize": "true"}),
     ["variants.alt.memoize", "'true'"]),
    ("variants-not-a-table", _set(BASE_RUN, ("variants", "alt"), 3), ["variants.alt", "3"]),
    # values --dry-run accepted that crashed the real run
    ("seed-2^64", _set(BASE_RUN, ("deployment", "seed"), 2**64), ["deployment.seed", str(2**64)]),
    ("daily-limit-10^12", _set(BASE_RUN, ("use_case", "emoji", "daily_limit"), 10**12),
     ["use_case.emoji.daily_limit", str(10**12)]),
    ("daily-limit-times-eps", _set(BASE_RUN, ("use_case", "emoji", "daily_limit"), 1000),
     ["use_case.emoji.daily_limit", "1000"]),
    ("speed-sd-1e308", _set(BASE_RUN, ("fleet", "speed_session_sd_wpm"), 1e308), ["fleet.speed_session_sd_wpm", "1e+308"]),
    ("workload-n", _set(BASE_RUN, ("workload", "n"), 10**15), ["workload", "'n'"]),
    # cost, estimated before anything is built
    ("days-10^6", _set(BASE_RUN, ("deployment", "days"), 10**6), ["days", "1,000,000"]),
    ("domain-2^40", _set(BASE_RUN, ("workload", "domain_size"), 2**40), ["workload", "domain_size", "1,099,511,627,776"]),
]


@pytest.mark.parametrize("label, data, names", RUN_KEYS, ids=[c[0] for c in RUN_KEYS])
def test_bad_deployment_keys(tmp_path, capsys, label, data, names):
    file = tmp_path / "run.toml"
    file.write_text(to_toml(data), encoding="utf-8")
    expect_clear_refusal(["run", str(file), "--dry-run", "--out", str(tmp_path / "out")], names, capsys)
    assert not (tmp_path / "out").exists()


def test_a_poisoned_fleet_that_cannot_fit_is_refused_before_it_runs(tmp_path, capsys):
    expect_clear_refusal(["poison", "--deployment", "--days", str(10**6), "--out", str(tmp_path / "out")],
                         ["days = 1,000,000", "at most about"], capsys)
    assert not (tmp_path / "out").exists()


def test_a_sweep_whose_workload_cannot_fit_is_refused_before_it_is_built(tmp_path, capsys):
    file = tmp_path / "sweep.toml"
    file.write_text(SWEEP.replace("domain_size = 20", f"domain_size = {2**40}"), encoding="utf-8")
    expect_clear_refusal(["sweep", str(file), "--dry-run"], ["[workload] domain_size", "1,099,511,627,776"], capsys)


def test_deeply_nested_toml_is_refused(tmp_path, capsys):
    file = tmp_path / "deep.toml"
    file.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    expect_clear_refusal(["run", str(file), "--dry-run"], ["deep.toml", "too deeply"], capsys)


#: commands whose --out is checked only after their work (one benchmark, a quick figure)
AFTER_WORK = {"bench", "reproduce"}


@pytest.mark.parametrize("command", [pytest.param(c, marks=pytest.mark.slow) if c in AFTER_WORK else c
                                     for c in BASE if "{OUT}" in BASE[c] or c in ("run", "sweep", "check")])
def test_bad_out_folders_are_named(tmp_path, capsys, command):
    import os
    argv = _fill(BASE[command], tmp_path)
    if "--out" in argv:
        del argv[argv.index("--out"):argv.index("--out") + 2]
    if command == "check":
        argv.append("--update-baseline")
    (tmp_path / "file").write_text("x")
    os.symlink(tmp_path / "elsewhere", tmp_path / "link")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        for out, why in ((tmp_path / "file", "is a file"), (tmp_path / "file" / "sub", "a file is in the way"),
                         (tmp_path / "link", "symbolic link"),
                         *([(locked / "sub", "permission denied")] if os.geteuid() != 0 else [])):
            expect_clear_refusal([*argv, "--out", str(out), "-q"], ["--out", str(out), why], capsys)
    finally:
        locked.chmod(0o700)


# ---- positional arguments: scenario files, names and folders ---------------------------------------
PATHS = [
    (["run", "{DIR}/nope.toml", "--dry-run"], ["nope.toml", "no such scenario file"]),
    (["run", "{DIR}", "--dry-run"], ["is a folder"]),
    (["run", "", "--dry-run"], ["''"]),
    (["sweep", "{DIR}/nope.toml", "--dry-run"], ["nope.toml"]),
    (["sweep", "{RUN}", "--dry-run"], ["deployment scenario", "ldpsim run"]),
    (["poison", "{DIR}/nope.toml", "--repeats", "2"], ["nope.toml"]),
    (["reproduce", "nope"], ["nope"]),
    (["reproduce", "{DIR}/nope.toml"], ["nope.toml"]),
    (["check", "{DIR}/nope.toml", "--baseline", "{DIR}/b.json"], ["nope.toml"]),
    (["check", "{SWEEP}", "--baseline", "{DIR}/missing.json"], ["missing.json"]),
    (["plot", "{DIR}/nope"], ["nope"]),
    (["plot", "{RUN}"], ["run.toml"]),
    (["plot", "{DIR}", "--mark", "x"], ["--mark", "'x'"]),
]


@pytest.mark.parametrize("argv, names", PATHS, ids=["_".join(a[:2]).replace("{", "").replace("}", "") + f"-{i}"
                                                     for i, (a, _) in enumerate(PATHS)])
def test_bad_paths_and_names(tmp_path, capsys, argv, names):
    expect_clear_refusal(_fill(argv, tmp_path), names, capsys)
