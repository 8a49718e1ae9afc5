"""Fault injection: hundreds of bad inputs, generated, each must get a clear error — or be a documented valid input.

Generated from the code's own tables, so new mechanisms and new scenario keys are covered without
editing this file:

* Python API — every mechanism in ``ldpsim.mechanisms.registry.MECHANISMS``: each constructor
  parameter given bad values; ``perturb`` bad user values; ``estimate`` bad item ids and aggregates;
  ``decode`` bad payloads. A clear error is a ``TypeError``/``ValueError`` whose message names the
  parameter. A bad value that is *accepted* must be listed in :data:`DOCUMENTED_VALID` with the reason.
* Both TOML kinds — every key of the deployment schema (``SPEC``, the use-case specs) and of the sweep
  schema, given values of the wrong type or out of range, plus combinations (ε above the daily
  budget, a tiny batch window, an empty metric list, a huge grid, a reports path of 10⁹ users, a
  fleet that cannot fit in memory). Run as ``ldpsim run/sweep FILE --dry-run`` in-process: exit 2,
  the key named on stderr, never a traceback.
* The CLI — bad options and files for every command: exit 2 and an ``error:`` line.

``test_enough_cases`` checks that at least 300 bad inputs are tried.
"""

from __future__ import annotations

import inspect

import pytest

from ldpsim.scenarios.studies.scenario.deployment_file import READING_SPEC, SPEC, USE_CASE_SPEC
from ldpsim.scenarios.studies.scenario.grid import SCENARIO_SPEC
from ldpsim.mechanisms.registry import MECHANISMS, make, typical
from ldpsim.scenarios.cli import main
from tests.fleets import SWEEP, TINY
from tests.scenario_text import set_key as _set, to_toml

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

NAN, INF = float("nan"), float("inf")

# ---- Python API --------------------------------------------------------------------------------
#: bad values tried for every constructor parameter (a parameter whose default is None skips None)
BAD_PARAM_VALUES = {"str": "x", "bool": True, "none": None, "nan": NAN, "inf": INF, "negative": -1,
                    "huge": 10**30, "list": [[1, 2], "a"]}
#: (mechanism, parameter, bad-value label) accepted on purpose, with the reason
DOCUMENTED_VALID = {
    ("sdgrr", "low", "none"): "low=None means 'the complement of high'",
    ("personalized-sdpm", "smoothing", "bool"): "smoothing is a bool switch (EM's smoothing step)",
    ("personalized-sdpm", "tol", "huge"): "tol is any non-negative convergence tolerance (huge: one EM step)",
    ("personalized-sdpm", "max_iter", "huge"): "max_iter is an upper bound on EM iterations, not an allocation",
    ("onebitmean", "m", "huge"): "m is the counters' upper bound: any positive finite real",
}
#: (parameter, bad-value label) accepted by every mechanism taking that parameter, with the reason
DOCUMENTED_VALID_PARAM = {
    ("alphabet", "str"): "any non-empty string of distinct characters is an alphabet ('x': one letter)",
}


def sane_params(name: str) -> dict:
    """ε = 1 and the registry's typical parameters (:data:`ldpsim.mechanisms.registry.PARAMETERS`)."""
    return {"epsilon": 1.0, **typical(name)}


def _build(name):
    return make(name, shape="typical", epsilon=1.0)


def _constructor_cases():
    out = []
    for name, cls in sorted(MECHANISMS.items()):
        for p in inspect.signature(cls).parameters.values():
            for label, value in BAD_PARAM_VALUES.items():
                if label == "none" and p.default is None:
                    continue
                out.append(pytest.param(name, p.name, label, value, id=f"{name}-{p.name}-{label}"))
        for label, eps in (("tiny", 1e-300), ("below", 5e-7), ("above", 50.5), ("overflow", 710.0)):
            out.append(pytest.param(name, "epsilon", label, eps, id=f"{name}-epsilon-{label}"))
    return out


def assert_clear(exc: BaseException, *names: str) -> None:
    """A TypeError/ValueError whose message names one of ``names``."""
    assert isinstance(exc, (TypeError, ValueError)), f"{type(exc).__name__}: {exc}"
    assert any(n in str(exc) for n in names), f"message does not name {names}: {exc}"


def test_every_mechanism_has_sane_parameters():
    for name in MECHANISMS:
        _build(name)


@pytest.mark.parametrize("name, param, label, value", _constructor_cases())
def test_constructor_bad_parameter(name, param, label, value):
    params = {**sane_params(name), param: value}
    try:
        MECHANISMS[name](**params)
    except Exception as exc:  # noqa: BLE001 - judged below
        assert_clear(exc, repr(param), param)
        return
    assert (name, param, label) in DOCUMENTED_VALID or (param, label) in DOCUMENTED_VALID_PARAM, \
        f"{name}({param}={value!r}) was accepted"


def _mechanism_kinds():
    from ldpsim.mechanisms import FrequencyOracle
    from ldpsim.mechanisms.numeric.interface import NumericMechanism
    freq = sorted(n for n, c in MECHANISMS.items() if issubclass(c, FrequencyOracle)
                  and list(inspect.signature(c.perturb).parameters) == ["self", "values", "rng"])
    numeric = sorted(n for n, c in MECHANISMS.items() if issubclass(c, NumericMechanism)
                     and list(inspect.signature(c.perturb).parameters) == ["self", "values", "rng"])
    return freq, numeric


FREQ, NUMERIC = _mechanism_kinds()
BAD_IDS = {"negative": [-1], "float": [1.5], "str": ["a"], "bool": [True], "2d": [[0, 1]],
           "nan": [NAN]}
BAD_TOKENS = {"float": [1.5], "bool": [True], "2d": [["a", "b"]], "nan": [NAN], "none": [None]}
BAD_NUMBERS = {"str": ["0.5"], "bool": [True], "too-large": [1.5], "too-small": [-1.01], "nan": [NAN],
               "inf": [INF], "2d": [[0.1, 0.2]], "none": [None]}


def _perturb_cases():
    out = []
    for name in FREQ:
        # ids: the first one past the domain (the typical parameters' domain_size) is too large
        bad = BAD_TOKENS if MECHANISMS[name].takes_tokens else \
            {**BAD_IDS, "too-large": [sane_params(name).get("domain_size", 2)]}
        out += [pytest.param(name, v, id=f"{name}-{k}") for k, v in bad.items()]
    for name in NUMERIC:
        out += [pytest.param(name, v, id=f"{name}-{k}") for k, v in BAD_NUMBERS.items()]
    return out


@pytest.mark.parametrize("name, values", _perturb_cases())
def test_perturb_bad_values(name, values):
    mech = _build(name)
    with pytest.raises(Exception) as err:
        mech.perturb(values, rng=0)
    assert_clear(err.value, "values", "tokens")


@pytest.mark.parametrize("name", FREQ + NUMERIC)
def test_empty_batch_is_valid_everywhere(name):
    """Documented valid input: an empty batch of users gives an empty aggregate (n = 0)."""
    mech = _build(name)
    assert mech.aggregate(mech.perturb([], rng=0)).n == 0


def _estimate_cases():
    out = []
    for name in FREQ:
        if MECHANISMS[name].takes_tokens:
            bad = {"none": None, "2d": [["a", "b"]], "float": [1.5]}
        else:
            bad = {**BAD_IDS, "too-large": [sane_params(name).get("domain_size", 2)]}
        out += [pytest.param(name, v, id=f"{name}-{k}") for k, v in bad.items()]
    return out


@pytest.mark.parametrize("name, items", _estimate_cases())
def test_estimate_bad_items(name, items):
    mech = _build(name)
    tokens = ["a", "b"] if mech.takes_tokens else [0, 1]
    agg = mech.aggregate(mech.perturb(tokens, rng=0))
    with pytest.raises(Exception) as err:
        mech.estimate(agg, items)
    assert_clear(err.value, "items", "values")


@pytest.mark.parametrize("name", FREQ)
@pytest.mark.parametrize("agg", ["not an aggregate", None, 3], ids=["str", "none", "int"])
def test_estimate_foreign_aggregate(name, agg):
    mech = _build(name)
    with pytest.raises(Exception) as err:
        mech.estimate(agg, ["a"] if mech.takes_tokens else [0])
    assert_clear(err.value, "aggregate")


def _decode_names():
    return sorted(n for n, c in MECHANISMS.items() if hasattr(c, "decode"))


@pytest.mark.parametrize("name", _decode_names())
@pytest.mark.parametrize("payload", ["text", 12, None, "wrong-length", "all-ones"])
def test_decode_bad_payload(name, payload):
    """Non-bytes, a length that is not whole reports, and all-0xFF reports: refused, or (all-0xFF
    only) a report inside the output space, which then aggregates without error."""
    mech = _build(name)
    width = mech.report_bytes
    if payload == "wrong-length":
        if width == 1:
            pytest.skip("one-byte reports: every length is a whole number of reports")
        payload = b"\x00" * (width + 1)
    elif payload == "all-ones":
        payload = b"\xff" * width
        try:
            reports = mech.decode(payload)
        except ValueError as exc:
            assert "decode" in str(exc) or "payload" in str(exc), str(exc)
            return
        mech.aggregate(reports)  # accepted: must then be a valid report
        return
    with pytest.raises(Exception) as err:
        mech.decode(payload)
    assert_clear(err.value, "payload")


def test_sketch_memory_refused_at_construction():
    with pytest.raises(ValueError, match=r"k × m = 16777216 × 65536 .* GiB"):
        MECHANISMS["cms"](epsilon=1.0, k=2**24, m=2**16)


# ---- TOML files --------------------------------------------------------------------------------
BASE_RUN = tomllib.loads(TINY)
BASE_SWEEP = tomllib.loads(SWEEP)
BASE_SWEEP["mechanism"].append({"name": "sdgrr", "high_fraction": 0.1})



def _bad_for(field) -> dict:
    """Bad values for a schema Field: wrong types, and out-of-range values its check must refuse."""
    types = field.types if isinstance(field.types, tuple) else (field.types,)
    bad = {"table": {"a": 1}}
    if str not in types:
        bad["str"] = "x"
    if bool not in types:
        bad["bool"] = True
    if int in types and float not in types:
        bad["float"] = 1.5
    if float in types:
        bad["nan"] = NAN
    if field.check is not None and (int in types or float in types):
        for label, v in (("negative", -1), ("huge-negative", -1e300)):
            if field.check(v):
                bad[label] = v
    if bool in types:
        bad["int"] = 1
    return bad


def _run_cases():
    out = []
    for table, spec in SPEC.items():
        for key, field in spec.items():
            if table == "workload":
                continue
            for label, value in _bad_for(field).items():
                if key == "name" and label == "str":
                    continue
                out.append(pytest.param((table, key), value, key, id=f"{table}.{key}-{label}"))
    out.append(pytest.param(("deployment", "name"), "../../escaped", "name", id="deployment.name-path"))
    out.append(pytest.param(("workload", "name"), "nope", "workload", id="workload.name-unknown"))
    for uc in ("emoji", "typing_speed"):
        spec = {**USE_CASE_SPEC, **(READING_SPEC if uc != "emoji" else {})}
        for key, field in spec.items():
            for label, value in _bad_for(field).items():
                out.append(pytest.param(("use_case", uc, key), value, key, id=f"use_case.{uc}.{key}-{label}"))
        for label, eps in (("tiny", 1e-300), ("above", 60.0)):
            out.append(pytest.param(("use_case", uc, "epsilon"), eps, "epsilon", id=f"use_case.{uc}.epsilon-{label}"))
        out.append(pytest.param(("use_case", uc, "mechanism"), "nope", "mechanism", id=f"use_case.{uc}.mechanism-x"))
        out.append(pytest.param(("use_case", uc, "bogus"), 1, "bogus", id=f"use_case.{uc}.unknown-key"))
    out.append(pytest.param(("use_case", "typing_speed", "range"), [2.0, 1.0], "range", id="range-reversed"))
    out.append(pytest.param(("use_case", "swipes"), {"mechanism": "grr", "epsilon": 1.0}, "swipes",
                            id="use_case-unknown"))
    out.append(pytest.param(("bogus",), {"a": 1}, "bogus", id="unknown-table"))
    # combinations and cost
    out.append(pytest.param(("privacy", "budget_daily"), 3.0, "budget_daily", id="combo-eps-above-daily-budget"))
    out.append(pytest.param(("privacy", "budget_total"), 0.5, "budget_total", id="combo-eps-above-total-budget"))
    out.append(pytest.param(("server", "batch_window_s"), 1e-6, "batch_window_s", id="combo-tiny-batch-window"))
    out.append(pytest.param(("deployment", "devices"), 10**10, "devices", id="cost-devices"))
    return out


def _expect_clear_exit(argv, key, capsys):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, f"exit {code}: {err[-500:]}"
    assert "Traceback" not in err and "internal error" not in err, err
    assert key in err, f"{key!r} not named in: {err}"


@pytest.mark.parametrize("path, value, key", _run_cases())
def test_deployment_toml(tmp_path, capsys, path, value, key):
    file = tmp_path / "run.toml"
    file.write_text(to_toml(_set(BASE_RUN, path, value)), encoding="utf-8")
    _expect_clear_exit(["run", str(file), "--dry-run", "--out", str(tmp_path / "out")], key, capsys)
    assert not (tmp_path / "out").exists()


def _sweep_cases():
    out = []
    for key, field in SCENARIO_SPEC.items():
        for label, value in _bad_for(field).items():
            if key == "name" and label == "str":
                continue
            out.append(pytest.param(("scenario", key), value, key, id=f"scenario.{key}-{label}"))
    for label, value in {"path": "../x", "dots": "..", "slash": "a/b"}.items():
        out.append(pytest.param(("scenario", "name"), value, "name", id=f"scenario.name-{label}"))
    for label, value in {"zero": 0, "negative": -5, "str": "x", "float": 1.5, "bool": True}.items():
        out.append(pytest.param(("workload", "n"), value, "workload", id=f"workload.n-{label}"))
        out.append(pytest.param(("workload", "domain_size"), value, "workload", id=f"workload.domain_size-{label}"))
    out.append(pytest.param(("workload", "name"), "nope", "workload.name", id="workload.name-unknown"))
    for label, value in {"empty": [], "str": "x", "negative": [-1.0], "zero": [0.0], "tiny": [1e-300],
                         "big": [100.0], "nested": [[1.0]], "bool": [True], "nan": [NAN]}.items():
        out.append(pytest.param(("grid", "epsilon"), value, "epsilon" if label != "empty" else "grid.epsilon",
                                id=f"grid.epsilon-{label}"))
    out.append(pytest.param(("grid", "bogus"), [1], "bogus", id="grid-unknown-param"))
    out.append(pytest.param(("grid", "workload.name"), ["nope"], "workload.name", id="grid-workload-unknown"))
    for label, value in {"empty": [], "unknown": ["nope"], "str": "mse", "number": [1]}.items():
        out.append(pytest.param(("metrics", "names"), value, "metrics.names", id=f"metrics.names-{label}"))
    out.append(pytest.param(("metrics", "bogus"), 1, "bogus", id="metrics-unknown-key"))
    out.append(pytest.param(("plots", "mark"), "x", "plots.mark", id="plots.mark-str"))
    out.append(pytest.param(("mechanism",), [{"name": "nope"}], "mechanism", id="mechanism-unknown"))
    out.append(pytest.param(("mechanism",), [{"name": "grr", "bogus": 1}], "bogus", id="mechanism-unknown-param"))
    out.append(pytest.param(("mechanism",), [{"name": "sdgrr", "high_fraction": 2.0}], "high_fraction",
                            id="mechanism-fraction"))
    out.append(pytest.param(("mechanism",), [{"name": "cms", "k": 2**24, "m": 2**16}], "k", id="cost-sketch"))
    out.append(pytest.param(("grid",), {"epsilon": [1.0 + i / 1000 for i in range(1000)],
                                        "workload.domain_size": list(range(10, 1010))}, "grid",
                            id="cost-million-cells"))
    out.append(pytest.param(("scenario", "path"), "reports", "n", id="cost-reports-path-10^9"))
    return out


@pytest.mark.parametrize("path, value, key", _sweep_cases())
def test_sweep_toml(tmp_path, capsys, path, value, key):
    data = _set(BASE_SWEEP, path, value)
    if key == "n" and path == ("scenario", "path"):
        data["workload"]["n"] = 10**9
    file = tmp_path / "sweep.toml"
    file.write_text(to_toml(data), encoding="utf-8")
    _expect_clear_exit(["sweep", str(file), "--dry-run", "--out", str(tmp_path / "out")], key, capsys)
    assert not (tmp_path / "out").exists()


def test_base_files_are_valid_and_dry_run_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, data, cmd in (("run.toml", BASE_RUN, "run"), ("sweep.toml", BASE_SWEEP, "sweep")):
        file = tmp_path / name
        file.write_text(to_toml(data), encoding="utf-8")
        assert main([cmd, str(file), "--dry-run", "-q"]) == 0, capsys.readouterr().err
        printed = capsys.readouterr().out
        assert "estimated peak memory" in printed and "dry run: nothing was run or written" in printed
    assert not (tmp_path / "runs").exists()


# ---- the command line --------------------------------------------------------------------------
def _cli_cases(tmp_path_factory=None):
    return [
        ("run", "--workers", "0"), ("run", "--workers", "x"), ("run", "--seed", "-1"), ("run", "--seed", "1.5"),
        ("run", "--devices", "0"), ("run", "--devices", "many"), ("run", "--days", "-2"), ("run", "nope.toml"),
        ("run", "--bogus"), ("sweep",), ("sweep", "nope"), ("sweep", "smoke", "--workers", "-1"),
        ("sweep", "smoke", "--seed", "x"), ("sweep", "keyboard", "--dry-run"), ("run", "smoke", "--dry-run"),
        ("check", "check"), ("check", "check", "--baseline", "check", "--alpha", "2"),
        ("tune",), ("plot",), ("reproduce", "nope"), ("bogus-command",), ("bench", "--users", "x"),
        ("scenarios", "--bogus"), ("run", "DIR"), ("sweep", "DIR"), ("run", "LATIN1"), ("sweep", "LATIN1"),
        ("plot", "DIR"), ("check", "smoke", "--baseline", "BADJSON"), ("check", "smoke", "--baseline", "BADENTRY"),
    ]


@pytest.mark.parametrize("argv", _cli_cases(), ids=lambda a: "_".join(a) or "none")
def test_cli(tmp_path, capsys, argv):
    import json
    (tmp_path / "latin1.toml").write_bytes("[deployment]\nname = \"caf\xe9\"\n".encode("latin-1"))
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "entry.json").write_text(json.dumps({"format": 1, "entries": [{"params": {}, "metric": "mse"}]}))
    subst = {"DIR": str(tmp_path), "LATIN1": str(tmp_path / "latin1.toml"), "BADJSON": str(tmp_path / "bad.json"),
             "BADENTRY": str(tmp_path / "entry.json")}
    code = main([subst.get(a, a) for a in argv])
    captured = capsys.readouterr()
    assert code == 2, f"exit {code}: {captured.err[-400:]}"
    assert "Traceback" not in captured.err and "internal error" not in captured.err
    assert "error" in captured.err


def test_enough_cases():
    n = (len(_constructor_cases()) + len(_perturb_cases()) + len(FREQ + NUMERIC) + len(_estimate_cases())
         + 3 * len(FREQ) + 5 * len(_decode_names()) + len(_run_cases()) + len(_sweep_cases()) + len(_cli_cases()))
    assert n >= 300, n
