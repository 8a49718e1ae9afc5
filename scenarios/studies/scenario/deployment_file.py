"""Deployment scenarios: a TOML file validated up front (``ldpsim.scenarios.studies.scenario.schema``), then a frozen config.

Schema (every table checked; unknown keys get a did-you-mean; see ``keyboard.toml``)::

    [deployment]        name, seed, devices, days, block_size, workers, drain_days, adversary_devices,
                        figures (auto | all | none; ``--figures`` overrides:
                        ldpsim.scenarios.studies.deployment.run_figures)
    [workload]          name = "emoji", other keys = the builder's parameters (top = 100)
                        (any categorical workload of ldpsim.evaluation.workloads.make), or
                        vocabulary = "file" (format, lowercase, top): your own items
                        (ldpsim.scenarios.studies.scenario.vocabulary_keys)
    [fleet]             concentration, n_atoms, activity_sigma, sessions_per_day, events_per_session,
                        events_per_day ({mean, dispersion} or a file of per-device numbers; replaces
                        events_per_session and activity_sigma), opt_in, p_online, window_start_mean_h,
                        window_start_sd_h, window_length_h, speed_mean_wpm, speed_device_sd_wpm,
                        speed_session_sd_wpm
    [trend]             rank (1-based rank of the trending item), start_day, ramp_days, peak_share
    [privacy]           budget_daily, budget_total, retention_days, policy (several attributes per
                        device: spl = each use case its own ε, smp = sample one, rsfd = sample one
                        plus fake data; simulator/attributes.py)
    [use_case.emoji]    mechanism, epsilon, daily_limit, memoize (re-send the same report for a value
                        reported before, charged once: simulator/memoization.py), other keys = the
                        mechanism's parameters
    [use_case.typing_speed]  mechanism (pm | sdpm | sw | onebitmean), epsilon, daily_limit, range = [lo, hi]
                        (wpm), low_range = [a, b] (wpm; SDPM's low-sensitivity interval), em_bins (EM
                        bins; required for SDPM, whose report average is biased; with them the report
                        draws the estimated distribution beside the donated readings')
    [use_case.session_length]  the same keys, in seconds
    [use_case.words]    mechanism (sfp | pem | treehist, or an interactive protocol: triehh | triehh_pp |
                        ldp_trie, whose epsilon is ε per device over the run and whose keys are
                        delta or theta, rounds_per_day and its own, docs/math.md §10.8), epsilon, daily_limit, top_k (the length of
                        the list the server's daily discovery job returns, 20), other keys = the
                        protocol's parameters
    [words]             top (real words from wordfreq the protocol can carry, 2000), vocabulary (a
                        file of your own words instead of wordfreq's: ldpsim.evaluation.workloads.vocabulary;
                        items the protocol cannot carry are left out with a notice), per_session
                        (2.0), slang (the new word; default: generated from the words' own letters, see
                        ldpsim.evaluation.workloads.plausible_slang), slang_start_day (3), slang_share (0.05 of
                        the words typed from that day)
    [channel]           latency_median_s, latency_sigma, loss, ack_loss, max_attempts, backoff_s,
                        ack_timeout_s, slot_s
    [server]            capacity, service_s_per_report, batch_window_s, crash_at_h, restart_s, fsync
    [use_case.emoji] aggregation = "ldp" (default: the keys above) | "shuffle" (the same keys; central ε from
                        the server's shuffle) | any other registered trust model (TRUST_MODELS in
                        evaluation/privacy/trust_models.py; its collectors take the reports, night by
                        night: simulator/nightly_collection.py) with the model's keys instead of the
                        mechanism's: epsilon_device (ε per device over the run it is calibrated to), delta,
                        noise, min_cohort, min_arrival, noise_by, client_epsilon, threshold, rate
                        (each model reads its own: TrustModel.settings)
    [collectors]        round_s, round_length_s, job_s, retry_s, invalid_share, crash = {collector,
                        hour (since the start of the run), hours}: the trust collectors' settings
    [variants.<name>]   the keys of [use_case.emoji]: one emoji design each, compared on the same fleet
                        (ldpsim.scenarios.studies.deployment.compare); checked like [use_case.emoji]
    [numeric.<name>]    design (a heat-map or reading design, or pm | sdpm | sw), epsilon, keys = [...] (key
                        tap heat maps) or reading (key_latency | typing_speed), the design's own keys (delta, …):
                        ldpsim.scenarios.studies.scenario.numeric_keys; the report draws each estimate beside the truth

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

from ldpsim.evaluation.cost import check_workload_size
from ldpsim.runtime.plain import plain_name
from ldpsim.scenarios.studies.scenario.schema import (Field, ScenarioError, load_toml, parse_table, require_kind,
                                                      seed_check)
from ldpsim.scenarios.studies.scenario.vocabulary_keys import vocabulary_workload_table
from ldpsim.scenarios.studies.deployment.run_figures import figures_problem
from ldpsim.scenarios.studies.scenario.numeric_keys import numeric_use_cases
from ldpsim.scenarios.studies.scenario.trust_keys import COLLECTOR_KEYS, CRASH, DEPLOYMENT_USE_CASE, configured_model
from ldpsim.evaluation.privacy.trust_models import MODELS, TRUST_MODELS, model_params
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms import MECHANISMS
from ldpsim.mechanisms.registry import INTERACTIVE
from ldpsim.runtime.errors import InputError
from ldpsim.simulator.attributes import POLICIES
from ldpsim.simulator.config import DeploymentConfig, UseCase


#: use cases the fleet model produces → kind
USE_CASES = {"emoji": "event", "typing_speed": "reading", "session_length": "reading", "words": "word"}


def _ge(low):
    return lambda v: None if v >= low else f"must be >= {low}"


def _gt(low):
    return lambda v: None if v > low else f"must be > {low}"


def _within(low, high, open_low=False):
    """Field check: ``low < v <= high`` (``open_low``) or ``low <= v <= high``; the upper limits keep the
    simulation's arithmetic finite (a typing-speed sd of 1e308 wpm makes every reading inf)."""
    def check(v):
        ok = (v > low if open_low else v >= low) and v <= high
        return None if ok else f"must be in {'(' if open_low else '['}{low:g}, {high:g}]"
    return check


def _prob(v):
    return None if 0 <= v <= 1 else "must be in [0, 1]"


def _hour(v):
    return None if 0 <= v < 24 else "must be an hour in [0, 24)"


def _pair(v):
    ok = len(v) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v) and v[0] < v[1]
    return None if ok else "must be [low, high] with low < high"


def _policy(v):
    return None if v in POLICIES else f"must be one of {', '.join(POLICIES)}"


#: upper limits of the fleet model's parameters (measured: ``ldpsim bench --calibrate``).
#: Typing speeds and their sds (wpm): no arithmetic breaks up to 1e300 wpm (readings are clipped into the use
#: case's range), so the limit is one of sense, far above any human typing. Log-normal sigmas: session
#: lengths median · e^(σz) stop being finite at σ ≈ 130 over 10⁷ draws (at the largest median, 86 400 s); 10 is
#: 13× below. Reports per
#: device and day: 10 000 (a bundle row per report; ε × daily_limit is limited below as well)
WPM_MAX, SIGMA_MAX, DAILY_LIMIT_MAX = 1000.0, 10.0, 10_000
#: the most ε a device may spend on one use case in a day (ε × daily_limit), the ε₀ of a shuffled batch:
#: measured, its central ε (FMT21's numerical bound, scipy's binomial) overflows from ε₀ = 702.9 at n = 10⁶
#: devices, 699.5 at n = 10⁹ (about 709.9 − ln(n)/2); 690 leaves a margin of e^8 ≈ 3 000 in e^ε₀ at 10⁹ devices
DAY_EPSILON_MAX = 690.0
#: ε of a collected use case's GRR when its trust model takes exact reports (the mechanism is then unused)
EXACT_REPORTS_EPSILON = 1.0
F = float
SPEC = {
    "deployment": {"name": Field(str, "deployment", plain_name), "seed": Field(int, 0, seed_check),
                   "devices": Field(int, 20_000, _ge(1)), "days": Field(int, 14, _ge(1)),
                   "block_size": Field(int, 2048, _ge(1)), "workers": Field(int, 1, _ge(1)),
                   "figures": Field(str, "auto", figures_problem),
                   "drain_days": Field(int, 2, _ge(0)), "adversary_devices": Field(int, 500, _ge(0))},
    "workload": {"name": Field(str, "emoji")},
    "fleet": {"concentration": Field(F, 5.0, _within(0, 1e6, True)), "n_atoms": Field(int, 48, _ge(1)),
              "activity_sigma": Field(F, 0.8, _within(0, SIGMA_MAX)), "sessions_per_day": Field(F, 6.0, _within(0, 1000, True)),
              "events_per_session": Field(F, 0.8, _within(0, 1000, True)), "opt_in": Field(F, 0.6, _prob),
              "p_online": Field(F, 0.9, _prob), "window_start_mean_h": Field(F, 22.0, _hour),
              "window_start_sd_h": Field(F, 2.0, _within(0, 24)), "window_length_h": Field(F, 6.0, _within(0, 24, True)),
              "speed_mean_wpm": Field(F, 36.2, _within(0, WPM_MAX, True)), "speed_device_sd_wpm": Field(F, 12.0, _within(0, WPM_MAX)),
              "speed_session_sd_wpm": Field(F, 5.0, _within(0, WPM_MAX)), "session_median_s": Field(F, 45.0, _within(0, 86400, True)),
              "session_device_sigma": Field(F, 0.5, _within(0, SIGMA_MAX)), "session_sigma": Field(F, 0.8, _within(0, SIGMA_MAX)),
              "events_per_day": Field((dict, str), None)},
    "trend": {"rank": Field(int, None, _ge(1)), "start_day": Field(int, 7, _ge(0)),
              "ramp_days": Field(F, 3.0, _gt(0)), "peak_share": Field(F, 0.05, _prob)},
    "privacy": {"budget_daily": Field(F, math.inf, _gt(0)), "budget_total": Field(F, math.inf, _gt(0)),
                "retention_days": Field(F, 3.0, _gt(0)), "policy": Field(str, "spl", _policy)},
    "channel": {"latency_median_s": Field(F, 2.0, _gt(0)), "latency_sigma": Field(F, 1.0, _within(0, SIGMA_MAX)),
                "loss": Field(F, 0.05, _prob), "ack_loss": Field(F, 0.01, _prob),
                "max_attempts": Field(int, 8, _ge(1)), "backoff_s": Field(F, 300.0, _gt(0)),
                "ack_timeout_s": Field(F, 15000.0, _gt(0)), "slot_s": Field(F, 900.0, _gt(0))},
    "words": {"top": Field(int, 2000, _ge(2)), "per_session": Field(F, 2.0, _gt(0)), "slang": Field(str, None),
              "vocabulary": Field(str, None),
              "slang_start_day": Field(int, 3, _ge(0)), "slang_share": Field(F, 0.05, _prob)},
    "server": {"capacity": Field(int, 4, _ge(1)), "service_s_per_report": Field(F, 2e-4, _ge(0)),
               "batch_window_s": Field(F, 14400.0, _gt(0)), "crash_at_h": Field(F, None, _ge(0)),
               "restart_s": Field(F, 600.0, _gt(0)), "fsync": Field(bool, True)},
}
USE_CASE_SPEC = {"mechanism": Field(str), "epsilon": Field(F, check=_gt(0)),
                 "daily_limit": Field(int, 1, _within(1, DAILY_LIMIT_MAX)), "memoize": Field(bool, False)}
WORD_SPEC = {"top_k": Field(int, 20, _ge(1))}
READING_SPEC = {"range": Field(list, [0.0, 120.0], _pair), "low_range": Field(list, None, _pair),
                "em_bins": Field(int, None, _ge(2))}
#: scenario key → DeploymentConfig field, per table
RENAME = {("deployment", "devices"): "n_devices", ("deployment", "days"): "n_days",
          ("server", "capacity"): "server_capacity", ("privacy", "retention_days"): "retention_days"}
TOP_LEVEL = set(SPEC) | {"use_case", "variants", "collectors", "numeric"}  # variants: _check_variants, scenarios/studies/deployment/compare.py


def _use_case(name: str, table, items, file, where: str | None = None, plan: dict | None = None) -> UseCase:
    """The use case ``name`` of the table at ``where`` (default ``use_case.<name>``), validated; ``plan``
    (devices, days, opt_in, p_online) calibrates a collected aggregation (:func:`_collected_use_case`) and
    gives an interactive words protocol the run's days."""
    where = where or f"use_case.{name}"
    if name not in USE_CASES:
        raise ScenarioError(file, where, f"unknown use case; allowed: {', '.join(sorted(USE_CASES))}")
    if not isinstance(table, dict):
        raise ScenarioError(file, where, "must be a table")
    aggregation = table.get("aggregation", "ldp")
    if aggregation not in TRUST_MODELS:
        raise ScenarioError(file, f"{where}.aggregation", f"must be one of {', '.join(MODELS)}; "
                            f"got {aggregation!r}")
    if TRUST_MODELS[aggregation].collected:
        return _collected_use_case(name, table, items, file, where, plan)
    uc = _ldp_use_case(name, {k: v for k, v in table.items() if k != "aggregation"}, items, file, where,
                       n_days=plan["days"] if plan else None)
    return dataclasses.replace(uc, aggregation=aggregation) if aggregation != "ldp" else uc


def _collected_use_case(name: str, table: dict, items, file, where: str, plan: dict | None) -> UseCase:
    """A use case whose exact reports go to a trust model's collectors: the model calibrated to its
    ``epsilon_device`` per device over the run's days (planning n = devices · opt_in · p_online devices a
    night), its parameters kept in ``UseCase.trust``, one donation charged the model's ε per device-day."""
    if USE_CASES[name] != "event" or plan is None:
        raise ScenarioError(file, f"{where}.aggregation", f"{table['aggregation']!r} is for [use_case.emoji] "
                            f"(frequencies of the events); [variants] compare local designs")
    n = max(2, round(plan["devices"] * plan["opt_in"] * plan["p_online"]))
    delta = table.get("delta", DEPLOYMENT_USE_CASE["delta"].default)
    try:
        model = configured_model(table, where, file, n, plan["days"], delta, len(items), DEPLOYMENT_USE_CASE)
    except ScenarioError:
        raise
    except InputError as exc:
        raise ScenarioError(file, where, str(exc)) from None
    day = next(g for g in model.guarantees(n, plan["days"], delta) if g.scope == "day")
    if not math.isfinite(day.epsilon):
        raise ScenarioError(file, where, f"aggregation = {model.kind!r} with these settings guarantees no finite ε "
                            f"per device-day at delta = {delta:g}; got {model.describe()}")
    local = model.epsilon_report if model.randomizes else EXACT_REPORTS_EPSILON
    params = (("epsilon", min(local, DAY_EPSILON_MAX)), ("domain_size", len(items)))
    return UseCase(name, "event", "grr", params, 1, aggregation=model.kind,
                   trust=(*model_params(model), ("epsilon_device", table.get("epsilon_device")), ("delta", delta),
                          ("n_plan", n), ("epsilon_day", day.epsilon)))


def _ldp_use_case(name: str, table: dict, items, file, where: str, n_days: int | None = None) -> UseCase:
    """A use case of the server's LDP path (its mechanism's keys), or an interactive words protocol over
    the run's ``n_days``."""
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
        params.setdefault("domain_size", len(items))
    elif kind == "word":
        extra = {"top_k": fields["top_k"], "n_days": n_days if fields["mechanism"] in INTERACTIVE else None}
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
    if fields["epsilon"] * fields["daily_limit"] > DAY_EPSILON_MAX:
        raise ScenarioError(file, f"{where}.daily_limit", f"× epsilon must be <= {DAY_EPSILON_MAX:g} (a device's ε "
                            "for the use case in a day; e^ε overflows beyond); got daily_limit = "
                            f"{fields['daily_limit']} × epsilon = {fields['epsilon']:g}")
    return uc


def load_deployment(path, devices: int | None = None, days: int | None = None,
                    seed: int | None = None, vocabulary=None) -> tuple[DeploymentConfig, dict]:
    """Read and validate a deployment scenario; returns the config and the run options (name, workers,
    notices). ``vocabulary`` (a file) replaces the scenario's workload (:mod:`.vocabulary_keys`)."""
    renamed = []
    raw = load_toml(path, renamed)
    require_kind(raw, "deployment", path)
    for key in raw:
        if key not in TOP_LEVEL:
            raise ScenarioError(path, key, f"unknown table; allowed: {', '.join(sorted(TOP_LEVEL))}")
    tables = {name: raw.get(name, {}) for name in SPEC}
    vocab = None
    if isinstance(tables["workload"], dict):  # keys besides name are the workload builder's parameters
        full, vocab = vocabulary_workload_table(tables["workload"], path, vocabulary)
        tables["workload"] = {k: v for k, v in full.items() if k == "name"}
    t = {name: parse_table(tables[name], spec, name, path) for name, spec in SPEC.items()}
    t["workload"]["params"] = {k: v for k, v in raw.get("workload", {}).items() if k != "name"} \
        if "workload" in raw else {"top": 100}
    for key, value in (("devices", devices), ("days", days), ("seed", seed)):
        if value is not None:
            t["deployment"][key] = value
            problem = SPEC["deployment"][key].check(value)
            if problem:
                raise ScenarioError(path, f"deployment.{key}", f"{problem}; got {value!r} (command line)")
    if vocab is None:
        items, weights = _workload(t["workload"], path)
    else:  # the file's own weights, unrounded
        items, weights = vocab.items, tuple(vocab.weights.tolist())
    ucs = raw.get("use_case", {})
    if not isinstance(ucs, dict) or not ucs:
        raise ScenarioError(path, "use_case", "at least one [use_case.<name>] table is required")
    collectors = _collectors(raw.get("collectors", {}), path)  # (checked before any calibration)
    plan = {"devices": t["deployment"]["devices"], "days": t["deployment"]["days"],
            "opt_in": t["fleet"]["opt_in"], "p_online": t["fleet"]["p_online"]}
    use_cases = tuple(_use_case(name, table, items, path, plan=plan) for name, table in ucs.items())
    kw = {}
    for table in ("deployment", "fleet", "privacy", "channel", "server"):  # ([words]: see _words)
        for key, value in t[table].items():
            if (table, key) in (("deployment", "name"), ("deployment", "workers"), ("deployment", "figures")):
                continue
            name = RENAME.get((table, key), key)
            kw[name] = value
    kw.update(_events_per_day(kw.pop("events_per_day"), raw.get("fleet", {}), kw, path))
    if "collectors" in raw or any(u.collected for u in use_cases):
        kw["collectors"] = collectors
    notices = tuple(renamed) + (vocab.notices if vocab is not None else ())
    word_uc = next((u for u in use_cases if u.kind == "word"), None)
    if word_uc is not None:
        fields, word_notices = _words(word_uc, t["words"], t["deployment"]["seed"], path)
        kw.update(fields)
        notices += word_notices
    tr = t["trend"]
    if tr["rank"] is not None:
        if tr["rank"] > len(items):
            raise ScenarioError(path, "trend.rank", f"must be <= the workload's {len(items)} items; "
                                f"got {tr['rank']}")
        kw.update(trend_item=tr["rank"] - 1, trend_start_day=tr["start_day"], trend_ramp_days=tr["ramp_days"],
                  trend_peak_share=tr["peak_share"])
    numeric = numeric_use_cases(raw.get("numeric", {}), path)
    try:
        cfg = DeploymentConfig(items=items, item_weights=weights, use_cases=use_cases, numeric=numeric, **kw)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(path, "deployment", str(exc)) from None
    _check_variants(raw.get("variants", {}), cfg, items, path)
    return cfg, {"name": t["deployment"]["name"], "workers": t["deployment"]["workers"],
                 "figures": t["deployment"]["figures"],
                 "notices": notices, "numeric": cfg.numeric}


def _workload(wl: dict, file) -> tuple[tuple, tuple]:
    """Items and weights of a named categorical workload (``[workload] name`` and its parameters), its
    size checked before it is built."""
    check_workload_size(wl["params"], file)
    try:
        workload = make_workload(wl["name"], 1_000_000, **wl["params"])
    except (TypeError, ValueError) as exc:
        raise ScenarioError(file, "workload", str(exc)) from None
    if not hasattr(workload, "counts"):
        raise ScenarioError(file, "workload.name", f"must be a categorical workload; got {wl['name']!r}")
    return tuple(workload.items.tolist()), tuple(workload.counts.tolist())


def _events_per_day(value, given: dict, fleet: dict, file) -> dict:
    """DeploymentConfig fields of ``[fleet] events_per_day``: emoji per device-day as ``{mean, dispersion}``
    (``events_per_session`` = mean / sessions_per_day, ``activity_sigma`` = dispersion, the lognormal
    sigma of the devices' activity) or a file of per-device numbers (``activity_levels``;
    docs/howto/your-own-vocabulary.md)."""
    if value is None:
        return {}
    clash = [k for k in ("events_per_session", "activity_sigma") if k in given]
    if clash:
        raise ScenarioError(file, "fleet.events_per_day", f"sets the emoji per device-day: leave out fleet.{clash[0]}, "
                            "which it replaces")
    if isinstance(value, str):
        from ldpsim.evaluation.workloads.activity import load_events_per_day
        try:
            levels, devices = load_events_per_day(value, base=Path(file).parent)
        except InputError as exc:
            raise ScenarioError(file, "fleet.events_per_day", str(exc)) from None
        mean = float(np.dot(levels, devices) / devices.sum())
        return {"events_per_session": mean / fleet["sessions_per_day"], "activity_levels": tuple(levels.tolist()),
                "activity_weights": tuple(devices.tolist())}
    spec = {"mean": Field(F, check=_gt(0), help="emoji per device-day, a float > 0"),
            "dispersion": Field(F, fleet["activity_sigma"], _ge(0))}
    table = parse_table(value, spec, "fleet.events_per_day", file)
    return {"events_per_session": table["mean"] / fleet["sessions_per_day"], "activity_sigma": table["dispersion"]}


def _collectors(table, file) -> tuple:
    """The ``[collectors]`` table as CollectorSetup (key, value) pairs (the windows and channel are the fleet's)."""

    spec = {k: f for k, f in COLLECTOR_KEYS.items() if k not in FLEET_COLLECTOR_KEYS}
    c = parse_table(table, spec, "collectors", file)
    if c["crash"] is not None:
        cr = parse_table(c["crash"], CRASH, "collectors.crash", file)
        c["crash"] = (cr["collector"], cr["hour"], cr["hours"])
    return tuple(sorted(c.items()))


#: CollectorSetup settings a deployment takes from its [fleet] and [channel] tables
FLEET_COLLECTOR_KEYS = ("window_start_mean_h", "window_start_sd_h", "window_length_h", "loss", "latency_median_s",
                        "latency_sigma")


def _check_variants(variants, cfg: DeploymentConfig, items, file) -> None:
    """Validate every ``[variants.<name>]`` table like ``[use_case.emoji]`` (the same keys and messages), and
    the fleet with it in place of the emoji use case (:mod:`ldpsim.scenarios.studies.deployment.compare`)."""
    if not isinstance(variants, dict):
        raise ScenarioError(file, "variants", "must hold one [variants.<name>] table per design")
    for name, table in variants.items():
        where = f"variants.{name}"
        if not isinstance(table, dict):
            raise ScenarioError(file, where, f"must be a table with the keys of [use_case.emoji]; got {table!r}")
        table = {k: v for k, v in table.items() if k != "aggregation"}  # the design's trust model: compare reads it
        uc = _use_case("emoji", table, items, file, where)
        try:
            dataclasses.replace(cfg, use_cases=(uc, *(u for u in cfg.use_cases if u.kind != "event")))
        except (TypeError, ValueError) as exc:
            raise ScenarioError(file, where, str(exc)) from None


def _words(uc: UseCase, table: dict, seed: int, file) -> tuple[dict, tuple]:
    """DeploymentConfig fields of the ``[words]`` table and notices: the real words the protocol can carry
    (wordfreq, :func:`~ldpsim.evaluation.workloads.slang.carried_words`, or the ``vocabulary`` file's),
    then the slang word (given, or generated from the run's seed in the script most typed,
    :func:`~ldpsim.evaluation.workloads.plausible_slang.plausible_slang`), checked against the protocol's
    alphabet and length."""
    from ldpsim.evaluation.workloads.plausible_slang import plausible_slang
    from ldpsim.evaluation.workloads.slang import carried_words
    from ldpsim.simulator.fleet import stream

    codec = uc.make_mechanism().codec
    notices = ()
    if table["vocabulary"] is None:
        words, freqs = carried_words(codec.alphabet, codec.length, table["top"])
    else:
        words, freqs, notices = _own_words(table["vocabulary"], codec, table["top"], file)
    slang = table["slang"]
    if slang is None:
        try:
            slang = plausible_slang(words, 1, stream(seed, "slang"), codec.length, freqs)[0]
        except ValueError as exc:
            raise ScenarioError(file, "words.slang", str(exc)) from None
    try:
        codec.check_word(slang)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(file, "words.slang", str(exc)) from None
    if slang in words:
        raise ScenarioError(file, "words.slang", f"{slang!r} is a dictionary word, not new slang")
    return {"words": words + (slang,), "word_weights": freqs + (0.0,), "words_per_session": table["per_session"],
            "slang_start_day": table["slang_start_day"], "slang_share": table["slang_share"]}, notices


def _own_words(name: str, codec, top: int, file) -> tuple[tuple, tuple, tuple]:
    """The ``top`` most frequent items of a vocabulary file that ``codec`` carries (characters of its
    alphabet, at most its length), their weights, and notices (which items were left out)."""
    from ldpsim.evaluation.workloads.vocabulary import load_vocabulary
    try:
        vocab = load_vocabulary(name, base=Path(file).parent)
    except InputError as exc:
        raise ScenarioError(file, "words.vocabulary", str(exc)) from None
    allowed = set(codec.alphabet)
    carried = [i for i, w in enumerate(vocab.items) if len(w) <= codec.length and set(w) <= allowed]
    why = f"of at most {codec.length} characters of the protocol's alphabet"
    if len(carried) < 2:
        raise ScenarioError(file, "words.vocabulary", f"{name}: {len(carried)} of its {vocab.domain_size} items "
                            f"are words {why}; at least 2 are needed")
    kept = set(carried)
    left_out = [w for i, w in enumerate(vocab.items) if i not in kept]
    notes = (f"[words] vocabulary {name}: {len(left_out)} of {vocab.domain_size} items left out (only words {why} "
             f"can be reported; the first: {left_out[0]!r})",) if left_out else ()
    keep = carried[:top]
    return tuple(vocab.items[i] for i in keep), tuple(vocab.weights[keep].tolist()), vocab.notices + notes
