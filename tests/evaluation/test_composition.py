"""Composition against closed forms: basic, Dwork–Rothblum–Vadhan, the exact k-RR curve and dp-accounting's PLD.

All checks are deterministic (no sampling); tolerances are the PLD's discretization (pessimistic: an
upper bound within one grid step per composed guarantee).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.privacy.composition import (advanced_composition, basic_composition, compose,
                                                   rr_composition_delta)


def _brute_force_delta(eps, k, t, d):
    """δ(t) of k reports of d-RR by enumerating every output sequence for inputs 0 and 1."""
    z = math.exp(eps) + d - 1
    p = np.full(d, 1 / z)
    p[0] = math.exp(eps) / z           # input 0
    q = np.full(d, 1 / z)
    q[1] = math.exp(eps) / z           # input 1
    total = 0.0
    for seq in itertools.product(range(d), repeat=k):
        pp, qq = np.prod(p[list(seq)]), np.prod(q[list(seq)])
        total += max(pp - math.exp(t) * qq, 0.0)
    return total


@pytest.mark.parametrize("eps, k, d", [(1.0, 3, 2), (0.7, 4, 3), (2.0, 3, 5), (0.3, 5, 2)])
@pytest.mark.parametrize("t_share", [0.0, 0.3, 0.8, 1.0])
def test_rr_composition_delta_is_the_exact_hockey_stick(eps, k, d, t_share):
    t = t_share * k * eps
    assert rr_composition_delta(eps, k, t, d) == pytest.approx(_brute_force_delta(eps, k, t, d), rel=1e-10, abs=1e-15)


def test_binary_rr_curve_is_the_binomial_sum():
    """k = 2: privacy loss ε(T − 2B), B ~ Bin(T, 1/(1+e^ε)) — the optimal composition of T ε-DP mechanisms."""
    eps, T = 0.5, 30
    b = np.arange(T + 1)
    pmf = stats.binom.pmf(b, T, 1 / (1 + math.exp(eps)))
    for t in (1.0, 3.0, 6.0, 10.0):
        exact = float(np.sum(pmf * np.clip(1 - np.exp(t - eps * (T - 2 * b)), 0, None)))
        assert rr_composition_delta(eps, T, t) == pytest.approx(exact, rel=1e-10)


def test_basic_composition_is_where_delta_vanishes():
    eps, T = 0.8, 12
    assert basic_composition([eps] * T) == pytest.approx(T * eps)
    assert rr_composition_delta(eps, T, T * eps) == 0.0
    assert rr_composition_delta(eps, T, T * eps - 0.1) > 0.0


@pytest.mark.parametrize("eps, T", [(0.1, 100), (0.5, 30), (1.0, 50)])
def test_advanced_composition_bounds_the_exact_curve(eps, T):
    """DRV's ε' at δ' is an upper bound: the exact δ at ε' is at most δ'; the closed form by hand."""
    delta = 1e-6
    drv = math.sqrt(2 * T * math.log(1 / delta)) * eps + T * eps * math.expm1(eps)
    assert advanced_composition(eps, T, delta) == pytest.approx(min(drv, T * eps), rel=1e-12)
    assert rr_composition_delta(eps, T, advanced_composition(eps, T, delta)) <= delta


@pytest.mark.parametrize("eps, T", [(0.5, 30), (1.0, 30), (0.2, 200)])
def test_pld_composition_matches_the_exact_optimum(eps, T):
    """compose (dp-accounting PLD, pessimistic) is an upper bound within its grid: δ_exact(ε_PLD) ≤ δ
    and δ_exact(ε_PLD − T·step − 0.01) > δ."""
    delta, step = 1e-6, 1e-4
    got = compose([(eps, 0.0)] * T, delta, discretization=step)
    assert got.method == "dp-accounting PLD"
    assert rr_composition_delta(eps, T, got.epsilon) <= delta * (1 + 1e-9)
    assert rr_composition_delta(eps, T, got.epsilon - T * step - 0.01) > delta
    assert got.epsilon < T * eps


def test_pld_of_k_rr_agrees_with_its_exact_curve():
    """dp-accounting's own randomized-response PLD, T-fold, against the exact k-RR curve."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    eps, T, d = 1.0, 20, 5
    noise = d / (math.exp(eps) + d - 1)  # k-RR keeps the value w.p. e^ε/(e^ε + d − 1) = 1 − noise + noise/d
    pld = pld_lib.from_randomized_response(noise, d, value_discretization_interval=1e-4).self_compose(T)
    for t in (2.0, 5.0, 10.0):
        exact = rr_composition_delta(eps, T, t, d)
        upper = rr_composition_delta(eps, T, t - T * 1e-4, d) + 1e-12
        assert exact * (1 - 1e-9) <= pld.get_delta_for_epsilon(t) <= upper


def test_composition_single_and_fallback(monkeypatch):
    assert compose([(0.3, 0.0)], 1e-6).epsilon <= 0.3 + 1e-9
    assert compose([], 1e-6).epsilon == 0.0
    import builtins
    real_import = builtins.__import__

    def no_dp_accounting(name, *args, **kwargs):
        if name.startswith("dp_accounting"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dp_accounting)
    got = compose([(0.5, 1e-8)] * 3, 1e-6)
    assert got.epsilon == pytest.approx(1.5) and got.delta == pytest.approx(3e-8) and "basic" in got.method


@pytest.mark.parametrize("call, match", [
    (lambda: compose([(1.0, 1e-3)], 1e-4), "'delta'"),
    (lambda: advanced_composition(1.0, 0, 1e-6), "'k'"),
    (lambda: rr_composition_delta(1.0, 3, 1.0, domain_size=1), "'domain_size'"),
    (lambda: basic_composition([1.0, -0.5]), "'epsilons'"),
])
def test_bad_parameters_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()
