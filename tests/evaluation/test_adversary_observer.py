"""The deployment's Bayes observer never does worse than its prior alone."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from ldpsim.evaluation.adversary.observer import adversary, device_posteriors, guesses
from ldpsim.simulator.deployment import run
from tests.simulator.test_device import tiny_config


def test_linked_observer_is_at_least_as_good_as_its_prior(tmp_path):
    """2 000 tapped devices, 3 days, GRR ε = 2 over 8 items. Paired one-sided test at α = 1e-3:
    mean(linked correct − prior correct) ≥ −z·se, se = sd of the paired differences / sqrt(N).
    The stripped and shuffled observer equals the prior-only one (its posterior is its prior)."""
    cfg = tiny_config(n_devices=2000, block_size=512, adversary_devices=2000, seed=21)
    res = run(cfg, tmp_path)
    g = guesses(cfg, res)
    fav = g["favourite"]
    d = (g["linked"] == fav).astype(float) - (g["prior"] == fav)
    assert fav.size > 1500
    assert d.mean() >= -norm.ppf(1 - 1e-3) * d.std(ddof=1) / math.sqrt(d.size)
    assert d.mean() > 0  # three reports at ε = 2 say something about a favourite
    out = adversary(cfg, res)
    assert out["adversary_stripped"] == out["adversary_prior_only"] == np.mean(g["prior"] == fav)
    assert out["adversary_linked"] == np.mean(g["linked"] == fav)


def test_uninformative_reports_leave_the_prior():
    """Reports whose likelihood is flat over the items do not move the posterior."""
    prior = np.log(np.array([0.5, 0.3, 0.2]))
    post = device_posteriors(np.zeros((4, 3)), np.array([0, 0, 1, 1]), 2, prior, np.array([0.4, 0.4, 0.2]), 0.3)
    np.testing.assert_allclose(post - post[:, :1], np.tile(prior - prior[0], (2, 1)))
