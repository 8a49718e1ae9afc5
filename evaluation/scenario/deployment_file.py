"""Deployment scenarios: a TOML file validated up front (``ldpsim.evaluation.scenario.schema``), then a frozen config.

Schema (every table checked; unknown keys get a did-you-mean; see ``keyboard.toml``)::

    [deployment]        name, seed, devices, days, block_size, workers, drain_days, adversary_devices
    [workload]          name = "emoji", other keys = the builder's parameters (top = 100)
                        (any categorical workload of ldpsim.evaluation.workloads.make)
    [fleet]             concentration, n_atoms, activity_sigma, sessions_per_day, events_per_session,
                        opt_in, p_online, window_start_mean_h, window_start_sd_h, window_length_h,
                        speed_mean_wpm, speed_device_sd_wpm, speed_session_sd_wpm
    [trend]             rank (1-based rank of the trending item), start_day, ramp_days, peak_share
    [privacy]           budget_daily, budget_total, retention_days, policy (several attributes per
                        device: spl = each use case its own ε, smp = sample one, rsfd = sample one
                        plus fake data; simulator/attributes.py)
    [use_case.emoji]    mechanism, epsilon, daily_limit, memoize (re-send the same report for a value
                        reported before, charged once: simulator/memoization.py), other keys = the
                        mechanism's parameters
    [use_case.typing_speed]  mechanism (pm | sdpm), epsilon, daily_limit, range = [lo, hi] (wpm),
                        low_range = [a, b] (wpm; SDPM's low-sensitivity interval), em_bins (EM
                        bins; required for SDPM, whose report average is biased)
    [use_case.session_length]  the same keys, in seconds
    [use_case.words]    mechanism (sfp | pem | treehist), epsilon, daily_limit, top_k (the length of
                        the list the server's daily discovery job returns, 20), other keys = the
                        protocol's parameters
    [words]             top (real words from wordfreq the protocol can carry, 2000), per_session
                        (2.0), slang (the new word; default: generated, see
                        ldpsim.evaluation.workloads.slang), slang_start_day (3), slang_share (0.05 of
                        the words typed from that day)
    [channel]           latency_median_s, latency_sigma, loss, ack_loss, max_attempts, backoff_s,
                        ack_timeout_s, slot_s
    [server]            capacity, service_s_per_report, batch_window_s, crash_at_h, restart_s, fsync

Known use cases: ``emoji`` (event), ``typing_speed`` and ``session_length`` (readings), ``words``
(discovery of words no dictionary holds). Bad values (negative rates, zero
devices, a limit of 0, an unknown use case, bad mechanism parameters) raise ``ScenarioError`` naming
the file and the key, before anything runs.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from ldpsim.evaluation.scenario.schema import Field, ScenarioError, load_toml, parse_table, plain_name, require_kind
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms import MECHANISMS
from ldpsim.simulator.attributes import POLICIES
from ldpsim.simulator.config import DeploymentConfig, UseCase


#: use cases the fleet model produces → kind
USE_CASES = {"emoji": "event", "typing_speed": "reading", "session_length": "reading", "words": "word"}


def _ge(low):
    return lambda v: None if v >= low else f"must be >= {low}"


def _gt(low):
    return lambda v: None if v > low else f"must be > {low}"


def _prob(v):
    return None if 0 <= v <= 1 else "must be in [0, 1]"


def _hour(v):
    return None if 0 <= v < 24 else "must be an hour in [0, 24)"


def _pair(v):
    ok = len(v) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v) and v[0] < v[1]
    return None if ok else "must be [low, high] with low < high"


def _policy(v):
    return None if v in POLICIES else f"must be one of {', '.join(POLICIES)}"


F = float
SPEC = {
    "deployment": {"name": Field(str, "deployment", plain_name), "seed": Field(int, 0, _ge(0)),
                   "devices": Field(int, 20_000, _ge(1)), "days": Field(int, 14, _ge(1)),
                   "block_size": Field(int, 2048, _ge(1)), "workers": Field(int, 1, _ge(1)),
                   "drain_days": Field(int, 2, _ge(0)), "adversary_devices": Field(int, 500, _ge(0))},
    "workload": {"name": Field(str, "emoji")},
    "fleet": {"concentration": Field(F, 5.0, _gt(0)), "n_atoms": Field(int, 48, _ge(1)),
              "activity_sigma": Field(F, 0.8, _ge(0)), "sessions_per_day": Field(F, 6.0, _gt(0)),
              "events_per_session": Field(F, 0.8, _gt(0)), "opt_in": Field(F, 0.6, _prob),
              "p_online": Field(F, 0.9, _prob), "window_start_mean_h": Field(F, 22.0, _hour),
              "window_start_sd_h": Field(F, 2.0, _ge(0)), "window_length_h": Field(F, 6.0, _gt(0)),
              "speed_mean_wpm": Field(F, 36.2, _gt(0)), "speed_device_sd_wpm": Field(F, 12.0, _ge(0)),
              "speed_session_sd_wpm": Field(F, 5.0, _ge(0)), "session_median_s": Field(F, 45.0, _gt(0)),
              "session_device_sigma": Field(F, 0.5, _ge(0)), "session_sigma": Field(F, 0.8, _ge(0))},
    "trend": {"rank": Field(int, None, _ge(1)), "start_day": Field(int, 7, _ge(0)),
              "ramp_days": Field(F, 3.0, _gt(0)), "peak_share": Field(F, 0.05, _prob)},
    "privacy": {"budget_daily": Field(F, math.inf, _gt(0)), "budget_total": Field(F, math.inf, _gt(0)),
                "retention_days": Field(F, 3.0, _gt(0)), "policy": Field(str, "spl", _policy)},
    "channel": {"latency_median_s": Field(F, 2.0, _gt(0)), "latency_sigma": Field(F, 1.0, _ge(0)),
                "loss": Field(F, 0.05, _prob), "ack_loss": Field(F, 0.01, _prob),
                "max_attempts": Field(int, 8, _ge(1)), "backoff_s": Field(F, 300.0, _gt(0)),
                "ack_timeout_s": Field(F, 15000.0, _gt(0)), "slot_s": Field(F, 900.0, _gt(0))},
    "words": {"top": Field(int, 2000, _ge(2)), "per_session": Field(F, 2.0, _gt(0)), "slang": Field(str, None),
              "slang_start_day": Field(int, 3, _ge(0)), "slang_share": Field(F, 0.05, _prob)},
    "server": {"capacity": Field(int, 4, _ge(1)), "service_s_per_report": Field(F, 2e-4, _ge(0)),
               "batch_window_s": Field(F, 14400.0, _gt(0)), "crash_at_h": Field(F, None, _ge(0)),
               "restart_s": Field(F, 600.0, _gt(0)), "fsync": Field(bool, True)},
}
USE_CASE_SPEC = {"mechanism": Field(str), "epsilon": Field(F, check=_gt(0)),
                 "daily_limit": Field(int, 1, _ge(1)), "memoize": Field(bool, False)}
WORD_SPEC = {"top_k": Field(int, 20, _ge(1))}
READING_SPEC = {"range": Field(list, [0.0, 120.0], _pair), "low_range": Field(list, None, _pair),
                "em_bins": Field(int, None, _ge(2))}
#: scenario key → DeploymentConfig field, per table
RENAME = {("deployment", "devices"): "n_devices", ("deployment", "days"): "n_days",
          ("server", "capacity"): "server_capacity", ("privacy", "retention_days"): "retention_days"}
TOP_LEVEL = set(SPEC) | {"use_case", "variants"}  # variants: the designs of evaluation/deployment/compare.py


def _use_case(name: str, table, workload, file) -> UseCase:
    where = f"use_case.{name}"
    if name not in USE_CASES:
        raise ScenarioError(file, where, f"unknown use case; allowed: {', '.join(sorted(USE_CASES))}")
    if not isinstance(table, dict):
        raise ScenarioError(file, where, "must be a table")
    kind = USE_CASES[name]
    own = {"reading": READING_SPEC, "word": WORD_SPEC}.get(kind, {})
    base = {k: v for k, v in table.items() if k in USE_CASE_SPEC or k in own}
    spec = {**USE_CASE_SPEC, **own}
    fields = parse_table(base, spec, where, file)
    params = {k: v for k, v in table.items() if k not in spec}
    params["epsilon"] = fields["epsilon"]
    extra = {}
    cls = MECHANISMS.get(fields["mechanism"])
    if kind == "event" and cls is not None and "domain_size" in {f.name for f in dataclasses.fields(cls)}:
        params.setdefault("domain_size", len(workload.items))
    elif kind == "word":
        extra = {"top_k": fields["top_k"]}
    elif kind == "reading":
        lo, hi = map(float, fields["range"])
        extra = {"value_range": (lo, hi), "em_bins": fields["em_bins"]}
        if fields["low_range"] is not None:
            a, b = (2 * (float(v) - lo) / (hi - lo) - 1 for v in fields["low_range"])
            params["low"] = (max(a, -1.0), min(b, 1.0))
    try:
        uc = UseCase(name, kind, fields["mechanism"], tuple(params.items()), fields["daily_limit"],
                     memoize=fields["memoize"], **extra)
        uc.make_mechanism()
    except (TypeError, ValueError) as exc:
        raise ScenarioError(file, where, str(exc)) from None
    return uc


def load_deployment(path, devices: int | None = None, days: int | None = None,
                    seed: int | None = None) -> tuple[DeploymentConfig, dict]:
    """Read and validate a deployment scenario; returns the config and the run options (name, workers)."""
    raw = load_toml(path)
    require_kind(raw, "deployment", path)
    for key in raw:
        if key not in TOP_LEVEL:
            raise ScenarioError(path, key, f"unknown table; allowed: {', '.join(sorted(TOP_LEVEL))}")
    tables = {name: raw.get(name, {}) for name in SPEC}
    if isinstance(tables["workload"], dict):  # keys besides name are the workload builder's parameters
        tables["workload"] = {k: v for k, v in tables["workload"].items() if k == "name"}
    t = {name: parse_table(tables[name], spec, name, path) for name, spec in SPEC.items()}
    t["workload"]["params"] = {k: v for k, v in raw.get("workload", {}).items() if k != "name"} \
        if "workload" in raw else {"top": 100}
    for key, value in (("devices", devices), ("days", days), ("seed", seed)):
        if value is not None:
            t["deployment"][key] = value
            problem = SPEC["deployment"][key].check(value)
            if problem:
                raise ScenarioError(path, f"deployment.{key}", f"{problem}; got {value!r} (command line)")
    wl = t["workload"]
    try:
        workload = make_workload(wl["name"], 1_000_000, **wl["params"])
    except (TypeError, ValueError) as exc:
        raise ScenarioError(path, "workload", str(exc)) from None
    if not hasattr(workload, "counts"):
        raise ScenarioError(path, "workload.name", f"must be a categorical workload; got {wl['name']!r}")
    ucs = raw.get("use_case", {})
    if not isinstance(ucs, dict) or not ucs:
        raise ScenarioError(path, "use_case", "at least one [use_case.<name>] table is required")
    use_cases = tuple(_use_case(name, table, workload, path) for name, table in ucs.items())
    kw = {}
    for table in ("deployment", "fleet", "privacy", "channel", "server"):  # ([words]: see _words)
        for key, value in t[table].items():
            if (table, key) in (("deployment", "name"), ("deployment", "workers")):
                continue
            name = RENAME.get((table, key), key)
            kw[name] = value
    word_uc = next((u for u in use_cases if u.kind == "word"), None)
    if word_uc is not None:
        kw.update(_words(word_uc, t["words"], t["deployment"]["seed"], path))
    tr = t["trend"]
    if tr["rank"] is not None:
        if tr["rank"] > len(workload.items):
            raise ScenarioError(path, "trend.rank", f"must be <= the workload's {len(workload.items)} items; "
                                f"got {tr['rank']}")
        kw.update(trend_item=tr["rank"] - 1, trend_start_day=tr["start_day"], trend_ramp_days=tr["ramp_days"],
                  trend_peak_share=tr["peak_share"])
    try:
        cfg = DeploymentConfig(items=tuple(workload.items.tolist()), item_weights=tuple(workload.counts.tolist()),
                               use_cases=use_cases, **kw)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(path, "deployment", str(exc)) from None
    return cfg, {"name": t["deployment"]["name"], "workers": t["deployment"]["workers"]}


def _words(uc: UseCase, table: dict, seed: int, file) -> dict:
    """DeploymentConfig fields of the ``[words]`` table: the real words the protocol can carry (wordfreq,
    :func:`~ldpsim.evaluation.workloads.slang.carried_words`), then the slang word (given, or generated
    from the run's seed), checked against the protocol's alphabet and length."""
    from ldpsim.evaluation.workloads.slang import carried_words, generate_slang

    codec = uc.make_mechanism().codec
    words, freqs = carried_words(codec.alphabet, codec.length, table["top"])
    slang = table["slang"]
    if slang is None:
        slang = generate_slang(1, np.random.SeedSequence(seed, spawn_key=(11,)), codec.alphabet, codec.length)[0]
    try:
        codec.check_word(slang)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(file, "words.slang", str(exc)) from None
    if slang in words:
        raise ScenarioError(file, "words.slang", f"{slang!r} is a dictionary word, not new slang")
    return {"words": words + (slang,), "word_weights": freqs + (0.0,), "words_per_session": table["per_session"],
            "slang_start_day": table["slang_start_day"], "slang_share": table["slang_share"]}
