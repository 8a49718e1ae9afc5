"""RAPPOR's ε of r memoized reports at large r, against exact rational arithmetic (docs/math.md §8.2).

The loss is h·(max_j L_j − min_j L_j), L_j the log-ratio of P(j ones | B = 1) and P(j ones | B = 0) for
one bit's r instantaneous responses. The reference computes every P(j | B) as an exact fraction of the
mechanism's own float parameters and takes the logarithm of the exact ratio, so the only rounding is
the final log: the tolerance (1e-10 relative) is far below the error of the linear-space formula.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from ldpsim.evaluation.privacy.accountant import losses
from ldpsim.mechanisms import RAPPOR


def _exact_loss(m: RAPPOR, r: int) -> float:
    f, p, q = Fraction(m.f), Fraction(m.p), Fraction(m.q)
    keep, flip = 1 - f / 2, f / 2
    logs = []
    for j in range(r + 1):
        a, b = q ** j * (1 - q) ** (r - j), p ** j * (1 - p) ** (r - j)
        ratio = (keep * a + flip * b) / (flip * a + keep * b)
        logs.append(math.log(ratio.numerator) - math.log(ratio.denominator))
    return min(m.num_hashes * (max(logs) - min(logs)), m.epsilon_permanent)


@pytest.mark.parametrize("eps, r", [(4.0, 1500), (1.0, 1200), (8.0, 700)])
def test_memoized_loss_matches_exact_arithmetic_at_many_reports(eps, r):
    m = RAPPOR(eps, num_bits=16, num_hashes=2, cohorts=4)
    assert m.memoized_loss(r) == pytest.approx(_exact_loss(m, r), rel=1e-10)


def test_memoized_loss_reaches_epsilon_infinity_to_nine_digits():
    """The example of the report: 1 500 reports gave 2.007 in linear space, 3 000 raised."""
    m = RAPPOR(4.0, num_bits=16, num_hashes=2, cohorts=4)
    for r in (1500, 3000, 100_000):
        assert m.memoized_loss(r) == pytest.approx(4.0, abs=1e-9)


@pytest.mark.slow
def test_accountant_spends_a_long_memoized_rappor_run():
    """300 days × 10 reports of one memoized value: the accountant's knapsack no longer raises, and the
    device's worst spread over 2 memo classes is ε_∞ twice (each class alone reaches ε_∞)."""
    m = RAPPOR(4.0, num_bits=16, num_hashes=2, cohorts=4)
    spent = losses(m, 2600, classes=2)
    assert sum(spent.values()) == 2
    assert sum(e * n for e, n in spent.items()) == pytest.approx(8.0, abs=1e-8)
