"""Central ε of summed symmetric-RAPPOR vectors (DP for DAP's client randomization, docs/math.md §9.7):
the neighbouring pair is one device's item replaced, which moves one coordinate 1 → 0 and another 0 → 1.

The reference computes that pair's hockey-stick divergence δ(ε) = Σ_o max(0, P(o) − e^ε·Q(o)) exactly over
the two coordinates' joint counts, and the ε at δ by bisection; the accountant's PLD is pessimistic on a
1e-4 grid (two compositions: at most ~2e-4 above) and never below.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.privacy.trust_accounting import client_rappor_epsilon


def _exact_epsilon(client_epsilon: float, n: int, delta: float) -> float:
    q = 1.0 / (math.exp(client_epsilon / 2) + 1.0)
    others = stats.binom(n - 1, q)
    k = np.arange(int(others.ppf(1e-20)), int(others.isf(1e-20)) + 3)   # mass left out < 1e-19 ≪ δ
    y, y_prev = others.pmf(k), others.pmf(k - 1)
    with_one, with_zero = q * y + (1 - q) * y_prev, (1 - q) * y + q * y_prev
    p = np.outer(with_one, with_zero)          # the device holds item a: coordinate a 1, b 0
    r = np.outer(with_zero, with_one)          # it holds item b

    def hockey(eps):
        return float(np.maximum(p - math.exp(eps) * r, 0.0).sum())

    low, high = 0.0, 2 * client_epsilon
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (low, mid) if hockey(mid) <= delta else (mid, high)
    return high


@pytest.mark.parametrize("client_epsilon, n, delta", [
    (6.0, 300, 1e-5),
    pytest.param(10.0, 1000, 1e-6, marks=pytest.mark.slow),
    pytest.param(13.0, 2000, 1e-9, marks=pytest.mark.slow)])
def test_the_replaced_item_pair_is_computed_exactly(client_epsilon, n, delta):
    exact = _exact_epsilon(client_epsilon, n, delta)
    got = client_rappor_epsilon(client_epsilon, n, delta, compositions=2)
    assert exact - 1e-9 <= got <= exact + 5e-4, (got, exact)
