"""The trust models as one family: the registry, its round trip, the parameters each model reads, and the
contract every registered model keeps (evaluation/privacy/trust_models.py, trust_local.py, trust_exact.py)."""

import dataclasses
import math

import numpy as np
import pytest

from ldpsim.evaluation.privacy.trust_accounting import TrustModel, calibrate, run_epsilon
from ldpsim.evaluation.privacy.trust_models import (DEFAULTS, MODELS, TRUST_MODELS, model_from, model_params,
                                                   trust_model)
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum
from ldpsim.mechanisms.aggregation.two_server import TwoServer
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.scenario.trust_keys import USE_CASE

#: every parameter some model reads
ALL_PARAMS = sorted({f.name for cls in TRUST_MODELS.values() for f in dataclasses.fields(cls)})


def test_the_registry_lists_each_model_once_under_its_own_name():
    assert MODELS == tuple(TRUST_MODELS) and len(set(MODELS)) == len(MODELS)
    for name, cls in TRUST_MODELS.items():
        assert issubclass(cls, TrustModel) and cls.kind == name
        assert type(DEFAULTS[name]) is cls


@pytest.mark.parametrize("name", MODELS)
def test_a_model_round_trips_through_plain_values_and_by_name(name):
    model = dataclasses.replace(DEFAULTS[name], **({"client_epsilon": 6.0} if name == "two_server" else {}))
    pairs = model_params(model)
    assert hash(pairs) is not None and dict(pairs)["kind"] == name
    assert model_from(pairs) == model
    assert model_from(pairs + (("n_plan", 10), ("delta", 1e-9))) == model       # the deployment's extra keys
    params = {f.name: getattr(model, f.name) for f in dataclasses.fields(model)}
    assert trust_model(name, **params) == model


@pytest.mark.parametrize("name", MODELS)
def test_a_parameter_the_model_does_not_read_is_refused_by_name(name):
    reads = {f.name for f in dataclasses.fields(TRUST_MODELS[name])}
    for key in ALL_PARAMS:
        if key in reads:
            continue
        with pytest.raises(InputError, match=rf"'{name}' takes no parameter '{key}' \(it takes: .*\)\. Got {key} = "):
            trust_model(name, **{key: 1})


def test_an_unknown_model_is_refused_with_the_registered_names():
    with pytest.raises(InputError, match="'aggregation' setting must be one of ldp, shuffle, .*Got 'mpc'"):
        trust_model("mpc")
    with pytest.raises(InputError, match="'aggregation'"):
        model_from((("kind", "mpc"),))


@pytest.mark.parametrize("name", MODELS)
def test_every_model_keeps_the_family_contract(name):
    """Four scopes with their meanings, who is trusted, a protocol the collectors run, a positive upload,
    scenario keys the schema knows, and a count-level day whose theory has one MSE per item."""
    model = DEFAULTS[name].for_fleet(5000)
    g = model.guarantees(5000, 2, 1e-9)
    assert [x.scope for x in g] == ["report", "day", "run", "misbehaving server"]
    assert all(x.meaning and x.epsilon >= 0 and x.delta in (0.0, 1e-9) for x in g)
    assert g[0].epsilon <= g[1].epsilon <= g[2].epsilon                      # ε grows with the scope
    assert isinstance(model.trusted, str) and model.trusted
    assert model.central_noise() is None or isinstance(model.central_noise(), IntegerNoise)
    assert model.local_oracle(20) is None or model.local_oracle(20).domain_size == 20
    assert set(model.settings()) <= set(USE_CASE)                            # every key it reads is a TOML key
    proto = model.protocol(20)
    assert isinstance(proto, (SecureSum, TwoServer)) or callable(proto)
    assert isinstance(model.upload_bytes(20), int) and model.upload_bytes(20) > 0
    counts = np.arange(20, dtype=np.int64) * 10
    est, target = model.release(counts, np.random.default_rng(1), 0.9)
    mse, sd0 = model.theory(counts, 0.9)
    assert est.shape == target.shape == mse.shape == (20,)
    assert model.counted_reports(int(counts.sum()), 0.9) <= counts.sum()


def _calibratable():
    return [name for name in MODELS if TRUST_MODELS[name].given_instead is None]


@pytest.mark.slow
@pytest.mark.parametrize("name", _calibratable())
def test_every_calibrated_model_meets_its_target_from_below(name):
    """calibrate's promise over the whole registry: ε per device over the run within 2 % under the target
    (1 % rel_tol, and the bisection's last step)."""
    n, days, target = 20_000, 10, 2.0
    model = calibrate(DEFAULTS[name].for_fleet(n), target, n, days, 1e-9)
    assert 0.98 * target <= run_epsilon(model, n, days, 1e-9) <= target


@pytest.mark.slow
def test_the_threshold_model_is_given_instead_of_an_epsilon():
    """sample_threshold's guarantee follows from (p, τ): calibrate leaves it, tune_threshold sets τ, and
    only it has a threshold that sets its guarantee."""
    st = trust_model("sample_threshold", rate=0.05, threshold=1)
    assert calibrate(st, 8.0, 10_800, 30, 1e-9) is st
    tuned = st.for_target(8.0, 10_800, 30, 1e-9, 100)
    assert tuned.threshold > 1 and run_epsilon(tuned, 10_800, 30, 1e-9) <= 8.0
    with pytest.raises(InputError, match="calibrate_threshold tunes"):
        DEFAULTS["shuffle"].tune_threshold(8.0, 10_800, 30, 1e-9)


def test_a_noise_model_needs_its_noise():
    for name in MODELS:
        if "noise" in {f.name for f in dataclasses.fields(TRUST_MODELS[name])}:
            with pytest.raises(InputError, match="needs a 'noise'"):
                trust_model(name)
            assert math.isfinite(trust_model(name, noise=IntegerNoise("polya", 5.0)).guarantees(1000, 1)[0].epsilon)


@pytest.mark.parametrize("name", MODELS)
def test_a_scenario_key_the_model_does_not_read_is_refused(name, tmp_path):
    """The scenario parser asks the registered class which keys it reads: another model's key is an error
    naming the key, the model and the keys it reads, not ignored."""
    from ldpsim.scenarios.studies.scenario.schema import ScenarioError
    from ldpsim.scenarios.studies.scenario.trust_keys import configured_model

    reads = TRUST_MODELS[name].settings()
    values = {"min_cohort": 10, "noise_by": "leader", "rate": 0.5, "client_epsilon": 1.0}
    key = next(k for k in values if k not in reads)
    with pytest.raises(ScenarioError, match=rf"\[x\.{key}\] is not used by aggregation = '{name}' \(it reads: "
                                            rf"{', '.join(('epsilon_device',) * (TRUST_MODELS[name].given_instead is None) + reads)}\)"):
        configured_model({"aggregation": name, key: values[key]}, "x", tmp_path / "f.toml", 1000, 1, 1e-9, 20)
