"""The trust models' designs: each model's starting parameters, its local randomizer, its aggregators'
protocol, its upload size, and a model as plain values — docs/math.md §9.

A measurement the trust studies (:mod:`ldpsim.scenarios.studies.trust`), the deployment's trust estimates
and the trust-poisoning table share; the models' guarantees and calibration are the accountant's
(:mod:`ldpsim.evaluation.privacy.trust_accounting`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy import stats

from ldpsim.evaluation.privacy import tee_model
from ldpsim.evaluation.privacy.trust_accounting import TrustModel
from ldpsim.mechanisms import make
from ldpsim.mechanisms.aggregation.field_shares import prio3_histogram_bytes
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.secagg_cost import secagg_bytes
from ldpsim.mechanisms.aggregation.two_server import TwoServer

#: starting parameters of each model before calibration (the noise families production uses)
DEFAULTS = {
    "ldp": TrustModel("ldp"),
    "shuffle": TrustModel("shuffle"),
    "secagg_local": TrustModel("secagg_local", min_cohort=10_000),
    "secagg": TrustModel("secagg", noise=IntegerNoise("skellam", 1000.0), min_cohort=10_000, min_arrival=0.8),
    "two_server": TrustModel("two_server", noise=IntegerNoise("discrete_gaussian", 30.0), noise_by="both"),
    "threshold": TrustModel("threshold", noise=IntegerNoise("discrete_gaussian", 30.0)),
    "sample_threshold": TrustModel("sample_threshold", rate=0.1, threshold=20),
    "tee": TrustModel("tee", tee=tee_model.DEFAULT),
}


#: family-wise false-alarm rate and power of the detection floor
FALSE_ALARM, POWER = 0.05, 0.95


def release_threshold(model: TrustModel, d: int) -> TrustModel:
    """A ``threshold`` model with τ at the noise's family-wise false-alarm level over d items,
    τ = ⌈z_{1−FALSE_ALARM/d}·sd⌉ (other models unchanged)."""
    if model.kind != "threshold":
        return model
    return replace(model, threshold=int(math.ceil(stats.norm.isf(FALSE_ALARM / d) * model.noise.sd())))


def two_server(model: TrustModel, d: int) -> TwoServer:
    """The aggregators' protocol of a ``two_server`` model (with its client randomizer, if any)."""
    client = local_oracle(model, d) if model.client_epsilon is not None else None
    return TwoServer(model.noise, model.noise_by, client=client)


def local_oracle(model: TrustModel, d: int):
    """The local randomizer: OLH for pure LDP (small ε₀, large D), GRR under shuffling / aggregation,
    symmetric RAPPOR (SUE) for two servers with client randomization."""
    if model.kind == "two_server":
        return make("sue", epsilon=model.client_epsilon, domain_size=d)
    name = "olh" if model.kind == "ldp" else "grr"
    return make(name, epsilon=min(model.local_epsilon, 50.0), domain_size=d)


def upload_bytes(model: TrustModel, d: int) -> int:
    """Bytes per device per report (docs/math.md §9.3 for the costs' sources; secure aggregation: sent and
    received, :func:`~ldpsim.mechanisms.aggregation.secagg_cost.secagg_bytes`)."""
    k = model.kind
    if k in ("ldp", "shuffle"):
        return local_oracle(model, d).report_bytes
    if k in ("secagg", "secagg_local"):          # SecAgg+ messages; each bin's sum: s one-hots (+ noise within ±10 sd)
        s = model.min_cohort
        spread = 20 * model.noise.sd() if k == "secagg" else 0.0
        return secagg_bytes(d, s, s + 1 + spread)
    if k == "two_server":
        return prio3_histogram_bytes(d)["upload"]
    return 4


def model_params(model: TrustModel) -> tuple:
    """A trust model as (key, value) pairs of plain values (hashable, JSON-ready); :func:`model_from` inverts it."""
    noise = None if model.noise is None else (model.noise.kind, model.noise.scale, model.noise.copies)
    return (("kind", model.kind), ("local_epsilon", model.local_epsilon), ("noise", noise),
            ("min_cohort", model.min_cohort), ("min_arrival", model.min_arrival), ("noise_by", model.noise_by),
            ("threshold", model.threshold), ("rate", model.rate), ("client_epsilon", model.client_epsilon),
            ("tee", tee_model.params(model.tee)))


def model_from(params) -> TrustModel:
    """The trust model of :func:`model_params` pairs (other keys are ignored)."""
    p = dict(params)
    noise = None if p["noise"] is None else IntegerNoise(*p["noise"])
    return TrustModel(p["kind"], p["local_epsilon"], noise, p["min_cohort"], p["min_arrival"], p["noise_by"],
                      p["threshold"], p["rate"], p["client_epsilon"], tee_model.from_params(p.get("tee")))


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
    if k == "tee":
        return tee_model.release(model.tee)
    if k == "threshold":
        return lambda counts, rng: np.where(counts + (z := model.noise.sample(counts.size, rng)) >= model.threshold,
                                            counts + z, 0).astype(float)
    return lambda counts, rng: model.sampler().release(counts, rng)

