"""Poisoning under the trust models (evaluation/poisoning/trust_poisoning.py)."""

import math

import numpy as np
import pytest

from ldpsim.evaluation.poisoning.gains import expected_gain
from ldpsim.evaluation.poisoning.trust_poisoning import fakes_admitted, poisoning_table, trust_model_gain
from ldpsim.evaluation.privacy.trust_models import trust_model
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.two_server import TwoServer
from tests.stats import assert_z

COUNTS = np.array([400, 300, 200, 60, 40])
TWO = trust_model("two_server", noise=IntegerNoise("polya", 2.0))


def test_two_server_gain_is_measured_with_valid_and_rejected_fakes():
    """Fakes submit either a valid one-hot target report (counted) or an out-of-range MGA vector (rejected)."""
    ts = TwoServer(TWO.noise, "both")
    genuine = np.repeat(np.eye(5, dtype=np.int64), COUNTS, axis=0)
    m, target = 50, 4
    valid_fake = np.zeros((m, 5), dtype=np.int64)
    valid_fake[:, target] = 1
    crafted = np.zeros((m, 5), dtype=np.int64)
    crafted[:, target] = 40                                   # "count me 40 times": out of range
    reports = np.vstack([genuine, valid_fake, crafted])
    est = np.array([ts.release_per_device(reports, np.random.default_rng(i))[0] for i in range(300)])
    n_total = COUNTS.sum() + m                                # the crafted ones are rejected, not counted
    gain = est[:, target] / n_total - COUNTS[target] / COUNTS.sum()
    expected = trust_model_gain(TWO, "mga", [target], COUNTS, m)
    assert not expected["as_crafted"]
    sd = math.sqrt(ts.noise_variance()) / n_total
    assert_z(gain.mean(), expected["gain"], sd / math.sqrt(300), what="two-server gain")


def test_local_models_keep_the_ldp_gains():
    model = trust_model("shuffle", epsilon_report=2.0)
    got = trust_model_gain(model, "mga", [3], COUNTS, 20)
    oracle = model.local_oracle(5)
    assert got["gain"] == pytest.approx(expected_gain(oracle, "mga", [3], COUNTS, list(range(5)), 20))
    assert got["per_fake"] > 1                                 # a crafted LDP report counts more than once


def test_secure_aggregation_without_validity_is_unbounded():
    model = trust_model("secagg", noise=IntegerNoise("skellam", 10.0))
    assert trust_model_gain(model, "mga", [3], COUNTS, 1)["gain"] == math.inf
    assert trust_model_gain(model, "mga", [3], COUNTS, 0)["gain"] == 0.0


def test_rate_limit_caps_the_admitted_fakes():
    assert fakes_admitted(500, identities=20, limit=3) == 60
    assert fakes_admitted(10, identities=20, limit=3) == 10
    capped = trust_model_gain(TWO, "ria", [3], COUNTS, 500, identities=20, limit=3)
    assert capped["admitted"] == 60
    assert capped["gain"] == pytest.approx(60 / (1000 + 60) * (1 - 60 / 1000))


def test_table_covers_every_model_and_attack():
    t = poisoning_table(COUNTS, [3], 10, epsilon_device=4.0, days=5, delta=1e-6,
                        models=("ldp", "two_server", "threshold"))
    assert len(t) == 9 and set(t["attack"]) == {"rpa", "ria", "mga"}
    central = t[t["model"] != "ldp"].set_index(["model", "attack"])["gain"]
    for model in ("two_server", "threshold"):
        assert central[(model, "mga")] == central[(model, "ria")]


def test_client_randomization_lets_a_crafted_report_through_the_multi_hot_check():
    from ldpsim.mechanisms import SUE
    model = trust_model("two_server", noise=IntegerNoise("polya", 2.0), client_epsilon=4.0)
    got = trust_model_gain(model, "mga", [3], COUNTS, 20)
    assert got["as_crafted"]
    oracle = SUE(epsilon=4.0, domain_size=5)
    assert got["gain"] == pytest.approx(expected_gain(oracle, "mga", [3], COUNTS, list(range(5)), 20))
