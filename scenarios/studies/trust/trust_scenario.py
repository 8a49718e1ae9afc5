"""Run a trust-model scenario file (``[trust]``): one simulated day of collection per use case, each under
its ``aggregation`` setting, with the device's (ε, δ) per report, per day and over the run — docs/math.md §9.

File layout (see ``scenarios/trust_models.toml``)::

    [trust]            name, seed, devices, days, delta
    [trust.workload]   domain_size, zipf_s
    [trust.collectors] the CollectorSetup fields; crash = {collector, hour, hours}
    [trust.use_case.NAME]
        aggregation = a registered trust model (evaluation/privacy/trust_models.py TRUST_MODELS): "ldp" |
                      "shuffle" | "secagg_local" | "secagg" | "two_server" | "threshold" | "sample_threshold" |
                      "tee"
        epsilon_device = ε per device over the run (the model is calibrated to it; sample_threshold: its
                      threshold is, at its rate; without epsilon_device its ε follows from rate and threshold)
        noise, min_cohort, min_arrival, noise_by, rate, threshold, client_epsilon, tee_noise  (the model's own keys,
                      TrustModel.settings; any other is refused)
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ldpsim.scenarios.studies.scenario.schema import ScenarioError, load_toml, parse_table
from ldpsim.scenarios.studies.scenario.trust_keys import (COLLECTOR_KEYS, CRASH, TRUST, WORKLOAD, configured_model,
                                                       stated_epsilon)
from ldpsim.evaluation.privacy.trust_levels import trust_levels
from ldpsim.evaluation.workloads.synthetic import zipf
from ldpsim.simulator.collectors import CollectorSetup, simulate_collection
from ldpsim.runtime.runfolder import Layout

#: ``ldpsim trust``: a trust-model scenario's tables and the comparison's table and figure
LAYOUT = Layout("trust", ("trust.csv", "collectors.csv", "comparison.csv", "discovery.csv"), {"plots": ("*.png",)})




@dataclass
class TrustRun:
    """One row per use case (``table``) and the collectors' log (``records``)."""

    table: pd.DataFrame
    records: pd.DataFrame
    settings: dict
    notices: tuple = ()  # what reading the file did that the user should know (old key names read)


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
        ``table``: use_case, aggregation, epsilon_target (the use case's ``epsilon_device``; NaN where a
        sample_threshold's ε follows from its rate and threshold), epsilon_report / _day / _run,
        epsilon_item, epsilon_person (docs/math.md §8.7), delta,
        if_misbehaving, trusted, devices, counted, rmse (of the counted reports' counts, in reports),
        bytes_per_device (:mod:`~ldpsim.evaluation.privacy.trust_tables` says each column's unit).
    """
    file = Path(path)
    renamed = []
    raw = load_toml(file, renamed)
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
        got = simulate_collection(model.protocol(d), items[rng.permutation(n)], d, setup, rng)
        g = {x.scope: x for x in model.guarantees(n, days, delta)}
        rows.append({"use_case": name, "aggregation": model.kind, "epsilon_target": stated_epsilon(table),
                     "epsilon_report": g["report"].epsilon,
                     "epsilon_day": g["day"].epsilon, "epsilon_device": g["run"].epsilon,
                     **trust_levels(model, n, days, delta), "delta": g["run"].delta,
                     "if_misbehaving": g["misbehaving server"].epsilon, "trusted": model.trusted,
                     "devices": n, "counted": got.counters["counted"], "rejected": got.counters["rejected"],
                     "rmse": math.sqrt(float(np.mean((got.estimate - got.counted) ** 2))),
                     "bytes_per_device": model.upload_bytes(d)})
        logs += [{"use_case": name, **r} for r in got.records]
    return TrustRun(pd.DataFrame(rows), pd.DataFrame(logs), {**t, "workload": w, "collectors": c}, tuple(renamed))


def write_trust_results(root, run: TrustRun | None = None, comparison=None, *, force: bool = False) -> Path:
    """Write a :class:`TrustRun` (``trust.csv``, ``collectors.csv``) and/or a comparison (``comparison.csv``,
    its discovery table ``discovery.csv`` where it ran one, ``plots/trust_models.png``) into the run folder
    ``root`` (kind ``"trust"``).

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
    with RunFolder.open(root, LAYOUT, {"fingerprint": fingerprint, "seed": seed}, replace=force,
                        keep_finished=True) as folder:
        if run is not None:
            folder.write_text("trust.csv", run.table.to_csv(index=False))
            folder.write_text("collectors.csv", run.records.to_csv(index=False))
        if comparison is not None:
            folder.write_text("comparison.csv", comparison.table.to_csv(index=False))
            if comparison.discovery is not None:
                folder.write_text("discovery.csv", comparison.discovery.to_csv(index=False))
            fig = comparison.figure()
            durable.write_file(folder.path("plots/trust_models.png"), lambda tmp: fig.savefig(tmp, format="png", dpi=120))
            folder.record("plots/trust_models.png")
        folder.finalize()
    return root
