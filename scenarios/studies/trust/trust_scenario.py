"""Run a trust-model scenario file (``[trust]``): one simulated day of collection per use case, each under
its ``aggregation`` setting, with the device's (ε, δ) per report, per day and over the run — docs/math.md §9.

File layout (see ``scenarios/trust_models.toml``)::

    [trust]            name, seed, devices, days, delta
    [trust.workload]   domain_size, zipf_s
    [trust.collectors] the CollectorSetup fields; crash = {collector, hour, hours}
    [trust.use_case.NAME]
        aggregation = "ldp" | "shuffle" | "secagg_local" | "secagg" | "two_server" | "threshold" | "sample_threshold"
        epsilon_run = ε per device over the run (the model is calibrated to it; not for sample_threshold)
        noise, min_cohort, min_arrival, noise_by, rate, threshold, client_epsilon  (as the model needs)
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ldpsim.evaluation.privacy.trust_accounting import MODELS, TrustModel, calibrate, guarantees
from ldpsim.scenarios.studies.trust.trust_compare import (DEFAULTS, local_oracle, release_threshold, two_server,
                                                          upload_bytes)
from ldpsim.scenarios.studies.scenario.schema import REQUIRED, Field, ScenarioError, load_toml, parse_table
from ldpsim.evaluation.workloads.synthetic import zipf
from ldpsim.mechanisms.aggregation.integer_noise import KINDS, IntegerNoise
from ldpsim.mechanisms.aggregation.two_server import NOISE_BY
from ldpsim.simulator.collectors import COLLECTORS, CollectorSetup, simulate_collection


def _one_of(options):
    return lambda v: None if v in options else f"must be one of {', '.join(options)}"


def _positive(v):
    return None if v > 0 else "must be > 0"


TRUST = {"name": Field(str, "trust_models"), "seed": Field(int, 2026), "devices": Field(int, 50_000, _positive),
         "days": Field(int, 30, _positive), "delta": Field(float, 1e-9, lambda v: None if 0 < v < 1 else "must be in (0, 1)"),
         "workload": Field(dict, {}), "collectors": Field(dict, {}),
         "use_case": Field(dict, REQUIRED, help="one [trust.use_case.NAME] table per use case")}
WORKLOAD = {"domain_size": Field(int, 2000, lambda v: None if v >= 2 else "must be ≥ 2"), "zipf_s": Field(float, 1.1)}
CRASH = {"collector": Field(str, "helper", _one_of(COLLECTORS)), "hour": Field(float, 23.0),
         "hours": Field(float, 2.0, _positive)}
COLLECTOR_KEYS = {k: Field((int, float), getattr(CollectorSetup(), k)) for k in
                  ("window_start_mean_h", "window_start_sd_h", "window_length_h", "loss", "latency_median_s",
                   "latency_sigma", "round_s", "round_length_s", "job_s", "retry_s", "invalid_share")}
COLLECTOR_KEYS["crash"] = Field(dict, None)
USE_CASE = {"aggregation": Field(str, "ldp", _one_of(MODELS)), "epsilon_run": Field(float, 2.0, _positive),
            "noise": Field(str, None, _one_of(KINDS)), "min_cohort": Field(int, None, _positive),
            "min_arrival": Field(float, None, lambda v: None if 0 < v <= 1 else "must be in (0, 1]"),
            "noise_by": Field(str, None, _one_of(NOISE_BY)), "rate": Field(float, None, lambda v: None if 0 < v <= 1 else
                                                                               "must be in (0, 1]"),
            "threshold": Field(int, None, lambda v: None if v >= 0 else "must be ≥ 0"),
            "client_epsilon": Field(float, None, _positive)}


#: a deployment's use case under a trust model: the keys above and the δ of its guarantees
DEPLOYMENT_USE_CASE = {**USE_CASE, "delta": Field(float, 1e-9, lambda v: None if 0 < v < 1 else "must be in (0, 1)")}


def model_params(model: TrustModel) -> tuple:
    """A trust model as (key, value) pairs of plain values (hashable, JSON-ready); :func:`model_from` inverts it."""
    noise = None if model.noise is None else (model.noise.kind, model.noise.scale, model.noise.copies)
    return (("kind", model.kind), ("local_epsilon", model.local_epsilon), ("noise", noise),
            ("min_cohort", model.min_cohort), ("min_arrival", model.min_arrival), ("noise_by", model.noise_by),
            ("threshold", model.threshold), ("rate", model.rate), ("client_epsilon", model.client_epsilon))


def model_from(params) -> TrustModel:
    """The trust model of :func:`model_params` pairs (other keys are ignored)."""
    p = dict(params)
    noise = None if p["noise"] is None else IntegerNoise(*p["noise"])
    return TrustModel(p["kind"], p["local_epsilon"], noise, p["min_cohort"], p["min_arrival"], p["noise_by"],
                      p["threshold"], p["rate"], p["client_epsilon"])


@dataclass
class TrustRun:
    """One row per use case (``table``) and the collectors' log (``records``)."""

    table: pd.DataFrame
    records: pd.DataFrame
    settings: dict


#: the optional keys each aggregation reads (any other one set in its table is an error, not ignored)
USES = {"ldp": (), "shuffle": (), "secagg_local": ("min_cohort", "min_arrival"),
        "secagg": ("noise", "min_cohort", "min_arrival"), "two_server": ("noise", "noise_by", "client_epsilon"),
        "threshold": ("noise", "threshold"), "sample_threshold": ("rate", "threshold")}


def configured_model(table: dict, where: str, file, n: int, days: int, delta: float, d: int,
                     spec: dict = USE_CASE) -> TrustModel:
    """The trust model of a use-case table (keys checked against ``spec`` and what its aggregation reads),
    calibrated to its ``epsilon_run`` per device over ``days`` days of ``n`` devices at ``delta``
    (sample_threshold: as given), with a ``threshold`` model's τ at the family-wise false-alarm level.

    Raises
    ------
    ScenarioError
        A key unknown, of the wrong type or out of range, or not read by the table's aggregation.
    """
    uc = parse_table(table, spec, where, file)
    model = _model(uc, table, where, file)
    if model.kind != "sample_threshold":
        model = release_threshold(calibrate(model, uc["epsilon_run"], n, days, delta), d)
    return model


def _model(uc: dict, table: dict, where: str, file) -> TrustModel:
    kind = uc["aggregation"]
    for key in table:
        if key not in ("aggregation", "epsilon_run", "delta", *USES[kind]):
            raise ScenarioError(file, f"{where}.{key}", f"is not used by aggregation = {kind!r} (it reads: "
                                f"{', '.join(('epsilon_run',) * (kind != 'sample_threshold') + USES[kind])})")
    changes = {k: uc[k] for k in USES[kind] if k != "noise" and uc[k] is not None}
    if uc["noise"] is not None:
        changes["noise"] = IntegerNoise(uc["noise"], {"skellam": 1000.0}.get(uc["noise"], 30.0))
    return replace(DEFAULTS[kind], **changes)


def run_trust_scenario(path, seed: int | None = None) -> TrustRun:
    """Run every use case of a ``[trust]`` scenario file for one simulated day.

    Parameters
    ----------
    path : path-like
        The scenario file.
    seed : int, optional
        Overrides ``[trust].seed``.

    Returns
    -------
    TrustRun
        ``table``: use_case, aggregation, epsilon_report / _day / _run, delta, if_misbehaving, trusted, devices,
        counted, rmse (of the counted reports' counts), bytes_per_device.
    """
    file = Path(path)
    raw = load_toml(file)
    if set(raw) != {"trust"}:
        raise ScenarioError(file, "file", "a trust-model scenario holds one [trust] table (with [trust.use_case.NAME])")
    t = parse_table(raw["trust"], TRUST, "trust", file)
    w = parse_table(t["workload"], WORKLOAD, "trust.workload", file)
    c = parse_table(t["collectors"], COLLECTOR_KEYS, "trust.collectors", file)
    if c["crash"] is not None:
        cr = parse_table(c["crash"], CRASH, "trust.collectors.crash", file)
        c["crash"] = (cr["collector"], cr["hour"], cr["hours"])
    setup = CollectorSetup(**c)
    if not t["use_case"]:
        raise ScenarioError(file, "trust.use_case", "needs at least one [trust.use_case.NAME] table")
    seq = np.random.SeedSequence(t["seed"] if seed is None else seed)
    n, d, days, delta = t["devices"], w["domain_size"], t["days"], t["delta"]
    counts = zipf(n, domain_size=d, s=w["zipf_s"]).counts.astype(np.int64)
    items = np.repeat(np.arange(d), counts)
    rows, logs = [], []
    for (name, table), child in zip(t["use_case"].items(), seq.spawn(len(t["use_case"]))):
        model = configured_model(table, f"trust.use_case.{name}", file, n, days, delta, d)
        rng = np.random.default_rng(child)
        got = simulate_collection(protocol(model, d), items[rng.permutation(n)], d, setup, rng)
        g = {x.scope: x for x in guarantees(model, n, days, delta)}
        rows.append({"use_case": name, "aggregation": model.kind, "epsilon_report": g["report"].epsilon,
                     "epsilon_day": g["day"].epsilon, "epsilon_run": g["run"].epsilon, "delta": g["run"].delta,
                     "if_misbehaving": g["misbehaving server"].epsilon, "trusted": model.trusted,
                     "devices": n, "counted": got.counters["counted"], "rejected": got.counters["rejected"],
                     "rmse": math.sqrt(float(np.mean((got.estimate - got.counted) ** 2))),
                     "bytes_per_device": upload_bytes(model, d)})
        logs += [{"use_case": name, **r} for r in got.records]
    return TrustRun(pd.DataFrame(rows), pd.DataFrame(logs), {**t, "workload": w, "collectors": c})


def protocol(model: TrustModel, d: int):
    """The collectors' protocol of a calibrated model (see simulate_collection)."""
    k = model.kind
    if k == "secagg":
        return model.secure_sum()
    if k == "secagg_local":                          # cohorts of the devices' local reports
        return model.secure_sum(client=local_oracle(model, d))
    if k == "two_server":
        return two_server(model, d)
    if k in ("ldp", "shuffle"):
        oracle = local_oracle(model, d)
        return lambda counts, rng: oracle.estimate(oracle.sample_aggregate(counts, rng=rng))
    if k == "threshold":
        return lambda counts, rng: np.where(counts + (z := model.noise.sample(counts.size, rng)) >= model.threshold,
                                            counts + z, 0).astype(float)
    return lambda counts, rng: model.sampler().release(counts, rng)


def write_trust_results(root, run: TrustRun | None = None, comparison=None, *, force: bool = False) -> Path:
    """Write a :class:`TrustRun` (``trust.csv``, ``collectors.csv``) and/or a comparison (``comparison.csv``,
    ``plots/trust_models.png``) into the run folder ``root`` (kind ``"trust"``).

    A folder holding a finished result is replaced only with ``force``; files go through
    :mod:`ldpsim.runtime.durable` and are journaled by :class:`~ldpsim.runtime.runfolder.RunFolder`.
    """
    from ldpsim.runtime import durable
    from ldpsim.runtime.runfolder import RunFolder

    root = Path(root)
    seed = int(run.settings["seed"]) if run is not None else int(comparison.params.get("seed") or 0)
    settings = {"scenario": run.settings if run is not None else None,
                "comparison": comparison.params if comparison is not None else None}
    fingerprint = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]
    with RunFolder.open(root, "trust", {"fingerprint": fingerprint, "seed": seed}, replace=force,
                        keep_finished=True) as folder:
        if run is not None:
            folder.write_text("trust.csv", run.table.to_csv(index=False))
            folder.write_text("collectors.csv", run.records.to_csv(index=False))
        if comparison is not None:
            folder.write_text("comparison.csv", comparison.table.to_csv(index=False))
            fig = comparison.figure()
            durable.write_file(folder.path("plots/trust_models.png"), lambda tmp: fig.savefig(tmp, format="png", dpi=120))
            folder.record("plots/trust_models.png")
        folder.finalize()
    return root
