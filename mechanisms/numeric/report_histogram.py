"""Exact moments of the histogram of numeric reports over output bins — docs/math.md §2.5.

For a fixed population, the count of output bin j is a sum of independent Bernoulli(P_ij) draws
(P_ij = P(x* ∈ bin j | x_i)), so its mean, variance and covariances are closed-form; EM's estimate
built on that histogram has no closed-form variance (docs/math.md §2.5).
"""

from __future__ import annotations

import numpy as np


def histogram_moments(mechanism, values, out_edges) -> tuple[np.ndarray, np.ndarray]:
    """Mean (m,) and covariance (m × m) of the report counts over ``out_edges`` for a fixed population.

    E[c_j] = Σ_i P_ij and Cov(c_j, c_k) = 𝟙[j = k]·Σ_i P_ij − Σ_i P_ij·P_ik, P_ij the exact bin
    probability (``mechanism.bin_probabilities``) of user i's value.

    Parameters
    ----------
    mechanism : NumericMechanism
        The mechanism (PM, SDPM, SW).
    values : array_like of float
        The users' true values in [−1, 1].
    out_edges : array_like of float
        Ascending output bin edges covering [−C, C].

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)

    Examples
    --------
    >>> from ldpsim.mechanisms.numeric.square_wave import SW
    >>> m = SW(1.0)
    >>> mean, cov = histogram_moments(m, [0.0, 0.5], np.linspace(-m.C, m.C, 5))
    >>> round(float(mean.sum()), 12), cov.shape
    (2.0, (4, 4))
    """
    x = mechanism._check_values(values)
    P = mechanism.bin_probabilities(x, out_edges)
    mean = P.sum(axis=0)
    return mean, np.diag(mean) - P.T @ P
