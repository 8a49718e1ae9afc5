"""Bayesian adversary on PM/SDPM: the MAP rule against PM's closed form, expectation against an
independent integration, and empirical attack accuracy against expectation (binomial z-bound)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.adversary.continuous import (decide, empirical_numeric_accuracy, expected_numeric_accuracy,
                                          grid_density, input_grid, numeric_guesses, prior_from_values)
from ldpsim.mechanisms.numeric.pm import PM
from ldpsim.mechanisms.numeric.sdpm import SDPM
from tests.stats import assert_z

CELLS = 200
LEVELS = np.linspace(-0.95, 0.95, 9)  # a few distinct true values, so expectations are cheap


def _pm_closed_form(eps):
    t = math.exp(eps / 2)
    C = (t + 1) / (t - 1)
    p = (t * t - t) / (2 * t + 2)  # docs/math.md §2.1
    return C, p, p / math.exp(eps)


def _pm_tied_interval(y, C):
    """Uniform prior: the MAP inputs are those whose window [l(g), r(g)] holds y."""
    return (2 * y - C + 1) / (C + 1), (2 * y + C - 1) / (C + 1)


@pytest.mark.parametrize("mech", [PM(0.7), SDPM(1.0, low=(-0.5, 0.5))], ids=["pm", "sdpm"])
def test_grid_density_is_output_density(mech):
    g = input_grid(CELLS)
    y = np.concatenate([np.random.default_rng(1).uniform(-mech.C - 0.1, mech.C + 0.1, 3000),
                        [-0.5, 0.5, -mech.C, mech.C], (mech.C + 1) / 2 * g[:5] - (mech.C - 1) / 2])
    np.testing.assert_array_equal(grid_density(mech, g, y), mech.output_density(g[None, :], y[:, None]))


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_pm_map_set_is_the_window_preimage(eps):
    C, _, _ = _pm_closed_form(eps)
    y = np.random.default_rng(0).uniform(-C, C, 500)
    tied, atom_wins, p_low = decide(PM(eps), y, np.full(CELLS, 1 / CELLS))
    lo, hi = _pm_tied_interval(y, C)
    g = input_grid(CELLS)
    expect = (g >= lo[:, None]) & (g <= hi[:, None])
    expect[~expect.any(axis=1)] = True  # near ±C no midpoint's window holds y: all have density q
    np.testing.assert_array_equal(tied, expect)
    assert not atom_wins.any() and np.all(p_low == 0)


def _pm_expected_independent(eps, x, tol, n_y=40_001):
    """∫ f(y|x)·|T(y) ∩ [x ± tol]|/|T(y)| dy with PM's closed-form density and tied interval."""
    C, p, q = _pm_closed_form(eps)
    y = np.linspace(-C, C, n_y)
    g = input_grid(CELLS)
    lo, hi = _pm_tied_interval(y, C)
    tied = (g >= lo[:, None]) & (g <= hi[:, None])
    tied[~tied.any(axis=1)] = True
    share = (tied & (np.abs(g - x) <= tol)).sum(axis=1) / tied.sum(axis=1)
    left = (C + 1) / 2 * x - (C - 1) / 2
    f = np.where((y >= left) & (y <= left + C - 1), p, q)
    return np.trapezoid(f * share, y)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_pm_expectation_matches_independent_integration(eps):
    """Both sides are quadratures of the same piecewise-constant integrand. Each errs only on the
    y-cells where the MAP set changes (≤ 2·CELLS + 4 of them), by at most the cell's mass
    (≤ p·width) times the jump in the hit share (≤ 1/min|T|), which bounds the tolerance."""
    C, p, _ = _pm_closed_form(eps)
    x = np.array([-1.0, -0.3, 0.0, 0.77])
    val, cls = expected_numeric_accuracy(PM(eps), x, tol=0.1, n_cells=CELLS, n_y=20_000)
    ref = np.array([_pm_expected_independent(eps, xi, 0.1, n_y=40_001) for xi in x])
    min_tied = math.floor(2 * (C - 1) / (C + 1) / (2 / CELLS)) // 2  # a half-window at the domain's end
    changes = 2 * CELLS + 4
    bound = changes * p * (2 * C / 20_000 + 2 * C / 40_000) / min_tied
    np.testing.assert_allclose(val, ref, atol=bound)
    np.testing.assert_allclose(cls, 1.0)  # a single (high) class is always "inferred"


def test_prior_concentrated_on_one_cell():
    """An adversary sure that everyone holds the value of cell 130 guesses it for every PM report."""
    prior = np.zeros(CELLS)
    prior[130] = 1.0
    g = input_grid(CELLS)
    y = PM(1.0).perturb(np.full(200, g[130]), rng=0)
    guess, _ = numeric_guesses(PM(1.0), y, CELLS, prior=prior, rng=1)
    np.testing.assert_array_equal(guess, g[130])
    val, _ = expected_numeric_accuracy(PM(1.0), [g[130], g[20]], tol=0.1, n_cells=CELLS, prior=prior)
    np.testing.assert_allclose(val, [1.0, 0.0], atol=1e-12)


def test_full_tolerance_always_hits():
    val, _ = expected_numeric_accuracy(SDPM(1.0, low=(-0.2, 0.4)), LEVELS, tol=2.0, n_cells=50)
    np.testing.assert_allclose(val, 1.0, atol=1e-9)


def _attack(mech, n, seed, strong):
    rng = np.random.default_rng(seed)
    x = rng.choice(LEVELS, size=n, p=np.linspace(1, 3, LEVELS.size) / np.linspace(1, 3, LEVELS.size).sum())
    y = mech.perturb(x, rng)
    prior = prior_from_values(x, CELLS) if strong else None
    return x, y, prior, empirical_numeric_accuracy(mech, x, y, tol=0.1, n_cells=CELLS, prior=prior, rng=rng)


@pytest.mark.parametrize("mech", [PM(1.0), SDPM(1.0, low=(-0.5, 0.5))], ids=["pm", "sdpm"])
@pytest.mark.parametrize("strong", [False, True], ids=["uniform-prior", "workload-prior"])
def test_empirical_matches_expected(mech, strong):
    """Given the values, hits are independent Bernoullis with the expected per-input rates;
    √(acc(1−acc)/n) bounds their sd, so the z-bound is conservative."""
    n = 20_000
    x, _, prior, out = _attack(mech, n, seed=3, strong=strong)
    val, cls = expected_numeric_accuracy(mech, LEVELS, tol=0.1, n_cells=CELLS, prior=prior)
    idx = np.searchsorted(LEVELS, x)
    low = mech.is_low(x) if isinstance(mech, SDPM) else np.zeros(n, dtype=bool)
    checks = [("overall", val[idx].mean(), n), ("high", val[idx][~low].mean(), int((~low).sum()))]
    if isinstance(mech, SDPM):
        checks.append(("class", cls[idx].mean(), n))
    else:
        assert math.isnan(out["class"])
    for key, e, size in checks:
        assert_z(out[key], e, math.sqrt(e * (1 - e) / size), alpha=1e-4 / 3, what=f"{mech.name} {key}")


def test_sdpm_exact_reports_are_guessed_exactly():
    mech = SDPM(1.0, low=(-0.5, 0.5))
    rng = np.random.default_rng(4)
    x = rng.uniform(-0.5, 0.5, 5000)
    y = mech.perturb(x, rng)
    guess, guessed_low = numeric_guesses(mech, y, CELLS, rng=rng)
    exact = y == x
    assert_z(exact.mean(), mech.p_atom, math.sqrt(mech.p_atom * (1 - mech.p_atom) / x.size), what="p'")
    np.testing.assert_array_equal(guess[exact], x[exact])
    assert guessed_low[exact].all()


def test_bad_prior():
    with pytest.raises(ValueError, match="'prior' must be 200 non-negative finite weights"):
        numeric_guesses(PM(1.0), [0.0], CELLS, prior=np.ones(3))
