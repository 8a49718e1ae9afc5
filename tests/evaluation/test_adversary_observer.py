"""The deployment's Bayes observer never does worse than its prior alone."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from ldpsim.evaluation.adversary.observer import adversary, device_posteriors, guesses
from ldpsim.simulator.deployment import run
from tests.fleets import tiny_config


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


def test_memoized_deployment_is_scored_by_groups_of_identical_reports(tmp_path):
    """A memoized GRR fleet (2 000 tapped devices, 8 days, ε = 4): the observer's guesses are those of
    the grouped rule (docs/math.md §7.5) applied to the tap by hand, and not below the prior-only guess
    (paired one-sided test at α = 1e-3, as above; the fleet's preferences are not exactly the observer's
    model, so this is the deployment's check, the exact-model one is in test_adversary_memo_observer)."""
    from ldpsim.evaluation.adversary.observer import (favourite_model, log_likelihoods,
                                                      memo_device_log_likelihoods, report_groups)
    from ldpsim.simulator.config import UseCase

    uc = UseCase("emoji", "event", "grr", (("epsilon", 4.0), ("domain_size", 8)), 1, memoize=True)
    cfg = tiny_config(n_devices=2000, block_size=512, adversary_devices=2000, seed=22, n_days=8, use_cases=(uc,))
    res = run(cfg, tmp_path)
    g = guesses(cfg, res)
    taps = [t for t in res.tap if t["use_case"] == "emoji"]
    ids, dev = np.unique(np.concatenate([t["device"] for t in taps]), return_inverse=True)
    rows = np.concatenate([t["rows"] for t in taps])
    first, gdev, counts = report_groups(dev, rows)
    mech = uc.make_mechanism()
    prior, rho = favourite_model(cfg)
    ll = log_likelihoods(mech, mech.decode(rows[first].tobytes()), np.arange(8))
    post = np.log(prior) + memo_device_log_likelihoods(ll, gdev, counts, ids.size, cfg.item_weights, rho)
    np.testing.assert_array_equal(g["linked"], post.argmax(axis=1))
    assert counts.max() > 1  # repeats were grouped
    fav = g["favourite"]
    d = (g["linked"] == fav).astype(float) - (g["prior"] == fav)
    assert d.mean() >= -norm.ppf(1 - 1e-3) * d.std(ddof=1) / math.sqrt(d.size)
