"""The keys of a trust model in a scenario file: a trust scenario's ``[trust]`` tables and a deployment
use case's ``aggregation`` keys, checked up front, then the calibrated model — docs/math.md §9.

Read by :mod:`.deployment_file` (a deployment's use case under a trust model, its ``[collectors]``) and by
:mod:`ldpsim.scenarios.studies.trust.trust_scenario` (a trust-model scenario file).
"""

from __future__ import annotations

import math

from ldpsim.evaluation.privacy.trust_accounting import TrustModel
from ldpsim.evaluation.privacy.trust_models import DEFAULTS, MODELS, TRUST_MODELS
from ldpsim.mechanisms._validation import DELTA_MAX
from ldpsim.mechanisms.aggregation.integer_noise import KINDS, IntegerNoise
from ldpsim.mechanisms.aggregation.partition_selection import NOISES
from ldpsim.mechanisms.aggregation.two_server import NOISE_BY
from ldpsim.scenarios.studies.scenario.schema import REQUIRED, Field, ScenarioError, parse_table
from ldpsim.simulator.collectors import COLLECTORS, CollectorSetup
from ldpsim.mechanisms.deltas import DELTA_RELEASE


def _one_of(options):
    return lambda v: None if v in options else f"must be one of {', '.join(options)}"


def _positive(v):
    return None if v > 0 else "must be > 0"


def _delta(v):
    return None if 0 < v <= DELTA_MAX else f"must be a δ in (0, {DELTA_MAX:g}] (mechanisms/_validation.py)"


TRUST = {"name": Field(str, "trust_models"), "seed": Field(int, 2026), "devices": Field(int, 50_000, _positive),
         "days": Field(int, 30, _positive), "delta": Field(float, DELTA_RELEASE, _delta),
         "workload": Field(dict, {}), "collectors": Field(dict, {}),
         "use_case": Field(dict, REQUIRED, help="one [trust.use_case.NAME] table per use case")}


WORKLOAD = {"domain_size": Field(int, 2000, lambda v: None if v >= 2 else "must be ≥ 2"), "zipf_s": Field(float, 1.1)}


CRASH = {"collector": Field(str, "helper", _one_of(COLLECTORS)), "hour": Field(float, 23.0),
         "hours": Field(float, 2.0, _positive)}


COLLECTOR_KEYS = {k: Field((int, float), getattr(CollectorSetup(), k)) for k in
                  ("window_start_mean_h", "window_start_sd_h", "window_length_h", "loss", "latency_median_s",
                   "latency_sigma", "round_s", "round_length_s", "job_s", "retry_s", "invalid_share")}
COLLECTOR_KEYS["crash"] = Field(dict, None)


USE_CASE = {"aggregation": Field(str, "ldp", _one_of(MODELS)), "epsilon_device": Field(float, 2.0, _positive),
            "noise": Field(str, None, _one_of(KINDS)), "min_cohort": Field(int, None, _positive),
            "min_arrival": Field(float, None, lambda v: None if 0 < v <= 1 else "must be in (0, 1]"),
            "noise_by": Field(str, None, _one_of(NOISE_BY)), "rate": Field(float, None, lambda v: None if 0 < v <= 1 else
                                                                               "must be in (0, 1]"),
            "threshold": Field(int, None, lambda v: None if v >= 0 else "must be ≥ 0"),
            "client_epsilon": Field(float, None, _positive),
            "tee_noise": Field(str, None, _one_of(NOISES), help="aggregation = 'tee': the enclave's noise")}


#: a deployment's use case under a trust model: the keys above and the δ of its guarantees
DEPLOYMENT_USE_CASE = {**USE_CASE, "delta": Field(float, DELTA_RELEASE, _delta)}


def configured_model(table: dict, where: str, file, n: int, days: int, delta: float, d: int,
                     spec: dict = USE_CASE) -> TrustModel:
    """The trust model of a use-case table (keys checked against ``spec`` and what its aggregation reads),
    calibrated to its ``epsilon_device`` per device over ``days`` days of ``n`` devices at ``delta``
    (:meth:`~ldpsim.evaluation.privacy.trust_accounting.TrustModel.for_target`; as given when the table sets
    the parameter the model's guarantee follows from instead, ``given_instead``), a noisy threshold's τ at
    the family-wise false-alarm level.

    Raises
    ------
    ScenarioError
        A key unknown, of the wrong type or out of range, or not read by the table's aggregation.
    """
    uc = parse_table(table, spec, where, file)
    model = _model(uc, table, where, file)
    instead = model.given_instead
    if instead is not None and "epsilon_device" not in table:
        return model                               # ε follows from the parameter given instead
    if instead is not None and instead in table:
        raise ScenarioError(file, f"{where}.{instead}", f"is calibrated from epsilon_device under aggregation = "
                            f"{model.kind!r}: give epsilon_device or {instead}, not both")
    tuned = model.for_target(uc["epsilon_device"], n, days, delta, d)
    if tuned is None:
        raise ScenarioError(file, f"{where}.epsilon_device", f"no {instead or 'parameter'} keeps ε per device over {days} days at "
                            f"{uc['epsilon_device']:g} {model.unreachable()}")
    return tuned


def stated_epsilon(table: dict) -> float:
    """The ε per device over the run a use-case table asks for: its ``epsilon_device`` (the default for a
    calibrated model), NaN for a table that gives the parameter its guarantee follows from instead
    (:attr:`~ldpsim.evaluation.privacy.trust_accounting.TrustModel.given_instead`)."""
    cls = TRUST_MODELS.get(table.get("aggregation"))
    if cls is not None and cls.given_instead is not None and "epsilon_device" not in table:
        return math.nan
    return float(table.get("epsilon_device", USE_CASE["epsilon_device"].default))


def _model(uc: dict, table: dict, where: str, file) -> TrustModel:
    kind = uc["aggregation"]
    reads = TRUST_MODELS[kind].settings()
    for key in table:
        if key not in ("aggregation", "epsilon_device", "delta", *reads):
            raise ScenarioError(file, f"{where}.{key}", f"is not used by aggregation = {kind!r} (it reads: "
                                f"{', '.join(('epsilon_device',) * (TRUST_MODELS[kind].given_instead is None) + reads)})")
    changes = {k: uc[k] for k in reads if k != "noise" and uc[k] is not None}
    if uc["noise"] is not None:
        changes["noise"] = IntegerNoise(uc["noise"], {"skellam": 1000.0}.get(uc["noise"], 30.0))
    return DEFAULTS[kind].configured(**changes)

