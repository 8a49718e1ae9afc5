"""The Skellam alarm threshold is the exact least integer of its definition, at every scale of noise."""
import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.trends.integer_design import skellam_threshold


@pytest.mark.parametrize("lam", [0.5, 3.0, 50.0, 960.16752166, 1e4, 3e5, 1e7])
@pytest.mark.parametrize("level", [1e-2, 1e-4, 1 / 600, 1e-9])
def test_threshold_is_the_least_integer_whose_tail_is_at_most_the_level(lam, level):
    # scipy's own Skellam quantile stops with "endless loop" at λ ≈ 960, level 1/600 (one window of ε = 1 over 60 days)
    tau = skellam_threshold(lam, level) - 0.5
    assert tau == np.floor(tau)
    assert stats.skellam.sf(tau, lam, lam) <= level < stats.skellam.sf(tau - 1, lam, lam)


def test_vectorised_over_lambda_and_exact_without_noise():
    lams = np.array([0.0, 3.0, 1e7])
    taus = skellam_threshold(lams, 1e-4)
    assert taus[0] == 0.5  # no noise: the least τ with P[0 > τ] ≤ level is 0
    assert list(taus[1:]) == [skellam_threshold(lam, 1e-4) for lam in lams[1:]]
