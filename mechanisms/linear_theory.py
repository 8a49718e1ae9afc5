"""Exact variance of linear estimators built on the output counts of a discrete mechanism.

A population with true counts ``f`` (inputs fixed, not sampled) reports through a mechanism with
transition matrix ``P[x, y] = P[y | x]``. The output counts are a sum of independent multinomials,
``c = Σ_x Multinomial(f_x, P_x)``, hence (docs/math.md §1.4, "every estimate is linear in the output counts")

    E[c] = Pᵀ f,        Cov(c) = Σ_x f_x (diag(P_x) − P_x P_xᵀ) = diag(Pᵀ f) − Pᵀ diag(f) P.

For estimates ``A c + b`` (``b`` a constant) the variance of row ``k`` is therefore

    Var_k = Σ_y A[k, y]² (Pᵀ f)_y − Σ_x f_x (A Pᵀ)[k, x]².

This is the fixed-population variance. docs/math.md §1.4 writes ``Var(f̃_y) = π_y(1 − π_y)/n`` with
``π = P f / n``: that is the variance when the n inputs are themselves drawn i.i.d. from ``f / n``, and it
exceeds the fixed-population one by the input-sampling variance ``Σ_x f_x ((A Pᵀ)[k, x] − μ_k)²``
(``μ_k`` the mean of row ``k`` of ``A Pᵀ`` weighted by ``f / n``).
"""

from __future__ import annotations

import numpy as np


def linear_estimator_variance(P, A, counts) -> np.ndarray:
    """Exact variance of each entry of ``A @ c (+ const)``, ``c`` the output counts of a fixed population.

    Parameters
    ----------
    P : array_like, shape (D_in, D_out)
        Transition matrix, rows = inputs: ``P[x, y] = P[y | x]``.
    A : array_like, shape (K, D_out)
        Linear estimator: row ``k`` maps the output counts to estimate ``k``.
    counts : array_like, shape (D_in,)
        True number of users holding each input (non-negative; need not be integers).

    Returns
    -------
    ndarray, shape (K,)
        ``Σ_y A[k,y]² (Pᵀf)_y − Σ_x f_x (A Pᵀ)[k,x]²``, clipped at 0 against round-off.
        Costs O(K · D_in · D_out) (one matrix product).

    >>> p, q = 0.75, 0.25  # Warner RR, ε = ln 3, count estimate of value 1: (c_1 − n q)/(p − q)
    >>> A = np.array([[-q, 1 - q]]) / (p - q)
    >>> linear_estimator_variance([[p, q], [q, p]], A, [30, 70]).tolist()  # n p(1−p)/(2p−1)²
    [75.0]
    """
    P = np.asarray(P, dtype=np.float64)
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    f = np.asarray(counts, dtype=np.float64)
    if P.ndim != 2 or A.ndim != 2 or f.ndim != 1 or A.shape[1] != P.shape[1] or f.shape[0] != P.shape[0]:
        raise ValueError("linear_estimator_variance: need P (D_in, D_out), A (K, D_out), counts (D_in,); "
                         f"got P {P.shape}, A {A.shape}, counts {f.shape}.")
    if np.any(f < 0) or not np.all(np.isfinite(f)):
        raise ValueError("linear_estimator_variance: 'counts' must be finite and non-negative.")
    output_mean = P.T @ f
    mean_map = A @ P.T  # (K, D_in): E[estimate_k | one user with input x] − const
    var = (A * A) @ output_mean - (mean_map * mean_map) @ f
    return np.maximum(var, 0.0)


def support_count_variance(f, n, p: float, q: float) -> np.ndarray:
    """Var of (c_x − n·q)/(p − q) when c_x = Bin(f_x, p) + Bin(n − f_x, q) (unary encodings, local hashing).

    Parameters
    ----------
    f : numpy.ndarray
        True counts of the queried items.
    n : int
        Number of users.
    p, q : float
        Probabilities that a holder / a non-holder of x supports x (p ≠ q).

    Returns
    -------
    numpy.ndarray
        The count-scale variance per item (docs/math.md §7.1).
    """
    return (f * p * (1 - p) + (n - f) * q * (1 - q)) / (p - q) ** 2


def sample_support_counts(f: np.ndarray, p: float, q: float, rng: np.random.Generator) -> np.ndarray:
    """Draw c_x = Bin(f_x, p) + Bin(n − f_x, q) for every id, independently (the exact support counts)."""
    return rng.binomial(f, p) + rng.binomial(int(f.sum()) - f, q)
