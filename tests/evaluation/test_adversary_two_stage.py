"""Exact likelihoods of RAPPOR and dBitFlip reports for the deployment observer (docs/math.md §7.2, §7.3):
one report, and a memoized device's linked reports (shared permanent, fresh instantaneous response)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from ldpsim.evaluation.adversary.observer import guesses
from ldpsim.evaluation.adversary.two_stage import device_log_likelihoods, report_log_likelihoods
from ldpsim.mechanisms import RAPPOR, DBitFlip
from ldpsim.mechanisms.memo import device_keys
from ldpsim.simulator.config import UseCase
from ldpsim.simulator.deployment import run
from tests.fleets import ITEMS, tiny_config
from tests.stats import assert_chisquare_gof

TOKENS = ("the", "of", "and", "to", "a")
MECHS = {"rappor": (RAPPOR(epsilon=4 * math.log(3), num_bits=4, num_hashes=1, cohorts=2), TOKENS),
         "dbitflip": (DBitFlip(epsilon=2.0, domain_size=5, d=2, gamma=0.15), np.arange(5))}


def _index(mech, reports) -> np.ndarray:
    """Row of each report in ``mech.all_reports()`` (through the wire form)."""
    table = {bytes(r): i for i, r in enumerate(_rows(mech, mech.all_reports()))}
    return np.array([table[bytes(r)] for r in _rows(mech, reports)])


def _rows(mech, reports) -> np.ndarray:
    return np.frombuffer(mech.encode(reports), np.uint8).reshape(-1, mech.report_bytes)


@pytest.mark.parametrize("name", sorted(MECHS))
def test_report_likelihood_is_the_exact_report_law(name):
    """exp(log P[report | x]) over every report equals the mechanism's report distribution."""
    mech, items = MECHS[name]
    ll = report_log_likelihoods(mech, mech.all_reports(), items)
    np.testing.assert_allclose(np.exp(ll).T, mech.report_distribution(items), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(MECHS))
def test_report_likelihood_matches_client_frequencies(name):
    """100 000 one-time reports of two inputs against exp(likelihood): chi-square, α = 1e-3 overall."""
    mech, items = MECHS[name]
    probs = np.exp(report_log_likelihoods(mech, mech.all_reports(), items))
    rng = np.random.default_rng(3)
    for x in (0, 3):
        values = np.full(100_000, items[x], dtype=object if name == "rappor" else np.int64)
        obs = np.bincount(_index(mech, mech.perturb(values, rng)), minlength=probs.shape[0])
        assert_chisquare_gof(obs, probs[:, x], alpha=1e-3 / 2, what=f"{name} reports of input {x}")


def _pairs(mech):
    """Every (day-1 report, day-2 report) a memoized device can send: both days share the layout."""
    reports = mech.all_reports()
    if isinstance(mech, RAPPOR):
        layout, bits = reports.cohort, reports.bits
    else:
        layout, bits = reports.buckets, reports.bits
    same = np.all((layout[:, None] == layout[None, :]).reshape(len(bits), len(bits), -1), axis=2)
    i, j = np.nonzero(same)
    stacked = np.stack([i, j], axis=1).ravel()                      # device p sends reports i_p then j_p
    return type(reports)(*(r[stacked] for r in reports)), i, j


@pytest.mark.parametrize("name", sorted(MECHS))
def test_memoized_pair_likelihood_matches_linked_frequencies(name):
    """A memoized device's two days (shared permanent response, fresh instantaneous response): the
    joint law of the pair from ``device_log_likelihoods`` (ρ = 1) sums to one and matches 200 000 devices
    with fresh keys (chi-square, α = 1e-3 overall). The product of two one-report laws does not."""
    mech, items = MECHS[name]
    reports, i, j = _pairs(mech)
    joint = np.exp(device_log_likelihoods(mech, reports, items, np.repeat(np.arange(i.size), 2), i.size))
    np.testing.assert_allclose(joint.sum(axis=0), 1.0, rtol=1e-10)
    pair_index = {(a, b): p for p, (a, b) in enumerate(zip(i.tolist(), j.tolist()))}
    n = 200_000
    for x in (0, 3):
        keys = device_keys(n, np.random.default_rng(10 + x))
        values = np.full(n, items[x], dtype=object if name == "rappor" else np.int64)
        day = [_index(mech, mech.perturb_memoized(values, keys, rng=np.random.default_rng(20 + x + d)))
               for d in (0, 1)]
        obs = np.bincount([pair_index[(a, b)] for a, b in zip(day[0].tolist(), day[1].tolist())],
                          minlength=i.size)
        assert_chisquare_gof(obs, joint[:, x], alpha=1e-3 / 2, what=f"{name} memoized pairs of input {x}")
    one = np.exp(report_log_likelihoods(mech, mech.all_reports(), items))
    independent = one[i, 0] * one[j, 0]
    assert not np.allclose(independent / independent.sum(), joint[:, 0] / joint[:, 0].sum(), rtol=1e-3)


@pytest.mark.parametrize("mechanism,params", [
    ("rappor", (("num_bits", 32), ("num_hashes", 2), ("cohorts", 4), ("p", 0.0), ("q", 1.0))),
    ("dbitflip", (("domain_size", len(ITEMS)), ("d", 4), ("gamma", 0.1)))])
@pytest.mark.parametrize("memoize", [False, True])
def test_observer_is_at_least_as_good_as_its_prior(tmp_path, mechanism, params, memoize):
    """1 500 tapped devices, 6 days, ε = 8: paired one-sided tests at α = 1e-3 that the linked Bayes
    observer with these likelihoods is at least as accurate as the prior-only guess — and, at this ε,
    strictly more accurate (a flat or wrong likelihood is not)."""
    emoji = UseCase("emoji", "event", mechanism, (("epsilon", 8.0), *params), 1, memoize=memoize)
    cfg = tiny_config(n_devices=1500, n_days=6, block_size=512, adversary_devices=1500, seed=31,
                      use_cases=(emoji,))
    g = guesses(cfg, run(cfg, tmp_path))
    fav = g["favourite"]
    d = (g["linked"] == fav).astype(float) - (g["prior"] == fav)
    assert fav.size > 1000
    margin = norm.ppf(1 - 1e-3) * d.std(ddof=1) / math.sqrt(d.size)
    assert d.mean() >= -margin
    assert d.mean() > margin
